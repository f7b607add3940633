"""Small SFTP requests the backend makes in several places, with their quiet variants."""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import stat
from typing import cast

import asyncssh

__all__ = [
    "close_and_remove",
    "close_quietly",
    "lstat_or_none",
    "read_at",
    "remove_if_present",
    "remove_tree",
]


async def lstat_or_none(sftp: asyncssh.SFTPClient, path: str) -> asyncssh.SFTPAttrs | None:
    """``lstat``, ``None`` when nothing is there."""
    try:
        return await sftp.lstat(path)
    except asyncssh.SFTPNoSuchFile:
        return None


async def read_at(handle: asyncssh.SFTPClientFile, size: int, offset: int = 0) -> bytes:
    """Up to ``size`` bytes at ``offset`` (asyncssh splits them into parallel requests)."""
    if not size:
        return b""
    return cast(bytes, await handle.read(size, offset))


async def close_quietly(handle: asyncssh.SFTPClientFile) -> None:
    """Close a handle whose closing cannot change the outcome (a lost connection closed it)."""
    with contextlib.suppress(asyncssh.Error, OSError):
        await handle.close()


async def remove_if_present(sftp: asyncssh.SFTPClient, path: str) -> None:
    with contextlib.suppress(asyncssh.SFTPNoSuchFile):
        await sftp.remove(path)


async def close_and_remove(
    sftp: asyncssh.SFTPClient, handle: asyncssh.SFTPClientFile, path: str
) -> None:
    """Undo the exclusive creation of ``path`` (a lock or probe file) whose handle is ``handle``."""
    await close_quietly(handle)
    await remove_if_present(sftp, path)


_AT_ONCE = 64
"""Removals of one directory sent together (asyncssh pipelines them on the channel)."""


async def remove_tree(sftp: asyncssh.SFTPClient, path: str) -> None:
    """Remove the directory ``path`` and everything beneath it, never following a link.

    The server lists a directory with each entry's ``lstat`` attributes, so a
    symlink is removed as a link, whatever it points at.
    """
    names = [e for e in await sftp.readdir(path) if e.filename not in (".", "..")]
    leaves: list[str] = []
    for entry in names:
        child = posixpath.join(path, str(entry.filename))
        if stat.S_ISDIR(entry.attrs.permissions or 0):
            await remove_tree(sftp, child)
        else:
            leaves.append(child)
    for start in range(0, len(leaves), _AT_ONCE):
        await asyncio.gather(
            *(remove_if_present(sftp, p) for p in leaves[start : start + _AT_ONCE])
        )
    with contextlib.suppress(asyncssh.SFTPNoSuchFile):
        await sftp.rmdir(path)
