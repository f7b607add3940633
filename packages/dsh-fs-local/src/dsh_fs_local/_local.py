"""``LocalFileSystem``: the host filesystem behind the ``FileSystem`` seam."""

from __future__ import annotations

import errno
import os
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

import anyio
import anyio.lowlevel
from anyio import from_thread, to_thread
from dsh_fs import (
    EditGuard,
    EntryType,
    FileSystem,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsWriteOutcome,
    WriteIntent,
)
from dsh_fs.locks import TargetLocks
from dsh_fs.preconditions import check_edit, check_write
from dsh_fs.streaming import TextStream
from dsh_fs.text import AppliedEdit, apply_edit, decode_previous, encode_text, written_text

from ._atomic import mutate
from ._listing import list_directory
from ._os_errors import os_failure
from ._paths import display_path_of, entry_type_of, path_type_of, target_key_of, version_of
from ._reading import FileSource, read_text_file

T = TypeVar("T")


async def _in_worker(step: Callable[[], T]) -> T:
    """One ``stream_text`` step in a worker thread, never abandoned (see the cancellation
    note below), like every other worker call of the class."""
    return await to_thread.run_sync(step, abandon_on_cancel=False)


class LocalFileSystem(FileSystem):
    """The host filesystem: realpath identity, strict UTF-8, atomic crash-safe writes.

    ``cwd`` (default: the process working directory at construction) is where
    relative paths resolve; it is not a containment boundary.

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

    def __init__(self, cwd: str | os.PathLike[str] | None = None) -> None:
        self._cwd = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
        self._locks = TargetLocks()

    @property
    def cwd(self) -> str:
        """The directory relative paths resolve against by default."""
        return self._cwd

    def __repr__(self) -> str:
        return f"LocalFileSystem(cwd={self._cwd!r})"

    def _base(self, cwd: str | None) -> str:
        return self._cwd if cwd is None else os.path.join(self._cwd, cwd)

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        await anyio.lowlevel.checkpoint_if_cancelled()
        display_path = display_path_of(path, self._base(cwd))
        return FsTarget(target_key_of(display_path), display_path)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        try:
            info = os.stat(target.target_key)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return None
            # ``stat`` is the first step of the read tool: its failures speak
            # as the read would (``cannot read "<p>": permission denied``).
            raise os_failure("read", target.display_path, exc) from exc
        kind = entry_type_of(info.st_mode)
        return FsInfo(version_of(info), kind, info.st_size if kind == "file" else None)

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        display_path = display_path_of(path, self._base(cwd))
        try:
            info = os.lstat(display_path)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return None
            raise os_failure("stat", display_path, exc) from exc
        kind = path_type_of(info.st_mode)
        return FsPathInfo(version_of(info), kind, info.st_size if kind == "file" else None)

    async def read_text(self, target: FsTarget) -> str:
        return await to_thread.run_sync(
            read_text_file, target.target_key, target.display_path, abandon_on_cancel=False
        )

    def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        """1 MiB per step, one worker-thread hop per step; ``skip_lines`` counts raw bytes."""
        key, display_path = target.target_key, target.display_path
        return TextStream(
            lambda: FileSource(key, display_path),
            display_path,
            run=_in_worker,
            check_cancelled=from_thread.check_cancelled,
        )

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        return await to_thread.run_sync(
            list_directory, target.target_key, target.display_path, stat, abandon_on_cancel=False
        )

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        display_path = target.display_path

        def check(current: os.stat_result | None) -> None:
            check_write(display_path, _state(current), expected)

        def plan(previous: bytes | None) -> bytes:
            return encode_text(content, "write", display_path)

        def write() -> FsWriteOutcome:
            # The outcome's texts are decoded here, in the worker thread, once
            # the directory lock is released: a large previous content is not
            # decoded on the event loop.
            version, previous = mutate(target.target_key, display_path, "write", check, plan)
            return FsWriteOutcome(
                operation="create" if previous is None else "update",
                version=version,
                before=None if previous is None else decode_previous(previous),
                after=written_text(content),
            )

        async with self._locks.hold(target.target_key):
            return await to_thread.run_sync(write, abandon_on_cancel=False)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        display_path = target.display_path
        applied: list[AppliedEdit] = []

        def check(current: os.stat_result | None) -> None:
            check_edit(display_path, _state(current), expected)

        def plan(previous: bytes | None) -> bytes:
            result = apply_edit(previous or b"", edit, display_path)
            applied.append(result)
            return result.data

        async with self._locks.hold(target.target_key):
            version, _ = await to_thread.run_sync(
                mutate,
                target.target_key,
                display_path,
                "edit",
                check,
                plan,
                abandon_on_cancel=False,
            )
        result = applied[0]
        return FsEditOutcome(version, result.before, result.after, result.replacements)


def _state(info: os.stat_result | None) -> tuple[EntryType, str] | None:
    """What the shared preconditions look at: ``(type, version)``, or ``None`` if absent."""
    return None if info is None else (entry_type_of(info.st_mode), version_of(info))

