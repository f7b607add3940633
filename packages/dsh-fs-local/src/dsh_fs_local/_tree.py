"""Removing a directory tree through descriptors, never following a link inside it.

Used on a tree already renamed aside (a recursive removal, or the sweep of one a
dead process left): every directory is opened ``O_NOFOLLOW | O_DIRECTORY``
relative to its parent's descriptor and listed with ``scandir`` on that
descriptor; every entry is removed with ``unlink``/``rmdir`` and ``dir_fd``. A
symlink inside is removed as a link, never entered, so nothing outside the tree
is ever reached whatever the links say. One descriptor is held per level of
depth (a tree deeper than the process's descriptor limit fails ``EMFILE``).
"""

from __future__ import annotations

import errno
import os
import stat as st

__all__ = ["remove_tree"]

_OPEN_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _children(fd: int) -> list[tuple[str, bool]]:
    """The names in the directory ``fd`` and whether each is a directory (not following links)."""
    with os.scandir(fd) as entries:
        return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]


def remove_tree(parent_fd: int, name: str) -> None:
    """Remove the directory ``name`` of ``parent_fd`` with everything beneath it.

    Raises the first ``OSError`` that stops it (what was removed stays removed;
    the caller decides what to do with the rest).
    """
    # A stack of (directory descriptor, its name in the level above, entries left).
    stack: list[tuple[int, str, list[tuple[str, bool]]]] = []
    try:
        fd = os.open(name, _OPEN_FLAGS, dir_fd=parent_fd)
        stack.append((fd, name, _children_or_close(fd)))
        while stack:
            fd, directory, pending = stack[-1]
            if not pending:
                stack.pop()
                os.close(fd)
                above = stack[-1][0] if stack else parent_fd
                os.rmdir(directory, dir_fd=above)
                continue
            child, is_dir = pending.pop()
            if not is_dir:
                try:
                    os.unlink(child, dir_fd=fd)
                    continue
                except IsADirectoryError:
                    pass  # replaced by a directory meanwhile: descend into it
                except OSError as exc:
                    if exc.errno != errno.EPERM:
                        raise
                    # Linux answers EPERM for unlink of a directory.
                    if not _is_directory(fd, child):
                        raise
            try:
                child_fd = os.open(child, _OPEN_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                os.unlink(child, dir_fd=fd)  # a link or a file now: never followed
                continue
            stack.append((child_fd, child, _children_or_close(child_fd)))
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _children_or_close(fd: int) -> list[tuple[str, bool]]:
    try:
        return _children(fd)
    except BaseException:
        os.close(fd)
        raise


def _is_directory(dir_fd: int, name: str) -> bool:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return st.S_ISDIR(info.st_mode)
