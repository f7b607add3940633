"""What the memory backend adds to the kit's delete/move contract: its batches are all or
nothing even where a later change fails, a move waits for both targets' locks, and the
out-of-band ``remove`` helper is still the test side's own."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest
from dsh_fs import (
    CreateIfAbsent,
    DeleteChange,
    FsChange,
    FsErrorCode,
    FsWriteOutcome,
    WriteChange,
)
from dsh_fs.testing._expect import expect_fs_error
from dsh_fs_memory import MemoryFileSystem

pytestmark = pytest.mark.anyio


async def test_a_batch_whose_later_change_fails_after_an_earlier_one_changes_nothing() -> None:
    """The write makes ``d`` non-empty, so the removal of ``d`` fails: the write is undone."""
    fs = MemoryFileSystem("/ws")
    fs.mkdir("d")
    before = fs.files(), fs.names()
    version = await fs.stat(await fs.resolve("d"))
    assert version is not None
    changes: list[FsChange] = [
        WriteChange(await fs.resolve("d/new.txt"), "new\n", CreateIfAbsent()),
        DeleteChange(await fs.resolve("d")),
    ]
    await expect_fs_error(
        fs.apply_changes(changes),
        FsErrorCode.FS_NOT_EMPTY,
        'cannot delete "/ws/d": directory not empty',
    )
    assert (fs.files(), fs.names()) == before
    assert fs.names("d") == []
    after = await fs.stat(await fs.resolve("d"))
    assert after is not None and after.version == version.version


async def test_a_batch_that_succeeds_is_seen_whole_by_a_concurrent_reader() -> None:
    fs = MemoryFileSystem("/ws", {"a.txt": "a\n", "b.txt": "b\n"})
    a, b = await fs.resolve("a.txt"), await fs.resolve("b.txt")
    seen: list[tuple[bytes | None, bytes | None]] = []
    done = anyio.Event()

    async def reader() -> None:
        while not done.is_set():
            seen.append((fs.get_bytes("a.txt"), fs.get_bytes("b.txt")))
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        await anyio.lowlevel.checkpoint()
        outcomes = await fs.apply_changes([WriteChange(a, "A\n"), DeleteChange(b)])
        done.set()
    assert isinstance(outcomes[0], FsWriteOutcome)
    assert set(seen) <= {(b"a\n", b"b\n"), (b"A\n", None)}
    assert fs.files() == {"/ws/a.txt": b"A\n"}


async def test_a_move_waits_for_the_lock_of_its_destination() -> None:
    fs = MemoryFileSystem("/ws", {"src.txt": "src\n"})
    src, dst = await fs.resolve("src.txt"), await fs.resolve("dst.txt")
    order: list[str] = []

    async def mover() -> None:
        await fs.move(src, dst)
        order.append("moved")

    async with anyio.create_task_group() as tg, fs._tree.locks.hold(dst.target_key):
        tg.start_soon(mover)
        await anyio.sleep(0.01)
        order.append("destination released")
    assert order == ["destination released", "moved"]
    assert fs.files() == {"/ws/dst.txt": b"src\n"}


async def test_the_out_of_band_remove_helper_still_removes_behind_the_backend() -> None:
    fs = MemoryFileSystem("/ws", {"t/a.txt": "a\n"})
    fs.remove("t", recursive=True)
    assert fs.names() == []


async def test_with_containment_off_the_filesystem_root_is_never_removed() -> None:
    fs = MemoryFileSystem("/ws", {"a.txt": "a\n"}, roots=None)
    await expect_fs_error(
        fs.delete(await fs.resolve("/"), recursive=True),
        FsErrorCode.FS_PERMISSION_DENIED,
        'cannot delete "/": it is a workspace root',
    )
    assert fs.files() == {"/ws/a.txt": b"a\n"}


@pytest.mark.parametrize("path", ["lib", "outer"])
async def test_a_directory_that_is_or_holds_a_read_only_root_is_not_removed(path: str) -> None:
    fs = MemoryFileSystem("/ws", {"lib/doc.txt": "doc\n", "outer/ro/doc.txt": "doc\n"})
    fs = fs.view("/ws", read_only_roots=["/ws/lib", "/ws/outer/ro"])
    await expect_fs_error(
        fs.delete(await fs.resolve(path), recursive=True),
        FsErrorCode.FS_READ_ONLY,
        f'cannot delete "/ws/{path}": read-only workspace',
    )
    assert fs.files() == {"/ws/lib/doc.txt": b"doc\n", "/ws/outer/ro/doc.txt": b"doc\n"}
