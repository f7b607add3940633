"""anyio's pytest plugin runs the async unit tests of ``dsh_fs`` on asyncio."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
