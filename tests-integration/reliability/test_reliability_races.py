"""Races: concurrent mutations never lose an update, a stale view never overwrites.

(a) 50 concurrent ``edit``s in one process from one observed version (50
    sessions that each read the same version): exactly one succeeds, the 49
    others fail ``FS_STALE_VERSION`` — also with writes mixed in, and at the
    seam with 50 guarded edits of *different* lines (each would still match,
    only the guard stops them).
(b) 4 processes × 100 read→edit retry loops on one counter file end at 400.
(c) A file changed behind the tool's back between ``read`` and ``edit`` (or
    ``write``), in every way a user or another program changes files, is
    always reported stale and never overwritten.

Versions are ``stat``-derived (SPEC 3.1), so an outside change is only
guaranteed visible beyond the filesystem's timestamp granularity (SPEC 2.3
rule 4): (c) waits 20 ms before each outside change. On this machine the
kernel reuses a deleted file's inode at once, so a same-size delete-and-recreate
within one timestamp tick would be indistinguishable — a documented limit of
stat-based versions, not something a test should race against.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from dsh_fs import EditGuard, FsEditRequest, FsError, FsErrorCode
from dsh_fs_local import LocalFileSystem
from dsh_reliability_kit import ForkServer, crash_content, crash_generation, leftovers
from dsh_tool_fs import Session, ToolFs, ToolResult

ROUNDS = 5


def _stale_edit(path: Path) -> str:
    return (
        f'Error: cannot edit "{path}": file changed since it was read'
        " — re-read the file, then retry"
    )


def _stale_write(path: Path) -> str:
    return (
        f'Error: cannot write "{path}": file changed since it was read'
        " — re-read the file, then retry"
    )


async def _fifty_observers(root: Path, name: str) -> tuple[ToolFs, list[Session]]:
    """The local stack over ``root`` and 50 sessions that have each read ``root/name``."""
    toolfs = ToolFs.from_entry_points(backend="local", plugins=("policy",), cwd=str(root))
    sessions = [Session(cwd=str(root)) for _ in range(50)]
    for session in sessions:
        read = await toolfs.execute("read", {"file_path": name}, session=session)
        assert not read.is_error, read.text
    return toolfs, sessions


@pytest.mark.anyio
@pytest.mark.parametrize("round_", range(ROUNDS))
async def test_fifty_concurrent_edits_from_one_observed_version_exactly_one_wins(
    root: Path, round_: int
) -> None:
    target = root / "counter.txt"
    target.write_text("value = 0\n")
    toolfs, sessions = await _fifty_observers(root, "counter.txt")
    results: dict[int, ToolResult] = {}

    async def edit(i: int) -> None:
        args = {"file_path": "counter.txt", "old_string": "value = 0", "new_string": f"value = {i}"}
        results[i] = await toolfs.execute("edit", args, session=sessions[i - 1])

    async with anyio.create_task_group() as tg:
        for i in range(1, 51):
            tg.start_soon(edit, i)

    winners = [i for i, r in results.items() if not r.is_error]
    assert len(winners) == 1, [r.text for r in results.values() if not r.is_error]
    (winner,) = winners
    assert results[winner].text == f"The file {target} has been updated successfully."
    for i, result in results.items():
        if i != winner:
            assert result.error is not None and result.error.code == "FS_STALE_VERSION"
            assert result.text == _stale_edit(target)
    assert target.read_text() == f"value = {winner}\n"
    assert leftovers(root) == []


@pytest.mark.anyio
@pytest.mark.parametrize("round_", range(ROUNDS))
async def test_fifty_concurrent_writes_and_edits_from_one_version_exactly_one_wins(
    root: Path, round_: int
) -> None:
    target = root / "doc.txt"
    target.write_text("line\n")
    toolfs, sessions = await _fifty_observers(root, "doc.txt")
    results: dict[int, ToolResult] = {}

    async def mutate(i: int) -> None:
        if i % 2:
            args: dict[str, Any] = {"file_path": "doc.txt", "content": f"written by {i}\n"}
            results[i] = await toolfs.execute("write", args, session=sessions[i])
        else:
            args = {"file_path": "doc.txt", "old_string": "line", "new_string": f"edited by {i}"}
            results[i] = await toolfs.execute("edit", args, session=sessions[i])

    async with anyio.create_task_group() as tg:
        for i in range(50):
            tg.start_soon(mutate, i)

    winners = [i for i, r in results.items() if not r.is_error]
    assert len(winners) == 1
    (winner,) = winners
    verb = "written" if winner % 2 else "edited"
    assert target.read_text() == f"{verb} by {winner}\n"
    for i, result in results.items():
        if i != winner:
            assert result.text == (_stale_write(target) if i % 2 else _stale_edit(target))
    assert leftovers(root) == []


@pytest.mark.anyio
@pytest.mark.parametrize("round_", range(ROUNDS))
async def test_fifty_guarded_edits_of_different_lines_at_the_seam_exactly_one_wins(
    root: Path, round_: int
) -> None:
    """Every ``old_string`` would still match after the winner: only the guard refuses."""
    fs = LocalFileSystem(cwd=str(root))
    (root / "slots.txt").write_text("".join(f"slot {i}: free\n" for i in range(50)))
    target = await fs.resolve("slots.txt")
    info = await fs.stat(target)
    assert info is not None
    outcomes: dict[int, object] = {}

    async def edit(i: int) -> None:
        request = FsEditRequest(f"slot {i}: free", f"slot {i}: taken")
        try:
            outcomes[i] = await fs.edit_text(target, request, EditGuard(info.version))
        except FsError as exc:
            outcomes[i] = exc

    async with anyio.create_task_group() as tg:
        for i in range(50):
            tg.start_soon(edit, i)

    winners = [i for i, o in outcomes.items() if not isinstance(o, FsError)]
    assert len(winners) == 1
    for i, outcome in outcomes.items():
        if i != winners[0]:
            assert isinstance(outcome, FsError)
            assert outcome.code is FsErrorCode.FS_STALE_VERSION
    assert (root / "slots.txt").read_text().count("taken") == 1


@pytest.mark.parametrize(
    ("processes", "loops"),
    [
        pytest.param(4, 100, id="4x100"),
        pytest.param(8, 250, id="8x250-long", marks=pytest.mark.long),
    ],
)
def test_processes_running_read_edit_retry_loops_lose_no_increment(
    forkserver: ForkServer, tmp_path: Path, processes: int, loops: int
) -> None:
    (tmp_path / "counter.txt").write_text("count=0\n")
    params = {"cwd": str(tmp_path), "path": "counter.txt", "n": loops}
    reports = forkserver.run("counter_loop", params, copies=processes, timeout=600.0)
    results = []
    for report in reports:
        assert report["status"] == "exited", report
        result = report["messages"][-1].get("result")
        assert result is not None and "error" not in result, report
        results.append(result)
    assert [r["done"] for r in results] == [loops] * processes
    assert (tmp_path / "counter.txt").read_text() == f"count={processes * loops}\n"
    assert leftovers(tmp_path) == []
    stale = sum(r["stale"] for r in results)
    print(f"\ncounter: {processes} x {loops} increments, {stale} stale retries")


# -- (c) changed behind the tool's back ------------------------------------------

ORIGINAL = b"alpha\nbeta\ngamma\n"


def _rename_over(path: Path) -> bytes | None:
    data = b"alpha\nBETA\ngamma\n"  # same size
    temp = path.with_name("outside.tmp")
    temp.write_bytes(data)
    os.replace(temp, path)
    return data


def _in_place_same_size_mtime_restored(path: Path) -> bytes | None:
    info = os.stat(path)
    data = b"alpha\nbeta\nGAMMA\n"
    with open(path, "r+b") as fh:
        fh.write(data)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    return data


def _truncate_and_rewrite_identical(path: Path) -> bytes | None:
    path.write_bytes(ORIGINAL)
    return ORIGINAL


def _delete_and_recreate_identical(path: Path) -> bytes | None:
    path.unlink()
    path.write_bytes(ORIGINAL)
    return ORIGINAL


def _append(path: Path) -> bytes | None:
    with open(path, "ab") as fh:
        fh.write(b"delta\n")
    return ORIGINAL + b"delta\n"


def _touch(path: Path) -> bytes | None:
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    return ORIGINAL


def _delete(path: Path) -> bytes | None:
    path.unlink()
    return None


def _replace_by_symlink_to_other_file(path: Path) -> bytes | None:
    other = path.with_name("elsewhere.txt")
    other.write_bytes(ORIGINAL)
    path.unlink()
    path.symlink_to(other.name)
    return ORIGINAL


def _replace_by_directory(path: Path) -> bytes | None:
    path.unlink()
    path.mkdir()
    return None


def _replace_by_fifo(path: Path) -> bytes | None:
    path.unlink()
    os.mkfifo(path)
    return None


NOT_REGULAR = {"replaced-by-directory", "replaced-by-fifo"}

OUTSIDE_CHANGES: dict[str, Callable[[Path], bytes | None]] = {
    "rename-over-same-size": _rename_over,
    "in-place-same-size-mtime-restored": _in_place_same_size_mtime_restored,
    "truncate-rewrite-identical": _truncate_and_rewrite_identical,
    "delete-recreate-identical": _delete_and_recreate_identical,
    "append": _append,
    "touch": _touch,
    "delete": _delete,
    "symlink-to-identical-copy": _replace_by_symlink_to_other_file,
    "replaced-by-directory": _replace_by_directory,
    "replaced-by-fifo": _replace_by_fifo,
}
REPEATS = 8


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["edit", "write"])
@pytest.mark.parametrize("change", list(OUTSIDE_CHANGES))
async def test_file_changed_between_read_and_mutation_is_always_stale(
    root: Path, change: str, tool: str
) -> None:
    toolfs = ToolFs.from_entry_points(backend="local", plugins=("policy",), cwd=str(root))
    target = root / "f.txt"
    for repeat in range(REPEATS):
        for name in os.listdir(root):
            if (root / name).is_dir() and not (root / name).is_symlink():
                (root / name).rmdir()
            else:
                (root / name).unlink()
        target.write_bytes(ORIGINAL)
        session = Session(cwd=str(root))
        read = await toolfs.execute("read", {"file_path": "f.txt"}, session=session)
        assert not read.is_error
        await anyio.sleep(0.02)  # beyond the timestamp granularity (SPEC 2.3 rule 4)
        expected = OUTSIDE_CHANGES[change](target)
        # A symlink to another file is another identity (realpath key): the
        # policy has never seen that file, which refuses just as firmly.
        new_identity = change == "symlink-to-identical-copy"
        if tool == "edit":
            args = {"file_path": "f.txt", "old_string": "alpha", "new_string": "ALPHA"}
            with anyio.fail_after(2):
                result = await toolfs.execute("edit", args, session=session)
            if change in NOT_REGULAR:
                message = f'Error: cannot edit "{target}": not a regular file'
            elif new_identity:
                message = (
                    f'Error: edit requires reading "{target}" first — read the file, then retry'
                )
            elif expected is None:
                message = (
                    f'Error: cannot edit "{target}": file no longer exists'
                    " — re-read the file, then retry"
                )
            else:
                message = _stale_edit(target)
        else:
            args = {"file_path": "f.txt", "content": "replaced\n"}
            with anyio.fail_after(2):
                result = await toolfs.execute("write", args, session=session)
            if change in NOT_REGULAR:
                message = f'Error: cannot write "{target}": not a regular file'
            elif new_identity:
                message = (
                    f'Error: cannot overwrite existing "{target}" without reading it first'
                    " — read the file, then retry"
                )
            elif expected is None:
                message = (
                    f'Error: cannot write "{target}": file no longer exists'
                    " — re-read the file, then retry"
                )
            else:
                message = _stale_write(target)
        assert result.text == message, f"repeat {repeat}"
        assert result.error is not None
        if change in NOT_REGULAR:
            assert result.error.code == "FS_NOT_REGULAR_FILE"
        else:
            assert result.error.code == ("FS_NOT_OBSERVED" if new_identity else "FS_STALE_VERSION")
        if change == "replaced-by-directory":
            assert target.is_dir() and os.listdir(target) == []
        elif change == "replaced-by-fifo":
            assert stat.S_ISFIFO(os.lstat(target).st_mode)
        elif expected is None:
            assert not target.exists()
        else:
            assert target.read_bytes() == expected, f"repeat {repeat}: overwritten"
        assert leftovers(root) == []
        if expected is not None:
            # Reading again makes the same call succeed.
            again = await toolfs.execute("read", {"file_path": "f.txt"}, session=session)
            assert not again.is_error
            retry = await toolfs.execute(tool, args, session=session)
            assert not retry.is_error, retry.text


# -- readers during writes ---------------------------------------------------------


@pytest.mark.anyio
async def test_readers_never_see_a_partly_written_file(
    forkserver: ForkServer, tmp_path: Path
) -> None:
    """A child rewrites a 1 MB file nonstop (write and edit in turn) while this
    process reads it 200 times: every read is one complete generation."""
    size = 1 << 20
    (tmp_path / "target.txt").write_bytes(crash_content(0, size))
    fs = LocalFileSystem(cwd=str(tmp_path))
    target = await fs.resolve("target.txt")
    toolfs = ToolFs(fs)
    generations: set[int] = set()

    def writer() -> list[dict[str, Any]]:
        params = {"cwd": str(tmp_path), "path": "target.txt", "size": size}
        return forkserver.run("crash_loop", params, kill_after_start=4.0, timeout=30.0)

    async with anyio.create_task_group() as tg:
        reports: list[list[dict[str, Any]]] = []

        async def run_writer() -> None:
            reports.append(await anyio.to_thread.run_sync(writer))

        tg.start_soon(run_writer)
        await anyio.sleep(0.3)
        for i in range(200):
            if i % 2:
                text = await fs.read_text(target)
                gen = crash_generation(text.encode())
                assert gen is not None and text.encode() == crash_content(gen, size), f"read {i}"
            else:
                result = await toolfs.execute("read", {"file_path": "target.txt", "offset": 9000})
                assert result.value is not None, result.text
                tags = {line["text"][8:17] for line in result.value["lines"]}
                assert len(tags) == 1, f"read {i} mixes generations: {tags}"
                assert result.value["totalLines"] == size // 64
                gen = int(tags.pop().strip()[1:])
            generations.add(gen)
            await anyio.sleep(0.01)
    (report,) = reports[0]
    assert report["status"] == "killed"
    assert len(generations) > 10, f"the writer barely ran: {sorted(generations)}"
    print(f"\nreaders: 200 reads saw {len(generations)} distinct complete generations")
