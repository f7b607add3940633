"""The critical section of a mutation, run in one worker-thread call.

:func:`mutate` refuses what the workspace does not grant, reaches the
target's directory beneath its root (a :class:`~dsh_fs_local._reach.Spot`:
the directory held open and the final name), holds the directory's ``flock``,
sweeps stale temporaries (:mod:`~dsh_fs_local._temporaries`), checks the
current state, computes the new bytes and publishes them
(:mod:`~dsh_fs_local._publish`) — every step an ``*at`` call on the held
descriptor.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

from dsh_fs import FsError, FsErrorCode
from dsh_fs.preconditions import not_regular, parent_not_directory
from dsh_fs.workspace import outside_workspace, read_only_workspace

from ._os_errors import os_failure
from ._publish import lock_directory, replace_via_temporary, rewrite_in_place
from ._reach import CreatedDirectories, Reach, Refused, Spot
from ._reading import READ_FLAGS, read_all
from ._temporaries import remember_clean, sweep_unless_clean

__all__ = ["Check", "Plan", "mutate"]

Check = Callable[[os.stat_result | None], None]
"""Raises the mutation's ``FsError`` for the current state (``None``: absent)."""
Plan = Callable[[bytes | None], bytes]
"""Computes the new bytes from the previous ones (``None``: absent)."""


def _open_current(spot: Spot, current: os.stat_result, verb: str, display_path: str) -> int:
    """A read descriptor of the file ``current`` describes (``FS_IO_ERROR`` if it was swapped)."""
    try:
        fd = os.open(spot.name, READ_FLAGS | os.O_NOFOLLOW, dir_fd=spot.dir_fd)
    except OSError as exc:
        raise os_failure(verb, display_path, exc) from exc
    try:
        opened = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if (opened.st_dev, opened.st_ino) != (current.st_dev, current.st_ino):
        os.close(fd)
        raise FsError.cannot(
            verb, display_path, "file changed during the operation", FsErrorCode.FS_IO_ERROR
        )
    return fd


_EFFECTIVE_IDS = os.access in os.supports_effective_ids


def _may_write(spot: Spot) -> bool:
    """Whether this process may write the existing file (effective ids, as ``open``)."""
    return os.access(
        spot.name,
        os.W_OK,
        dir_fd=spot.dir_fd,
        effective_ids=_EFFECTIVE_IDS,
        follow_symlinks=False,
    )


def _locate(reach: Reach, key: str, check: Check, created: CreatedDirectories) -> Spot:
    """The spot of ``key``; when its directory is missing, ``check`` (the target is absent)
    decides first whether the missing directories may be created."""
    try:
        return reach.locate(key)
    except FileNotFoundError:
        check(None)
        return reach.make_directories(key, created)


def _read_only_refusal(reach: Reach, key: str, verb: str, display_path: str) -> FsError:
    """The refusal of a write to ``key``, which the workspace lets this backend only read.

    Outside wins over read-only: a directory on the way may have
    been swapped for a link that leaves every root since ``resolve``, so the
    target's directory is reached (never created) before the answer is given.
    """
    try:
        spot = reach.locate(key)
    except Refused as exc:
        return exc.error(verb, display_path)
    except OSError:
        return read_only_workspace(verb, display_path)
    try:
        if reach.workspace.access(spot.path) is None:
            return outside_workspace(verb, display_path)
    finally:
        spot.close()
    return read_only_workspace(verb, display_path)


def mutate(
    reach: Reach,
    key: str,
    display_path: str,
    verb: str,
    check: Check,
    plan: Plan,
    previous_max: int | None = None,
) -> tuple[str, bool, bytes | None]:
    """Run one mutation of ``key``; returns the new version, whether a file was replaced,
    and the previous bytes.

    The workspace refusal comes first (outside, then read-only), before
    anything is looked up. ``check`` then sees the current state (it raises
    for a special file, a stale version or a failed intent); ``plan`` turns
    the previous bytes into the new ones (it may raise, e.g. an edit that does
    not match). A previous file larger than ``previous_max`` is not read
    (``plan`` and the result see ``None``), unless its bytes are needed for
    an in-place rewrite. Every step after the refusal works through the
    descriptor of the target's directory, reached beneath its root. Any
    ``FsError`` leaves the target and the directory exactly as they were.
    """
    workspace = reach.workspace
    workspace.check(verb, display_path, key, write=False)
    if workspace.access(key) != "write":
        raise _read_only_refusal(reach, key, verb, display_path)
    created = CreatedDirectories()
    try:
        spot = _locate(reach, key, check, created)
    except BaseException as exc:
        created.undo()
        if isinstance(exc, Refused):
            raise exc.error(verb, display_path) from None
        if isinstance(exc, NotADirectoryError | FileExistsError):
            raise parent_not_directory(verb, display_path) from exc
        if isinstance(exc, IsADirectoryError):
            raise not_regular(verb, display_path) from exc
        if isinstance(exc, OSError):
            raise os_failure(verb, display_path, exc) from exc
        raise
    try:
        # The walk may have followed a final link or an absolute one into
        # another root: the place it reached is what must grant the write.
        workspace.check(verb, display_path, spot.path, write=True)
        clean = sweep_unless_clean(spot, lock_directory(spot))
        try:
            current: os.stat_result | None = os.stat(
                spot.name, dir_fd=spot.dir_fd, follow_symlinks=False
            )
        except FileNotFoundError:
            current = None
        check(current)
        if current is not None and not _may_write(spot):
            # Replacing by rename only needs the directory's permission; a
            # read-only file is still not ours to change (as open() would say).
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
        source = None if current is None else _open_current(spot, current, verb, display_path)
        try:
            in_place = current is not None and current.st_nlink > 1 and not workspace.contained
            previous = None
            if (
                source is not None
                and current is not None
                and (in_place or previous_max is None or current.st_size <= previous_max)
            ):
                previous = read_all(source, current.st_size, verb, display_path)
            data = plan(previous)
            if in_place and current is not None and previous is not None:
                version = rewrite_in_place(spot, data, previous, current)
            else:
                version = replace_via_temporary(spot, data, current, source)
        finally:
            if source is not None:
                os.close(source)
        if clean:
            remember_clean(spot)
    except BaseException as exc:
        spot.close()
        created.undo()
        if not isinstance(exc, OSError):
            raise
        if exc.errno == errno.EISDIR:
            raise not_regular(verb, display_path) from exc
        raise os_failure(verb, display_path, exc) from exc
    spot.close()
    created.close()
    return version, current is not None, previous
