"""``LocalFileSystem``: the host filesystem behind the ``FileSystem`` seam."""

from __future__ import annotations

import errno
import os
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TypeVar

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
    HeldDirectory,
    MoveGuard,
    WriteChange,
    WriteIntent,
)
from dsh_fs.locks import TargetLocks
from dsh_fs.preconditions import MOVE_TO, check_edit, parent_not_directory
from dsh_fs.streaming import TextStream
from dsh_fs.text import (
    LARGE_FILE_BYTES,
    AppliedEdit,
    Bytes,
    apply_edit,
)
from dsh_fs.workspace import CWD_ROOT, RootsOption, Workspace, is_beneath, outside_workspace

from ._anywhere import Anywhere
from ._batch import BatchChange, BatchDelete, BatchWrite, apply_batch, write_steps
from ._beneath import Beneath
from ._listing import list_directories, list_directory, list_failure
from ._move import move
from ._mutate import mutate
from ._os_errors import os_error_text, os_failure
from ._paths import display_path_of, entry_type_of, file_state, path_type_of, version_of
from ._reach import LISTABLE_FLAGS, PATH_FLAGS, Reach, Refused
from ._reading import FileSource, read_text_file, read_text_files
from ._remove import remove

T = TypeVar("T")


async def _in_worker(step: Callable[[], T]) -> T:
    """One ``stream_text`` step in a worker thread, never abandoned (see the cancellation
    note below), like every other worker call of the class."""
    return await to_thread.run_sync(step, abandon_on_cancel=False)


