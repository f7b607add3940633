"""Fixtures of the dsh-tool-fs-patch tests: a scratch tree on each backend, and its host.

pytest runs with ``--import-mode=importlib``, which puts no test directory on
``sys.path``: this conftest puts this one there, so the tests can import
:mod:`dsh_tool_fs_patch_stack`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from dsh_fs_local.testing import LocalScratch
from dsh_fs_memory import MemoryScratch

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from dsh_tool_fs_patch_stack import Stack, make_stack  # noqa: E402


@pytest.fixture(params=["memory", "local"])
def scratch(request: pytest.FixtureRequest, tmp_path: Path) -> LocalScratch | MemoryScratch:
    if request.param == "memory":
        return MemoryScratch()
    root = tmp_path / "root"
    root.mkdir()
    return LocalScratch(root)


@pytest.fixture
def stack(scratch: LocalScratch | MemoryScratch) -> Stack:
    """The host with the default policy over an empty scratch tree."""
    return make_stack(scratch)


@pytest.fixture
def bare(scratch: LocalScratch | MemoryScratch) -> Stack:
    """The host without any plugin (every operation unguarded by a policy)."""
    return make_stack(scratch, policy=False)
