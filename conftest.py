"""Repository-wide pytest options and fixtures.

``--long`` turns on the long stress and fuzz profiles (marked ``long``); the
default run stays within the CI budget.

``anyio_backend`` is the one fixture that says which event loop the async
tests run on: every ``@pytest.mark.anyio`` test of every package, the
conformance kit included, runs once on asyncio and once on trio. (anyio's
own default is parametrised too, but over a list that differs between anyio
releases: 4.5 lists trio even when it is not installed, recent releases only
the installed backends; this one says exactly which.) A test that is about
one event loop on purpose overrides it next to the test and says why.
"""

from __future__ import annotations

from typing import cast

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="run the long stress/fuzz profiles (tests marked 'long')",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long profile: run with --long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return cast(str, request.param)
