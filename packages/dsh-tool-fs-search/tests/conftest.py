"""Fixtures of the dsh-tool-fs-search tests: the search scratch trees of both backends."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_fs_local.testing import LocalScratch
from dsh_fs_memory import MemoryScratch


@pytest.fixture
def local_scratch(tmp_path: Path) -> LocalScratch:
    """An empty search scratch tree on the local backend."""
    root = tmp_path / "root"
    root.mkdir()
    return LocalScratch(root)


@pytest.fixture
def memory_scratch() -> MemoryScratch:
    """An empty search scratch tree on the memory backend."""
    return MemoryScratch()
