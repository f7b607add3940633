"""Fixtures of the dsh-tool-fs-search tests: the search scratch trees of both backends."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pytest
from dsh_fs.workspace import CWD_ROOT, RootsOption
from dsh_fs_local import LocalFileSystem
from dsh_fs_memory import MemoryScratch


class LocalSearchScratch:
    """A :class:`dsh_tool_fs_search.testing.SearchScratch` over a real directory."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self._root = os.path.realpath(root)
        self._fs = LocalFileSystem(cwd=self._root)

    @property
    def fs(self) -> LocalFileSystem:
        return self._fs

    @property
    def root(self) -> str:
        return self._root

    def path(self, rel: str) -> str:
        return os.path.join(self._root, rel)

    def put(self, path: str, data: bytes) -> None:
        full = self.path(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as out:
            out.write(data)

    def get(self, path: str) -> bytes | None:
        try:
            with open(self.path(path), "rb") as f:
                return f.read()
        except OSError:
            return None

    def mkdir(self, path: str) -> None:
        os.makedirs(self.path(path), exist_ok=True)

    def remove(self, path: str) -> None:
        full = self.path(path)
        if os.path.isdir(full) and not os.path.islink(full):
            os.rmdir(full)
        else:
            os.unlink(full)

    def symlink(self, path: str, target: str) -> None:
        os.symlink(target, self.path(path))

    def make_other(self, path: str) -> None:
        os.mkfifo(self.path(path))

    def hard_link(self, path: str, existing: str) -> None:
        os.link(self.path(existing), self.path(path))

    def names(self, path: str = ".") -> list[str]:
        return sorted(os.listdir(self.path(path)))

    def backend(
        self,
        cwd: str,
        *,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str] = (),
        read_only: bool = False,
    ) -> LocalFileSystem:
        return LocalFileSystem(
            cwd=cwd, roots=roots, read_only_roots=read_only_roots, read_only=read_only
        )

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
