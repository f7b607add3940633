"""Fixtures of the reliability suite.

The tests import :mod:`dsh_reliability_kit` from this directory (put on
``sys.path`` here: pytest runs with ``--import-mode=importlib``, which adds
nothing to it). ``forkserver`` is one pre-imported process per test session
that forks the children of the crash, race, permission and could-block cases.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from dsh_reliability_kit import ForkServer  # noqa: E402


@pytest.fixture(scope="session")
def forkserver() -> Iterator[ForkServer]:
    server = ForkServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The workspace of one test: an empty directory (realpathed, so keys equal paths)."""
    path = tmp_path / "w"
    path.mkdir()
    return Path(os.path.realpath(path))
