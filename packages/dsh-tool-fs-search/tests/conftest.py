"""Fixtures of the dsh-tool-fs-search tests: the search scratch trees of both backends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dsh_fs_local.testing import LocalScratch
from dsh_fs_memory import MemoryScratch


class LocalSearchScratch(LocalScratch):
    """:class:`dsh_fs_local.testing.LocalScratch` plus modification times."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        super().__init__(root)

    def set_modified(self, path: str, modified_ns: int) -> None:
        os.utime(self.path(path), ns=(modified_ns, modified_ns), follow_symlinks=False)


class MemorySearchScratch(MemoryScratch):
    """:class:`dsh_fs_memory.MemoryScratch` plus modification times."""

    def set_modified(self, path: str, modified_ns: int) -> None:
        self.fs.set_modified_ns(path, modified_ns)


@pytest.fixture
def local_scratch(tmp_path: Path) -> LocalSearchScratch:
    """An empty search scratch tree on the local backend."""
    return LocalSearchScratch(tmp_path / "root")


@pytest.fixture
def memory_scratch() -> MemorySearchScratch:
    """An empty search scratch tree on the memory backend."""
    return MemorySearchScratch()
