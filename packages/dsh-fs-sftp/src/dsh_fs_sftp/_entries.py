"""Removing and moving entries over SFTP, and a batch of changes under all its locks.

Kept as one module: delete, move and the batch share one sequence (reach,
check, lock in the one order, check again, act) and its helpers.

Each primitive reaches its paths as a write does (every component checked on
the server, the final one not followed: a link is removed or moved, never
what it points at), checks its guards, then takes the cross-client lock file
of every path it changes — in one order, sorted by the lock's path, the
same in every client — checks the guards again and acts:

* a file, a link or an empty directory is removed with one request; a tree
  is first renamed aside (``posix-rename@openssh.com``) to a temporary of the
  write's naming rule in its parent, so it vanishes at once for every
  observer, then removed without following any link. A client killed in
  between leaves only that temporary, which the sweep of its stale lock
  removes (:func:`._lock.sweep_temporaries`);
* a move is one ``posix-rename@openssh.com`` (across filesystems: a copy
  published before the source is removed, :mod:`._across`). ``replace=False`` is decided
  under both locks: no client of this backend can create the destination
  between that check and the rename (every mutation of a path holds its
  lock), which is as far as SFTP lets it go — the extension always replaces,
  and a process on the server that ignores the locks could still create the
  destination within that one round trip.

Once the request that publishes is sent, the call completes whatever
cancellation arrives (:func:`._loop.run_to_end`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import asyncssh
from dsh_fs import (
    AtVersion,
    DeleteChange,
    EntryGuard,
    FsBatchError,
    FsChange,
    FsError,
    FsErrorCode,
    MoveGuard,
    PathType,
    ReplaceIfVersion,
    WriteChange,
    WriteIntent,
)
from dsh_fs.preconditions import (
    MOVE_TO,
    check_delete,
    check_move_destination,
    check_move_source,
    check_write,
    not_directory,
    not_empty,
    not_regular,
    parent_not_directory,
    workspace_root,
)
from dsh_fs.workspace import is_beneath, read_only_workspace

from ._across import across_filesystems, move_across
from ._connection import LOST, lost, sftp_failure
from ._lock import Held, lock_path, temporary_name
from ._loop import run_to_end
from ._publish import make_directory, open_or_none, rewrite
from ._requests import lstat_or_none, remove_tree
from ._versions import file_version, guarded_state, guarded_version
from ._walk import LinkLoop, Outside, ParentNotDirectory, kind_of

if TYPE_CHECKING:
    from ._remote import Remote

EntryState = tuple[PathType, str | None] | None
"""A removal's or move's view of an entry: its ``lstat`` type and its ``stat`` version."""


@dataclass
class Entry:
    """One path a removal, move or batch acts on, as reached on the server."""

    display: str
    path: str
    """Canonical: every directory before the last component resolved on the server."""
    attrs: asyncssh.SFTPAttrs | None
    """``lstat`` of the entry itself; ``None`` when nothing is there."""
    missing: tuple[str, ...] = ()
    """Directories a move or write must create first."""

    @property
    def kind(self) -> PathType | None:
        return None if self.attrs is None else kind_of(self.attrs)


async def reach_entry(
    remote: Remote, sftp: asyncssh.SFTPClient, display: str, verb: str, *, follow: bool = False
) -> Entry | None:
    """The entry at ``display`` (``None``: a parent segment is not a directory), refused
    when outside the workspace or read-only (outside first), when it is, or holds, a
    workspace root, and when it holds a read-only root."""
    path = remote.beneath_root(display, verb)
    spot = await remote.reach(sftp, path, verb, display, follow=follow)
    workspace = remote.workspace
    workspace.check(verb, display, path if spot is None else spot.path, write=True)
    if spot is None:
        return None
    writable = ("/",) if workspace.roots is None else workspace.roots
    if any(is_beneath(root, spot.path) for root in writable):
        raise workspace_root(verb, display)
    if workspace.contained and any(is_beneath(r, spot.path) for r in workspace.read_only_roots):
        raise read_only_workspace(verb, display)
    return Entry(display, spot.path, spot.attrs, spot.missing)


async def relook(remote: Remote, sftp: asyncssh.SFTPClient, entry: Entry) -> Entry:
    """``entry`` as it is now (under its lock)."""
    return Entry(entry.display, entry.path, await lstat_or_none(sftp, entry.path), entry.missing)


async def _followed(
    remote: Remote, sftp: asyncssh.SFTPClient, entry: Entry
) -> tuple[str, asyncssh.SFTPAttrs] | None:
    """Where ``entry`` leads (itself unless a link): ``None`` when a link dangles or leads
    outside."""
    assert entry.attrs is not None
    if kind_of(entry.attrs) != "symlink":
        return entry.path, entry.attrs
    try:
        spot = await remote.walker.walk(sftp, entry.path)
    except (Outside, LinkLoop, ParentNotDirectory):
        return None
    return None if spot.attrs is None else (spot.path, spot.attrs)


async def state_of_entry(
    remote: Remote, sftp: asyncssh.SFTPClient, entry: Entry | None, guard: EntryGuard | None
) -> EntryState:
    """``(lstat type, stat version)`` of ``entry`` for ``guard``: a link's version is its
    target's (``None`` when it dangles or leads outside); a file's is made the way the
    guard's was (:func:`._versions.guarded_version`)."""
    if entry is None or entry.attrs is None:
        return None
    followed = await _followed(remote, sftp, entry)
    if followed is None:
        return kind_of(entry.attrs), None
    expected = guard.version if isinstance(guard, AtVersion) else None
    return kind_of(entry.attrs), await guarded_version(sftp, *followed, expected)


