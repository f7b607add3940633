"""The SSH side of the backend: the connection and the primitives, as asyncio coroutines.

Everything here runs on the SSH loop (:mod:`._loop`); :class:`SftpFileSystem`
is the anyio face that sends each primitive here as one coroutine.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import posixpath
import secrets
import socket
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import asyncssh
from dsh_fs import EntryType, FsDirEntry, FsError, FsErrorCode, FsInfo, FsPathInfo, FsTarget
from dsh_fs.preconditions import not_directory, not_found, not_regular, parent_not_directory
from dsh_fs.workspace import RootsOption, Workspace, is_beneath, outside_workspace

from ._lock import FileLocks, Held, temporary_prefix
from ._loop import finish, run_to_end, undone_if_cancelled
from ._requests import close_quietly, lstat_or_none, read_at
from ._walk import (
    LinkLoop,
    Outside,
    ParentNotDirectory,
    Spot,
    Walker,
    entry_type,
    io_error,
    kind_of,
)

T = TypeVar("T")

LOST = (
    asyncssh.SFTPConnectionLost,
    asyncssh.SFTPNoConnection,
    asyncssh.DisconnectError,
    asyncssh.ChannelOpenError,
    ConnectionError,
)
"""What asyncssh raises for a request whose connection went away."""

State = tuple[EntryType, str] | None


def version_of(attrs: asyncssh.SFTPAttrs) -> str:
    """The freshness token: size, whole-second mtime, mode and owner.

    SFTP (version 3, what OpenSSH speaks) gives whole seconds and no inode;
    every write through this backend moves the mtime forward by at least one
    second (see :meth:`Remote._rewrite`), so no two states it writes share a
    version.
    """
    return f"{attrs.size}:{attrs.mtime}:{attrs.permissions or 0:o}:{attrs.uid}:{attrs.gid}"


def modified_ns(attrs: asyncssh.SFTPAttrs) -> int | None:
    return None if attrs.mtime is None else int(attrs.mtime) * 1_000_000_000


def state_of(attrs: asyncssh.SFTPAttrs | None) -> State:
    if attrs is None:
        return None
    kind = kind_of(attrs)
    return ("other" if kind == "symlink" else kind, version_of(attrs))


class ConnectFailure(Exception):
    """Why the connection could not be opened, in one line without secrets."""


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    port: int
    username: str | None

    def __str__(self) -> str:
        user = f"{self.username}@" if self.username else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"sftp://{user}{host}:{self.port}"


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
        self._walker = Walker(self._given)
        self.locks = FileLocks(stale_after)
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
            conn = await self._open()
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

    async def _open(self) -> asyncssh.SSHClientConnection:
        options = dict(self._options)
        if self.address.username is not None:
            options["username"] = self.address.username
        try:
            return await asyncio.wait_for(
                asyncssh.connect(
                    self.address.host,
                    self.address.port,
                    connect_timeout=self._timeout,
                    **options,
                ),
                self._timeout,
            )
        except asyncssh.HostKeyNotVerifiable as exc:
            raise ConnectFailure("the server's host key is not trusted (known_hosts)") from exc
        except asyncssh.PermissionDenied as exc:
            who = f'"{self.address.username}"' if self.address.username else "the local user"
            raise ConnectFailure(f"authentication as {who} failed") from exc
        except ConnectionRefusedError as exc:
            raise ConnectFailure("connection refused") from exc
        except TimeoutError as exc:
            raise ConnectFailure(f"timed out after {self._timeout:g} s") from exc
        except socket.gaierror as exc:
            raise ConnectFailure("unknown host") from exc
        except OSError as exc:
            raise ConnectFailure(exc.strerror or type(exc).__name__) from exc
        except asyncssh.Error as exc:
            raise ConnectFailure(f"SSH error: {exc.reason}") from exc
        except ValueError as exc:  # asyncssh: a key file it cannot read or parse
            raise ConnectFailure(f"bad SSH option: {exc}") from exc

    async def _check_workspace(self, sftp: asyncssh.SFTPClient) -> None:
        """Realpath every root on the server; probe the extensions writes need."""
        given = self._given
        named = [*(given.roots or ()), *given.read_only_roots]
        canonical: dict[str, str] = {}
        for root in named:
            canonical[root] = await _canonical_root(sftp, root)
        self.workspace = Workspace(
            roots=None if given.roots is None else tuple(canonical[r] for r in given.roots),
            read_only_roots=tuple(canonical[r] for r in given.read_only_roots),
            read_only=given.read_only,
        )
        self._spellings = tuple(
            sorted(((g, c) for g, c in canonical.items() if g != c), key=lambda kv: -len(kv[0]))
        )
        self._walker = Walker(self.workspace)
        if not given.read_only:
            await self._probe_extensions(sftp, named[0] if named else self.cwd)

    async def _probe_extensions(self, sftp: asyncssh.SFTPClient, directory: str) -> None:
        probe = posixpath.join(directory, f".dsh-probe-{secrets.token_hex(8)}")
        try:
            await sftp.posix_rename(probe, probe + "-")
        except asyncssh.SFTPNoSuchFile:
            pass
        except asyncssh.SFTPOpUnsupported as exc:
            raise ConnectFailure(_missing("posix-rename@openssh.com")) from exc
        try:
            async with sftp.open(directory, "rb") as handle:
                await handle.fsync()
        except asyncssh.SFTPOpUnsupported as exc:
            raise ConnectFailure(_missing("fsync@openssh.com")) from exc

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
    ) -> Spot | None:
        """The walk to ``path``; ``None`` when a parent segment is not a directory."""
        try:
            return await self._walker.walk(sftp, path, follow=follow)
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
            return _info(spot.attrs)

        self.workspace.check("read", target.display_path, target.target_key, write=False)
        return await self.run("read", target.display_path, body)

    async def lstat(self, display_path: str) -> FsPathInfo | None:
        async def body(sftp: asyncssh.SFTPClient) -> FsPathInfo | None:
            path = self.beneath_root(display_path, "stat")
            spot = await self.reach(sftp, path, "stat", display_path, follow=False)
            if spot is None or spot.attrs is None:
                return None
            attrs = spot.attrs
            kind = kind_of(attrs)
            size = attrs.size if kind == "file" else None
            return FsPathInfo(version_of(attrs), kind, size, modified_ns(attrs))

        return await self.run("stat", display_path, body)

    async def _readable(
        self, sftp: asyncssh.SFTPClient, target: FsTarget
    ) -> tuple[Spot, asyncssh.SFTPClientFile, int]:
        """The open regular file of ``target`` and its size at open (checked before opening)."""
        display_path = target.display_path
        spot = await self.reach(sftp, target.target_key, "read", display_path)
        if spot is None or spot.attrs is None:
            raise not_found("read", display_path)
        if kind_of(spot.attrs) != "file":
            raise not_regular("read", display_path)
        try:
            handle = await sftp.open(spot.path, "rb")
        except asyncssh.SFTPNoSuchFile:
            raise not_found("read", display_path) from None
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

    async def open_stream(self, target: FsTarget) -> tuple[asyncssh.SFTPClientFile, int]:
        async def body(sftp: asyncssh.SFTPClient) -> tuple[asyncssh.SFTPClientFile, int]:
            _, handle, size = await self._readable(sftp, target)
            return handle, size

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

    async def list_dir(self, target: FsTarget, with_stat: bool) -> list[FsDirEntry]:
        display_path = target.display_path

        async def body(sftp: asyncssh.SFTPClient) -> list[FsDirEntry]:
            spot = await self.reach(sftp, target.target_key, "list", display_path)
            if spot is None or spot.attrs is None:
                raise not_found("list", display_path)
            if kind_of(spot.attrs) != "directory":
                raise not_directory("list", display_path)
            names = [e for e in await sftp.readdir(spot.path) if e.filename not in (".", "..")]
            return list(
                await asyncio.gather(
                    *(self._entry(sftp, spot.path, display_path, e, with_stat) for e in names)
                )
            )

        self.workspace.check("list", display_path, target.target_key, write=False)
        return await self.run("list", display_path, body)

    async def _entry(
        self,
        sftp: asyncssh.SFTPClient,
        parent: str,
        parent_display: str,
        entry: asyncssh.SFTPName,
        with_stat: bool,
    ) -> FsDirEntry:
        name = str(entry.filename)
        display = posixpath.join(parent_display, name)
        key = posixpath.join(parent, name)
        attrs: asyncssh.SFTPAttrs | None = entry.attrs
        assert attrs is not None
        link = kind_of(attrs) == "symlink"  # the entry itself, whatever it leads to
        if link:
            try:
                spot = await self._walker.walk(sftp, key)
            except (Outside, LinkLoop, ParentNotDirectory):
                return FsDirEntry(name, "other", FsTarget(key, display), symlink=True)
            if spot.attrs is None:
                return FsDirEntry(name, "other", FsTarget(spot.path, display), symlink=True)
            key, attrs = spot.path, spot.attrs
        kind = entry_type(attrs)
        if not with_stat:
            return FsDirEntry(name, kind, FsTarget(key, display), symlink=link)
        return FsDirEntry(
            name,
            kind,
            FsTarget(key, display),
            version_of(attrs),
            attrs.size if kind == "file" else None,
            modified_ns(attrs),
            symlink=link,
        )

    async def mutate(
        self,
        verb: str,
        target: FsTarget,
        check: Callable[[State], None],
        plan: Callable[[bytes | None], bytes],
    ) -> tuple[str, bytes | None]:
        """The read-modify-write section of ``write_text`` / ``edit_text``.

        Reach the target (outside wins over read-only, both before anything
        else), check the intent on what is there, create missing parents,
        then, holding the cross-client lock: check again, read the previous
        bytes, ``plan`` the new ones and :meth:`replace` the file. Returns
        the new version and the previous bytes (``None``: it was created).
        """
        display_path = target.display_path

        async def body(sftp: asyncssh.SFTPClient) -> tuple[str, bytes | None]:
            spot = await self.reach(sftp, target.target_key, verb, display_path)
            if spot is None:
                raise parent_not_directory(verb, display_path)
            self.workspace.check(verb, display_path, spot.path, write=True)
            check(state_of(spot.attrs))
            for directory in spot.missing:
                await _make_directory(sftp, directory)
            path = spot.path
            # Sent with the lock's token: the state under the lock and, when the
            # walk saw a regular file, its handle (the previous bytes are needed).
            along: list[Coroutine[Any, Any, object]] = [lstat_or_none(sftp, path)]
            if spot.attrs is not None and kind_of(spot.attrs) == "file":
                along.append(_open_or_none(sftp, path))
            async with self.locks.hold(sftp, path, *along) as held:
                return await self._rewrite(sftp, path, held, check, plan)

        self.workspace.check(verb, display_path, target.target_key, write=False)
        return await self.run(verb, display_path, body, mutation=True)

    async def _rewrite(
        self,
        sftp: asyncssh.SFTPClient,
        path: str,
        held: Held,
        check: Callable[[State], None],
        plan: Callable[[bytes | None], bytes],
    ) -> tuple[str, bytes | None]:
        """Inside the lock: check again, read the previous bytes, publish the new ones.

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
            check(state_of(attrs))
        except BaseException:
            if old is not None:
                await finish(close_quietly(old))
            raise
        mode = None if attrs is None else (attrs.permissions or 0) & 0o7777
        temporary = _temporary_name(path)
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
            data = plan(previous)
            mtime = held.server_time
            if attrs is not None and attrs.mtime is not None:
                mtime = max(mtime, int(attrs.mtime) + 1)
            await handle.write(data, 0)
            # The server answers requests in order: the metadata, the fsync and the
            # stat of the result go out together (asyncssh sends each at once).
            final = asyncssh.SFTPAttrs(permissions=mode, atime=mtime, mtime=mtime)
            _, _, written = await asyncio.gather(
                handle.setstat(final), handle.fsync(), handle.stat()
            )
        except BaseException:
            await finish(_discard(sftp, handle, temporary))
            raise
        release = self.locks.release_request(sftp, held)
        version = await run_to_end(_commit(sftp, handle, temporary, path, written, release))
        return version, previous


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


