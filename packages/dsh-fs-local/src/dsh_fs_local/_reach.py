"""What reaching a path hands back, and the rules every way of reaching shares.

The backend reaches a canonical absolute path through a :class:`Reach`:
:class:`~dsh_fs_local._beneath.Beneath` (contained: every lookup beneath a
held root descriptor) or :class:`~dsh_fs_local._anywhere.Anywhere`
(``roots=None``). A read gets a descriptor (:meth:`Reach.open`); a mutation
gets a :class:`Spot` — the target's directory, held open, and the final name
in it — and works with ``*at`` calls on that descriptor. Both raise
``OSError`` for what the OS says and :class:`Refused` for what containment
says.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from typing import Final, Protocol

from dsh_fs import FsError
from dsh_fs.workspace import Workspace, outside_workspace, read_only_workspace

__all__ = [
    "DIRECTORY_PATH_FLAGS",
    "LISTABLE_FLAGS",
    "MAX_SYMLINKS",
    "PATH_FLAGS",
    "SEARCH_FLAGS",
    "CreatedDirectories",
    "Reach",
    "Refused",
    "Spot",
    "count_link",
    "lstat_in",
]

_O_PATH_BIT: Final = getattr(os, "O_PATH", 0)
PATH_FLAGS: Final = (_O_PATH_BIT or os.O_RDONLY | os.O_NONBLOCK) | os.O_CLOEXEC
"""A descriptor that opens nothing (``O_PATH``): enough for ``fstat``, ``*at`` calls and
its ``/proc/self/fd`` path. Where there is no ``O_PATH``, a read-only open that never
blocks."""
DIRECTORY_PATH_FLAGS: Final = PATH_FLAGS | os.O_DIRECTORY
""":data:`PATH_FLAGS` of a directory: a held root, or a directory this process may only search."""
SEARCH_FLAGS: Final = DIRECTORY_PATH_FLAGS | os.O_NOFOLLOW
"""One step of the component walk: a directory, never through a symlink."""
LISTABLE_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
"""A directory that can be listed, locked and ``fsync``ed."""

MAX_SYMLINKS: Final = 40
"""Symlinks one resolution may follow before it fails ``ELOOP`` (Linux's own limit)."""


def count_link(links: int) -> int:
    """``links + 1``: one more symlink followed, or a name looked at again after it changed
    type under a lookup (the retries share the budget, so a name that flips forever
    ends too). Past :data:`MAX_SYMLINKS`, ``ELOOP``, as the kernel answers."""
    links += 1
    if links > MAX_SYMLINKS:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
    return links


class Refused(Exception):
    """The path may not be reached: it leaves every root, or (``outside=False``) the
    write it was reached for lands in a read-only root.

    Not an ``OSError``, so that no ``except OSError`` turns a refusal into
    "not found"; each primitive turns it into its own message with :meth:`error`.
    """

    def __init__(self, *, outside: bool = True) -> None:
        super().__init__("outside the workspace" if outside else "read-only workspace")
        self.outside = outside

    def error(self, verb: str, display_path: str) -> FsError:
        """``cannot <verb> "<p>": outside the workspace`` (or ``read-only workspace``)."""
        if self.outside:
            return outside_workspace(verb, display_path)
        return read_only_workspace(verb, display_path)


@dataclass(slots=True)
class Spot:
    """Where a mutation works: the directory holding the target's final name, held open.

    ``dir_fd`` is owned by the spot (:meth:`close`). It is readable
    (``O_RDONLY``: it can be listed, locked and ``fsync``ed) when ``readable``,
    else an ``O_PATH`` descriptor that only serves ``*at`` calls (a directory
    this process may search but not read). ``name`` was not a symlink when the
    spot was made (a final link is followed to its target's directory), unless it
    was located with ``follow_final=False`` (a removal or a move of the link itself).
    """

    dir_fd: int
    dir_path: str
    name: str
    readable: bool

    @property
    def path(self) -> str:
        """The canonical path of the final name (what the workspace rule is asked about)."""
        return self.dir_path.rstrip("/") + "/" + self.name

    def close(self) -> None:
        os.close(self.dir_fd)


class CreatedDirectories:
    """The parent directories one write created, to remove them if the write fails.

    Each is kept as its parent's descriptor and its name, so the undo is an
    ``rmdir(name, dir_fd=parent)`` of exactly what was made, never a path lookup.
    """

    __slots__ = ("_made",)

    def __init__(self) -> None:
        self._made: list[tuple[int, str]] = []

    def __bool__(self) -> bool:
        return bool(self._made)

    def add(self, parent_fd: int, name: str) -> None:
        self._made.append((os.dup(parent_fd), name))

    def undo(self) -> None:
        """Remove them, innermost first, while they are still empty."""
        for parent_fd, name in reversed(self._made):
            try:
                os.rmdir(name, dir_fd=parent_fd)
            except OSError:
                break
        self.close()

    def close(self) -> None:
        for parent_fd, _ in self._made:
            os.close(parent_fd)
        self._made.clear()


class Reach(Protocol):
    """How the backend reaches a canonical absolute path: ``Beneath`` or ``Anywhere``.

    Every method raises ``OSError`` for what the OS says and :class:`Refused`
    for what containment says; the primitive turns both into its ``FsError``.
    """

    @property
    def workspace(self) -> Workspace: ...

    def key_of(self, display_path: str) -> str:
        """The target key (realpath, stable across creation) of a normalized absolute path."""
        ...

    def open(self, path: str, flags: int) -> int:
        """A descriptor of ``path`` (a final symlink is followed unless ``O_NOFOLLOW``)."""
        ...

    def locate(self, path: str, *, follow_final: bool = True) -> Spot:
        """The :class:`Spot` of ``path``, a final symlink followed (unless ``follow_final`` is
        false: a removal or a move works on the link itself); ``FileNotFoundError`` when its
        directory is missing, ``IsADirectoryError`` when ``path`` is a root itself."""
        ...

    def make_directories(
        self, path: str, created: CreatedDirectories, *, follow_final: bool = True
    ) -> Spot:
        """:meth:`locate`, creating the missing directories above ``path`` (into ``created``)."""
        ...

    def close(self) -> None: ...


def lstat_in(dir_fd: int, name: str) -> os.stat_result | None:
    """``lstat`` of ``name`` in the held directory ``dir_fd``; ``None`` when absent.

    On any other failure ``dir_fd`` is closed before the error propagates, so a
    caller building a :class:`Spot` from it leaks nothing.
    """
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except BaseException:
        os.close(dir_fd)
        raise
