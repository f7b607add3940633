"""``ForwardingFileSystem``: a backend that hands every primitive to another one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Generic, TypeVar

from .._filesystem import FileSystem
from .._types import (
    EditGuard,
    EntryGuard,
    FsChange,
    FsDeleteOutcome,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsInfo,
    FsMoveOutcome,
    FsPathInfo,
    FsTarget,
    FsWriteOutcome,
    MoveGuard,
    WriteIntent,
)
from ..held import HeldDirectory
from ..workspace import Workspace

F = TypeVar("F", bound=FileSystem)


class ForwardingFileSystem(FileSystem, Generic[F]):
    """Every primitive, the workspace and the optional methods of ``inner``: the base of
    a test wrapper.

    A wrapper that breaks one rule (to prove the kit catches it), records
    the calls a host makes, or holds a primitive at a gate overrides what it
    needs: one primitive, or :meth:`entering`, which every primitive awaits
    first with its own name (``stream_text`` on its first chunk).
    ``ForwardingFileSystem[MemoryFileSystem]`` keeps ``inner``'s own type,
    for a wrapper that also reaches the inner backend's test helpers.
    """

    def __init__(self, inner: F) -> None:
        self.inner = inner

    async def entering(self, primitive: str) -> None:
        """Called before ``primitive`` is forwarded; the default does nothing."""

    @property
    def workspace(self) -> Workspace | None:
        return self.inner.workspace

    async def hold_directory(self, target: FsTarget, *, verb: str) -> HeldDirectory | None:
        return await self.inner.hold_directory(target, verb=verb)

    async def connect(self) -> None:
        await self.inner.connect()

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        await self.entering("resolve")
        return await self.inner.resolve(path, cwd=cwd)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        await self.entering("stat")
        return await self.inner.stat(target)

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        await self.entering("lstat")
        return await self.inner.lstat(path, cwd=cwd)

    async def read_text(self, target: FsTarget) -> str:
        await self.entering("read_text")
        return await self.inner.read_text(target)

    async def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        await self.entering("stream_text")
        chunks = self.inner.stream_text(target)
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        await self.entering(f"list_dir(stat={stat})")
        return await self.inner.list_dir(target, stat=stat)

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        await self.entering("write_text")
        return await self.inner.write_text(target, content, expected)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        await self.entering("edit_text")
        return await self.inner.edit_text(target, edit, expected)

    async def delete(
        self, target: FsTarget, *, recursive: bool = False, expected: EntryGuard | None = None
    ) -> FsDeleteOutcome:
        await self.entering("delete")
        return await self.inner.delete(target, recursive=recursive, expected=expected)

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        *,
        replace: bool = False,
        expected: MoveGuard | None = None,
    ) -> FsMoveOutcome:
        await self.entering("move")
        return await self.inner.move(source, destination, replace=replace, expected=expected)

    async def apply_changes(
        self, changes: Sequence[FsChange]
    ) -> list[FsWriteOutcome | FsDeleteOutcome]:
        await self.entering("apply_changes")
        return await self.inner.apply_changes(changes)