def _temporary_name(path: str) -> str:
    """``.<name>.dsh-<pid>-<8 hex>.tmp`` beside ``path`` (the naming rule of the local backend)."""
    name = f"{temporary_prefix(path)}{os.getpid()}-{secrets.token_hex(4)}.tmp"
    return posixpath.join(posixpath.dirname(path), name)


async def _create(
    sftp: asyncssh.SFTPClient, temporary: str, mode: int | None
) -> asyncssh.SFTPClientFile:
    # A replacement starts private (0600) and gets the old mode before it is
    # published; a new file gets what the server's open() gives (0666 & ~umask).
    permissions = 0o600 if mode is not None else 0o666
    return await undone_if_cancelled(
        sftp.open(temporary, "xb", asyncssh.SFTPAttrs(permissions=permissions)),
        lambda handle: _discard(sftp, handle, temporary),
    )


async def _open_or_none(sftp: asyncssh.SFTPClient, path: str) -> asyncssh.SFTPClientFile | None:
    try:
        return await sftp.open(path, "rb")
    except asyncssh.SFTPNoSuchFile:
        return None


async def _read_then_close(handle: asyncssh.SFTPClientFile, size: int) -> bytes:
    try:
        return await read_at(handle, size)
    finally:
        await finish(close_quietly(handle))


