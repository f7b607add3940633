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

from collections.abc import Iterable
from pathlib import Path

from dsh_fs.testing import DiskTree
from dsh_fs.workspace import CWD_ROOT, RootsOption

from ._local import LocalFileSystem

__all__ = ["LocalScratch"]


class LocalScratch(DiskTree):
    """The conformance kit's ``Scratch`` over a pytest ``tmp_path``: the tree's helpers
    are :class:`dsh_fs.testing.DiskTree`'s, the backend a ``LocalFileSystem`` at its root."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._fs = LocalFileSystem(cwd=self.root)

    @property
    def fs(self) -> LocalFileSystem:
        return self._fs

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
