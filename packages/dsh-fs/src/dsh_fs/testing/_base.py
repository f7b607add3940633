"""What every contract class shares."""

from __future__ import annotations


class ContractBase:
    """Base of the contract classes.

    The contract tests are ``@pytest.mark.anyio`` tests and run under the
    ``anyio_backend`` fixture of the project that runs them. anyio's own
    default differs between anyio releases (4.5 runs trio even when it is not
    installed, recent releases every installed backend), so say which: to run
    the kit on both anyio backends, put this in the backend's ``conftest.py``
    (trio installed), or return ``"asyncio"`` from a plain fixture for one::

        @pytest.fixture(params=["asyncio", "trio"])
        def anyio_backend(request): return request.param
    """