async def _commit(
    sftp: asyncssh.SFTPClient,
    handle: asyncssh.SFTPClientFile,
    temporary: str,
    path: str,
    attrs: asyncssh.SFTPAttrs,
    release: Awaitable[None],
) -> str:
    """Close, rename over the target and release the lock: one round trip."""
    _, renamed, _ = await asyncio.gather(
        handle.close(), sftp.posix_rename(temporary, path), release, return_exceptions=True
    )
    if isinstance(renamed, BaseException):
        if not isinstance(renamed, LOST):
            await _discard(sftp, None, temporary)
        raise renamed
    return version_of(attrs)


async def _discard(
    sftp: asyncssh.SFTPClient, handle: asyncssh.SFTPClientFile | None, temporary: str
) -> None:
    """Remove an unpublished temporary file (gone with a lost connection: it is swept when
    the target's lock is next broken)."""
    if handle is not None:
        await close_quietly(handle)
    with contextlib.suppress(asyncssh.Error, OSError):
        await sftp.remove(temporary)


async def _make_directory(sftp: asyncssh.SFTPClient, path: str) -> None:
    try:
        await sftp.mkdir(path)
    except asyncssh.SFTPFailure:
        attrs = await lstat_or_none(sftp, path)
        if attrs is None or kind_of(attrs) != "directory":
            raise


