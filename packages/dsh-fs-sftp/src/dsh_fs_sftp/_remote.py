"""The SSH side of the backend: the connection and the primitives, as asyncio coroutines.

Kept as one module: one class, ``Remote``, whose coroutines share its
connection, its roots and its lock; splitting it would split one object.

Everything here runs on the SSH loop (:mod:`._loop`); :class:`SftpFileSystem`
is the anyio face that sends each primitive here as one coroutine. A write's
steps inside the lock are in :mod:`._publish`, the connection's in
:mod:`._connection`.
"""

from __future__ import annotations

import asyncio
import posixpath
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import asyncssh
from dsh_fs import (
    DeleteChange,
    EntryGuard,
    FsChange,
    FsDirEntry,
    FsError,
    FsInfo,
    FsPathInfo,
    FsTarget,
    MoveGuard,
    PathType,
)
from dsh_fs.preconditions import not_directory, not_found, not_regular, parent_not_directory
from dsh_fs.workspace import RootsOption, Workspace, is_beneath, outside_workspace

from . import _entries
from ._attrs import State, info_of, modified_ns, version_of
from ._connection import (
    LOST,
    Address,
    ConnectFailure,
    canonical_root,
    lost,
    open_connection,
    probe_extensions,
    server_clock,
    sftp_failure,
)
from ._lock import FileLocks
from ._loop import finish
from ._publish import make_directory, open_or_none, rewrite
from ._requests import close_quietly, lstat_or_none, read_at
from ._versions import ServerClock, file_version, guarded_state
from ._walk import (
    LinkLoop,
    Lookups,
    Outside,
    ParentNotDirectory,
    Spot,
    Walker,
    entry_type,
    io_error,
    kind_of,
)

T = TypeVar("T")


