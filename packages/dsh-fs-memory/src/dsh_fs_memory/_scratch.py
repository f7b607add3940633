"""``MemoryScratch``: the conformance kit's ``Scratch`` over a ``MemoryFileSystem``."""

from __future__ import annotations

from collections.abc import Iterable

from dsh_fs.workspace import CWD_ROOT, RootsOption

from ._memory import MemoryFileSystem


class MemoryScratch:
    """A fresh ``MemoryFileSystem`` whose ``cwd`` is an empty scratch directory.

    Satisfies :class:`dsh_fs.testing.Scratch`: the out-of-band methods take
    paths relative to ``root`` and use the backend's own helper methods;
    ``backend`` is :meth:`MemoryFileSystem.view` of the same tree. There are
    no hard links (``hard_link`` raises; declare ``supports_hard_links = False``).
    """

    def __init__(self, root: str = "/scratch") -> None:
        self._fs = MemoryFileSystem(cwd=root)
        self._root = self._fs.cwd

    @property
    def fs(self) -> MemoryFileSystem:
        return self._fs

    @property
    def root(self) -> str:
        return self._root

    def put(self, path: str, data: bytes) -> None:
        self._fs.put_bytes(path, data)

    def get(self, path: str) -> bytes | None:
        return self._fs.get_bytes(path)

    def mkdir(self, path: str) -> None:
        self._fs.mkdir(path)

    def remove(self, path: str) -> None:
        self._fs.remove(path)

    def symlink(self, path: str, target: str) -> None:
        self._fs.add_symlink(path, target)

    def make_other(self, path: str) -> None:
        self._fs.add_other(path)

    def hard_link(self, path: str, existing: str) -> None:
        raise NotImplementedError("the memory backend has no hard links")

    def names(self, path: str = ".") -> list[str]:
        return self._fs.names(path)

    def set_modified(self, path: str, modified_ns: int) -> None:
        """Set the modification time of ``path`` (:meth:`MemoryFileSystem.set_modified_ns`)."""
        self._fs.set_modified_ns(path, modified_ns)

    def backend(
        self,
        cwd: str,
        *,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str] = (),
        read_only: bool = False,
    ) -> MemoryFileSystem:
        return self._fs.view(cwd, roots=roots, read_only_roots=read_only_roots, read_only=read_only)
