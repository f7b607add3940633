"""The cross-client lock of one file: a lock file beside it, created exclusively.

Two processes, on one machine or two, that edit the same remote file must not
lose an update. The in-process per-target lock cannot see another client, so
the read-modify-write section also holds ``.<basename>.dsh.lock`` in the
file's directory: created with ``O_CREAT|O_EXCL`` on the server (only one
client can), holding an owner token, and removed when the section ends, so
no lock file stays behind.

A client that dies inside its section leaves its lock. A waiter breaks a
lock whose attributes stayed the same for ``stale_after`` seconds; a holder
whose section runs long touches its lock every ``stale_after / 3`` seconds,
so a live lock is never stale. A backend that lost its connection while it
held a lock removes it (if it still carries its token) when it reconnects.

Breaking is check-then-remove, not atomic: two waiters that find the same
stale lock at the same moment could, within one round trip, remove a fresh
lock a third client took in between. That needs a holder that stopped for
the whole ``stale_after`` first; the window is one request wide.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import posixpath
import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

import asyncssh

from ._loop import finish, run_to_end, undone_if_cancelled
from ._requests import (
    close_and_remove,
    close_quietly,
    lstat_or_none,
    read_at,
    remove_if_present,
    remove_tree,
)

logger = logging.getLogger("dsh_fs_sftp")

LOCK_SUFFIX = ".dsh.lock"
STALE_AFTER = 30.0
"""Seconds a lock must look unchanged before a waiter breaks it."""
_FIRST_WAIT, _LONGEST_WAIT = 0.002, 0.05


def lock_path(path: str) -> str:
    parent, name = posixpath.split(path)
    return posixpath.join(parent, f".{name}{LOCK_SUFFIX}")


def locked_path(lock: str) -> str:
    """The file whose lock is ``lock`` (the inverse of :func:`lock_path`)."""
    parent, name = posixpath.split(lock)
    return posixpath.join(parent, name[1 : -len(LOCK_SUFFIX)])


def new_token() -> bytes:
    """Who holds a lock: host, pid and a random part (tells two backends of a process apart)."""
    return f"{socket.gethostname()} {os.getpid()} {secrets.token_hex(8)}\n".encode()


class Held:
    """A held lock: its path, its token, the results of the requests sent along with
    taking it, and the server's time when it was taken (:meth:`server_time`)."""

    def __init__(self, path: str, token: bytes, along: list[Any]) -> None:
        self.path = path
        self.token = token
        self.along = along
        self.released = False
        self.stamping: asyncio.Future[int] | None = None
        self.closing: asyncio.Future[None] | None = None

    async def server_time(self) -> int:
        """The server's clock when the lock was taken: the lock file's mtime, asked for
        when its token is written (in flight while the section starts its work)."""
        assert self.stamping is not None
        return await asyncio.shield(self.stamping)

    async def stamped(self) -> None:
        """Wait until the token is written and the lock file's handle closed (never raises)."""
        if self.stamping is not None:
            await asyncio.wait([self.stamping])
            if not self.stamping.cancelled():
                self.stamping.exception()  # retrieved: the section raised it, or had failed
        if self.closing is not None:
            await asyncio.wait([self.closing])


