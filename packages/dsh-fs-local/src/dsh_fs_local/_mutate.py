"""The critical section of a mutation, run in one worker-thread call.

:func:`mutate` reaches the target's directory beneath its root (a
:class:`~dsh_fs_local._reach.Spot`: the directory held open and the final
name), asks the workspace once about that place, holds the directory's
``flock``, sweeps stale temporaries (:mod:`~dsh_fs_local._temporaries`),
checks the current state, computes the new bytes and publishes them
(:mod:`~dsh_fs_local._publish`) — every step an ``*at`` call on the held
descriptor.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from dsh_fs import FsError, FsErrorCode
from dsh_fs.preconditions import not_regular, parent_not_directory
from dsh_fs.text import Bytes

from ._os_errors import os_failure
from ._publish import lock_directory, replace_via_temporary, rewrite_in_place
from ._reach import CreatedDirectories, Reach, Refused, Spot
from ._reading import READ_FLAGS, read_all
from ._temporaries import remember_clean, sweep_unless_clean

__all__ = [
    "Check",
    "Mutated",
    "Plan",
    "checked_state",
    "mutate",
    "mutation_failure",
    "publish",
    "writable_spot",
]

R = TypeVar("R")

Check = Callable[[os.stat_result | None], None]
"""Raises the mutation's ``FsError`` for the current state (``None``: absent)."""
Plan = Callable[[bytes | None], tuple[tuple[Bytes, ...], R]]
"""The new bytes from the previous ones (``None``: absent or not read), in pieces written
one after the other (an edit's are views of the previous bytes around its new string),
and what the caller makes of them (the edit it applied, a write's ``before`` and
``after`` texts)."""


@dataclass(frozen=True, slots=True)
class Mutated(Generic[R]):
    """What one mutation did: the new version, whether it replaced a file (else created
    one), and the second half of what its plan returned."""

    version: str
    replaced: bool
    result: R


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


def writable_spot(
    reach: Reach,
    key: str,
    display_path: str,
    verb: str,
    check: Check,
    created: CreatedDirectories,
) -> Spot:
    """The spot of ``key``, where the workspace grants this write; the mutation's ``FsError``
    (every directory made here removed again) otherwise.

    The workspace is asked once, about the place the lookup reached (it may
    have followed a final link, or an absolute one into another root), before
    anything there is locked, swept or read. A key outside every root is
    refused by the reach itself, before its first system call. Where no place
    was reached (a missing directory, a failed lookup) the key answers: the
    refusal comes before the absent target is checked, before any directory
    is made and before the OS error. When the target's directory is missing,
    ``check`` (the target is absent) decides whether it may be made.
    """
    workspace = reach.workspace
    try:
        try:
            spot = reach.locate(key)
        except OSError as exc:
            workspace.check(verb, display_path, key, write=True)
            if not isinstance(exc, FileNotFoundError):
                raise
            check(None)
            spot = reach.make_directories(key, created)
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
        workspace.check(verb, display_path, spot.path, write=True)
    except BaseException:
        spot.close()
        created.undo()
        raise
    return spot


def _state(spot: Spot) -> os.stat_result | None:
    """The target's ``lstat`` under the lock (``None``: absent)."""
    try:
        return os.stat(spot.name, dir_fd=spot.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def mutate(
    reach: Reach,
    key: str,
    display_path: str,
    verb: str,
    check: Check,
    plan: Plan[R],
    previous_max: int | None = None,
) -> Mutated[R]:
    """Run one mutation of ``key``: reach, lock, check, plan, publish.

    ``check`` sees the current state (it raises for a special file, a stale
    version or a failed intent); ``plan`` turns the previous bytes into the
    new ones and what the caller makes of them (it may raise, e.g. an edit
    that does not match). A previous file larger than ``previous_max`` is not
    read (``plan`` sees ``None``), unless its bytes are needed for an
    in-place rewrite. Every step works through the descriptor of the
    target's directory, reached beneath its root, and any ``FsError`` leaves
    the target and the directory exactly as they were.
    """
    created = CreatedDirectories()
    spot = writable_spot(reach, key, display_path, verb, check, created)
    try:
        clean = sweep_unless_clean(spot, lock_directory(spot))
        current = checked_state(spot, check)
        done = publish(reach, spot, current, plan, verb, display_path, previous_max)
        if clean:
            remember_clean(spot)
    except BaseException as exc:
        spot.close()
        created.undo()
        if not isinstance(exc, OSError):
            raise
        raise mutation_failure(verb, display_path, exc) from exc
    spot.close()
    created.close()
    return done


def mutation_failure(verb: str, display_path: str, exc: OSError) -> FsError:
    """The ``FsError`` of an ``OSError`` met while checking or publishing a mutation."""
    if exc.errno == errno.EISDIR:
        return not_regular(verb, display_path)
    return os_failure(verb, display_path, exc)


def checked_state(spot: Spot, check: Check) -> os.stat_result | None:
    """The target's state under the lock, once ``check`` passed and the file (if any) is
    this process's to change (effective ids, as ``open`` would say)."""
    current = _state(spot)
    check(current)
    if current is not None and not _may_write(spot):
        # Replacing by rename only needs the directory's permission; a
        # read-only file is still not ours to change (as open() would say).
        raise OSError(errno.EACCES, os.strerror(errno.EACCES))
    return current


def publish(
    reach: Reach,
    spot: Spot,
    current: os.stat_result | None,
    plan: Plan[R],
    verb: str,
    display_path: str,
    previous_max: int | None = None,
) -> Mutated[R]:
    """Read what ``plan`` needs of the checked file ``current``, plan, and publish."""
    source = None if current is None else _open_current(spot, current, verb, display_path)
    try:
        in_place = current is not None and current.st_nlink > 1 and not reach.workspace.contained
        previous = None
        if (
            source is not None
            and current is not None
            and (in_place or previous_max is None or current.st_size <= previous_max)
        ):
            previous = read_all(source, current.st_size, verb, display_path)
        pieces, result = plan(previous)
        if in_place and current is not None and previous is not None:
            version = rewrite_in_place(spot, b"".join(pieces), previous, current)
        else:
            version = replace_via_temporary(spot, pieces, current, source)
    finally:
        if source is not None:
            os.close(source)
    return Mutated(version, current is not None, result)
