"""What a backend author provides to run the conformance kit: a scratch tree."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from .._filesystem import FileSystem
from ..workspace import CWD_ROOT, RootsOption


class Scratch(Protocol):
    """A fresh backend over an empty scratch directory, plus out-of-band access.

    ``fs`` resolves relative paths against ``root`` (its ``cwd``, which is
    also its one workspace root). The other methods change or inspect the
    tree *behind the backend's back*, the way another process or a user
    would; paths are relative to ``root`` and use ``/``. Parent directories
    are created as needed.

    ``symlink``, ``make_other`` and ``hard_link`` are only called when the
    contract class declares the matching capability flag
    (``supports_symlinks``, ``supports_special_files``,
    ``supports_hard_links``); a backend without one may raise from it.
    """

    @property
    def fs(self) -> FileSystem:
        """The backend under test, with ``cwd`` = ``root``."""
        ...

    @property
    def root(self) -> str:
        """Absolute path of the scratch directory, in the backend's namespace."""
        ...

    def put(self, path: str, data: bytes) -> None:
        """Create or replace a regular file with exactly ``data``."""

    def get(self, path: str) -> bytes | None:
        """The exact stored bytes of a regular file, or ``None`` if it is absent."""

    def mkdir(self, path: str) -> None:
        """Create a directory (and its parents)."""

    def remove(self, path: str) -> None:
        """Remove a file, symlink or empty directory."""

    def symlink(self, path: str, target: str) -> None:
        """Create a symlink at ``path`` pointing to ``target`` (as given: relative or absolute)."""

    def make_other(self, path: str) -> None:
        """Create an entry that is neither a file nor a directory (a FIFO, a socket …)."""

    def hard_link(self, path: str, existing: str) -> None:
        """Give the regular file ``existing`` a second name, ``path`` (a hard link)."""

    def names(self, path: str = ".") -> list[str]:
        """Every name in a directory, hidden ones included, sorted (to find leftovers)."""

    def backend(
        self,
        cwd: str,
        *,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str] = (),
        read_only: bool = False,
    ) -> FileSystem:
        """A new backend over the same tree; ``cwd`` and roots are absolute paths in the backend's
        namespace.

        The parameters are a backend constructor's workspace options (``roots``
        defaults to ``cwd`` alone; ``None`` turns containment off); the
        containment contract builds every workspace it checks through it.
        """
        ...
