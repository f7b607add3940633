"""``LocalScratch``: the conformance kit's ``Scratch`` for ``LocalFileSystem``.

A test suite (this package's, a release check's, or a project that wraps
the local backend) runs the kit on the host disk with one fixture::

    from dsh_fs.testing import FileSystemContract
    from dsh_fs_local.testing import LocalScratch

    class TestLocal(FileSystemContract):
        @pytest.fixture
        def scratch(self, tmp_path): return LocalScratch(tmp_path)
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from dsh_fs.workspace import CWD_ROOT, RootsOption

from ._local import LocalFileSystem

__all__ = ["LocalScratch"]


class LocalScratch:
    """The conformance kit's ``Scratch`` over a pytest ``tmp_path``.

    The root is the realpath of the directory, so that display paths and
    target keys coincide for plain paths.
    """

    def __init__(self, root: Path) -> None:
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
        full = self.path(path)
        try:
            if not stat.S_ISREG(os.stat(full).st_mode):
                return None  # never open a FIFO or a device
            with open(full, "rb") as f:
                return f.read()
        except (FileNotFoundError, NotADirectoryError):
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
        full = self.path(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        os.symlink(target, full)

    def make_other(self, path: str) -> None:
        full = self.path(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        os.mkfifo(full)

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
        """A new backend over the same tree (``cwd`` and roots are absolute paths)."""
        return LocalFileSystem(
            cwd, roots=roots, read_only_roots=read_only_roots, read_only=read_only
        )

    def hard_link(self, path: str, existing: str) -> None:
        """Give the file ``existing`` a second name ``path`` (both relative to the root)."""
        full = self.path(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        os.link(self.path(existing), full)