async def stat_version(remote: Remote, sftp: asyncssh.SFTPClient, entry: Entry) -> str | None:
    """What a fresh ``stat`` of ``entry`` reports as its version (``None``: it dangles)."""
    if entry.attrs is None:
        return None
    followed = await _followed(remote, sftp, entry)
    if followed is None:
        return None
    return (await file_version(sftp, *followed, remote.clock))[0]


async def _is_empty(sftp: asyncssh.SFTPClient, path: str) -> bool:
    return all(e.filename in (".", "..") for e in await sftp.readdir(path))


async def check_removal(
    remote: Remote,
    sftp: asyncssh.SFTPClient,
    entry: Entry | None,
    guard: EntryGuard | None,
    recursive: bool,
    display: str,
) -> None:
    """The removal's refusals for ``entry`` as it is: its guard, then a non-empty directory."""
    check_delete(display, await state_of_entry(remote, sftp, entry, guard), guard)
    directory = entry is not None and entry.kind == "directory"
    if directory and not recursive and entry is not None and not await _is_empty(sftp, entry.path):
        raise not_empty("delete", display)


async def remove_entry(sftp: asyncssh.SFTPClient, entry: Entry, recursive: bool) -> None:
    """Remove ``entry`` (checked, under its lock); a tree goes aside first, then away."""
    if entry.kind != "directory":
        await run_to_end(sftp.remove(entry.path))
        return
    if not recursive:
        try:
            await run_to_end(sftp.rmdir(entry.path))
        except asyncssh.SFTPFailure:  # OpenSSH says only "failure" for ENOTEMPTY
            if not await _is_empty(sftp, entry.path):
                raise not_empty("delete", entry.display) from None
            raise
        return
    aside = temporary_name(entry.path)
    await run_to_end(sftp.posix_rename(entry.path, aside))
    await run_to_end(remove_tree(sftp, aside))


@contextlib.asynccontextmanager
async def holding(remote: Remote, sftp: asyncssh.SFTPClient, paths: Sequence[str]) -> Any:
    """Hold the lock files of ``paths`` (each once), taken in the order of their lock paths:
    every client takes them in that order, so two never wait for each other. Yields the
    held locks by path."""
    held: dict[str, Held] = {}
    async with contextlib.AsyncExitStack() as stack:
        for path in sorted(set(paths), key=lock_path):
            held[path] = await stack.enter_async_context(remote.locks.hold(sftp, path))
            remote.clock.observe(await held[path].server_time())
        yield held


# -- delete -------------------------------------------------------------------------------------


