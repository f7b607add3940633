"""The seam's defaults for a backend written before ``delete``, ``move`` and
``apply_changes``: the first two refuse, and the default batch, built on the
backend's ``write_text`` and ``delete``, passes the kit's batch contract."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_fs import DeleteChange, FileSystem, FsErrorCode, WriteChange
from dsh_fs.testing import BatchContract, EntryContainmentContract, ForwardingFileSystem, Scratch
from dsh_fs.testing._expect import expect_fs_error
from dsh_fs_memory import MemoryFileSystem, MemoryScratch


class DefaultBatch(ForwardingFileSystem[MemoryFileSystem]):
    """The memory backend's primitives, with the seam's own ``apply_changes``."""

    apply_changes = FileSystem.apply_changes


class NoDeleteOrMove(ForwardingFileSystem[MemoryFileSystem]):
    """A backend that predates ``delete`` and ``move``: it keeps the seam's defaults."""

    delete = FileSystem.delete
    move = FileSystem.move


class DefaultBatchScratch(MemoryScratch):
    @property
    def fs(self) -> FileSystem:  # type: ignore[override]
        return DefaultBatch(super().fs)

    def backend(self, cwd: str, **workspace: Any) -> FileSystem:  # type: ignore[override]
        return DefaultBatch(super().backend(cwd, **workspace))


class TestDefaultApplyChanges(BatchContract):
    @pytest.fixture
    def scratch(self) -> Scratch:
        return DefaultBatchScratch()


class TestDefaultApplyChangesContained(EntryContainmentContract):
    """The containment cases, among them a batch with one change outside."""

    supports_hard_links = False

    @pytest.fixture
    def scratch(self) -> Scratch:
        return DefaultBatchScratch()


@pytest.mark.anyio
async def test_a_backend_without_delete_or_move_says_it_does_not_support_them() -> None:
    inner = MemoryFileSystem("/ws", {"a.txt": "a\n"})
    fs = NoDeleteOrMove(inner)
    a, b = await fs.resolve("a.txt"), await fs.resolve("b.txt")
    await expect_fs_error(
        fs.delete(a),
        FsErrorCode.FS_IO_ERROR,
        'cannot delete "/ws/a.txt": not supported by this backend',
    )
    await expect_fs_error(
        fs.move(a, b),
        FsErrorCode.FS_IO_ERROR,
        'cannot move "/ws/a.txt": not supported by this backend',
    )
    assert inner.files() == {"/ws/a.txt": b"a\n"}


@pytest.mark.anyio
async def test_the_default_batch_refuses_a_read_only_target_before_publishing() -> None:
    inner = MemoryFileSystem("/ws", {"w/a.txt": "a\n", "lib/doc.txt": "doc\n"})
    fs = DefaultBatch(inner.view("/ws/w", read_only_roots=["/ws/lib"]))
    doc = await fs.resolve("/ws/lib/doc.txt")
    await expect_fs_error(
        fs.apply_changes([WriteChange(await fs.resolve("a.txt"), "A\n"), DeleteChange(doc)]),
        FsErrorCode.FS_READ_ONLY,
        'cannot delete "/ws/lib/doc.txt": read-only workspace',
    )
    assert inner.files() == {"/ws/w/a.txt": b"a\n", "/ws/lib/doc.txt": b"doc\n"}


@pytest.mark.anyio
async def test_the_default_batch_never_removes_a_workspace_root() -> None:
    inner = MemoryFileSystem("/ws", {"a.txt": "a\n"})
    fs = DefaultBatch(inner)
    root = await fs.resolve(".")
    await expect_fs_error(
        fs.apply_changes([WriteChange(await fs.resolve("a.txt"), "A\n"), DeleteChange(root)]),
        FsErrorCode.FS_PERMISSION_DENIED,
        'cannot delete "/ws": it is a workspace root',
    )
    assert inner.files() == {"/ws/a.txt": b"a\n"}
