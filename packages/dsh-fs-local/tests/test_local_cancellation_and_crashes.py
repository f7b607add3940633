"""Cancellation, cross-process serialization and crash safety of mutations
(SPEC 2.3 rules 1, 2 and 5; 3.1 "Cross-process safety")."""

from __future__ import annotations

import gc
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from dsh_fs import EditGuard, FsEditRequest, FsTarget, ReplaceIfVersion
from dsh_fs.streaming import SupportsSkipLines
from dsh_fs.testing import Scratch
from dsh_fs.testing._expect import run_then_cancel
from dsh_fs_local import LocalFileSystem

pytestmark = pytest.mark.anyio

OLD = b"old " * 250_000  # 1 MB: the worker call takes a while


def at(scratch: Scratch, rel: str) -> str:
    return os.path.join(scratch.root, rel)


@pytest.mark.parametrize("kind", ["write", "edit", "hard-linked write"])
async def test_cancellation_at_any_point_leaves_old_or_new_and_no_leftover(
    scratch: Scratch, kind: str
) -> None:
    new = b"new " * 250_000
    outcomes = {True: 0, False: 0}
    # The in-place rewrite of a hard-linked file only happens without containment.
    fs = scratch.fs if kind != "hard-linked write" else LocalFileSystem(scratch.root, roots=None)
    for steps, delay in [(0, 0), (1, 0), (2, 0), (3, 0), (5, 0), (0, 0.001), (0, 0.005), (0, 0.02)]:
        scratch.put("d/f.txt", OLD)
        if kind == "hard-linked write" and "g.txt" not in scratch.names("d"):
            os.link(at(scratch, "d/f.txt"), at(scratch, "d/g.txt"))
        target = await fs.resolve("d/f.txt")
        info = await fs.stat(target)
        assert info is not None

        async def mutation(target: FsTarget = target, version: str = info.version) -> object:
            if kind == "edit":
                return await fs.edit_text(
                    target, FsEditRequest("old", "new", replace_all=True), EditGuard(version)
                )
            return await fs.write_text(target, new.decode(), ReplaceIfVersion(version))

        completed = await run_then_cancel(mutation, steps=steps, delay=delay)
        outcomes[completed] += 1
        assert scratch.get("d/f.txt") == (new if completed else OLD)
        expected_names = ["f.txt", "g.txt"] if kind == "hard-linked write" else ["f.txt"]
        assert scratch.names("d") == expected_names
    assert outcomes[False] > 0  # cancellation before the commit was exercised


async def test_a_write_cancelled_while_waiting_for_the_lock_does_nothing(
    scratch: Scratch,
) -> None:
    scratch.put("f.txt", b"first")
    target = await scratch.fs.resolve("f.txt")
    async with anyio.create_task_group() as tg:
        tg.start_soon(scratch.fs.write_text, target, "holder " * 200_000)
        await anyio.lowlevel.checkpoint()
        with anyio.CancelScope() as scope:
            scope.cancel()
            await scratch.fs.write_text(target, "waiter")
        assert scope.cancelled_caught
    assert scratch.get("f.txt") == ("holder " * 200_000).encode()
    assert scratch.names() == ["f.txt"]


async def test_in_process_mutations_run_one_at_a_time_in_arrival_order(scratch: Scratch) -> None:
    target = await scratch.fs.resolve("log.txt")
    await scratch.fs.write_text(target, "start")
    arrivals: list[int] = []  # the event loop picks the start order (trio shuffles it)
    finished: list[int] = []

    async def write(i: int) -> None:
        arrivals.append(i)  # write_text reaches the target's lock before it first yields
        await scratch.fs.write_text(target, f"{i}")
        finished.append(i)

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(write, i)
    assert sorted(arrivals) == list(range(20))
    assert finished == arrivals
    assert scratch.get("log.txt") == f"{arrivals[-1]}".encode()