class Remote:
    """One backend's connection, workspace and cross-client locks (on the SSH loop)."""

    def __init__(
        self,
        address: Address,
        connect_options: Mapping[str, Any],
        connect_timeout: float,
        cwd: str,
        roots: RootsOption,
        read_only_roots: Iterable[str],
        read_only: bool,
        stale_after: float,
    ) -> None:
        self.address = address
        self._options = dict(connect_options)
        self._timeout = connect_timeout
        self.cwd = cwd
        self._given = Workspace.build(
            cwd, roots, tuple(read_only_roots), read_only, canonical=lambda p: p
        )
        self.workspace = self._given
        self._spellings: tuple[tuple[str, str], ...] = ()
        self.walker = Walker(self._given)
        self.locks = FileLocks(stale_after)
        self.clock = ServerClock()
        self._conn: asyncssh.SSHClientConnection | None = None
        self._sftp: asyncssh.SFTPClient | None = None
        self._opening: asyncio.Lock | None = None
        self._checked = False

    # -- the connection ------------------------------------------------------

    async def connect(self) -> asyncssh.SFTPClient:
        """The open SFTP session, opened (again) if there is none; raises
        :class:`ConnectFailure` or ``ValueError`` (a root that is not a directory)."""
        if self._sftp is not None and self._conn is not None and not self._conn.is_closed():
            return self._sftp
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._sftp is not None and self._conn is not None and not self._conn.is_closed():
                return self._sftp
            self.drop()
            conn = await open_connection(self.address, self._options, self._timeout)
            try:
                sftp = await conn.start_sftp_client(path_errors="surrogateescape")
                if not self._checked:
                    await self._check_workspace(sftp)
                    self._checked = True
                await self.locks.clean_orphans(sftp)
            except (asyncssh.Error, OSError) as exc:
                conn.close()
                reason = getattr(exc, "reason", "") or str(exc) or type(exc).__name__
                raise ConnectFailure(f"the SFTP session failed: {reason}") from exc
            except BaseException:
                conn.close()
                raise
            self._conn, self._sftp = conn, sftp
            return sftp

    async def _check_workspace(self, sftp: asyncssh.SFTPClient) -> None:
        """Realpath every root on the server; probe the extensions writes need."""
        given = self._given
        named = [*(given.roots or ()), *given.read_only_roots]
        canonical: dict[str, str] = {}
        for root in named:
            canonical[root] = await canonical_root(sftp, root)
        self.workspace = Workspace(
            roots=None if given.roots is None else tuple(canonical[r] for r in given.roots),
            read_only_roots=tuple(canonical[r] for r in given.read_only_roots),
            read_only=given.read_only,
        )
        self._spellings = tuple(
            sorted(((g, c) for g, c in canonical.items() if g != c), key=lambda kv: -len(kv[0]))
        )
        self.walker = Walker(self.workspace)
        if not given.read_only:
            await probe_extensions(sftp, named[0] if named else self.cwd)
            writable = self.workspace.roots
            now = await server_clock(sftp, writable[0] if writable else self.cwd)
            if now is not None:
                self.clock.observe(now)

    def drop(self) -> None:
        """Forget the connection (it dropped, or the backend closes)."""
        conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None:
            conn.close()

    async def aclose(self) -> None:
        conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None:
            conn.close()
            await conn.wait_closed()

    async def run(
        self,
        verb: str,
        display_path: str,
        body: Callable[[asyncssh.SFTPClient], Awaitable[T]],
        *,
        mutation: bool = False,
    ) -> T:
        """``body`` with the session; a read whose connection drops runs once more on a
        new one, a mutation fails ``FS_IO_ERROR`` (it is never repeated blindly)."""
        for attempt in (1, 2):
            try:
                sftp = await self.connect()
            except ConnectFailure as exc:
                raise io_error(verb, display_path, f"{self.address}: {exc}") from exc
            except ValueError as exc:
                raise io_error(verb, display_path, str(exc)) from exc
            try:
                return await body(sftp)
            except FsError:
                raise
            except LOST as exc:
                self.drop()
                if mutation or attempt == 2:
                    raise lost(verb, display_path, self.address) from exc
            except asyncssh.SFTPError as exc:
                raise sftp_failure(verb, display_path, exc) from exc
            except (OSError, ValueError) as exc:  # asyncssh's own, e.g. a handle closed under it
                raise io_error(verb, display_path, str(exc) or type(exc).__name__) from exc
        raise AssertionError("unreachable")

    # -- paths ---------------------------------------------------------------

    def beneath_root(self, display_path: str, verb: str) -> str:
        """``display_path`` spelled beneath a canonical root; refused early when outside."""
        path = display_path
        for spelling, real in self._spellings:
            if is_beneath(display_path, spelling):
                path = real.rstrip("/") + display_path[len(spelling) :] or "/"
                break
        if self.workspace.access(path) is None:
            raise outside_workspace(verb, display_path)
        return path

    async def reach(
        self,
        sftp: asyncssh.SFTPClient,
        path: str,
        verb: str,
        display_path: str,
        *,
        follow: bool = True,
        lookups: Lookups | None = None,
    ) -> Spot | None:
        """The walk to ``path``; ``None`` when a parent segment is not a directory.
        ``lookups``: the batch's (:class:`._walk.Lookups`)."""
        try:
            return await self.walker.walk(sftp, path, follow=follow, lookups=lookups)
        except Outside:
            raise outside_workspace(verb, display_path) from None
        except ParentNotDirectory:
            return None
        except LinkLoop:
            raise io_error(verb, display_path, "too many levels of symbolic links") from None

    # -- the primitives ------------------------------------------------------

    async def resolve(self, display_path: str) -> str:
        async def body(sftp: asyncssh.SFTPClient) -> str:
            path = self.beneath_root(display_path, "resolve")
            spot = await self.reach(sftp, path, "resolve", display_path)
            if spot is None:
                raise parent_not_directory("resolve", display_path)
            self.workspace.check("resolve", display_path, spot.path, write=False)
            return spot.path

        return await self.run("resolve", display_path, body)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        async def body(sftp: asyncssh.SFTPClient) -> FsInfo | None:
            spot = await self.reach(sftp, target.target_key, "read", target.display_path)
            if spot is None or spot.attrs is None:
                return None
            version, attrs = await file_version(sftp, spot.path, spot.attrs, self.clock)
            return info_of(attrs, version)

        self.workspace.check("read", target.display_path, target.target_key, write=False)
        return await self.run("read", target.display_path, body)

    async def lstat(self, display_path: str) -> FsPathInfo | None:
        async def body(sftp: asyncssh.SFTPClient) -> FsPathInfo | None:
            path = self.beneath_root(display_path, "stat")
            spot = await self.reach(sftp, path, "stat", display_path, follow=False)
            if spot is None or spot.attrs is None:
                return None
            version, attrs = await file_version(sftp, spot.path, spot.attrs, self.clock)
            kind = kind_of(attrs)
            size = attrs.size if kind == "file" else None
            return FsPathInfo(version, kind, size, modified_ns(attrs))

        return await self.run("stat", display_path, body)

    async def _open_regular(
        self, sftp: asyncssh.SFTPClient, target: FsTarget, lookups: Lookups | None = None
    ) -> tuple[Spot, asyncssh.SFTPClientFile]:
        """The walk to ``target`` and its file, opened once the walk saw a regular file."""
        display_path = target.display_path
        spot = await self.reach(sftp, target.target_key, "read", display_path, lookups=lookups)
        if spot is None or spot.attrs is None:
            raise not_found("read", display_path)
        if kind_of(spot.attrs) != "file":
            raise not_regular("read", display_path)
        try:
            return spot, await sftp.open(spot.path, "rb")
        except asyncssh.SFTPNoSuchFile:
            raise not_found("read", display_path) from None

    async def _readable(
        self, sftp: asyncssh.SFTPClient, target: FsTarget, lookups: Lookups | None = None
    ) -> tuple[Spot, asyncssh.SFTPClientFile, int]:
        """The open regular file of ``target`` and its size at open (checked before opening)."""
        display_path = target.display_path
        spot, handle = await self._open_regular(sftp, target, lookups)
        try:
            attrs = await handle.stat()
            if kind_of(attrs) != "file":
                raise not_regular("read", display_path)
        except BaseException:
            await finish(close_quietly(handle))
            raise
        return spot, handle, int(attrs.size or 0)

    async def read_bytes(self, target: FsTarget) -> bytes:
        async def body(sftp: asyncssh.SFTPClient) -> bytes:
            _, handle, size = await self._readable(sftp, target)
            try:
                return await read_at(handle, size)
            finally:
                await finish(close_quietly(handle))

        self.workspace.check("read", target.display_path, target.target_key, write=False)
        return await self.run("read", target.display_path, body)

    async def open_stream(
        self, target: FsTarget, first: int
    ) -> tuple[asyncssh.SFTPClientFile, int, bytes]:
        """The open file of a stream, its size at open and up to ``first`` bytes of it.

        The first bytes are asked for in the round trip of the open file's
        ``fstat`` (the server answers in order, so they are read after it):
        as many as the walk saw, at most ``first``. A read shorter than it
        asked for met the end of the file.
        """

        async def body(sftp: asyncssh.SFTPClient) -> tuple[asyncssh.SFTPClientFile, int, bytes]:
            spot, handle = await self._open_regular(sftp, target)
            assert spot.attrs is not None
            asked = min(first, int(spot.attrs.size or 0))
            try:
                attrs, data = await asyncio.gather(handle.stat(), read_at(handle, asked))
                if kind_of(attrs) != "file":
                    raise not_regular("read", target.display_path)
            except BaseException:
                await finish(close_quietly(handle))
                raise
            size = int(attrs.size or 0)
            if len(data) < asked:  # it ended there
                size = min(size, len(data))
            return handle, size, data[:size]

        self.workspace.check("read", target.display_path, target.target_key, write=False)
        return await self.run("read", target.display_path, body)

    async def read_chunk(
        self, handle: asyncssh.SFTPClientFile, size: int, offset: int, display_path: str
    ) -> bytes:
        try:
            return await read_at(handle, size, offset)
        except LOST as exc:
            self.drop()
            raise lost("read", display_path, self.address) from exc
        except asyncssh.SFTPError as exc:
            raise sftp_failure("read", display_path, exc) from exc

    async def read_bytes_within(
        self,
        target: FsTarget,
        take: Callable[[int, str], None],
        give: Callable[[int], None],
        lookups: Lookups | None = None,
    ) -> bytes:
        """:meth:`read_bytes` under a budget shared by concurrent reads: ``take(size, display
        path)`` the file's size at open, before reading (it raises, and the file is left
        unread, when the size does not fit); ``give`` it back if the read fails.
        ``lookups``: the batch's."""

        async def body(sftp: asyncssh.SFTPClient) -> bytes:
            _, handle, size = await self._readable(sftp, target, lookups)
            try:
                take(size, target.display_path)
                try:
                    return await read_at(handle, size)
                except BaseException:
                    give(size)
                    raise
            finally:
                await finish(close_quietly(handle))

        self.workspace.check("read", target.display_path, target.target_key, write=False)
        return await self.run("read", target.display_path, body)

    async def list_dir(
        self, target: FsTarget, with_stat: bool, lookups: Lookups | None = None
    ) -> list[FsDirEntry]:
        """The entries of ``target``; ``lookups``: the batch's (:class:`._walk.Lookups`)."""
        display_path = target.display_path

        async def body(sftp: asyncssh.SFTPClient) -> list[FsDirEntry]:
            spot = await self.reach(sftp, target.target_key, "list", display_path, lookups=lookups)
            if spot is None or spot.attrs is None:
                raise not_found("list", display_path)
            if kind_of(spot.attrs) != "directory":
                raise not_directory("list", display_path)
            parent = spot.path
            listing = [e for e in await sftp.readdir(parent) if e.filename not in (".", "..")]
            entries: list[FsDirEntry | None] = []
            asked: list[Awaitable[FsDirEntry]] = []  # the entries that need requests
            for item in listing:
                entry = self._entry_as_listed(parent, display_path, item, with_stat)
                if entry is None:
                    asked.append(self._entry(sftp, parent, display_path, item, with_stat, lookups))
                entries.append(entry)
            answered = iter(await asyncio.gather(*asked))
            return [next(answered) if entry is None else entry for entry in entries]

        self.workspace.check("list", display_path, target.target_key, write=False)
        return await self.run("list", display_path, body)

    def _entry_as_listed(
        self, parent: str, parent_display: str, entry: asyncssh.SFTPName, with_stat: bool
    ) -> FsDirEntry | None:
        """The entry from its listed attributes alone; ``None`` when it needs requests: a
        symlink (followed) or, with ``with_stat``, a file whose version needs a digest."""
        attrs = entry.attrs
        if kind_of(attrs) == "symlink" or (with_stat and self.clock.racy(attrs)):
            return None
        name = str(entry.filename)
        target = FsTarget(posixpath.join(parent, name), posixpath.join(parent_display, name))
        return _dir_entry(name, target, attrs, version_of(attrs) if with_stat else None)

    async def _entry(
        self,
        sftp: asyncssh.SFTPClient,
        parent: str,
        parent_display: str,
        entry: asyncssh.SFTPName,
        with_stat: bool,
        lookups: Lookups | None = None,
    ) -> FsDirEntry:
        """The entry of a symlink (followed beneath the roots) or of a racy file."""
        name = str(entry.filename)
        display = posixpath.join(parent_display, name)
        key = posixpath.join(parent, name)
        attrs = entry.attrs
        link = kind_of(attrs) == "symlink"  # the entry itself, whatever it leads to
        if link:
            try:
                spot = await self.walker.walk(sftp, key, lookups=lookups)
            except (Outside, LinkLoop, ParentNotDirectory):
                return FsDirEntry(name, "other", FsTarget(key, display), symlink=True)
            if spot.attrs is None:
                return FsDirEntry(name, "other", FsTarget(spot.path, display), symlink=True)
            key, attrs = spot.path, spot.attrs
        if not with_stat:
            return _dir_entry(name, FsTarget(key, display), attrs, None, symlink=link)
        version, attrs = await file_version(sftp, key, attrs, self.clock)
        return _dir_entry(name, FsTarget(key, display), attrs, version, symlink=link)

    async def mutate(
        self,
        verb: str,
        target: FsTarget,
        check: Callable[[State], None],
        plan: Callable[[bytes | None], bytes],
        expected: str | None,
    ) -> tuple[str, bytes | None]:
        """The read-modify-write section of ``write_text`` / ``edit_text`` (``expected``:
        the version its guard names, if any).

        Reach the target (outside wins over read-only, both before anything
        else), check the intent on what is there, create missing parents,
        then, holding the cross-client lock: check again, read the previous
        bytes, ``plan`` the new ones and :func:`._publish.rewrite` the file. Returns
        the new version and the previous bytes (``None``: it was created).
        """
        display_path = target.display_path

        async def body(sftp: asyncssh.SFTPClient) -> tuple[str, bytes | None]:
            spot = await self.reach(sftp, target.target_key, verb, display_path)
            if spot is None:
                raise parent_not_directory(verb, display_path)
            self.workspace.check(verb, display_path, spot.path, write=True)
            check(guarded_state(spot.attrs, expected))
            for directory in spot.missing:
                await make_directory(sftp, directory)
            path = spot.path
            # Sent right behind the lock's exclusive open: the state under the lock
            # and, when the walk saw a regular file, its handle (the previous bytes
            # are needed).
            along: list[Callable[[], Coroutine[Any, Any, object]]] = [
                lambda: lstat_or_none(sftp, path)
            ]
            if spot.attrs is not None and kind_of(spot.attrs) == "file":
                along.append(lambda: open_or_none(sftp, path))
            async with self.locks.hold(sftp, path, *along) as held:
                return await rewrite(
                    self.locks, sftp, path, held, check, plan, expected, self.clock
                )

        self.workspace.check(verb, display_path, target.target_key, write=False)
        return await self.run(verb, display_path, body, mutation=True)

    # -- removing and moving (in :mod:`._entries`) -------------------------------------

    async def delete(
        self, display_path: str, recursive: bool, guard: EntryGuard | None
    ) -> PathType:
        async def body(sftp: asyncssh.SFTPClient) -> PathType:
            return await _entries.delete(self, sftp, display_path, recursive, guard)

        return await self.run("delete", display_path, body, mutation=True)

    async def move(
        self, source: str, destination: str, replace: bool, guard: MoveGuard
    ) -> tuple[PathType, str | None, bool]:
        async def body(sftp: asyncssh.SFTPClient) -> tuple[PathType, str | None, bool]:
            return await _entries.move(self, sftp, source, destination, replace, guard)

        return await self.run("move", source, body, mutation=True)

    async def apply_changes(
        self, changes: Sequence[FsChange], plans: Sequence[Callable[[bytes | None], bytes]]
    ) -> list[tuple[str, bytes | None] | PathType]:
        first = changes[0]
        verb = "delete" if isinstance(first, DeleteChange) else "write"

        async def body(sftp: asyncssh.SFTPClient) -> list[tuple[str, bytes | None] | PathType]:
            return await _entries.apply_changes(self, sftp, changes, plans)

        return await self.run(verb, first.target.display_path, body, mutation=True)


__all__ = ["Remote"]


def _dir_entry(
    name: str,
    target: FsTarget,
    attrs: asyncssh.SFTPAttrs,
    version: str | None,
    *,
    symlink: bool = False,
) -> FsDirEntry:
    """A listed entry with the attributes of what it leads to; ``version`` is ``None`` for
    a listing without ``stat`` (then no size or time either)."""
    kind = entry_type(attrs)
    if version is None:
        return FsDirEntry(name, kind, target, symlink=symlink)
    size = attrs.size if kind == "file" else None
    return FsDirEntry(name, kind, target, version, size, modified_ns(attrs), symlink=symlink)
