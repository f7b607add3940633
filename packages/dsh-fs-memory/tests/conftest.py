"""anyio's pytest plugin runs the async tests of this package on asyncio."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
