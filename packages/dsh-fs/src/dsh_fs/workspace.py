"""Workspace containment: which paths a backend may read, and which it may write.

A :class:`Workspace` is the one statement of the rule both backends share:
a path is inside when it lies beneath a root (a sibling that merely shares
the root's string prefix, ``/srv/app-old`` beside ``/srv/app``, is not);
read-write roots grant writes, read-only roots and ``read_only=True`` grant
reads only. It compares canonical absolute paths and never touches the
filesystem: *which* path a system call really reaches is each backend's job
(the local backend answers it at the system call, through held directory
descriptors). The refusal messages live here too, so they are spelled once.
"""

from __future__ import annotations

import enum
import os
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final, Literal

from ._errors import FsError, FsErrorCode

__all__ = [
    "CWD_ROOT",
    "Access",
    "CwdRoot",
    "RootsOption",
    "Workspace",
    "is_beneath",
    "outside_workspace",
    "read_only_workspace",
    "shown_path",
]

Access = Literal["write", "read"]
"""What the workspace grants a path: ``"write"`` (read and write) or ``"read"`` only."""

SHOWN_PATH_MAX: Final = 1024
"""Characters of a display path kept in a refusal message."""


class CwdRoot(enum.Enum):
    """The type of :data:`CWD_ROOT` (a one-member enum is a sentinel type checkers know)."""

    CWD_ROOT = "<cwd>"

    def __repr__(self) -> str:
        return "<cwd>"


CWD_ROOT: Final = CwdRoot.CWD_ROOT
"""The default of a backend's ``roots`` parameter: its ``cwd`` is the one root."""

RootsOption = Iterable[str | os.PathLike[str]] | CwdRoot | None
"""What a backend constructor's ``roots`` accepts: directories, ``CWD_ROOT``, or ``None`` (off)."""


def is_beneath(path: str, root: str) -> bool:
    """Whether canonical ``path`` is ``root`` or lies beneath it (no prefix confusion)."""
    if path == root or root == "/":
        return True
    return path.startswith(root + "/")


def shown_path(display_path: str) -> str:
    """The display path as a refusal names it: cut to 1024 characters and ``…`` when longer."""
    if len(display_path) <= SHOWN_PATH_MAX:
        return display_path
    return display_path[:SHOWN_PATH_MAX] + "…"


def outside_workspace(verb: str, display_path: str) -> FsError:
    """``cannot <verb> "<p>": outside the workspace`` (``FS_OUTSIDE_WORKSPACE``)."""
    return FsError.cannot(
        verb, shown_path(display_path), "outside the workspace", FsErrorCode.FS_OUTSIDE_WORKSPACE
    )


def read_only_workspace(verb: str, display_path: str) -> FsError:
    """``cannot <verb> "<p>": read-only workspace`` (``FS_READ_ONLY``)."""
    return FsError.cannot(
        verb, shown_path(display_path), "read-only workspace", FsErrorCode.FS_READ_ONLY
    )


@dataclass(frozen=True, slots=True)
class Workspace:
    """The roots of one backend, canonical (absolute, symlinks resolved), and its write switch.

    ``roots`` are read-write, ``read_only_roots`` read-only; ``read_only``
    turns every write off. ``roots=None`` means no containment: every path is
    inside (with ``read_only`` still honoured).
    """

    roots: tuple[str, ...] | None
    read_only_roots: tuple[str, ...] = ()
    read_only: bool = False
    _innermost_first: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Every root, read-write and read-only, the longest first: :meth:`root_of` takes the
    first that holds a path (it runs before every system call of the local backend)."""

    def __post_init__(self) -> None:
        roots = sorted((*(self.roots or ()), *self.read_only_roots), key=len, reverse=True)
        object.__setattr__(self, "_innermost_first", tuple(roots))

    @classmethod
    def build(
        cls,
        cwd: str,
        roots: RootsOption,
        read_only_roots: Iterable[str | os.PathLike[str]],
        read_only: bool,
        canonical: Callable[[str], str],
    ) -> Workspace:
        """The workspace a backend constructor was given.

        ``canonical`` turns one root, made absolute against ``cwd``, into the
        backend's canonical path of that directory; it raises ``ValueError``
        naming the root when it does not exist or is not a directory.
        """

        def canon(paths: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
            return tuple(
                canonical(posixpath.normpath(posixpath.join(cwd, os.fspath(p)))) for p in paths
            )

        if roots is CWD_ROOT:
            roots = (cwd,)
        return cls(
            roots=None if roots is None else canon(roots),
            read_only_roots=canon(read_only_roots),
            read_only=read_only,
        )

    @property
    def contained(self) -> bool:
        """Whether any path can be outside (``False`` with ``roots=None``)."""
        return self.roots is not None

    def access(self, path: str) -> Access | None:
        """What the workspace grants the canonical absolute ``path``; ``None``: outside."""
        if self.roots is None:
            return "read" if self.read_only else "write"
        if any(is_beneath(path, root) for root in self.roots):
            return "read" if self.read_only else "write"
        if any(is_beneath(path, root) for root in self.read_only_roots):
            return "read"
        return None

    def root_of(self, path: str) -> str | None:
        """The innermost root (read-write or read-only) that holds ``path``, or ``None``."""
        for root in self._innermost_first:
            if is_beneath(path, root):
                return root
        return None

    def check(self, verb: str, display_path: str, path: str, *, write: bool) -> None:
        """Raise the refusal for ``path`` (canonical) when ``verb`` may not reach it.

        Outside wins over read-only: a write outside says ``outside the workspace``.
        """
        granted = self.access(path)
        if granted is None:
            raise outside_workspace(verb, display_path)
        if write and granted != "write":
            raise read_only_workspace(verb, display_path)