class LocalFileSystem(FileSystem):
    """The host filesystem: realpath identity, strict UTF-8, atomic crash-safe writes,
    contained to its workspace at the system call.

    ``cwd`` (default: the process working directory at construction) is where
    relative paths resolve. ``roots`` (default: ``(cwd,)``) are the
    directories the backend may read and write, ``read_only_roots`` further
    ones it may only read and list, ``read_only=True`` forbids every write;
    ``roots=None`` turns containment off. Roots are made absolute against
    ``cwd`` and realpathed once, here, and held open as directory descriptors
    for the backend's lifetime: every primitive reaches its target beneath
    one of them (``openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)``, or a
    component walk where the kernel lacks it), never by a path checked first
    and used afterwards. A root that does not exist or is not a directory
    fails with ``ValueError`` naming it.

    Thread hops: ``resolve``, ``stat`` and ``lstat`` are a few metadata
    syscalls and run inline (no worker thread); ``read_text``, ``list_dir``,
    ``write_text`` and ``edit_text`` each make exactly one
    ``anyio.to_thread.run_sync`` call; ``stream_text`` makes one per 1 MiB
    chunk of text, and ``skip_lines`` one per 256 MiB passed over (it checks
    for cancellation after every 1 MiB inside the thread).

    Cancellation: worker calls are never abandoned (``abandon_on_cancel=False``).
    A mutation cancelled before its worker call starts, or while the worker
    still waits for the directory lock another process holds, has done nothing
    and raises the cancellation; once it holds the lock it completes and
    returns, and the cancellation is delivered at the caller's next checkpoint
    — so the target is always the old or the new content, and the temporary
    file is always gone.
    """

    def __init__(
        self,
        cwd: str | os.PathLike[str] | None = None,
        *,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str | os.PathLike[str]] = (),
        read_only: bool = False,
    ) -> None:
        self._cwd = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
        spellings: dict[str, str] = {}

        def canonical(root: str) -> str:
            real = _canonical_root(root)
            if real != root:
                spellings[root] = real
            return real

        self._workspace = Workspace.build(
            self._cwd, roots, read_only_roots, read_only, canonical=canonical
        )
        # A root given through a symlink (macOS /tmp, a cwd reached by a
        # link) is realpathed once, here; a display path spelled through that
        # same name means the held root, so it is looked up beneath it.
        self._spellings = tuple(sorted(spellings.items(), key=lambda kv: -len(kv[0])))
        self._reach: Reach = (
            Beneath(self._workspace) if self._workspace.contained else Anywhere(self._workspace)
        )
        self._locks = TargetLocks()

    @property
    def cwd(self) -> str:
        """The directory relative paths resolve against by default."""
        return self._cwd

    @property
    def workspace(self) -> Workspace:
        """The canonical roots and the write switch this backend enforces."""
        return self._workspace

    def close(self) -> None:
        """Release the root descriptors (the backend is unusable afterwards).

        Optional: they are also released when the backend is garbage collected;
        this is for code that wants them closed at a known point.
        """
        self._reach.close()

    def __repr__(self) -> str:
        workspace = self._workspace
        if not workspace.contained:
            return f"LocalFileSystem(cwd={self._cwd!r}, roots=None)"
        extra = ""
        if workspace.read_only_roots:
            extra += f", read_only_roots={workspace.read_only_roots!r}"
        if workspace.read_only:
            extra += ", read_only=True"
        return f"LocalFileSystem(cwd={self._cwd!r}, roots={workspace.roots!r}{extra})"

    def _base(self, cwd: str | None) -> str:
        return self._cwd if cwd is None else os.path.join(self._cwd, cwd)

    def _beneath_root(self, display_path: str, verb: str) -> str:
        """``display_path`` spelled beneath a canonical root, refused early (without a
        lookup) when its normalized form lies outside every root."""
        path = display_path
        for spelling, real in self._spellings:
            if is_beneath(display_path, spelling):
                path = real.rstrip("/") + display_path[len(spelling) :] or "/"
                break
        if self._workspace.access(path) is None:
            raise outside_workspace(verb, display_path)
        return path

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        await anyio.lowlevel.checkpoint_if_cancelled()
        display_path = display_path_of(path, self._base(cwd))
        try:
            key = self._reach.key_of(self._beneath_root(display_path, "resolve"))
        except Refused as refused:
            raise refused.error("resolve", display_path) from None
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise parent_not_directory("resolve", display_path) from exc
            raise FsError.cannot(
                "resolve", display_path, os_error_text(exc), FsErrorCode.FS_IO_ERROR
            ) from exc
        self._workspace.check("resolve", display_path, key, write=False)
        return FsTarget(key, display_path)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        # ``stat`` is the first step of the read tool: its refusals and
        # failures speak as the read would (``cannot read "<p>": …``). A key
        # outside every root is refused by the reach before any lookup.
        try:
            fd = self._reach.open(target.target_key, PATH_FLAGS)
        except Refused as refused:
            raise refused.error("read", target.display_path) from None
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return None
            raise os_failure("read", target.display_path, exc) from exc
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        kind = entry_type_of(info.st_mode)
        return FsInfo(
            version_of(info), kind, info.st_size if kind == "file" else None, info.st_mtime_ns
        )

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        display_path = display_path_of(path, self._base(cwd))
        try:
            fd = self._reach.open(
                self._beneath_root(display_path, "stat"), PATH_FLAGS | os.O_NOFOLLOW
            )
        except Refused as refused:
            raise refused.error("stat", display_path) from None
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return None
            raise os_failure("stat", display_path, exc) from exc
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        kind = path_type_of(info.st_mode)
        return FsPathInfo(
            version_of(info), kind, info.st_size if kind == "file" else None, info.st_mtime_ns
        )

    async def read_text(self, target: FsTarget) -> str:
        return await to_thread.run_sync(
            read_text_file,
            self._reach,
            target.target_key,
            target.display_path,
            abandon_on_cancel=False,
        )

    async def read_texts(
        self, targets: Sequence[FsTarget], *, max_bytes: int | None = None
    ) -> list[str | FsError]:
        """Every one of ``targets`` in one worker-thread hop instead of one hop each (why:
        docs/maintaining/benchmarks.md, G2); ``max_bytes`` is checked against the size of
        each *opened* file."""
        if not targets:
            return []
        return await to_thread.run_sync(
            read_text_files,
            self._reach,
            [(target.target_key, target.display_path) for target in targets],
            max_bytes,
            from_thread.check_cancelled,
            abandon_on_cancel=False,
        )

    def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        """1 MiB per step, one worker-thread hop per step; ``skip_lines`` counts raw bytes."""
        key, display_path, reach = target.target_key, target.display_path, self._reach
        return TextStream(
            lambda: FileSource(reach, key, display_path),
            display_path,
            run=_in_worker,
            check_cancelled=from_thread.check_cancelled,
        )

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        return await to_thread.run_sync(
            list_directory,
            self._reach,
            target.target_key,
            target.display_path,
            stat,
            abandon_on_cancel=False,
        )

    async def list_dirs(
        self, targets: Sequence[FsTarget], *, stat: bool = False
    ) -> list[list[FsDirEntry] | FsError]:
        """Every one of ``targets`` in one worker-thread hop instead of one hop each (why:
        docs/maintaining/benchmarks.md, G1)."""
        if not targets:
            return []
        return await to_thread.run_sync(
            list_directories,
            self._reach,
            [(target.target_key, target.display_path) for target in targets],
            stat,
            from_thread.check_cancelled,
            abandon_on_cancel=False,
        )

    async def hold_directory(self, target: FsTarget, *, verb: str) -> HeldDirectory | None:
        """The directory opened beneath its root (as ``list_dir`` opens it) and copies of
        the root descriptors; ``None`` with ``roots=None`` (no roots to confine a tool to)."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        reach = self._reach
        if not isinstance(reach, Beneath):
            return None
        key, display_path = target.target_key, target.display_path
        try:
            fd = reach.open(key, LISTABLE_FLAGS)
        except Refused as refused:
            raise refused.error(verb, display_path) from None
        except OSError as exc:
            raise list_failure(reach, key, display_path, exc, verb) from exc
        try:
            roots = reach.root_descriptors()
        except OSError as exc:
            os.close(fd)
            raise os_failure(verb, display_path, exc) from exc
        return HeldDirectory(fd, roots, key)

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        display_path = target.display_path
        check, plan = write_steps(display_path, content, expected)
        async with self._locks.hold(target.target_key):
            done = await to_thread.run_sync(
                mutate,
                self._reach,
                target.target_key,
                display_path,
                "write",
                check,
                plan,
                LARGE_FILE_BYTES,
                abandon_on_cancel=False,
            )
        before, after = done.result
        return FsWriteOutcome("update" if done.replaced else "create", done.version, before, after)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        display_path = target.display_path

        def check(current: os.stat_result | None) -> None:
            check_edit(display_path, file_state(current), expected)

        def plan(previous: bytes | None) -> tuple[tuple[Bytes, ...], AppliedEdit]:
            assert previous is not None  # check_edit refused an absent file
            applied = apply_edit(previous, edit, display_path)
            return applied.chunks, applied

        async with self._locks.hold(target.target_key):
            done = await to_thread.run_sync(
                mutate,
                self._reach,
                target.target_key,
                display_path,
                "edit",
                check,
                plan,
                abandon_on_cancel=False,
            )
        applied = done.result
        return FsEditOutcome(done.version, applied.before, applied.after, applied.replacements)

    async def delete(
        self, target: FsTarget, *, recursive: bool = False, expected: EntryGuard | None = None
    ) -> FsDeleteOutcome:
        """Remove the entry at ``target.display_path``, its final name not followed (a link
        is removed as a link); a tree is renamed aside first, then deleted. One worker
        call, under the target's lock and its directory's ``flock``."""
        display_path = target.display_path
        path = self._beneath_root(display_path, "delete")
        async with self._locks.hold(target.target_key):
            kind = await to_thread.run_sync(
                remove,
                self._reach,
                path,
                display_path,
                recursive,
                expected,
                abandon_on_cancel=False,
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
        """Move the entry at ``source.display_path`` (a link moves as a link) with one
        ``renameat2``; both targets' locks and both directories' ``flock`` are taken in
        one fixed order. One worker call."""
        paths = (
            (self._beneath_root(source.display_path, "move"), source.display_path),
            (self._beneath_root(destination.display_path, MOVE_TO), destination.display_path),
        )
        async with self._locks.hold_all([source.target_key, destination.target_key]):
            moved = await to_thread.run_sync(
                move,
                self._reach,
                *paths,
                replace,
                expected or MoveGuard(),
                abandon_on_cancel=False,
            )
        return FsMoveOutcome(moved.type, moved.version, moved.replaced)

    async def apply_changes(
        self, changes: Sequence[FsChange]
    ) -> list[FsWriteOutcome | FsDeleteOutcome]:
        """Every target's lock (sorted) for the whole batch, then one worker call: every
        directory's ``flock`` in one fixed order, every guard checked under them, then each
        change published in order (``FsBatchError`` with ``applied`` if one fails midway)."""
        keys = [change.target.target_key for change in changes]
        if len(set(keys)) != len(keys):
            raise ValueError("apply_changes: two changes of one target")
        batch: list[BatchChange] = []
        for change in changes:
            display_path = change.target.display_path
            if isinstance(change, WriteChange):
                batch.append(
                    BatchWrite(
                        change.target.target_key,
                        display_path,
                        change.content,
                        change.expected,
                        LARGE_FILE_BYTES,
                    )
                )
            else:
                path = self._beneath_root(display_path, "delete")
                batch.append(BatchDelete(path, display_path, change.recursive, change.expected))
        async with self._locks.hold_all(keys):
            return await to_thread.run_sync(
                apply_batch, self._reach, batch, abandon_on_cancel=False
            )


def _canonical_root(path: str) -> str:
    """The realpath of one root; ``ValueError`` naming it when it is not an existing directory."""
    real = os.path.realpath(path)
    if not os.path.isdir(real):
        raise ValueError(f"workspace root {path!r} is not an existing directory")
    return real
