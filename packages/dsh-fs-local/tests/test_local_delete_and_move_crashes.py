"""Other processes: kill -9 during a recursive delete and during a move (each path as
before or as after), and two processes moving between the same two directories.

A forked child runs one ``delete(recursive=True)`` of a 3,000-file tree (or
one move of a large file to another filesystem) and is killed with SIGKILL
at a random moment. Afterwards the tree is either whole or gone to every
observer — only its ``.del`` aside may remain — and the next write in that
directory leaves no debris: its sweep removed the dead process's aside tree
(or temporary). ``print``ed figures: trials, and where the kills landed.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from dsh_fs_local import LocalFileSystem

FILES = 3000
PER_DIRECTORY = 100
MIN_TRIALS = 6
MAX_TRIALS = 40


def _build_tree(root: str) -> None:
    for i in range(FILES):
        directory = os.path.join(root, f"sub{i // PER_DIRECTORY:02d}")
        if i % PER_DIRECTORY == 0:
            os.makedirs(directory)
        with open(os.path.join(directory, f"f{i:04d}.txt"), "w") as out:
            out.write(f"file {i}\n")


def _tree_is_whole(root: str) -> bool:
    found = 0
    for directory, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(directory, name)) as f:
                if f.read() != f"file {int(name[1:5])}\n":
                    return False
            found += 1
    return found == FILES


def _fork(work: Callable[[], None]) -> tuple[int, int]:
    """A forked child that signals on a pipe, then runs ``work`` (until it is killed)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child, killed by the parent
        os.close(read_end)
        try:
            os.write(write_end, b"r")
            work()
        finally:
            os._exit(0)
    os.close(write_end)
    return pid, read_end


def _kill_after(pid: int, ready: int, delay: float) -> bool:
    """SIGKILL the child ``delay`` s after it signalled; whether it had already finished."""
    assert os.read(ready, 1) == b"r"
    os.close(ready)
    time.sleep(delay)
    finished = os.waitpid(pid, os.WNOHANG) != (0, 0)
    if not finished:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return finished


def _duration(work: Callable[[], None]) -> float:
    """How long ``work`` takes in a forked child, let run to its end (the kill window)."""
    pid, ready = _fork(work)
    assert os.read(ready, 1) == b"r"
    started = time.monotonic()
    os.waitpid(pid, 0)
    os.close(ready)
    return time.monotonic() - started


def _write_next(ws: str, rel: str) -> None:
    async def write() -> None:
        fs = LocalFileSystem(ws)
        await fs.write_text(await fs.resolve(rel), "next\n")

    anyio.run(write)


def test_a_recursive_delete_killed_at_random_moments_leaves_the_tree_whole_or_gone(
    tmp_path: Path,
) -> None:
    ws = os.path.realpath(tmp_path)
    parent = os.path.join(ws, "d")
    tree = os.path.join(parent, "tree")
    rng = random.Random(3000)
    landed: Counter[str] = Counter()

    def delete() -> None:
        async def run() -> None:
            fs = LocalFileSystem(ws)
            await fs.delete(await fs.resolve("d/tree"), recursive=True)

        anyio.run(run)

    _build_tree(tree)
    window = _duration(delete)
    assert not os.path.lexists(tree)
    trials = 0
    while trials < MIN_TRIALS or (not landed["mid-removal"] and trials < MAX_TRIALS):
        trials += 1
        if not os.path.lexists(tree):
            _build_tree(tree)
        pid, ready = _fork(delete)
        finished = _kill_after(pid, ready, rng.uniform(0.0, window) if trials > 1 else 0.0)
        others = sorted(set(os.listdir(parent)) - {"tree", "next.txt"})
        if os.path.lexists(tree):
            assert _tree_is_whole(tree), "a killed delete left a partial tree at its path"
            assert others == [], f"debris beside a whole tree: {others}"
            landed["before the rename"] += 1
        else:
            assert all(
                name.startswith(".tree.dsh-") and name.endswith(".del") for name in others
            ), others
            landed["finished" if finished else "mid-removal" if others else "after"] += 1
        _write_next(ws, "d/next.txt")
        expected = ["next.txt", "tree"] if os.path.lexists(tree) else ["next.txt"]
        assert sorted(os.listdir(parent)) == expected, "the next write left debris"
    print(f"\nrecursive delete kill -9: {trials} trials, {dict(landed)}")
    assert landed["mid-removal"] > 0, f"no kill landed inside the removal: {dict(landed)}"


