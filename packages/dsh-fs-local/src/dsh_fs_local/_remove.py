"""Removing an entry: a file, a symlink (the link itself), an empty directory or a tree.

One worker-thread call: reach the entry's directory beneath its root (the
final name not followed, :mod:`~dsh_fs_local._entry`), hold its ``flock``,
sweep, check the guard on the current state, then ``unlink``/``rmdir`` with
``dir_fd``. A tree (``recursive``) vanishes at once for every observer: it
is renamed aside in its own directory to ``.<name>.dsh-<pid>-<8 hex>.del``
(``renameat2(RENAME_NOREPLACE)`` through the directory's descriptor), the
directory is ``fsync``ed (and, for a lone removal, its lock released), and
only then is the tree deleted beneath that descriptor, never following a
link inside (:mod:`~dsh_fs_local._tree`). A
crash leaves only the ``.del`` tree, which the next mutation's sweep in that
directory removes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat as st

from dsh_fs import EntryGuard, FsError, FsErrorCode, PathType
from dsh_fs.preconditions import check_delete, not_empty, not_found

from ._entry import entry_state, lock_in_order, reach_entry
from ._os_errors import os_failure
from ._paths import path_type_of
from ._publish import fsync_directory
from ._reach import Reach, Spot
from ._rename import rename_at
from ._temporaries import companion_name, in_flight
from ._tree import remove_tree

__all__ = ["check_removable", "remove", "remove_entry"]

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove(
    reach: Reach, path: str, display_path: str, recursive: bool, expected: EntryGuard | None
) -> PathType:
    """Remove the entry at ``path`` (beneath a root) as :meth:`LocalFileSystem.delete` says;
    what it was (``lstat``'s type)."""
    spot = reach_entry(reach, path, display_path, "delete")
    if spot is None:
        check_delete(display_path, None, expected)
        raise not_found("delete", display_path)  # check_delete always refuses an absent entry
    try:
        lock_in_order([spot])
        current = check_removable(reach, spot, display_path, recursive, expected, "delete")
        return remove_entry(spot, current, recursive, display_path, "delete", unlock_early=True)
    except OSError as exc:
        raise os_failure("delete", display_path, exc) from exc
    finally:
        spot.close()


def check_removable(
    reach: Reach,
    spot: Spot,
    display_path: str,
    recursive: bool,
    expected: EntryGuard | None,
    verb: str,
) -> os.stat_result:
    """The entry's ``lstat`` once its guard passed (under the directory's lock); a directory
    without ``recursive`` must be empty (``FS_NOT_EMPTY`` otherwise, before anything changes)."""
    current, state = entry_state(reach, spot)
    check_delete(display_path, state, expected)
    assert current is not None  # check_delete refused an absent entry
    if st.S_ISDIR(current.st_mode) and not recursive and not _empty(spot):
        raise not_empty(verb, display_path)
    return current


def _empty(spot: Spot) -> bool:
    fd = os.open(spot.name, _DIRECTORY_FLAGS, dir_fd=spot.dir_fd)
    try:
        with os.scandir(fd) as entries:
            return next(iter(entries), None) is None
    finally:
        os.close(fd)


def remove_entry(
    spot: Spot,
    current: os.stat_result,
    recursive: bool,
    display_path: str,
    verb: str,
    *,
    unlock_early: bool = False,
) -> PathType:
    """Remove the checked entry ``current`` from the spot's directory; its type.

    ``unlock_early``: a tree's directory lock is released once the tree is
    aside (durably), so a long deletion does not hold up writes beside it —
    for a lone removal, not inside a batch that still has changes to publish.
    """
    kind = path_type_of(current.st_mode)
    if kind != "directory":
        os.unlink(spot.name, dir_fd=spot.dir_fd)
    elif recursive:
        _remove_aside(spot, current, display_path, verb, unlock_early)
    else:
        try:
            os.rmdir(spot.name, dir_fd=spot.dir_fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            raise not_empty(verb, display_path) from exc
    fsync_directory(spot)
    return kind


def _remove_aside(
    spot: Spot, current: os.stat_result, display_path: str, verb: str, unlock_early: bool
) -> None:
    """Rename the tree aside, make that durable, then delete it beneath the directory.

    The aside name is one of this process's in-flight temporaries while the
    tree is deleted, so no sweep (ours or another process's: the pid runs)
    takes it, with or without the directory's lock.

    If the tree cannot be deleted completely (an entry this process may not
    remove), what remains is renamed back and the ``OSError`` raised: the
    path then shows what is left, not a hidden temporary.
    """
    directory = spot.dir_fd
    aside = companion_name(spot.name, "del")
    with in_flight(spot, aside):
        rename_at(directory, spot.name, directory, aside, replace=False)
        moved = os.stat(aside, dir_fd=directory, follow_symlinks=False)
        if (moved.st_dev, moved.st_ino) != (current.st_dev, current.st_ino):
            # Swapped by a process that does not take the lock: put it back, touch nothing.
            rename_at(directory, aside, directory, spot.name, replace=False)
            raise FsError.cannot(
                verb, display_path, "file changed during the operation", FsErrorCode.FS_IO_ERROR
            )
        fsync_directory(spot)
        if unlock_early and spot.readable:
            with contextlib.suppress(OSError):
                fcntl.flock(directory, fcntl.LOCK_UN)
        try:
            remove_tree(directory, aside)
        except OSError:
            with contextlib.suppress(OSError):
                rename_at(directory, aside, directory, spot.name, replace=False)
            raise
