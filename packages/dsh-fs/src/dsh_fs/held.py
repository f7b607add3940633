"""``HeldDirectory``: a directory a backend holds open for a native tool.

An optional seam capability (:meth:`dsh_fs.FileSystem.hold_directory`). A
backend on the host's disk can hand a native program — for example a
Landlock-confined ``rg`` that searches the directory — descriptors instead
of path strings: the directory itself, reached beneath the workspace by the
backend's own containment mechanism, and every root the backend may read
(``read_only_roots`` included), so that the program can be confined to
exactly those roots. Nothing is looked up by path again: the program runs
with the directory descriptor as its working directory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import TracebackType

__all__ = ["HeldDirectory"]


class HeldDirectory:
    """Descriptors of one directory and of the workspace's readable roots, owned until closed.

    ``fd`` is a readable directory descriptor (``O_RDONLY | O_DIRECTORY``,
    close-on-exec) of the directory; ``root_fds`` are descriptors (``O_PATH``
    is enough) of every directory beneath which the backend may read.
    ``path`` is the directory's canonical path (its target key), for messages
    only. Use it as a context manager, or call :meth:`close`.
    """

    __slots__ = ("fd", "path", "root_fds")

    def __init__(self, fd: int, root_fds: Sequence[int], path: str) -> None:
        self.fd = fd
        self.root_fds = tuple(root_fds)
        self.path = path

    def close(self) -> None:
        """Release every descriptor (idempotent)."""
        fds, self.fd, self.root_fds = (self.fd, *self.root_fds), -1, ()
        for fd in fds:
            if fd >= 0:
                os.close(fd)

    def __enter__(self) -> HeldDirectory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"HeldDirectory({self.path!r}, fd={self.fd}, roots={len(self.root_fds)})"