async def delete(
    remote: Remote,
    sftp: asyncssh.SFTPClient,
    display: str,
    recursive: bool,
    guard: EntryGuard | None,
) -> PathType:
    entry = await reach_entry(remote, sftp, display, "delete")
    await check_removal(remote, sftp, entry, guard, recursive, display)
    assert entry is not None and entry.attrs is not None  # check_delete refused absence
    async with holding(remote, sftp, [entry.path]):
        entry = await relook(remote, sftp, entry)
        await check_removal(remote, sftp, entry, guard, recursive, display)
        assert entry.attrs is not None
        await remove_entry(sftp, entry, recursive)
        return kind_of(entry.attrs)


# -- move ---------------------------------------------------------------------------------------


def _check_kinds(source: Entry, destination: Entry, destination_empty: bool) -> None:
    """What a rename of ``source`` over ``destination`` may not do (after the guards)."""
    moving_directory = source.kind == "directory"
    if destination.attrs is None or destination.path == source.path:
        return
    if moving_directory and destination.kind != "directory":
        raise not_directory(MOVE_TO, destination.display)
    if not moving_directory and destination.kind == "directory":
        raise not_regular(MOVE_TO, destination.display)
    if moving_directory and not destination_empty:
        raise not_empty(MOVE_TO, destination.display)


async def _check_move(
    remote: Remote,
    sftp: asyncssh.SFTPClient,
    source: Entry | None,
    destination: Entry,
    guard: MoveGuard,
    replace: bool,
    display: str,
) -> Entry:
    check_move_source(
        display, await state_of_entry(remote, sftp, source, guard.source), guard.source
    )
    assert source is not None and source.attrs is not None
    if (
        source.kind == "directory"
        and destination.path != source.path
        and is_beneath(destination.path, source.path)
    ):
        raise FsError.cannot(
            "move", display, "a directory cannot move into itself", FsErrorCode.FS_IO_ERROR
        )
    check_move_destination(
        destination.display,
        await state_of_entry(remote, sftp, destination, guard.destination),
        guard.destination,
        replace=replace,
    )
    empty = True
    if destination.kind == "directory" and source.kind == "directory":
        empty = await _is_empty(sftp, destination.path)
    _check_kinds(source, destination, empty)
    return source


async def move(
    remote: Remote,
    sftp: asyncssh.SFTPClient,
    source_display: str,
    destination_display: str,
    replace: bool,
    guard: MoveGuard,
) -> tuple[PathType, str | None, bool]:
    """Returns what moved, the destination's version after it, and whether it replaced."""
    source = await reach_entry(remote, sftp, source_display, "move")
    destination = await reach_entry(remote, sftp, destination_display, MOVE_TO)
    if destination is None:
        raise parent_not_directory(MOVE_TO, destination_display)
    source = await _check_move(remote, sftp, source, destination, guard, replace, source_display)
    for directory in destination.missing:
        await make_directory(sftp, directory)
    async with holding(remote, sftp, [source.path, destination.path]):
        source = await relook(remote, sftp, source)
        destination = await relook(remote, sftp, destination)
        source = await _check_move(
            remote, sftp, source, destination, guard, replace, source_display
        )
        # Once the rename is sent the move has happened: the caller gets its outcome.
        return await run_to_end(_rename(remote, sftp, source, destination, source_display))


async def _rename(
    remote: Remote, sftp: asyncssh.SFTPClient, source: Entry, destination: Entry, display: str
) -> tuple[PathType, str | None, bool]:
    """Rename ``source`` over ``destination`` (both checked, under their locks); what moved,
    the destination's version after it, and whether it replaced an entry."""
    assert source.attrs is not None
    if source.path == destination.path:  # one entry by two names: nothing to do
        return kind_of(source.attrs), await stat_version(remote, sftp, source), False
    try:
        await sftp.posix_rename(source.path, destination.path)
    except asyncssh.SFTPFailure:
        if not await across_filesystems(sftp, source.path, destination.path):
            raise
        await move_across(sftp, source.path, source.attrs, destination.path, display)
    moved = await relook(remote, sftp, destination)
    return (
        kind_of(source.attrs),
        await stat_version(remote, sftp, moved),
        destination.attrs is not None,
    )


# -- apply_changes ------------------------------------------------------------------------------


@dataclass
class _Planned:
    change: FsChange
    entry: Entry


def _write_guard(expected: WriteIntent | None) -> str | None:
    return expected.version if isinstance(expected, ReplaceIfVersion) else None