class FileLocks:
    """The lock files one backend takes, and the ones a lost connection left behind."""

    def __init__(self, stale_after: float = STALE_AFTER) -> None:
        self.stale_after = stale_after
        self.orphans: list[Held] = []

    @asynccontextmanager
    async def hold(
        self, sftp: asyncssh.SFTPClient, target: str, *along: Callable[[], Coroutine[Any, Any, Any]]
    ) -> AsyncIterator[Held]:
        """Hold the lock of ``target`` (canonical path) for the ``async with`` block.

        ``along`` make requests that need the lock: each attempt to take it
        sends them right behind the lock file's exclusive ``open``, in the same
        round trip (the server answers in order, so they run once the lock is
        taken, or are thrown away when it was not). Their results, or
        exceptions, are ``held.along``. The block may release the lock
        itself, in the round trip of its last request (:meth:`release_request`).
        """
        held = await self._acquire(sftp, lock_path(target), along)
        beat = asyncio.ensure_future(self._heartbeat(sftp, held))
        try:
            yield held
        except BaseException:
            beat.cancel()
            if not held.released:
                await finish(self._release(sftp, held))
            raise
        beat.cancel()
        if held.released:
            await run_to_end(held.stamped())
            return
        # The section completed (the file may be published): no cancellation may
        # turn that into a failure now. A release that fails is an orphan, removed
        # on reconnection.
        with contextlib.suppress(asyncssh.Error, OSError):
            await run_to_end(self._release(sftp, held))

    async def _acquire(
        self,
        sftp: asyncssh.SFTPClient,
        path: str,
        along: tuple[Callable[[], Coroutine[Any, Any, Any]], ...],
    ) -> Held:
        token = new_token()
        wait = _FIRST_WAIT
        seen: tuple[object, ...] | None = None
        seen_at = 0.0
        vanished = 0
        while True:
            opening = asyncio.ensure_future(
                sftp.open(path, "xb", asyncssh.SFTPAttrs(permissions=0o600))
            )
            sent = [asyncio.ensure_future(request()) for request in along]  # right behind it
            try:
                lock = await undone_if_cancelled(
                    opening, lambda handle: close_and_remove(sftp, handle, path)
                )
            except BaseException as exc:
                await finish(_throw_away(sent))
                if not isinstance(exc, asyncssh.SFTPFailure | asyncssh.SFTPFileAlreadyExists):
                    raise
                attrs = await lstat_or_none(sftp, path)
                if attrs is None:
                    vanished += 1
                    if vanished > 3:  # not "it exists": the server cannot create it at all
                        raise
                    continue  # released meanwhile
                vanished = 0
                state = (attrs.size, attrs.mtime, attrs.uid, attrs.permissions)
                now = time.monotonic()
                if state != seen:
                    seen, seen_at = state, now
                elif now - seen_at >= self.stale_after:
                    await self._break(sftp, path)
                    seen = None
                    continue
                await asyncio.sleep(wait)
                wait = min(wait * 2, _LONGEST_WAIT)
                continue
            held = Held(path, token, [])
            # The token and the server's clock are asked for now; the section's first
            # requests go out with them (it waits for the clock only when it needs it).
            held.stamping = asyncio.ensure_future(_stamp(lock, token, held))
            try:
                held.along = list(await finish(asyncio.gather(*sent, return_exceptions=True)))
            except BaseException:
                await finish(_throw_away(sent))
                await finish(self._release(sftp, held))
                raise
            return held

    def release_request(self, sftp: asyncssh.SFTPClient, held: Held) -> Coroutine[Any, Any, None]:
        """The request that releases ``held``, to send along with the section's last one."""
        held.released = True
        return remove_if_present(sftp, held.path)

    async def _break(self, sftp: asyncssh.SFTPClient, path: str) -> None:
        holder = await _read_token(sftp, path)
        logger.warning(
            "breaking the stale lock %s (held by %s, unchanged for %.0f s)",
            path,
            holder.decode(errors="replace").strip() or "unknown",
            self.stale_after,
        )
        await remove_if_present(sftp, path)
        await sweep_temporaries(sftp, locked_path(path))

    async def _heartbeat(self, sftp: asyncssh.SFTPClient, held: Held) -> None:
        while True:
            await asyncio.sleep(self.stale_after / 3)
            now = int(time.time())
            try:
                await sftp.setstat(held.path, asyncssh.SFTPAttrs(atime=now, mtime=now))
            except asyncssh.Error:
                return

    async def _release(self, sftp: asyncssh.SFTPClient, held: Held) -> None:
        await held.stamped()
        try:
            await remove_if_present(sftp, held.path)
        except (asyncssh.Error, OSError):
            self.orphans.append(held)
            raise

    async def clean_orphans(self, sftp: asyncssh.SFTPClient) -> None:
        """After a reconnection: remove the locks a lost connection left, where still ours."""
        orphans, self.orphans = self.orphans, []
        for held in orphans:
            if await _read_token(sftp, held.path) == held.token:
                await remove_if_present(sftp, held.path)
                await sweep_temporaries(sftp, locked_path(held.path))


async def _stamp(lock: asyncssh.SFTPClientFile, token: bytes, held: Held) -> int:
    """Write the owner's token into the just-taken lock and read its mtime (the server's
    clock: the lock was just created); its handle is closed in flight with what follows."""
    written, attrs = await asyncio.gather(lock.write(token, 0), lock.stat(), return_exceptions=True)
    held.closing = asyncio.ensure_future(close_quietly(lock))
    for failure in (written, attrs):
        if isinstance(failure, BaseException):
            raise failure
    return int(cast(asyncssh.SFTPAttrs, attrs).mtime or 0)


async def _throw_away(sent: Sequence[asyncio.Future[Any]]) -> None:
    """Wait for requests sent along with a lock that was not taken; close what they opened."""
    for result in await asyncio.gather(*sent, return_exceptions=True):
        if isinstance(result, asyncssh.SFTPClientFile):
            await close_quietly(result)


async def _read_token(sftp: asyncssh.SFTPClient, path: str) -> bytes:
    try:
        async with sftp.open(path, "rb") as lock:
            return await read_at(lock, 4096)
    except asyncssh.SFTPNoSuchFile:
        return b""


def temporary_prefix(path: str) -> str:
    """``.<basename>.dsh-``: how the temporaries of ``path`` start (3.1's naming rule)."""
    return f".{posixpath.basename(path)}.dsh-"


def temporary_name(path: str) -> str:
    """``.<name>.dsh-<pid>-<8 hex>.tmp`` beside ``path`` (the naming rule of the local backend):
    a write's temporary file, or the name a tree is renamed aside to before it is removed."""
    name = f"{temporary_prefix(path)}{os.getpid()}-{secrets.token_hex(4)}.tmp"
    return posixpath.join(posixpath.dirname(path), name)


async def sweep_temporaries(sftp: asyncssh.SFTPClient, path: str) -> None:
    """Remove the temporaries of ``path`` a dead owner left: a write's temporary file, or a
    tree renamed aside by a removal that did not finish (removed without following a link).

    Called where the owner is known to be gone: after breaking the stale lock of ``path``
    (its holder stopped for ``stale_after``), or on reconnection for a lock this backend
    lost with its connection — in both cases holding no lock of ``path`` another client
    could hold meanwhile.
    """
    parent = posixpath.dirname(path)
    prefix = temporary_prefix(path)
    for entry in await sftp.readdir(parent):
        name = entry.filename
        if not (isinstance(name, str) and name.startswith(prefix) and name.endswith(".tmp")):
            continue
        mode = (entry.attrs.permissions or 0) & 0o170000
        if mode == 0o100000:
            await remove_if_present(sftp, posixpath.join(parent, name))
        elif mode == 0o040000:
            await remove_tree(sftp, posixpath.join(parent, name))
