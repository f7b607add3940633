"""glob and grep in a host: ignore files above the searched path, the time limit,
cancellation, observation, and bounded memory on a large file."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from dsh_fs import FileSystem, FsDirEntry, FsTarget
from dsh_fs_local import LocalFileSystem
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import TOOLS, Session, ToolFs, ToolResult
from dsh_tool_fs_search import GLOB, GREP
from dsh_tool_fs_search.search_files import BYTES_AT_ONCE, FILES_AT_ONCE

pytestmark = pytest.mark.anyio

STOPPED = (
    "(Search stopped after 1 s: showing what was found in the files searched so far. "
    "Narrow path or pattern.)"
)


def host(fs: Any, **config: Any) -> ToolFs:
    return ToolFs(fs, config=config or None, tools=(*TOOLS, GLOB, GREP))


def body(result: ToolResult) -> str:
    """The text between ``<content>`` and ``</content>``."""
    assert not result.is_error, result.text
    return result.text.split("<content>\n", 1)[1].rsplit("\n</content>", 1)[0]


async def test_the_ignore_files_above_the_searched_directory_apply_up_to_the_root() -> None:
    """
    /.gitignore          "*.txt"     (above the workspace root: never read)
    /w/.gitignore        "*.pyc"
    /w/src/.ignore       "gen/"
    /w/src/a.py, a.pyc, notes.txt, gen/x.py
    """
    fs = MemoryFileSystem(
        cwd="/w",
        files={
            "/.gitignore": "*.txt\n",
            "/w/.gitignore": "*.pyc\n",
            "/w/src/.ignore": "gen/\n",
            "/w/src/a.py": "x\n",
            "/w/src/a.pyc": "x\n",
            "/w/src/notes.txt": "x\n",
            "/w/src/gen/x.py": "x\n",
        },
    )
    result = await host(fs).execute("glob", {"pattern": "*", "path": "src"})
    assert result.value is not None
    assert sorted(result.value["files"]) == [".ignore", "a.py", "notes.txt"]


async def test_an_ignored_path_given_explicitly_keeps_only_the_ignore_files_inside_it() -> None:
    fs = MemoryFileSystem(
        cwd="/w",
        files={
            "/w/.gitignore": "vendor/\n*.log\n",
            "/w/vendor/.gitignore": "*.min.js\n",
            "/w/vendor/lib.js": "",
            "/w/vendor/lib.min.js": "",
            "/w/vendor/debug.log": "",
        },
    )
    for name, at in (("lib.js", 1), ("debug.log", 2)):
        fs.set_modified_ns(f"/w/vendor/{name}", at)
    toolfs = host(fs)
    assert body(await toolfs.execute("glob", {"pattern": "*"})) == ".gitignore\n\n(1 file)"
    found = await toolfs.execute("glob", {"pattern": "*", "path": "vendor"})
    assert body(found) == ".gitignore\ndebug.log\nlib.js\n\n(3 files)"


async def test_a_symlink_given_as_path_is_followed_like_list_follows_it() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"/w/src/a.py": "x\n"})
    fs.add_symlink("/w/alias", "src")
    toolfs = host(fs)
    assert body(await toolfs.execute("glob", {"pattern": "*"})) == "src/a.py\n\n(1 file)"
    assert body(await toolfs.execute("glob", {"pattern": "*", "path": "alias"})) == (
        "a.py\n\n(1 file)"
    )


class SlowMemory(MemoryFileSystem):
    """A memory backend where listing a directory named ``slow`` and reading (or streaming) a
    file named ``slow.txt`` take ``delay`` seconds."""

    delay = 1.2

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        if target.display_path.endswith("/slow"):
            await anyio.sleep(self.delay)
        return await super().list_dir(target, stat=stat)

    async def read_text(self, target: FsTarget) -> str:
        if target.display_path.endswith("/slow.txt"):
            await anyio.sleep(self.delay)
        return await super().read_text(target)

    def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        chunks = super().stream_text(target)
        return self._slow(chunks) if target.display_path.endswith("/slow.txt") else chunks

    async def _slow(self, chunks: AsyncIterator[str]) -> AsyncIterator[str]:
        await anyio.sleep(self.delay)
        async for chunk in chunks:
            yield chunk


def slow_tree() -> SlowMemory:
    """
    /w/a.txt               "x"   newest
    /w/slow.txt            "x"   reading it takes 1.2 s
    /w/c.txt               "x"   never searched within a 1 s limit
    /w/slow/b.txt          "x"   listing /w/slow takes 1.2 s
    /w/slow/deeper/c.txt   "x"   never reached within a 1 s limit
    """
    files = ["a.txt", "slow.txt", "c.txt", "slow/b.txt", "slow/deeper/c.txt"]
    fs = SlowMemory(cwd="/w", files={f"/w/{name}": "x\n" for name in files})
    for age, name in enumerate(files):
        fs.set_modified_ns(f"/w/{name}", 100 - age)
    return fs


async def test_the_time_limit_stops_a_walk_and_shows_what_was_found() -> None:
    toolfs = host(slow_tree(), search_time_limit=1)
    found = await toolfs.execute("glob", {"pattern": "*"})
    assert body(found) == f"a.txt\nslow.txt\nc.txt\nslow/b.txt\n\n{STOPPED}"
    assert found.value is not None and found.value["stopped"] is True


async def test_the_time_limit_stops_a_search_and_shows_the_files_searched() -> None:
    # a.txt, slow.txt and f00..: the first batch of reads (FILES_AT_ONCE of them, slow.txt
    # among them) outlasts the limit.
    names = ["a.txt", "slow.txt", *(f"f{i:02}" for i in range(FILES_AT_ONCE + 8))]
    flat = SlowMemory(cwd="/w", files={f"/w/{name}": "x\n" for name in names})
    for age, name in enumerate(names):
        flat.set_modified_ns(f"/w/{name}", 100 - age)
    searched = await host(flat, search_time_limit=1).execute("grep", {"pattern": "x"})
    assert body(searched).startswith("a.txt\n1: x\n\nslow.txt\n1: x\n\nf00\n1: x\n\n")
    assert body(searched).endswith(f"\n\n{names[FILES_AT_ONCE - 1]}\n1: x\n\n{STOPPED}")
    assert searched.value is not None
    assert (searched.value["totalMatches"], searched.value["stopped"]) == (FILES_AT_ONCE, True)


class GrownSinceListed:
    """A backend whose listing says every file holds one byte (each has grown since it was
    listed), and which notes the files it streams (mixed into a backend class)."""

    streamed: list[str]

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        entries = await super().list_dir(target, stat=stat)  # type: ignore[misc]
        return [dataclasses.replace(e, size=1) if e.type == "file" else e for e in entries]

    def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        self.streamed.append(target.display_path)
        return super().stream_text(target)  # type: ignore[misc,no-any-return]


class GrownMemory(GrownSinceListed, MemoryFileSystem):
    pass


class GrownLocal(GrownSinceListed, LocalFileSystem):
    pass


GROWN_FILES = {
    "a.txt": "needle a\n",
    "big.txt": "x" * BYTES_AT_ONCE + "\nneedle big\n",
    "c.txt": "needle c\n",
}


@pytest.mark.parametrize("backend", ["memory", "local"])
async def test_a_file_grown_since_it_was_listed_is_streamed_not_read_whole(
    backend: str, tmp_path: Path
) -> None:
    # Listed as one byte each, so read together; big.txt no longer fits what one read may
    # hold: it is streamed in its place, and the results are a plain search's.
    grown: GrownSinceListed
    plain: FileSystem
    if backend == "memory":
        files = {f"/w/{name}": text for name, text in GROWN_FILES.items()}
        grown, plain = GrownMemory(cwd="/w", files=files), MemoryFileSystem(cwd="/w", files=files)
        for age, name in enumerate(files):
            for fs in (grown, plain):
                fs.set_modified_ns(name, 100 - age)
    else:
        for age, (name, text) in enumerate(GROWN_FILES.items()):
            (tmp_path / name).write_text(text)
            os.utime(tmp_path / name, ns=(10**18 - age, 10**18 - age))
        grown, plain = GrownLocal(str(tmp_path)), LocalFileSystem(str(tmp_path))
    grown.streamed = []
    searched = await host(grown).execute("grep", {"pattern": "needle"})
    assert searched.text == (await host(plain).execute("grep", {"pattern": "needle"})).text
    assert body(searched).startswith("a.txt\n1: needle a\n\nbig.txt\n2: needle big\n\nc.txt")
    assert grown.streamed[-1].endswith("/big.txt")  # the search's own stream, last
    if backend == "local":  # its read_texts refused big.txt when it opened it: no stream
        assert len(grown.streamed) == 1


@pytest.mark.parametrize("tool", ["glob", "grep"])
async def test_cancelling_a_search_reports_it_aborted(tool: str) -> None:
    fs = slow_tree()
    fs.delay = 60
    cancel = anyio.Event()
    results: list[ToolResult] = []

    async def search() -> None:
        results.append(await host(fs).execute(tool, {"pattern": "x"}, cancel=cancel))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(search)
            await anyio.sleep(0.2)
            cancel.set()
    (result,) = results
    assert result.text == f"Error: {tool} aborted"
    assert result.error is not None and result.error.code == "FS_ABORTED"


async def test_a_match_is_not_an_observation_an_edit_still_needs_a_read() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"/w/a.txt": "needle\n"})
    toolfs = ToolFs(fs, plugins=[FsPolicy()], tools=(*TOOLS, GLOB, GREP))
    session = Session()
    found = await toolfs.execute("grep", {"pattern": "needle"}, session=session)
    assert body(found).startswith("a.txt\n")
    edit = {"file_path": "a.txt", "old_string": "needle", "new_string": "pin"}
    refused = await toolfs.execute("edit", edit, session=session)
    assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"
    assert not (await toolfs.execute("read", {"file_path": "a.txt"}, session=session)).is_error
    assert not (await toolfs.execute("edit", edit, session=session)).is_error


def write_big_file(path: Path, megabytes: int) -> None:
    line = b"the quick brown fox jumps over the lazy dog, again and again and again\n"
    block = line * ((1 << 20) // len(line) + 1)
    with open(path, "wb") as out:
        for _ in range(megabytes):
            out.write(block)
        out.write(b"needle at the end\n")


async def test_grep_streams_a_large_file_in_bounded_memory(tmp_path: Path) -> None:
    """64 MiB of lines, the only match at the end: Python allocations stay under 16 MiB."""
    write_big_file(tmp_path / "big.txt", 64)
    toolfs = host(LocalFileSystem(cwd=str(tmp_path)))
    tracemalloc.start()
    try:
        result = await toolfs.execute("grep", {"pattern": "needle"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert body(result).endswith("needle at the end\n\n(1 match in 1 file)")
    assert peak < 16 << 20, peak


PEAK_CHILD = r"""
import sys
import anyio
from dsh_fs_local import LocalFileSystem
from dsh_tool_fs import ToolFs, installed_tools

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])  # kB

