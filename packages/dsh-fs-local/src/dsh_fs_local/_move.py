"""Moving an entry (a file, a symlink as a link, a directory) with one atomic rename.

One worker-thread call: reach both entries' directories beneath their roots
(final names not followed; the destination's missing parents made as a
write makes them), hold both directories' ``flock`` in one fixed order
(:func:`~dsh_fs_local._entry.lock_in_order`), check both guards and the
type rules on the current state, then one ``renameat2`` through the two
descriptors — ``RENAME_NOREPLACE`` when the destination may not be replaced,
so nothing can appear there between the check and the rename.

Across filesystems (``EXDEV``, a root or a mount point on another device) a
regular file is copied to an ``O_EXCL`` temporary beside the destination,
given the source's mode, owner, extended attributes and times, ``fsync``ed
and renamed into place; only then is the source unlinked. A symlink is
recreated the same way; a directory is refused. A kill in between leaves
both names (the source as before, the destination as after), never a
partial file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat as st
from dataclasses import dataclass

from anyio import from_thread
from dsh_fs import FsError, FsErrorCode, MoveGuard, PathType
from dsh_fs.preconditions import (
    MOVE_TO,
    already_exists,
    check_move_destination,
    check_move_source,
    not_directory,
    not_empty,
    not_found,
    not_regular,
)
from dsh_fs.workspace import is_beneath

from ._entry import canonical_path, entry_state, lock_in_order, reach_entry
from ._os_errors import os_failure
from ._paths import path_type_of
from ._publish import WRITE_FLAGS, fsync_directory, hand_on_metadata
from ._reach import CreatedDirectories, Reach, Spot
from ._reading import READ_FLAGS
from ._rename import rename_at
from ._temporaries import companion_name, in_flight

__all__ = ["Moved", "move"]

_COPY_CHUNK = 8 << 20
"""Bytes copied per step across filesystems; cancellation is checked between steps."""


@dataclass(frozen=True, slots=True)
class Moved:
    """What moved (``lstat``'s type), the destination's version, whether it replaced one."""

    type: PathType
    version: str | None
    replaced: bool


@dataclass(frozen=True, slots=True)
class _Side:
    path: str
    display_path: str


def _into_itself(display_path: str) -> FsError:
    return FsError.cannot(
        "move", display_path, "a directory cannot move into itself", FsErrorCode.FS_IO_ERROR
    )


def move(
    reach: Reach,
    source: tuple[str, str],
    destination: tuple[str, str],
    replace: bool,
    guard: MoveGuard,
) -> Moved:
    """Move ``source`` to ``destination`` (each ``(path beneath a root, display path)``)."""
    src, dst = _Side(*source), _Side(*destination)
    # Both paths' refusals come before any other answer (a missing source
    # behind a destination outside is refused, not "not found").
    src_spot = reach_entry(reach, src.path, src.display_path, "move")
    created = CreatedDirectories()
    dst_spot: Spot | None = None
    try:
        dst_spot = reach_entry(reach, dst.path, dst.display_path, MOVE_TO)
        # Before any directory is made: a missing source makes none.
        state = None if src_spot is None else entry_state(reach, src_spot)[1]
        check_move_source(src.display_path, state, guard.source)
        if src_spot is None:  # check_move_source refuses an absent entry
            raise not_found("move", src.display_path)
        if dst_spot is None:
            dst_spot = reach_entry(reach, dst.path, dst.display_path, MOVE_TO, created)
            assert dst_spot is not None  # missing parents were made
        lock_in_order([src_spot, dst_spot])
        moved = _move_locked(reach, src_spot, dst_spot, src, dst, replace, guard)
    except BaseException as exc:
        created.undo()
        if isinstance(exc, OSError):
            raise os_failure("move", src.display_path, exc) from exc
        raise
    finally:
        if src_spot is not None:
            src_spot.close()
        if dst_spot is not None:
            dst_spot.close()
    created.close()
    return moved


def _move_locked(
    reach: Reach,
    src_spot: Spot,
    dst_spot: Spot,
    src: _Side,
    dst: _Side,
    replace: bool,
    guard: MoveGuard,
) -> Moved:
    """Check both sides under both locks, then rename."""
    current, state = entry_state(reach, src_spot)
    check_move_source(src.display_path, state, guard.source)
    assert current is not None
    is_directory = st.S_ISDIR(current.st_mode)
    src_real, dst_real = canonical_path(src_spot), canonical_path(dst_spot)
    if is_directory and dst_real != src_real and is_beneath(dst_real, src_real):
        raise _into_itself(src.display_path)
    existing, existing_state = entry_state(reach, dst_spot)
    check_move_destination(dst.display_path, existing_state, guard.destination, replace=replace)
    if dst_real == src_real:  # one entry by two names: renaming it onto itself does nothing
        return Moved(path_type_of(current.st_mode), state[1] if state else None, False)
    if existing is not None:
        if is_directory and not st.S_ISDIR(existing.st_mode):
            raise not_directory(MOVE_TO, dst.display_path)
        if not is_directory and st.S_ISDIR(existing.st_mode):
            raise not_regular(MOVE_TO, dst.display_path)
    kind = path_type_of(current.st_mode)
    try:
        if existing is not None and _same_inode(existing, current):
            # Two hard links of one file: rename(2) would do nothing and keep both.
            os.unlink(src_spot.name, dir_fd=src_spot.dir_fd)
        else:
            rename_at(
                src_spot.dir_fd, src_spot.name, dst_spot.dir_fd, dst_spot.name, replace=replace
            )
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            _move_across(src_spot, dst_spot, current, src, replace)
        elif exc.errno == errno.EEXIST and not replace:
            raise already_exists(dst.display_path) from exc
        elif exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise not_empty(MOVE_TO, dst.display_path) from exc
        elif exc.errno == errno.EINVAL and is_directory:
            raise _into_itself(src.display_path) from exc
        else:
            raise
    fsync_directory(dst_spot)
    fsync_directory(src_spot)
    _, moved_state = entry_state(reach, dst_spot)
    return Moved(kind, None if moved_state is None else moved_state[1], existing is not None)


def _same_inode(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _move_across(
    src_spot: Spot,
    dst_spot: Spot,
    current: os.stat_result,
    src: _Side,
    replace: bool,
) -> None:
    """``EXDEV``: publish a copy beside the destination, then remove the source."""
    if st.S_ISDIR(current.st_mode):
        raise FsError.cannot(
            "move",
            src.display_path,
            "a directory cannot move across filesystems",
            FsErrorCode.FS_IO_ERROR,
        )
    if not (st.S_ISREG(current.st_mode) or st.S_ISLNK(current.st_mode)):
        raise not_regular("move", src.display_path)
    temp = companion_name(dst_spot.name, "tmp")
    directory = dst_spot.dir_fd
    with in_flight(dst_spot, temp):
        try:
            if st.S_ISLNK(current.st_mode):
                os.symlink(
                    os.readlink(src_spot.name, dir_fd=src_spot.dir_fd), temp, dir_fd=directory
                )
            else:
                _copy_file(src_spot, directory, temp, current, src)
            rename_at(directory, temp, directory, dst_spot.name, replace=replace)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=directory)
            raise
    fsync_directory(dst_spot)
    os.unlink(src_spot.name, dir_fd=src_spot.dir_fd)


def _copy_file(
    src_spot: Spot, directory: int, temp: str, current: os.stat_result, src: _Side
) -> None:
    """Copy the source file (checked to be ``current``) to the new ``temp``, ``fsync``ed.

    The caller's cancellation is checked between chunks: a cancelled copy
    removes its temporary and leaves both paths as they were.
    """
    source = os.open(src_spot.name, READ_FLAGS | os.O_NOFOLLOW, dir_fd=src_spot.dir_fd)
    try:
        if not _same_inode(os.fstat(source), current):
            raise FsError.cannot(
                "move",
                src.display_path,
                "file changed during the operation",
                FsErrorCode.FS_IO_ERROR,
            )
        fd = os.open(temp, WRITE_FLAGS, 0o600, dir_fd=directory)
        try:
            while True:
                with contextlib.suppress(RuntimeError):  # not in an AnyIO worker thread
                    from_thread.check_cancelled()
                if os.sendfile(fd, source, None, _COPY_CHUNK) == 0:
                    break
            hand_on_metadata(source, fd, current, src_spot.path)
            os.utime(fd, ns=(current.st_atime_ns, current.st_mtime_ns))
            os.fsync(fd)
        finally:
            os.close(fd)
    finally:
        os.close(source)
