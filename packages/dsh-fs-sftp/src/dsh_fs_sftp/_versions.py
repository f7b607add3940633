"""Versions that move within the second: git's "racily clean" rule, over SFTP.

SFTP (version 3) gives whole-second times and no inode, so a file's size,
mtime, mode and owner (:func:`._attrs.version_of`, the *plain* version)
cannot tell two same-size contents of one second apart. As git does for its
index, a file whose mtime is not older than :data:`RACY_SECONDS` before the
server's clock is *racy*: its version also carries a digest of its content
(``<plain>:<digest>``), computed from the bytes the backend reads. A file
older than that keeps its plain version, so the cost (reading the file) falls
only on files changed in the last two seconds.

A version is recorded at one moment and checked at a later one, when the
file may no longer be racy. The guard under the lock therefore recomputes
it the same way it was made: a guard that carries a digest, on a file whose
plain part is unchanged, is compared with the digest of the bytes there now
(:func:`guarded_state`); a plain guard is compared with the plain version
(the file was already older than the window when it was recorded, so a later
change gives it a later mtime).

The server's clock is the one the lock file reads (its mtime at creation),
kept as an offset from this machine's clock (:class:`ServerClock`); an
estimate is never later than the server's real time, so an error only makes
more files racy.
"""

from __future__ import annotations

import asyncio
import hashlib
import time

import asyncssh
from dsh_fs import EntryType

from ._attrs import version_of
from ._loop import finish
from ._requests import close_quietly, read_at
from ._walk import kind_of

RACY_SECONDS = 2
"""A file modified this many seconds or less before the server's clock is racy."""
DIGEST_CHUNK = 4 << 20
"""Bytes read per request while a digest is computed (memory stays bounded by it)."""
_PLAIN_FIELDS = 5  # size, mtime, mode, uid, gid


class ServerClock:
    """The server's clock, as an offset from this machine's (``time.time``).

    Until it is first measured it is this machine's clock (a read-only
    workspace takes no lock, so nothing measures it there).
    """

    def __init__(self) -> None:
        self._offset = 0.0

    def observe(self, server_time: int) -> None:
        """The server's clock read ``server_time`` (whole seconds) a moment ago."""
        self._offset = server_time - time.time()

    def now(self) -> int:
        return int(time.time() + self._offset)

    def racy(self, attrs: asyncssh.SFTPAttrs) -> bool:
        """Whether a regular file with these attributes gets a digest in its version."""
        if kind_of(attrs) != "file":
            return False
        return attrs.mtime is None or int(attrs.mtime) >= self.now() - RACY_SECONDS


def digest_of(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def with_digest(attrs: asyncssh.SFTPAttrs, digest: str) -> str:
    return f"{version_of(attrs)}:{digest}"


def _carries_digest(version: str | None, attrs: asyncssh.SFTPAttrs) -> bool:
    """Whether ``version`` has a digest and the same plain part as ``attrs``."""
    if version is None:
        return False
    plain, _, digest = version.rpartition(":")
    return bool(digest) and plain.count(":") == _PLAIN_FIELDS - 1 and plain == version_of(attrs)


def guarded_state(
    attrs: asyncssh.SFTPAttrs | None, expected: str | None, data: bytes | None = None
) -> tuple[EntryType, str] | None:
    """The ``(type, version)`` a guard of ``expected`` is checked against.

    For a regular file whose plain version is ``expected``'s plain part, the
    version is recomputed from ``data`` (its bytes now); before those are
    read (``data=None``) it is taken to be ``expected`` — the check is made
    again once they are. Everything else: the plain version.
    """
    if attrs is None:
        return None
    kind = kind_of(attrs)
    if kind == "file" and _carries_digest(expected, attrs):
        assert expected is not None
        return kind, expected if data is None else with_digest(attrs, digest_of(data))
    return ("other" if kind == "symlink" else kind), version_of(attrs)


async def file_version(
    sftp: asyncssh.SFTPClient, path: str, attrs: asyncssh.SFTPAttrs, clock: ServerClock
) -> tuple[str, asyncssh.SFTPAttrs]:
    """What ``stat`` reports of the entry at canonical ``path`` whose attributes are
    ``attrs``: its version, and the attributes that version describes.

    A racy regular file is opened and read to its end for the digest; the
    version's plain part then comes from the open file, so both describe one
    state.
    """
    if not clock.racy(attrs):
        return version_of(attrs), attrs
    return await _digest_version(sftp, path, attrs)


async def guarded_version(
    sftp: asyncssh.SFTPClient, path: str, attrs: asyncssh.SFTPAttrs, expected: str | None
) -> str:
    """The version a guard of ``expected`` is checked against, made the way ``expected``
    was: from the bytes there now when it carries a digest and the same plain part,
    else the plain version (see :func:`guarded_state`)."""
    if kind_of(attrs) == "file" and _carries_digest(expected, attrs):
        return (await _digest_version(sftp, path, attrs))[0]
    return version_of(attrs)


async def _digest_version(
    sftp: asyncssh.SFTPClient, path: str, attrs: asyncssh.SFTPAttrs
) -> tuple[str, asyncssh.SFTPAttrs]:
    try:
        handle = await sftp.open(path, "rb")
    except (asyncssh.SFTPNoSuchFile, asyncssh.SFTPPermissionDenied):
        # Gone meanwhile: its last state. Not readable: a stat never fails for want of
        # reading, and such a file keeps its plain version.
        return version_of(attrs), attrs
    try:
        hasher = hashlib.blake2b(digest_size=16)
        guess = int(attrs.size or 0)
        opened, first = await _stat_and_read(handle, min(guess, DIGEST_CHUNK))
        size = int(opened.size or 0)
        hasher.update(first[:size])
        offset = min(len(first), size)
        while offset < size:
            chunk = await read_at(handle, min(DIGEST_CHUNK, size - offset), offset)
            if not chunk:
                break  # it shrank in place: the digest of what is there
            hasher.update(chunk)
            offset += len(chunk)
    finally:
        await finish(close_quietly(handle))
    return with_digest(opened, hasher.hexdigest()), opened


async def _stat_and_read(
    handle: asyncssh.SFTPClientFile, size: int
) -> tuple[asyncssh.SFTPAttrs, bytes]:
    """The open file's attributes and its first ``size`` bytes, in one round trip."""
    attrs, data = await asyncio.gather(handle.stat(), read_at(handle, size))
    return attrs, data


__all__ = [
    "RACY_SECONDS",
    "ServerClock",
    "digest_of",
    "file_version",
    "guarded_state",
    "guarded_version",
    "with_digest",
]
