"""Fixtures of the dsh-tool-fs-editor tests: one scratch workspace per backend, and a host.

Every test that takes ``ws`` runs on the local backend and on the memory
backend (and, as every async test, on asyncio and trio).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from dsh_fs.testing import Scratch
from dsh_fs_local.testing import LocalScratch
from dsh_fs_memory import MemoryScratch

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture(params=["local", "memory"])
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> Scratch:
    """An empty workspace: the backend is contained to ``ws.root``."""
    if request.param == "local":
        root = tmp_path / "w"
        root.mkdir()
        return LocalScratch(root)
    return MemoryScratch("/w")
