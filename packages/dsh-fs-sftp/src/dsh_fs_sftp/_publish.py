"""Publishing a file's new bytes over SFTP: a temporary beside it, ``fsync``, rename."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import cast

import asyncssh

from ._attrs import State, version_of
from ._connection import LOST
from ._lock import FileLocks, Held, temporary_name
from ._loop import finish, run_to_end, undone_if_cancelled
from ._requests import close_quietly, lstat_or_none, read_at
from ._versions import ServerClock, digest_of, guarded_state, with_digest
from ._walk import kind_of


async def rewrite(
    locks: FileLocks,
    sftp: asyncssh.SFTPClient,
    path: str,
    held: Held,
    check: Callable[[State], None],
    plan: Callable[[bytes | None], bytes],
    expected: str | None,
    clock: ServerClock,
) -> tuple[str, bytes | None]:
    """Inside the lock: check again, read the previous bytes, publish the new ones.

    The guard's version ``expected`` is checked on the attributes, and once
    the previous bytes are in hand again on their digest when it carries
    one (:func:`._versions.guarded_state`). The new version carries the
    digest of the bytes written while the file is racy (it is, right after
    the write), as a fresh ``stat`` would compute it.

    A temporary file beside the target (``.<name>.dsh-<pid>-<8 hex>.tmp``,
    created exclusively while the previous bytes are read) gets the bytes,
    the old permission bits and an mtime at least one second past the old
    one, is ``fsync``\\ ed (``fsync@openssh.com``) and renamed over the
    target (``posix-rename@openssh.com``). Until the rename, a refusal, a
    failure or a cancellation removes the temporary file and leaves the
    target as it was; once the rename is sent, the write completes.
    """
    attrs, *opened = held.along
    old = opened[0] if opened else None
    if isinstance(attrs, BaseException) or isinstance(old, BaseException):
        if isinstance(old, asyncssh.SFTPClientFile):
            await finish(close_quietly(old))
        raise attrs if isinstance(attrs, BaseException) else old  # type: ignore[misc]
    try:
        check(guarded_state(attrs, expected))
    except BaseException:
        if old is not None:
            await finish(close_quietly(old))
        raise
    mode = None if attrs is None else (attrs.permissions or 0) & 0o7777
    temporary = temporary_name(path)
    previous: bytes | None = None
    # The temporary file is created while the previous bytes are read.
    creating = asyncio.ensure_future(_create(sftp, temporary, mode))
    try:
        if attrs is not None:
            if old is None:  # it appeared after the walk
                old = await sftp.open(path, "rb")
            previous = await _read_then_close(old, int(attrs.size or 0))
        elif old is not None:
            await finish(close_quietly(old))
        handle = await creating
    except BaseException:
        await finish(_abandon(sftp, creating, temporary))
        raise
    try:
        if previous is not None:
            check(guarded_state(attrs, expected, previous))
        data = plan(previous)
        mtime = await held.server_time()
        clock.observe(mtime)
        if attrs is not None and attrs.mtime is not None:
            mtime = max(mtime, int(attrs.mtime) + 1)
        final = asyncssh.SFTPAttrs(permissions=mode, atime=mtime, mtime=mtime)
        written = await _write_and_sync(sftp, handle, data, final)
    except BaseException:
        await finish(_discard(sftp, handle, temporary))
        raise
    release = locks.release_request(sftp, held)
    await run_to_end(_commit(sftp, handle, temporary, path, release))
    version = with_digest(written, digest_of(data)) if clock.racy(written) else version_of(written)
    return version, previous


WRITES_AT_ONCE = 16
"""Write requests of one file sent together (asyncssh queues them on the channel)."""
_SMALLEST_WRITE = 32768
"""Bytes per write request when the server states no limit (every server accepts them)."""


async def _write_and_sync(
    sftp: asyncssh.SFTPClient,
    handle: asyncssh.SFTPClientFile,
    data: bytes,
    final: asyncssh.SFTPAttrs,
) -> asyncssh.SFTPAttrs:
    """Write ``data`` at offset 0, set ``final``, ``fsync`` and ``stat`` the file: the
    last writes go out with the rest, so a small file costs one round trip.

    The server answers requests in order, and ``handle`` (opened with ``block_size=0``)
    sends each write as one request the moment it is made: the writes are done when
    the ``fsync`` runs. Returns the attributes after the ``fsync``.
    """
    size = sftp.limits.max_write_len or _SMALLEST_WRITE
    chunks = [(offset, data[offset : offset + size]) for offset in range(0, len(data), size)]
    if len(chunks) == 1:
        chunks = [(0, data)]  # not copied
    while len(chunks) > WRITES_AT_ONCE:
        batch, chunks = chunks[:WRITES_AT_ONCE], chunks[WRITES_AT_ONCE:]
        await _in_order(*(handle.write(chunk, offset) for offset, chunk in batch))
    *_, written = await _in_order(
        *(handle.write(chunk, offset) for offset, chunk in chunks),
        handle.setstat(final),
        handle.fsync(),
        handle.stat(),
    )
    return cast(asyncssh.SFTPAttrs, written)


async def _in_order(*requests: Awaitable[object]) -> list[object]:
    """Send ``requests`` in this order, at once; wait for every answer; raise the first
    failure (none is left unanswered behind it)."""
    results = await asyncio.gather(*requests, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


async def _abandon(
    sftp: asyncssh.SFTPClient, creating: asyncio.Future[asyncssh.SFTPClientFile], temporary: str
) -> None:
    """Make sure the temporary file ``creating`` makes does not stay: cancel the creation
    (which then undoes itself) or remove what it created."""
    if not creating.done():
        creating.cancel()
        await asyncio.wait([creating])
    if not creating.cancelled() and creating.exception() is None:
        await _discard(sftp, creating.result(), temporary)


async def _create(
    sftp: asyncssh.SFTPClient, temporary: str, mode: int | None
) -> asyncssh.SFTPClientFile:
    # A replacement starts private (0600) and gets the old mode before it is
    # published; a new file gets what the server's open() gives (0666 & ~umask).
    permissions = 0o600 if mode is not None else 0o666
    return await undone_if_cancelled(
        # block_size=0: one request per write call, sent at once (see _write_and_sync)
        sftp.open(temporary, "xb", asyncssh.SFTPAttrs(permissions=permissions), block_size=0),
        lambda handle: _discard(sftp, handle, temporary),
    )


async def open_or_none(sftp: asyncssh.SFTPClient, path: str) -> asyncssh.SFTPClientFile | None:
    try:
        return await sftp.open(path, "rb")
    except asyncssh.SFTPNoSuchFile:
        return None


_CLOSING: set[asyncio.Future[None]] = set()
"""Closes nothing waits for (kept referenced until they end)."""


async def _read_then_close(handle: asyncssh.SFTPClientFile, size: int) -> bytes:
    """``size`` bytes of ``handle``; its close goes out with the section's next requests
    (a read handle's close changes nothing the section depends on)."""
    try:
        return await read_at(handle, size)
    finally:
        closing = asyncio.ensure_future(close_quietly(handle))
        _CLOSING.add(closing)
        closing.add_done_callback(_CLOSING.discard)


async def _commit(
    sftp: asyncssh.SFTPClient,
    handle: asyncssh.SFTPClientFile,
    temporary: str,
    path: str,
    release: Awaitable[None],
) -> None:
    """Close, rename over the target and release the lock: one round trip."""
    _, renamed, _ = await asyncio.gather(
        handle.close(), sftp.posix_rename(temporary, path), release, return_exceptions=True
    )
    if isinstance(renamed, BaseException):
        if not isinstance(renamed, LOST):
            await _discard(sftp, None, temporary)
        raise renamed


async def _discard(
    sftp: asyncssh.SFTPClient, handle: asyncssh.SFTPClientFile | None, temporary: str
) -> None:
    """Remove an unpublished temporary file (gone with a lost connection: it is swept when
    the target's lock is next broken)."""
    if handle is not None:
        await close_quietly(handle)
    with contextlib.suppress(asyncssh.Error, OSError):
        await sftp.remove(temporary)


async def make_directory(sftp: asyncssh.SFTPClient, path: str) -> None:
    try:
        await sftp.mkdir(path)
    except asyncssh.SFTPFailure:
        attrs = await lstat_or_none(sftp, path)
        if attrs is None or kind_of(attrs) != "directory":
            raise
