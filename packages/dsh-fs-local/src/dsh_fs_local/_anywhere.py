"""Reaching paths without containment (``roots=None``): plain lookups by path, as before roots."""

from __future__ import annotations

import errno
import os
import stat as st
from typing import Final

from dsh_fs.workspace import Workspace

from ._paths import fd_path
from ._reach import (
    DIRECTORY_PATH_FLAGS,
    LISTABLE_FLAGS,
    PATH_FLAGS,
    CreatedDirectories,
    Spot,
    count_link,
    lstat_in,
)

__all__ = ["Anywhere"]

_KERNEL_PATHS: Final = hasattr(os, "O_PATH") and os.path.isdir("/proc/self/fd")
"""Whether a descriptor's ``/proc/self/fd`` entry names its path (else ``realpath``)."""


def _followed_path(path: str) -> str | None:
    """Where the kernel's lookup of the existing ``path`` leads (its realpath), or ``None``
    for an object without a path (a pipe behind ``/dev/stdin``) or a file replaced since."""
    fd = os.open(path, PATH_FLAGS)
    try:
        return fd_path(fd)
    finally:
        os.close(fd)


def _key_of(display_path: str) -> str:
    """The identity of ``display_path``: its realpath.

    A missing path gets the realpath of its nearest existing ancestor joined
    with the missing remainder (dangling symlinks are followed, so a write
    through one creates the file it points to). A parent segment that is a
    file raises ``ENOTDIR``, a symlink loop ``ELOOP``. When a segment cannot
    be searched (``EACCES``) the key is computed lexically as far as
    possible: the primitive that touches the file reports the denial.
    """
    try:
        if not _KERNEL_PATHS:
            return os.path.realpath(display_path, strict=True)
        key = _followed_path(display_path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.EACCES, errno.EPERM):
            return os.path.realpath(display_path)
        raise
    if key is not None:
        return key
    # No path to give (``/dev/stdin`` on a pipe, or replaced meanwhile): keep the
    # final name unresolved beneath its parent's key; its (followed) type is never a file.
    parent, name = os.path.split(display_path)
    return os.path.join(_key_of(parent), name) if name else display_path


def _open_directory(path: str) -> tuple[int, bool]:
    """A descriptor of the directory ``path``: readable, or (searchable only) ``O_PATH``."""
    try:
        return os.open(path, LISTABLE_FLAGS), True
    except PermissionError:
        return os.open(path, DIRECTORY_PATH_FLAGS), False


class Anywhere:
    """Every path the process can reach (``roots=None``): plain lookups by path, as before."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    @property
    def workspace(self) -> Workspace:
        return self._workspace

    def close(self) -> None:
        pass

    def key_of(self, display_path: str) -> str:
        return _key_of(display_path)

    def open(self, path: str, flags: int) -> int:
        return os.open(path, flags | os.O_CLOEXEC)

    def locate(self, path: str, *, follow_final: bool = True) -> Spot:
        return self._locate(path, 0, follow_final)

    def _locate(self, path: str, links: int, follow_final: bool = True) -> Spot:
        parent, name = os.path.split(path)
        if not name:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        fd, readable = _open_directory(parent)
        if not follow_final:
            return Spot(fd, parent, name, readable)
        info = lstat_in(fd, name)
        if info is None or not st.S_ISLNK(info.st_mode):
            return Spot(fd, parent, name, readable)
        try:
            links = count_link(links)
            try:
                target = _followed_path(path)
            except FileNotFoundError:
                target = os.path.realpath(path)  # dangling: the file it points to
        except BaseException:
            os.close(fd)
            raise
        if target is None:
            # An object without a path (``/dev/stdin`` on a pipe): the link itself,
            # which a mutation refuses as not a regular file.
            return Spot(fd, parent, name, readable)
        os.close(fd)
        return self._locate(target, links)

    def make_directories(
        self, path: str, created: CreatedDirectories, *, follow_final: bool = True
    ) -> Spot:
        missing: list[str] = []
        directory = os.path.dirname(path)
        while not os.path.isdir(directory):
            missing.append(directory)
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        for directory in reversed(missing):
            parent, name = os.path.split(directory)
            parent_fd = os.open(parent, DIRECTORY_PATH_FLAGS)
            try:
                try:
                    os.mkdir(name, 0o777, dir_fd=parent_fd)
                except FileExistsError:
                    continue
                created.add(parent_fd, name)
            finally:
                os.close(parent_fd)
        return self.locate(path, follow_final=follow_final)
