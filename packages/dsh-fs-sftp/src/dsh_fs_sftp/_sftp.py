"""``SftpFileSystem``: a workspace on another machine, over SSH/SFTP.

Kept as one module: the anyio face of every primitive, one short method each
that sends its coroutine to the SSH loop; the work is in :mod:`._remote`,
:mod:`._entries` and :mod:`._publish`.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio
import anyio.lowlevel
from anyio import from_thread, to_thread
from dsh_fs import (
    EditGuard,
    EntryGuard,
    FileSystem,
    FsChange,
    FsDeleteOutcome,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsInfo,
    FsMoveOutcome,
    FsPathInfo,
    FsTarget,
    FsWriteOutcome,
    MoveGuard,
    PathType,
    ReplaceIfVersion,
    WriteChange,
    WriteIntent,
)
from dsh_fs.locks import TargetLocks
from dsh_fs.preconditions import check_edit, check_write, over_read_limit
from dsh_fs.streaming import CHUNK_BYTES, TextStream
from dsh_fs.text import (
    AppliedEdit,
    apply_edit,
    decode_previous,
    decode_text,
    encode_text,
    written_text,
)
from dsh_fs.workspace import CWD_ROOT, RootsOption, Workspace

from ._attrs import State
from ._connection import Address, ConnectFailure
from ._lock import STALE_AFTER
from ._loop import SshLoop
from ._remote import Remote
from ._requests import close_quietly
from ._url import DEFAULT_PORT, display_path_of, parse_url
from ._walk import Lookups


class SftpFileSystem(FileSystem):
    """The files of another machine, reached over SFTP with asyncssh.

    ``host``, ``port`` and ``username`` say where (``username=None``: the
    local user's name, as ``ssh`` does). ``client_keys`` are private key
    files or objects (``None``: asyncssh's defaults, the ssh-agent and
    ``~/.ssh/id_*``); ``known_hosts`` is the file (or asyncssh value) host
    keys are verified against, ``~/.ssh/known_hosts`` by default —
    ``known_hosts=None`` turns verification off, explicitly. ``cwd`` is the
    remote directory relative paths resolve against, and by default the one
    root of the workspace (``roots``, ``read_only_roots``, ``read_only`` as
    for every backend). ``connect_timeout`` bounds opening the connection;
    ``lock_stale_after`` is how long another client's lock may look unchanged
    before it is taken for the leftover of a crash; ``connect_options`` go to
    ``asyncssh.connect`` as they are (``passphrase``, ``config``, ...).

    Nothing is reached at construction. The connection opens on first use
    (or :meth:`connect`), is shared by every call, is reopened once when it
    dropped, and is closed by :meth:`aclose` (or ``async with``). The roots
    are realpathed on the server when it opens: one that is not an existing
    directory makes :meth:`connect` raise ``ValueError`` and every primitive
    fail ``FS_IO_ERROR`` naming it.
    """

    def __init__(
        self,
        host: str,
        *,
        port: int = DEFAULT_PORT,
        username: str | None = None,
        client_keys: Any = None,
        known_hosts: Any = (),
        cwd: str,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str] = (),
        read_only: bool = False,
        connect_timeout: float = 10,
        lock_stale_after: float = STALE_AFTER,
        connect_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(cwd, str) or not cwd.startswith("/"):
            raise ValueError(f"cwd must be an absolute path on the server, not {cwd!r}")
        if "\0" in cwd:
            raise ValueError("cwd contains a NUL byte")
        self._cwd = posixpath.normpath(cwd)
        # A server that vanishes without closing the TCP connection (a sandbox
        # torn down, a network partition) is found out within ~45 s, not TCP's
        # many minutes: its pending calls then fail FS_IO_ERROR.
        options: dict[str, Any] = {"keepalive_interval": 15, "keepalive_count_max": 3}
        options.update(connect_options or {})
        options["known_hosts"] = known_hosts
        if client_keys is not None:
            options["client_keys"] = (
                [client_keys] if isinstance(client_keys, str | os.PathLike) else client_keys
            )
        self._address = Address(host, int(port), username)
        self._remote = Remote(
            self._address,
            options,
            float(connect_timeout),
            self._cwd,
            roots,
            tuple(map(str, read_only_roots)),
            read_only,
            float(lock_stale_after),
        )
        self._ssh = SshLoop.shared()
        self._locks = TargetLocks()

    @classmethod
    def from_url(cls, url: str, **options: Any) -> SftpFileSystem:
        """``sftp://[user@]host[:port]/absolute/path``: the server and the ``cwd``.

        ``options`` are the constructor's keywords (``client_keys``,
        ``known_hosts``, ``roots`` …). A URL that is not of that form raises
        ``ValueError`` — also one without a path (``sftp://user@host``): a
        workspace is never implied.
        """
        host, port, username, path = parse_url(url)
        return cls(host, port=port, username=username, cwd=path, **options)

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def url(self) -> str:
        """Where this backend works, as a URL (no secret in it)."""
        return f"{self._address}{self._cwd}"

    @property
    def workspace(self) -> Workspace:
        """The roots (canonical on the server once connected) and the write switch."""
        return self._remote.workspace

    def __repr__(self) -> str:
        return f"SftpFileSystem.from_url({self.url!r})"

    # -- the connection ------------------------------------------------------

    async def connect(self) -> None:
        """Open the connection now (it opens by itself on first use otherwise).

        Raises ``FsError`` ``FS_IO_ERROR`` when the server cannot be reached
        or refuses (one line saying which), and ``ValueError`` for a root that
        is not an existing directory on the server.
        """
        try:
            await self._ssh.run(self._remote.connect())
        except ConnectFailure as exc:
            raise FsError(
                f"cannot connect to {self._address}: {exc}", FsErrorCode.FS_IO_ERROR
            ) from exc

    async def aclose(self) -> None:
        """Close the connection (a later call opens a new one)."""
        await self._ssh.run(self._remote.aclose())

    async def __aenter__(self) -> SftpFileSystem:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with anyio.CancelScope(shield=True):
            await self.aclose()

    # -- the primitives ------------------------------------------------------

    def _display(self, path: str, cwd: str | None) -> str:
        base = self._cwd if cwd is None else posixpath.join(self._cwd, cwd)
        return display_path_of(path, base)

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        await anyio.lowlevel.checkpoint_if_cancelled()
        display_path = self._display(path, cwd)
        key: str = await self._ssh.run(self._remote.resolve(display_path))
        return FsTarget(key, display_path)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        return await self._ssh.run(self._remote.stat(target))

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        return await self._ssh.run(self._remote.lstat(self._display(path, cwd)))

    async def read_text(self, target: FsTarget) -> str:
        display_path = target.display_path
        return await self._ssh.run(
            self._remote.read_bytes(target), lambda data: decode_text(data, "read", display_path)
        )

    async def read_texts(
        self, targets: Sequence[FsTarget], *, max_bytes: int | None = None
    ) -> list[str | FsError]:
        """Every one of ``targets`` with one hop to the SSH loop, all their requests in flight
        at once (the default reads four at a time); under ``max_bytes`` each file takes its
        size at open from the bytes left before it is read, and one that does not fit is
        ``FS_TOO_LARGE``, unread. Decoded in the worker thread that waited."""
        if not targets:
            return []
        budget = _Budget(max_bytes)
        return await self._ssh.run(_read_all(self._remote, targets, budget), _decoded(targets))

    def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        """1 MiB per step; each step waits for the SSH loop in a worker thread."""
        ssh, remote = self._ssh, self._remote
        return TextStream(
            lambda: _RemoteSource(ssh, remote, target),
            target.display_path,
            run=_in_worker,
            check_cancelled=from_thread.check_cancelled,
        )

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        return await self._ssh.run(self._remote.list_dir(target, stat))

    async def list_dirs(
        self, targets: Sequence[FsTarget], *, stat: bool = False
    ) -> list[list[FsDirEntry] | FsError]:
        """Every one of ``targets`` with one hop to the SSH loop, all their requests in flight
        at once (the default sends 16 at a time, each its own hop)."""
        if not targets:
            return []
        return await self._ssh.run(_listed(self._remote, targets, stat))

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        display_path = target.display_path

        def check(current: State) -> None:
            check_write(display_path, current, expected)

        def plan(previous: bytes | None) -> bytes:
            return encode_text(content, "write", display_path)

        def outcome(done: tuple[str, bytes | None]) -> FsWriteOutcome:
            return _write_outcome(content, done)

        await anyio.lowlevel.checkpoint_if_cancelled()
        async with self._locks.hold(target.target_key):
            guard = expected.version if isinstance(expected, ReplaceIfVersion) else None
            return await self._ssh.run(
                self._remote.mutate("write", target, check, plan, guard), outcome
            )

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        display_path = target.display_path
        applied: list[AppliedEdit] = []

        def check(current: State) -> None:
            check_edit(display_path, current, expected)

        def plan(previous: bytes | None) -> bytes:
            result = apply_edit(previous or b"", edit, display_path)
            applied.append(result)
            return result.data

        await anyio.lowlevel.checkpoint_if_cancelled()
        async with self._locks.hold(target.target_key):
            done: tuple[str, bytes | None] = await self._ssh.run(
                self._remote.mutate(
                    "edit", target, check, plan, None if expected is None else expected.version
                )
            )
        version = done[0]
        result = applied[-1]
        return FsEditOutcome(version, result.before, result.after, result.replacements)

    async def delete(
        self, target: FsTarget, *, recursive: bool = False, expected: EntryGuard | None = None
    ) -> FsDeleteOutcome:
        await anyio.lowlevel.checkpoint_if_cancelled()
        async with self._locks.hold(target.target_key):
            kind: PathType = await self._ssh.run(
                self._remote.delete(target.display_path, recursive, expected)
            )
        return FsDeleteOutcome(kind)

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        *,
        replace: bool = False,
        expected: MoveGuard | None = None,
    ) -> FsMoveOutcome:
        await anyio.lowlevel.checkpoint_if_cancelled()
        async with self._locks.hold_all([source.target_key, destination.target_key]):
            moved: tuple[PathType, str | None, bool] = await self._ssh.run(
                self._remote.move(
                    source.display_path,
                    destination.display_path,
                    replace,
                    expected or MoveGuard(),
                )
            )
        return FsMoveOutcome(*moved)

    async def apply_changes(
        self, changes: Sequence[FsChange]
    ) -> list[FsWriteOutcome | FsDeleteOutcome]:
        """Every target's lock (in this process, then on the server) held at once, taken in
        sorted order; every guard checked again under them; then each change published."""
        keys = [change.target.target_key for change in changes]
        if len(set(keys)) != len(keys):
            raise ValueError("apply_changes: two changes of one target")
        if not changes:
            return []
        plans = [_plan_of(change) for change in changes]
        await anyio.lowlevel.checkpoint_if_cancelled()
        async with self._locks.hold_all(keys):
            done: list[tuple[str, bytes | None] | PathType] = await self._ssh.run(
                self._remote.apply_changes(changes, plans)
            )
        outcomes: list[FsWriteOutcome | FsDeleteOutcome] = []
        for change, result in zip(changes, done, strict=True):
            if isinstance(change, WriteChange):
                assert isinstance(result, tuple)
                outcomes.append(_write_outcome(change.content, result))
            else:
                assert not isinstance(result, tuple)
                outcomes.append(FsDeleteOutcome(result))
        return outcomes


def _write_outcome(content: str, done: tuple[str, bytes | None]) -> FsWriteOutcome:
    version, previous = done
    return FsWriteOutcome(
        operation="create" if previous is None else "update",
        version=version,
        before=None if previous is None else decode_previous(previous),
        after=written_text(content),
    )


def _plan_of(change: FsChange) -> Callable[[bytes | None], bytes]:
    """The new bytes of a write of a batch (a removal has none)."""
    content, display_path = getattr(change, "content", ""), change.target.display_path
    return lambda previous: encode_text(content, "write", display_path)


class _Budget:
    """The bytes one bounded ``read_texts`` may still hold (``None``: no bound), on the SSH
    loop (one thread: no lock)."""

    def __init__(self, max_bytes: int | None) -> None:
        self.left = max_bytes

    def take(self, size: int, display_path: str) -> None:
        if self.left is None:
            return
        if size > self.left:
            raise over_read_limit("read", display_path)
        self.left -= size

    def give(self, size: int) -> None:
        if self.left is not None:
            self.left += size


async def _read_all(
    remote: Remote, targets: Sequence[FsTarget], budget: _Budget
) -> list[bytes | FsError]:
    """On the SSH loop: the bytes of each target, concurrently (their walks sharing their
    lookups); an ``FsError`` as a value, any other exception raised (after the others
    finished)."""
    lookups = Lookups()
    done = await asyncio.gather(
        *(remote.read_bytes_within(t, budget.take, budget.give, lookups) for t in targets),
        return_exceptions=True,
    )
    read: list[bytes | FsError] = []
    for data in done:
        if isinstance(data, BaseException) and not isinstance(data, FsError):
            raise data
        read.append(data)
    return read


def _decoded(
    targets: Sequence[FsTarget],
) -> Callable[[list[bytes | FsError]], list[str | FsError]]:
    """The texts of what :func:`_read_all` read, decoded as ``read_text`` decodes."""

    def decode(read: list[bytes | FsError]) -> list[str | FsError]:
        texts: list[str | FsError] = []
        for target, data in zip(targets, read, strict=True):
            if isinstance(data, FsError):
                texts.append(data)
                continue
            try:
                texts.append(decode_text(data, "read", target.display_path))
            except FsError as exc:
                texts.append(exc)
        return texts

    return decode


async def _listed(
    remote: Remote, targets: Sequence[FsTarget], stat: bool
) -> list[list[FsDirEntry] | FsError]:
    """On the SSH loop: ``list_dir`` of each target, concurrently (their walks sharing their
    lookups); an ``FsError`` as a value, any other exception raised (after the others
    finished)."""
    lookups = Lookups()
    done = await asyncio.gather(
        *(remote.list_dir(target, stat, lookups) for target in targets), return_exceptions=True
    )
    listings: list[list[FsDirEntry] | FsError] = []
    for listing in done:
        if isinstance(listing, BaseException) and not isinstance(listing, FsError):
            raise listing
        listings.append(listing)
    return listings


async def _in_worker(step: Any) -> Any:
    return await to_thread.run_sync(step, abandon_on_cancel=False)


class _RemoteSource:
    """The bytes of one remote file for a ``TextStream`` (blocking calls, from a worker).

    The first chunk comes with the open (one hop, one round trip less); a file
    of one chunk is then read without another hop."""

    def __init__(self, ssh: SshLoop, remote: Remote, target: FsTarget) -> None:
        self._ssh = ssh
        self._remote = remote
        self._display_path = target.display_path
        self._handle, self._size, self._ahead = ssh.run_blocking(
            remote.open_stream(target, CHUNK_BYTES)
        )
        self._offset = 0

    @property
    def at_end(self) -> bool:
        return self._offset >= self._size

    def readinto(self, buffer: memoryview) -> int:
        if self._ahead:  # the first bytes, read with the open
            ahead = self._ahead
            taken = min(len(ahead), len(buffer))
            buffer[:taken] = ahead[:taken] if taken < len(ahead) else ahead
            self._ahead = ahead[taken:]
            self._offset += taken
            return taken
        wanted = min(len(buffer), self._size - self._offset)
        if wanted <= 0:
            return 0
        data = self._ssh.run_blocking(
            self._remote.read_chunk(self._handle, wanted, self._offset, self._display_path)
        )
        buffer[: len(data)] = data
        self._offset += len(data)
        if not data:
            self._size = self._offset  # the file shrank: the stream ends here
        return len(data)

    def close(self) -> None:
        handle, loop = self._handle, self._ssh.loop
        if not loop.is_closed():
            loop.call_soon_threadsafe(lambda: loop.create_task(close_quietly(handle)))


def sftp_backend(
    cwd: str | None = None,
    *,
    roots: RootsOption = CWD_ROOT,
    read_only_roots: Sequence[str] = (),
    read_only: bool = False,
    ssh_key: str | None = None,
    **options: Any,
) -> SftpFileSystem:
    """The ``dsh_fs.backends`` entry point ``sftp``: ``cwd`` is the ``sftp://`` URL.

    ``ssh_key`` is a private key file (``client_keys=[ssh_key]``); every
    other keyword is the constructor's (``known_hosts``, ``connect_timeout``
    …). This is what ``dsh-fs … --backend sftp --cwd sftp://… --ssh-key FILE
    --known-hosts FILE`` builds.
    """
    if cwd is None:
        raise ValueError("the sftp backend needs --cwd sftp://[user@]host[:port]/absolute/path")
    if ssh_key is not None:
        options["client_keys"] = [ssh_key]
    return SftpFileSystem.from_url(
        cwd, roots=roots, read_only_roots=read_only_roots, read_only=read_only, **options
    )


__all__ = ["SftpFileSystem", "parse_url", "sftp_backend"]