async def _canonical_root(sftp: asyncssh.SFTPClient, root: str) -> str:
    problem = ValueError(f"workspace root {root!r} is not an existing directory")
    try:
        real = await sftp.realpath(root)
        attrs = await sftp.stat(real)
    except asyncssh.SFTPNoSuchFile:
        raise problem from None
    if kind_of(attrs) != "directory":
        raise problem
    return str(real)


def _info(attrs: asyncssh.SFTPAttrs) -> FsInfo:
    kind = entry_type(attrs)
    size = attrs.size if kind == "file" else None
    return FsInfo(version_of(attrs), kind, size, modified_ns(attrs))


def _missing(extension: str) -> str:
    return (
        f"the server lacks the {extension} extension, which atomic, durable writes need "
        "(OpenSSH's sftp-server has it)"
    )


def lost(verb: str, display_path: str, address: Address) -> FsError:
    return io_error(verb, display_path, f"the connection to {address} was lost")


def sftp_failure(verb: str, display_path: str, exc: asyncssh.SFTPError) -> FsError:
    if isinstance(exc, asyncssh.SFTPNoSuchFile):
        return not_found(verb, display_path)
    if isinstance(exc, asyncssh.SFTPPermissionDenied):
        return FsError.cannot(
            verb, display_path, "permission denied", FsErrorCode.FS_PERMISSION_DENIED
        )
    return io_error(verb, display_path, exc.reason or type(exc).__name__)


__all__ = ["Address", "ConnectFailure", "Remote", "State"]