async def test_concurrent_guarded_writes_from_one_version_exactly_one_wins(
    scratch: Scratch,
) -> None:
    scratch.put("f.txt", b"0")
    target = await scratch.fs.resolve("f.txt")
    info = await scratch.fs.stat(target)
    assert info is not None
    results: list[str] = []

    async def attempt(i: int) -> None:
        try:
            await scratch.fs.write_text(target, str(i), ReplaceIfVersion(info.version))
            results.append("ok")
        except Exception as exc:
            results.append(getattr(exc, "code", type(exc).__name__))

    async with anyio.create_task_group() as tg:
        for i in range(8):
            tg.start_soon(attempt, i)
    assert sorted(results) == ["FS_STALE_VERSION"] * 7 + ["ok"]


async def test_stream_closes_its_file_when_closed_early(scratch: Scratch) -> None:
    scratch.put("big.txt", b"x" * (3 << 20))
    target = await scratch.fs.resolve("big.txt")
    gc.collect()  # earlier tests' dropped backends release their root descriptors now
    before = len(os.listdir("/proc/self/fd"))
    stream = scratch.fs.stream_text(target)
    first = await stream.__anext__()
    assert first
    assert len(os.listdir("/proc/self/fd")) == before + 1
    await stream.aclose()  # type: ignore[attr-defined]
    assert len(os.listdir("/proc/self/fd")) == before


COUNTER_CHILD = r"""
import os, sys, anyio
from dsh_fs import FsError, ReplaceIfVersion
from dsh_fs_local import LocalFileSystem

async def main(path, rounds):
    fs = LocalFileSystem(os.path.dirname(path))
    target = await fs.resolve(path)
    done = retries = 0
    while done < rounds:
        info = await fs.stat(target)
        value = int(await fs.read_text(target))
        try:
            await fs.write_text(target, str(value + 1), ReplaceIfVersion(info.version))
        except FsError as err:
            assert err.code == "FS_STALE_VERSION", err
            retries += 1
            continue
        done += 1
    print(retries)

anyio.run(main, sys.argv[1], int(sys.argv[2]))
"""


def _child_env() -> dict[str, str]:
    import dsh_fs
    import dsh_fs_local

    roots = [
        os.path.dirname(os.path.dirname(os.path.abspath(m.__file__ or "")))
        for m in (dsh_fs, dsh_fs_local)
    ]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(roots)}


