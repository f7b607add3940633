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
from collections.abc import AsyncIterator, Coroutine
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
    """A held lock: its path, its token, the server's time when it was taken, and the
    results of the requests sent along with taking it."""

    def __init__(self, path: str, token: bytes, server_time: int, along: list[Any]) -> None:
        self.path = path
        self.token = token
        self.server_time = server_time
        self.along = along
        self.released = False
        self.closing: asyncio.Future[None] | None = None


class FileLocks:
    """The lock files one backend takes, and the ones a lost connection left behind."""

    def __init__(self, stale_after: float = STALE_AFTER) -> None:
        self.stale_after = stale_after
        self.orphans: list[Held] = []

    @asynccontextmanager
    async def hold(
        self, sftp: asyncssh.SFTPClient, target: str, *along: Coroutine[Any, Any, Any]
    ) -> AsyncIterator[Held]:
        """Hold the lock of ``target`` (canonical path) for the ``async with`` block.

        ``along`` are requests sent in the same round trip as the lock's
        token, right after the lock is taken (their results, or exceptions,
        are ``held.along``). The block may release the lock itself, in the
        round trip of its last request (:meth:`release_request`).
        """
        try:
            held = await self._acquire(sftp, lock_path(target), along)
        except BaseException:
            for request in along:
                request.close()
            raise
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
            if held.closing is not None:
                await run_to_end(held.closing)
            return
        # The section completed (the file may be published): no cancellation may
        # turn that into a failure now. A release that fails is an orphan, removed
        # on reconnection.
        with contextlib.suppress(asyncssh.Error, OSError):
            await run_to_end(self._release(sftp, held))

    async def _acquire(
        self, sftp: asyncssh.SFTPClient, path: str, along: tuple[Coroutine[Any, Any, Any], ...]
    ) -> Held:
        token = new_token()
        wait = _FIRST_WAIT
        seen: tuple[object, ...] | None = None
        seen_at = 0.0
        vanished = 0
        while True:
            try:
                lock = await undone_if_cancelled(
                    sftp.open(path, "xb", asyncssh.SFTPAttrs(permissions=0o600)),
                    lambda handle: close_and_remove(sftp, handle, path),
                )
            except (asyncssh.SFTPFailure, asyncssh.SFTPFileAlreadyExists):
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
            try:
                return await finish(self._stamp(sftp, path, lock, token, along))
            except BaseException:
                await finish(remove_if_present(sftp, path))
                raise

    @staticmethod
    async def _stamp(
        sftp: asyncssh.SFTPClient,
        path: str,
        lock: asyncssh.SFTPClientFile,
        token: bytes,
        along: tuple[Coroutine[Any, Any, Any], ...],
    ) -> Held:
        # The requests along only need the lock taken (it is: the open succeeded);
        # the stat gives the server's clock (the lock's mtime is its creation).
        results = await asyncio.gather(
            lock.write(token, 0), lock.stat(), *along, return_exceptions=True
        )
        closing = asyncio.ensure_future(close_quietly(lock))  # in flight with what follows
        for failure in results[:2]:
            if isinstance(failure, BaseException):
                await closing
                raise failure
        attrs = cast(asyncssh.SFTPAttrs, results[1])
        held = Held(path, token, int(attrs.mtime or 0), list(results[2:]))
        held.closing = closing
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
        if held.closing is not None:
            await held.closing
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
