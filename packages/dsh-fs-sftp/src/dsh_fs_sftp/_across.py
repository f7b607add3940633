"""A move across filesystems on the server, where one rename cannot do it (``EXDEV``).

OpenSSH answers such a ``posix-rename@openssh.com`` with a bare failure; the
two parents' ``statvfs@openssh.com`` file system ids tell it apart. A regular
file is then copied to a temporary beside the destination (3.1's naming
rule), given the source's permission bits and times, ``fsync``\\ ed, renamed
over the destination, and only then is the source removed; a symlink is
made again beside the destination and renamed over it the same way. A
directory is refused: copying a tree is not one atomic step.
"""

from __future__ import annotations

import posixpath

import asyncssh
from dsh_fs import FsError, FsErrorCode

from ._lock import temporary_name
from ._loop import finish, run_to_end, undone_if_cancelled
from ._requests import close_quietly, read_at, remove_if_present
from ._walk import kind_of

COPY_CHUNK = 4 << 20
"""Bytes copied per read and write (memory stays bounded by it)."""


async def across_filesystems(sftp: asyncssh.SFTPClient, source: str, destination: str) -> bool:
    """Whether the parents of ``source`` and ``destination`` are on two filesystems."""
    try:
        here = await sftp.statvfs(posixpath.dirname(source))
        there = await sftp.statvfs(posixpath.dirname(destination))
    except (asyncssh.SFTPError, asyncssh.SFTPOpUnsupported):
        return False
    return bool(here.fsid != there.fsid)


async def move_across(
    sftp: asyncssh.SFTPClient,
    source: str,
    attrs: asyncssh.SFTPAttrs,
    destination: str,
    display_path: str,
) -> None:
    """Move ``source`` (``lstat`` ``attrs``) to ``destination`` on another filesystem."""
    kind = kind_of(attrs)
    if kind == "directory":
        raise FsError.cannot(
            "move",
            display_path,
            "a directory cannot move across filesystems",
            FsErrorCode.FS_IO_ERROR,
        )
    if kind not in ("file", "symlink"):
        raise FsError.cannot(
            "move", display_path, "cannot move across filesystems", FsErrorCode.FS_IO_ERROR
        )
    temporary = temporary_name(destination)
    try:
        if kind == "file":
            await _copy(sftp, source, attrs, temporary)
        else:
            await sftp.symlink(await sftp.readlink(source), temporary)
    except BaseException:
        await finish(remove_if_present(sftp, temporary))
        raise
    await run_to_end(_publish(sftp, temporary, destination, source))


async def _publish(
    sftp: asyncssh.SFTPClient, temporary: str, destination: str, source: str
) -> None:
    try:
        await sftp.posix_rename(temporary, destination)
    except BaseException:
        await remove_if_present(sftp, temporary)
        raise
    await sftp.remove(source)


async def _copy(
    sftp: asyncssh.SFTPClient, source: str, attrs: asyncssh.SFTPAttrs, temporary: str
) -> None:
    copy = await undone_if_cancelled(
        sftp.open(temporary, "xb", asyncssh.SFTPAttrs(permissions=0o600)),
        lambda handle: close_quietly(handle),
    )
    try:
        async with sftp.open(source, "rb") as original:
            offset = 0
            while chunk := await read_at(original, COPY_CHUNK, offset):
                await copy.write(chunk, offset)
                offset += len(chunk)
        final = asyncssh.SFTPAttrs(
            permissions=(attrs.permissions or 0o600) & 0o7777,
            atime=attrs.atime if attrs.atime is not None else attrs.mtime,
            mtime=attrs.mtime,
        )
        await copy.setstat(final)
        await copy.fsync()
    finally:
        await finish(close_quietly(copy))


__all__ = ["across_filesystems", "move_across"]
