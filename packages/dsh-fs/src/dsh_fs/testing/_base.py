"""What every contract class shares."""

from __future__ import annotations


class ContractBase:
    """Base of the contract classes.

    The contract tests are ``@pytest.mark.anyio`` tests and run under the
    ``anyio_backend`` fixture of the project that runs them. anyio's own
    default depends on the anyio release (asyncio only in older ones, every
    installed backend in recent ones); to run the kit on both anyio backends
    whatever the release, put this in the backend's ``conftest.py`` (trio
    installed)::

        @pytest.fixture(params=["asyncio", "trio"])
        def anyio_backend(request): return request.param
    """