def test_a_move_across_filesystems_killed_at_random_moments_leaves_each_path_before_or_after(
    tmp_path: Path, other_filesystem: str
) -> None:
    ws, elsewhere = os.path.realpath(tmp_path), other_filesystem
    source = os.path.join(ws, "big.txt")
    destination = os.path.join(elsewhere, "d", "big.txt")
    content = b"moved across\n" * ((48 << 20) // 13)
    rng = random.Random(48)
    landed: Counter[str] = Counter()

    def move() -> None:
        async def run() -> None:
            fs = LocalFileSystem(ws, roots=[ws, elsewhere])
            await fs.move(await fs.resolve("big.txt"), await fs.resolve(destination))

        anyio.run(run)

    with open(source, "wb") as out:
        out.write(content)
    window = _duration(move)
    trials = 0
    while trials < MIN_TRIALS or (not landed["temporary left"] and trials < MAX_TRIALS):
        trials += 1
        for path in (source, destination):
            if os.path.exists(path):
                os.unlink(path)
        with open(source, "wb") as out:
            out.write(content)
        pid, ready = _fork(move)
        _kill_after(pid, ready, rng.uniform(0.0, window))
        states = []
        for path in (source, destination):
            if os.path.exists(path):
                with open(path, "rb") as f:
                    assert f.read() == content, f"{path} is partial after the kill"
                states.append("there")
            else:
                states.append("gone")
        assert states != ["gone", "gone"], "the kill lost the file"
        directory = os.path.join(elsewhere, "d")
        debris = os.listdir(directory) if os.path.isdir(directory) else []
        left = [name for name in debris if name.endswith(".tmp")]
        landed["temporary left" if left else "/".join(states)] += 1
        _write_next(elsewhere, os.path.join(elsewhere, "d", "next.txt"))
        names = sorted(os.listdir(os.path.join(elsewhere, "d")))
        assert names == (["big.txt", "next.txt"] if states[1] == "there" else ["next.txt"])
    print(f"\nmove across filesystems kill -9: {trials} trials, {dict(landed)}")
    assert landed["temporary left"] > 0, f"no kill landed inside the copy: {dict(landed)}"


def test_two_processes_moving_in_opposite_directions_never_deadlock(tmp_path: Path) -> None:
    """Each move holds both directories' locks; taken in one fixed order by every process,
    two processes moving files between the same two directories both ways always finish."""
    ws = os.path.realpath(tmp_path)
    for directory, name in (("one", "a.txt"), ("two", "b.txt")):
        os.makedirs(os.path.join(ws, directory))
        with open(os.path.join(ws, directory, name), "w") as out:
            out.write(name)

    def mover(name: str, there: str, back: str) -> Callable[[], None]:
        def work() -> None:
            async def run() -> None:
                fs = LocalFileSystem(ws)
                for _ in range(200):
                    for start, end in ((there, back), (back, there)):
                        await fs.move(
                            await fs.resolve(f"{start}/{name}"), await fs.resolve(f"{end}/{name}")
                        )

            anyio.run(run)
            os._exit(0)

        return work

    children = [_fork(mover("a.txt", "one", "two")), _fork(mover("b.txt", "two", "one"))]
    deadline = time.monotonic() + 60
    for _, ready in children:
        assert os.read(ready, 1) == b"r"
        os.close(ready)
    for pid, _ in children:
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                for other, _ in children:
                    os.kill(other, signal.SIGKILL)
                pytest.fail("two opposite movers did not finish within 60 s: a deadlock")
            time.sleep(0.05)
    assert (sorted(os.listdir(f"{ws}/one")), sorted(os.listdir(f"{ws}/two"))) == (
        ["a.txt"],
        ["b.txt"],
    )
