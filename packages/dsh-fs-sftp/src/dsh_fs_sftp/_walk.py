"""Containment over SFTP: a path reached one component at a time, checked on the server.

SFTP has no ``openat2`` and no directory handles to resolve beneath, so the
walk does what the local backend's fallback walk does, with requests: from
the canonical root that holds the path, it ``lstat``\\ s each component, reads
each symlink with ``readlink`` and continues only while every directory it
passes through lies beneath a root. A link that leads outside is refused
even when a further link would lead back in. The lookups of a path without
symlinks go out together (one round trip whatever the depth), and the walks
of one batch (the directories of a ``list_dirs``, the files of a
``read_texts``) share the lookups of the directories they pass through
(:class:`Lookups`).

The walk is exactly as good as the moment it runs: another process *on the
server* can swap a directory for a symlink between the walk and the request
that uses its result. docs/using/security.md says so and names the hard boundary
(``ChrootDirectory``, ``ForceCommand internal-sftp -d``).
"""

from __future__ import annotations

import asyncio
import posixpath
import stat as st
from collections.abc import Awaitable
from dataclasses import dataclass, field

import asyncssh
from dsh_fs import EntryType, FsError, FsErrorCode, PathType
from dsh_fs.workspace import Workspace, is_beneath

from ._requests import lstat_or_none

MAX_LINKS = 40
"""Symlinks one walk follows before it calls the path a loop (Linux's limit)."""


class Outside(Exception):
    """The walk left every root."""


class ParentNotDirectory(Exception):
    """A component before the last one is not a directory."""


class LinkLoop(Exception):
    """More than :data:`MAX_LINKS` symlinks."""


@dataclass(frozen=True, slots=True)
class Spot:
    """Where a walk ended.

    ``path`` is canonical (no symlink in it at the time of the walk);
    ``attrs`` are its ``lstat`` attributes, ``None`` when it does not exist.
    ``missing`` are the directories below the deepest existing one that a
    write must create (empty when the parent exists).
    """

    path: str
    attrs: asyncssh.SFTPAttrs | None
    missing: tuple[str, ...] = field(default=())


def kind_of(attrs: asyncssh.SFTPAttrs) -> PathType:
    mode = attrs.permissions or 0
    if st.S_ISLNK(mode):
        return "symlink"
    if st.S_ISREG(mode):
        return "file"
    if st.S_ISDIR(mode):
        return "directory"
    return "other"


def entry_type(attrs: asyncssh.SFTPAttrs) -> EntryType:
    kind = kind_of(attrs)
    return "other" if kind == "symlink" else kind


def _parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p and p != "."]


class Lookups:
    """The ``lstat`` of each path, sent once for all the walks of one batch.

    The walks of a batch start together, so each of them would send the same
    lookup of a shared directory in the same round trip; they take one answer
    instead (64 directories of one parent: 64 lookups and the parent's, not
    64 times the depth). Answers are kept for one connection: a batch retried
    on a new one looks again.
    """

    __slots__ = ("_sent", "_sftp")

    def __init__(self) -> None:
        self._sftp: asyncssh.SFTPClient | None = None
        self._sent: dict[str, asyncio.Future[asyncssh.SFTPAttrs | None]] = {}

    def lstat(self, sftp: asyncssh.SFTPClient, path: str) -> Awaitable[asyncssh.SFTPAttrs | None]:
        """:func:`lstat_or_none` of ``path``, sent unless a walk of the batch sent it."""
        if sftp is not self._sftp:
            self._sftp, self._sent = sftp, {}
        sent = self._sent.get(path)
        if sent is None:
            sent = self._sent[path] = asyncio.ensure_future(lstat_or_none(sftp, path))
        return sent


class Walker:
    """The walk of one backend: its workspace (canonical roots on the server)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def root_of(self, path: str) -> str | None:
        """The innermost root that lexically holds ``path`` (``/`` when uncontained)."""
        return self.workspace.root_of(path) if self.workspace.contained else "/"

    def _inside(self, path: str) -> bool:
        return self.root_of(path) is not None

    async def walk(
        self,
        sftp: asyncssh.SFTPClient,
        path: str,
        *,
        follow: bool = True,
        lookups: Lookups | None = None,
    ) -> Spot:
        """Reach canonical ``path`` (beneath a root); raise :class:`Outside`,
        :class:`ParentNotDirectory` or :class:`LinkLoop`, or ``asyncssh.SFTPError``.
        ``lookups``: the batch's, shared with the other walks of it."""
        lstat = lookups if lookups is not None else Lookups()
        root = self.root_of(path)
        if root is None:
            raise Outside
        cur = root
        pending = _parts(path[len(root) :])
        links = 0
        while pending:
            # Speculatively look up every plain component left: without symlinks,
            # one round trip answers the whole path.
            plain: list[str] = []
            for name in pending:
                if name == "..":
                    break
                plain.append(name)
            if not plain:
                pending.pop(0)
                cur = posixpath.dirname(cur) or "/"
                if not self._inside(cur):
                    raise Outside
                continue
            prefixes = [posixpath.join(cur, *plain[: i + 1]) for i in range(len(plain))]
            found = await asyncio.gather(*(lstat.lstat(sftp, p) for p in prefixes))
            for i, attrs in enumerate(found):
                name = pending.pop(0)
                last = not pending
                here = prefixes[i]
                if attrs is None:
                    rest = posixpath.normpath(posixpath.join(here, *pending))
                    if not self._inside(rest):
                        raise Outside
                    missing = [posixpath.join(here, *pending[: j + 1]) for j in range(len(pending))]
                    return Spot(rest, None, (here, *missing[:-1]) if pending else ())
                kind = kind_of(attrs)
                if kind == "symlink" and (follow or not last):
                    links += 1
                    if links > MAX_LINKS:
                        raise LinkLoop
                    target = await sftp.readlink(here)
                    if target.startswith("/"):
                        target_root = self.root_of(posixpath.normpath(target))
                        if target_root is None or not is_beneath(target, target_root):
                            raise Outside
                        cur = target_root
                        pending[:0] = _parts(target[len(target_root) :])
                    else:
                        pending[:0] = _parts(target)
                    break
                if last:
                    return Spot(here, attrs)
                if kind != "directory":
                    raise ParentNotDirectory
                cur = here
        return Spot(cur, await sftp.lstat(cur))


def io_error(verb: str, display_path: str, reason: str) -> FsError:
    return FsError.cannot(verb, display_path, reason, FsErrorCode.FS_IO_ERROR)
