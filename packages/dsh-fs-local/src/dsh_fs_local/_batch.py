"""Several writes and removals, all checked before any is published (``apply_changes``).

One worker-thread call: reach every target's directory beneath its root (a
write's missing parents made, as ``write_text`` makes them), take every
directory's ``flock`` once in one fixed order
(:func:`~dsh_fs_local._entry.lock_in_order`), check every guard on the
current state under them, and only then publish each change in order — a
write by the atomic temporary-and-rename of :mod:`~dsh_fs_local._publish`, a
removal as :mod:`~dsh_fs_local._remove` does it. A failure after the first
publish raises :class:`~dsh_fs.FsBatchError` with the number published.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from dsh_fs import (
    EntryGuard,
    FsBatchError,
    FsDeleteOutcome,
    FsError,
    FsWriteOutcome,
    WriteIntent,
)
from dsh_fs.preconditions import check_delete, check_write, not_found
from dsh_fs.text import decode_previous, encode_text, written_text

from ._entry import lock_in_order, reach_entry
from ._mutate import Check, Plan, checked_state, mutation_failure, publish, writable_spot
from ._os_errors import os_failure
from ._paths import file_state
from ._reach import CreatedDirectories, Reach, Spot
from ._remove import check_removable, remove_entry

__all__ = ["BatchDelete", "BatchWrite", "apply_batch", "write_steps"]

WriteResult = tuple[str | None, str]
"""A write's ``before`` and ``after`` texts."""


def write_steps(
    display_path: str, content: str, expected: WriteIntent | None
) -> tuple[Check, Plan[WriteResult]]:
    """The check and the plan of one ``write_text`` (shared by the batch)."""

    def check(current: os.stat_result | None) -> None:
        check_write(display_path, file_state(current), expected)

    def plan(previous: bytes | None) -> tuple[tuple[bytes], WriteResult]:
        # The texts are made here, in the worker thread: a large content
        # is not decoded or normalized on the event loop.
        data = encode_text(content, "write", display_path)
        before = None if previous is None else decode_previous(previous)
        return (data,), (before, written_text(content))

    return check, plan


@dataclass(frozen=True, slots=True)
class BatchWrite:
    key: str
    display_path: str
    content: str
    expected: WriteIntent | None
    previous_max: int | None


@dataclass(frozen=True, slots=True)
class BatchDelete:
    path: str
    """Beneath a root (the final name is not followed)."""
    display_path: str
    recursive: bool
    expected: EntryGuard | None


BatchChange = BatchWrite | BatchDelete


def apply_batch(
    reach: Reach, changes: Sequence[BatchChange]
) -> list[FsWriteOutcome | FsDeleteOutcome]:
    """Check every change under every directory lock, then publish them in order."""
    created = CreatedDirectories()
    spots: list[Spot] = []
    outcomes: list[FsWriteOutcome | FsDeleteOutcome] = []
    try:
        _prepare(reach, changes, spots, created)
        states: list[os.stat_result | None] = []
        for spot, change in zip(spots, changes, strict=True):
            try:
                states.append(_check(reach, spot, change))
            except OSError as exc:
                raise _failure(change, exc) from exc
        for spot, change, current in zip(spots, changes, states, strict=True):
            try:
                outcomes.append(_publish(reach, spot, change, current))
            except OSError as exc:
                raise _failure(change, exc) from exc
    except BaseException as exc:
        if not outcomes:
            created.undo()
            raise
        created.close()
        if isinstance(exc, FsError):
            raise FsBatchError(exc.message, exc.code, len(outcomes)) from exc
        raise
    finally:
        for spot in spots:
            spot.close()
    created.close()
    return outcomes


def _prepare(
    reach: Reach, changes: Sequence[BatchChange], spots: list[Spot], created: CreatedDirectories
) -> None:
    """Reach every change's spot (into ``spots``) and lock their directories."""
    for change in changes:
        spots.append(_reach(reach, change, created))
    try:
        lock_in_order(spots)
    except OSError as exc:
        raise _failure(changes[0], exc) from exc


def _failure(change: BatchChange, exc: OSError) -> FsError:
    if isinstance(change, BatchWrite):
        return mutation_failure("write", change.display_path, exc)
    return os_failure("delete", change.display_path, exc)


def _reach(reach: Reach, change: BatchChange, created: CreatedDirectories) -> Spot:
    if isinstance(change, BatchWrite):
        check, _ = write_steps(change.display_path, change.content, change.expected)
        return writable_spot(reach, change.key, change.display_path, "write", check, created)
    spot = reach_entry(reach, change.path, change.display_path, "delete")
    if spot is None:
        check_delete(change.display_path, None, change.expected)
        raise not_found("delete", change.display_path)
    return spot


def _check(reach: Reach, spot: Spot, change: BatchChange) -> os.stat_result | None:
    if isinstance(change, BatchWrite):
        check, _ = write_steps(change.display_path, change.content, change.expected)
        return checked_state(spot, check)
    return check_removable(
        reach, spot, change.display_path, change.recursive, change.expected, "delete"
    )


def _publish(
    reach: Reach, spot: Spot, change: BatchChange, current: os.stat_result | None
) -> FsWriteOutcome | FsDeleteOutcome:
    if isinstance(change, BatchWrite):
        _, plan = write_steps(change.display_path, change.content, change.expected)
        done = publish(
            reach, spot, current, plan, "write", change.display_path, change.previous_max
        )
        before, after = done.result
        return FsWriteOutcome("update" if done.replaced else "create", done.version, before, after)
    assert current is not None
    kind = remove_entry(spot, current, change.recursive, change.display_path, "delete")
    return FsDeleteOutcome(kind)
