"""What the backend reads from a file's SFTP attributes: its version, time and kind."""

from __future__ import annotations

import asyncssh
from dsh_fs import EntryType, FsInfo

from ._walk import entry_type

State = tuple[EntryType, str] | None
"""What a write's intent check sees: the entry's type and version, ``None`` when absent."""


def version_of(attrs: asyncssh.SFTPAttrs) -> str:
    """The plain freshness token: size, whole-second mtime, mode and owner.

    SFTP (version 3, what OpenSSH speaks) gives whole seconds and no inode;
    a file changed in the last seconds also carries a digest of its content
    (:mod:`._versions`). Every write through this backend also moves the mtime
    forward by at least one second (see :func:`._publish.rewrite`).
    """
    return f"{attrs.size}:{attrs.mtime}:{attrs.permissions or 0:o}:{attrs.uid}:{attrs.gid}"


def modified_ns(attrs: asyncssh.SFTPAttrs) -> int | None:
    return None if attrs.mtime is None else int(attrs.mtime) * 1_000_000_000


def info_of(attrs: asyncssh.SFTPAttrs, version: str) -> FsInfo:
    kind = entry_type(attrs)
    size = attrs.size if kind == "file" else None
    return FsInfo(version, kind, size, modified_ns(attrs))