def test_two_processes_of_guarded_increments_lose_no_update(scratch: Scratch) -> None:
    scratch.put("counter.txt", b"0")
    path = at(scratch, "counter.txt")
    children = [
        subprocess.Popen(
            [sys.executable, "-c", COUNTER_CHILD, path, "50"],
            env=_child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for child in children:
        _, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
    assert scratch.get("counter.txt") == b"100"
    assert scratch.names() == ["counter.txt"]


def _version(i: int) -> str:
    head = f"version {i}\n"
    return head * 60_001  # about 640 kB


def _parse_version(data: bytes) -> int:
    text = data.decode()
    head = text.split("\n", 1)[0] + "\n"
    number = int(head.removeprefix("version "))
    assert text == head * 60_001, "partial or mixed content"
    return number


def _fork_writer(path: str) -> tuple[int, int]:
    """Fork a child that writes ever newer versions of ``path`` until killed.

    Returns its pid and a pipe end that becomes readable once it is writing.
    Forking (not a fresh interpreter) keeps 50 trials within a few seconds.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child, killed by the parent
        os.close(read_end)

        async def loop() -> None:
            fs = LocalFileSystem(os.path.dirname(path))
            target = await fs.resolve(path)
            os.write(write_end, b"r")
            i = 1
            while True:
                await fs.write_text(target, _version(i))
                i += 1

        try:
            anyio.run(loop)
        finally:
            os._exit(1)
    os.close(write_end)
    return pid, read_end


@pytest.mark.parametrize(
    "trials", [50, pytest.param(500, marks=pytest.mark.long)], ids=["50-trials", "500-trials"]
)
def test_a_writer_killed_at_random_moments_leaves_one_whole_version(
    scratch: Scratch, trials: int
) -> None:
    """SIGKILL a looping writer at random moments: the target is always one whole
    version, and the next write removes the dead writer's temporary file."""
    rng = random.Random(trials)
    path = at(scratch, "d/target.txt")
    scratch.put("d/target.txt", _version(0).encode())
    leftovers_seen = 0
    versions_seen: set[int] = set()
    fs = LocalFileSystem(cwd=scratch.root)
    for _ in range(trials):
        pid, ready = _fork_writer(path)
        assert os.read(ready, 1) == b"r"
        os.close(ready)
        time.sleep(rng.uniform(0.0, 0.1))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        data = scratch.get("d/target.txt")
        assert data is not None
        versions_seen.add(_parse_version(data))
        leftovers_seen += len(scratch.names("d")) - 1

        async def next_write(expected: bytes) -> None:
            target = await fs.resolve("d/target.txt")
            outcome = await fs.write_text(target, expected.decode())
            assert outcome.operation == "update"

        anyio.run(next_write, data)
        assert scratch.names("d") == ["target.txt"]
    print(
        f"crash trials: {trials}, leftover temporaries cleaned: {leftovers_seen}, "
        f"distinct versions seen: {len(versions_seen)}"
    )
    assert leftovers_seen > 0, "no kill landed inside a write: the test proves nothing"


async def test_a_write_waits_for_a_free_worker_thread_and_can_be_cancelled_meanwhile(
    scratch: Scratch,
) -> None:
    """Writes and edits take their worker thread from the default limiter: its bound holds."""
    scratch.put("f.txt", b"old")
    target = await scratch.fs.resolve("f.txt")
    limiter = anyio.to_thread.current_default_thread_limiter()
    release = threading.Event()
    tokens = limiter.total_tokens
    limiter.total_tokens = 1
    writer_done = anyio.Event()

    async def hold_the_token() -> None:
        await anyio.to_thread.run_sync(release.wait)

    async def write() -> None:
        await scratch.fs.write_text(target, "new")
        writer_done.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(hold_the_token)  # the only token
            try:
                while limiter.borrowed_tokens < 1:
                    await anyio.lowlevel.checkpoint()
                with anyio.move_on_after(0.05) as waited:
                    await scratch.fs.write_text(target, "cancelled")
                assert waited.cancelled_caught
                assert scratch.get("f.txt") == b"old"
                tg.start_soon(write)
                await anyio.sleep(0.05)
                assert not writer_done.is_set()
                assert scratch.get("f.txt") == b"old"
            finally:
                release.set()
    finally:
        limiter.total_tokens = tokens
    assert writer_done.is_set()
    assert scratch.get("f.txt") == b"new"
    assert limiter.borrowed_tokens == 0


@pytest.mark.anyio
async def test_a_cancelled_skip_stops_within_a_chunk_and_ends_the_stream(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cancel_from_worker: Callable[[anyio.CancelScope], None],
) -> None:
    """``skip_lines`` counts up to 256 MiB in one worker call; a cancellation must
    still stop it after the chunk in progress, not after the whole file.

    The cancellation comes while the worker reads a known chunk: no timer decides
    what is read."""
    from dsh_fs_local import _local
    from dsh_fs_local._reading import FileSource

    size = 64 << 20
    path = tmp_path / "big.txt"
    path.write_bytes((b"x" * 99 + b"\n") * (size // 100))
    read: list[int] = []
    scope = anyio.CancelScope()
    cancel_at = 0  # set below: the third chunk the unbounded skip reads

    class CountingSource(FileSource):
        def readinto(self, buffer: memoryview) -> int:
            got = super().readinto(buffer)
            read.append(got)
            if len(read) == cancel_at:
                cancel_from_worker(scope)
            return got

    monkeypatch.setattr(_local, "FileSource", CountingSource)
    fs = LocalFileSystem(tmp_path)
    stream = fs.stream_text(await fs.resolve(str(path)))
    assert isinstance(stream, SupportsSkipLines)
    assert tuple(await stream.skip_lines(1)) == (1, False)
    cancel_at = len(read) + 3
    with scope:
        await stream.skip_lines()
    assert scope.cancelled_caught
    assert len(read) == cancel_at, f"read {len(read)} chunks, cancelled in chunk {cancel_at}"
    assert sum(read) < size // 2
    assert [chunk async for chunk in stream] == []