toolfs = ToolFs(LocalFileSystem(sys.argv[1]), tools=installed_tools(["grep"]))
warm = anyio.run(toolfs.execute, "grep", {"pattern": "needle", "path": "warm.txt"})
assert not warm.is_error, warm.text
before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the peak (VmHWM) starts again from the current size
found = anyio.run(toolfs.execute, "grep", {"pattern": "needle", "path": "big.txt"})
print(found.text.splitlines()[-2], status("VmHWM") - before)
"""


@pytest.mark.long
def test_grep_searches_a_gigabyte_file_within_64_mb_of_rss_growth(tmp_path: Path) -> None:
    """1 GiB of lines streamed in a fresh interpreter: its peak RSS grows by less than 64 MB."""
    write_big_file(tmp_path / "big.txt", 1024)
    (tmp_path / "warm.txt").write_text("needle\n")
    done = subprocess.run(
        [sys.executable, "-c", PEAK_CHILD, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    footer, growth_kb = done.stdout.rsplit(" ", 1)
    assert footer == "(1 match in 1 file)"
    assert int(growth_kb) < 64 * 1024, f"peak RSS grew by {int(growth_kb) / 1024:.0f} MB"


@pytest.mark.parametrize("native", ["1", "0"])
async def test_a_file_name_that_is_not_utf8_is_found_and_quoted(
    tmp_path: Path, native: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name with an undecodable byte (a lone surrogate once decoded) goes through the
    ignore rules and the glob like any name: RE2 cannot take it as it is."""
    monkeypatch.setenv("DSH_FS_SEARCH_NATIVE", native)
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("needle\n")
    (tmp_path / os.fsdecode(b"caf\xe9.log")).write_text("needle\n")
    toolfs = host(LocalFileSystem(str(tmp_path)))
    found = await toolfs.execute("glob", {"pattern": "caf?.*"})
    assert body(found) == '"caf\\udce9.txt"\n\n(1 file)'
    matched = await toolfs.execute("grep", {"pattern": "needle", "include": "*.txt"})
    assert body(matched) == '"caf\\udce9.txt"\n1: needle\n\n(1 match in 1 file)'