async def _check_change(
    remote: Remote, sftp: asyncssh.SFTPClient, planned: _Planned, *, under_lock: bool
) -> None:
    """A change's refusals: before the locks on the attributes, under them also on the
    digest a guard carries (so no guard can fail once publishing has begun)."""
    change, entry = planned.change, planned.entry
    display = change.target.display_path
    if isinstance(change, DeleteChange):
        await check_removal(remote, sftp, entry, change.expected, change.recursive, display)
        return
    expected = _write_guard(change.expected)
    state = guarded_state(entry.attrs, expected)
    if under_lock and state is not None and entry.attrs is not None:
        state = (state[0], await guarded_version(sftp, entry.path, entry.attrs, expected))
    check_write(display, state, change.expected)


async def apply_changes(
    remote: Remote,
    sftp: asyncssh.SFTPClient,
    changes: Sequence[FsChange],
    plans: Sequence[Any],
) -> list[tuple[str, bytes | None] | PathType]:
    """Check every change, take every lock (sorted), check again, then publish in order.

    ``plans[i]`` gives the new bytes of write ``i`` from its previous ones.
    Returns, per change, ``(version, previous bytes)`` of a write or the type a
    removal removed.
    """
    planned: list[_Planned] = []
    for change in changes:
        display = change.target.display_path
        if isinstance(change, DeleteChange):
            entry = await reach_entry(remote, sftp, display, "delete")
            if entry is None:
                check_delete(display, None, change.expected)
                raise AssertionError("unreachable")
        else:
            entry = await reach_entry(remote, sftp, display, "write", follow=True)
            if entry is None:
                raise parent_not_directory("write", display)
        planned.append(_Planned(change, entry))
        await _check_change(remote, sftp, planned[-1], under_lock=False)
    for item in planned:
        if isinstance(item.change, WriteChange):
            for directory in item.entry.missing:
                await make_directory(sftp, directory)
    async with holding(remote, sftp, [p.entry.path for p in planned]) as held:
        for item in planned:
            item.entry = await relook(remote, sftp, item.entry)
            await _check_change(remote, sftp, item, under_lock=True)
        return await run_to_end(_publish_all(remote, sftp, planned, plans, held))


async def _publish_all(
    remote: Remote,
    sftp: asyncssh.SFTPClient,
    planned: Sequence[_Planned],
    plans: Sequence[Any],
    held: dict[str, Held],
) -> list[tuple[str, bytes | None] | PathType]:
    results: list[tuple[str, bytes | None] | PathType] = []
    for index, item in enumerate(planned):
        change, entry = item.change, item.entry
        verb = "delete" if isinstance(change, DeleteChange) else "write"
        try:
            if isinstance(change, DeleteChange):
                assert entry.attrs is not None
                await remove_entry(sftp, entry, change.recursive)
                results.append(kind_of(entry.attrs))
                continue
            lock = held[entry.path]
            lock.along = list(await _gather_along(sftp, entry.path, entry.kind == "file"))
            display = change.target.display_path
            expected = _write_guard(change.expected)

            def check(current: Any, display: str = display, change: WriteChange = change) -> None:
                check_write(display, current, change.expected)

            results.append(
                await rewrite(
                    remote.locks,
                    sftp,
                    entry.path,
                    lock,
                    check,
                    plans[index],
                    expected,
                    remote.clock,
                )
            )
        except FsError as exc:
            if index == 0:
                raise
            raise FsBatchError(exc.message, exc.code, index) from exc
        except LOST as exc:
            remote.drop()
            failure = lost(verb, change.target.display_path, remote.address)
            if index == 0:
                raise failure from exc
            raise FsBatchError(failure.message, failure.code, index) from exc
        except asyncssh.SFTPError as exc:
            failure = sftp_failure(verb, change.target.display_path, exc)
            if index == 0:
                raise failure from exc
            raise FsBatchError(failure.message, failure.code, index) from exc
    return results


async def _gather_along(sftp: asyncssh.SFTPClient, path: str, is_file: bool) -> list[Any]:
    requests: list[Any] = [lstat_or_none(sftp, path)]
    if is_file:
        requests.append(open_or_none(sftp, path))
    return list(await asyncio.gather(*requests, return_exceptions=True))


__all__ = ["apply_changes", "delete", "move"]
