"""What every contract class shares: the anyio backend the tests run on."""

from __future__ import annotations

import pytest


class ContractBase:
    """Base of the contract classes.

    Provides the ``anyio_backend`` fixture (``"asyncio"``) so that a backend
    author needs nothing but a ``scratch`` fixture; override it in the
    subclass to run the contract on another anyio backend (``"trio"``).
    """

    @pytest.fixture
    def anyio_backend(self) -> str:
        return "asyncio"
