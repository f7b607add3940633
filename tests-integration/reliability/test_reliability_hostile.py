"""The hostile input table: whatever the model or the disk throws at the tools.

Kept as one file: one table of hostile inputs; its row families share the snapshot and the call.

One parametrized test per row family. Every row makes one call through
``ToolFs`` on the local backend (with the policy unless the row says
otherwise) and asserts the exact model-facing text of SPEC 5.8 — for an error
a clear one-line ``Error: <message>`` — and, on error, that the tree is
byte-identical (names, bytes, modes, owners, inodes, symlink targets).

Invariants checked on every result (:func:`check_result`):

* an envelope (list, read, write) encodes as UTF-8: an undecodable file name
  (a lone surrogate) is written by the name rule, never raw;
* a sentence (an error, the edit confirmation) is one line without any
  control character, so a file name cannot break it into several lines or
  forge what follows. It may echo a lone surrogate of the path: the
  transports own that byte (the CLI writes it back raw, the MCP server
  escapes it).

FIFOs, ``/dev/zero``, ``/dev/stdin`` and sockets run in a forked child under
``anyio.fail_after(2)`` with a hard kill at the fork server's deadline, so a
call that blocks fails its row instead of hanging the suite.

``{root}`` in an expected text stands for the row's workspace directory.
"""

from __future__ import annotations

import os
import socket
import unicodedata
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from dsh_fs import FsTarget, load_plugin
from dsh_fs.streaming import SkippedLines, SupportsSkipLines, TextStream
from dsh_fs_local import LocalFileSystem
from dsh_reliability_kit import ForkServer, leftovers, snapshot_tree
from dsh_tool_fs import Session, ToolFs, ToolResult

Setup = Callable[[Path], None]
Check = Callable[[Path], None]


@dataclass(frozen=True)
class Row:
    """One hostile call and exactly what the model must see."""

    id: str
    tool: str
    args: Any
    expect: str
    """Exact ``ToolResult.text``; ``{root}`` is the workspace."""
    setup: Setup | None = None
    policy: bool = True
    observe: str | None = None
    """Read this path first in the same session (the policy's observation)."""
    code: str | None = None
    check: Check | None = None
    """For a successful row: what the tree must look like afterwards."""
    config: dict[str, int] | None = None
    guard: float = 2.0
    contained: bool = True
    """``False``: the row reaches outside its root on purpose (built with ``roots=None``)."""

    def param(self) -> Any:
        return pytest.param(self, id=self.id, marks=known_defect(self.id))


# Rows that fail on the code as it stands, with the defect they expose; each
# entry is removed by the commit that fixes it (README: "Defects found").
KNOWN_DEFECTS: dict[str, str] = {}


def known_defect(row_id: str) -> list[pytest.MarkDecorator]:
    reason = KNOWN_DEFECTS.get(row_id)
    return [] if reason is None else [pytest.mark.xfail(reason=reason, strict=True)]


def check_result(result: ToolResult) -> None:
    text = result.text
    if text.startswith("<path>"):
        text.encode("utf-8")  # an envelope never holds a lone surrogate (name rule)
    else:
        bad = [c for c in text if unicodedata.category(c) == "Cc"]
        assert bad == [], f"control characters in a one-line text: {bad!r}"
    if result.is_error:
        assert text.startswith("Error: ")
        bad = [c for c in text if unicodedata.category(c) == "Cc"]
        assert bad == [], f"control characters in an error text: {bad!r}"
        assert result.error is not None
        assert result.error.code != "TOOL_FAILURE", f"unexpected exception: {text}"


def _fill(root: Path, text: str) -> str:
    return text.replace("{root}", str(root))


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _file(name: str, data: bytes = b"hi\n") -> Setup:
    return lambda root: _write(root / name, data)


def _symlink(name: str, target: str) -> Setup:
    return lambda root: (root / name).symlink_to(target)


def _steps(*setups: Setup) -> Setup:
    def run(root: Path) -> None:
        for step in setups:
            step(root)

    return run


def _link_kept(root: Path, link: str, target: str, data: bytes) -> None:
    assert os.readlink(root / link) == target
    assert (root / target).read_bytes() == data


def _bytes_are(name: str, data: bytes) -> Check:
    def check(root: Path) -> None:
        assert (root / name).read_bytes() == data

    return check


async def run_in_process(row: Row, root: Path) -> ToolResult:
    if row.setup is not None:
        row.setup(root)
    plugins = ("policy",) if row.policy else ()
    if row.contained:
        toolfs = ToolFs.from_entry_points(
            backend="local", plugins=plugins, cwd=str(root), config=row.config
        )
    else:
        toolfs = ToolFs(LocalFileSystem(str(root), roots=None), config=row.config)
        for name in plugins:
            toolfs.register(load_plugin(name), name=name)
    session = Session(cwd=str(root))
    if row.observe is not None:
        seen = await toolfs.execute("read", {"file_path": row.observe}, session=session)
        assert not seen.is_error, seen.text
    before = snapshot_tree(root)
    with anyio.fail_after(row.guard):
        result = await toolfs.execute(row.tool, row.args, session=session)
    check_result(result)
    assert result.text == _fill(root, row.expect)
    if row.code is not None:
        assert result.error is not None and result.error.code == row.code
    if result.is_error:
        assert snapshot_tree(root) == before, "the tree changed on error"
    else:
        assert leftovers(root) == []
        if row.check is not None:
            row.check(root)
    return result


def envelope(path: str, body: str) -> str:
    """The text of a successful read or write: the file's path and type around ``body``."""
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n</content>"


# -- paths ----------------------------------------------------------------------------

LONG_NAME = "n" * 4096
SEGMENT = "s" * 200
DEEP = "/".join([SEGMENT] * 22)  # 4,421 characters below the workspace: beyond PATH_MAX
TOO_LONG = "File name too long"


def _make_deep_file(root: Path) -> None:
    """Create ``DEEP/f.txt`` one level at a time, descriptor-relative (paths > PATH_MAX)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(22):
            os.mkdir(SEGMENT, dir_fd=fd)
            nxt = os.open(SEGMENT, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        out = os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"deep\n")
        os.close(out)
    finally:
        os.close(fd)


PATH_ROWS = [
    *[
        Row(f"{tool}-{label}", tool, {**extra, key: value}, f"Error: {message}")
        for tool, key, extra, message in [
            ("read", "file_path", {}, "file_path must be a non-empty string"),
            ("write", "file_path", {"content": "x"}, "file_path must be a non-empty string"),
            (
                "edit",
                "file_path",
                {"old_string": "a", "new_string": "b"},
                "file_path must be a non-empty string",
            ),
            ("list", "path", {}, "path must be a non-empty string when given"),
        ]
        for label, value in [("empty", ""), ("spaces", "   "), ("whitespace", " \t\n\r ")]
    ],
    *[
        Row(
            f"{tool}-through-regular-file",
            tool,
            args,
            'Error: cannot resolve "{root}/file.txt/x.txt": '
            "a parent path segment is not a directory",
            setup=_file("file.txt"),
            code="FS_NOT_FOUND",
        )
        for tool, args in [
            ("read", {"file_path": "file.txt/x.txt"}),
            ("write", {"file_path": "file.txt/x.txt", "content": "x"}),
            ("edit", {"file_path": "file.txt/x.txt", "old_string": "a", "new_string": "b"}),
            ("list", {"path": "file.txt/x.txt"}),
        ]
    ],
    Row(
        "write-below-regular-file-deeper",
        "write",
        {"file_path": "file.txt/a/b/c.txt", "content": "x"},
        'Error: cannot resolve "{root}/file.txt/a/b/c.txt": '
        "a parent path segment is not a directory",
        setup=_file("file.txt"),
    ),
    *[
        Row(
            f"{tool}-symlink-loop{suffix}",
            tool,
            {**args, ("path" if tool == "list" else "file_path"): f"loop{suffix}"},
            f'Error: cannot resolve "{{root}}/loop{suffix}": Too many levels of symbolic links',
            setup=_steps(_symlink("loop", "loop2"), _symlink("loop2", "loop")),
            code="FS_IO_ERROR",
        )
        for suffix in ("", "/x.txt")
        for tool, args in [
            ("read", {}),
            ("write", {"content": "x"}),
            ("edit", {"old_string": "a", "new_string": "b"}),
            ("list", {}),
        ]
    ],
    Row(
        "read-dangling-symlink",
        "read",
        {"file_path": "dangling"},
        'Error: cannot read "{root}/dangling": not found',
        setup=_symlink("dangling", "missing.txt"),
        code="FS_NOT_FOUND",
    ),
    Row(
        "edit-dangling-symlink",
        "edit",
        {"file_path": "dangling", "old_string": "a", "new_string": "b"},
        'Error: edit requires reading "{root}/dangling" first — read the file, then retry',
        setup=_symlink("dangling", "missing.txt"),
        code="FS_NOT_OBSERVED",
    ),
    Row(
        "edit-dangling-symlink-no-policy",
        "edit",
        {"file_path": "dangling", "old_string": "a", "new_string": "b"},
        'Error: cannot edit "{root}/dangling": not found',
        setup=_symlink("dangling", "missing.txt"),
        policy=False,
        code="FS_NOT_FOUND",
    ),
    Row(
        "list-dangling-symlink",
        "list",
        {"path": "dangling"},
        'Error: cannot list "{root}/dangling": not found',
        setup=_symlink("dangling", "missing.txt"),
    ),
    Row(
        # Written through, like a shell redirection: the link stays a link.
        "write-dangling-symlink-creates-its-target",
        "write",
        {"file_path": "dangling", "content": "made\n"},
        envelope("{root}/dangling", "Created file"),
        setup=_symlink("dangling", "missing.txt"),
        check=lambda root: _link_kept(root, "dangling", "missing.txt", b"made\n"),
    ),
    *[
        Row(
            f"{tool}-4KB-name",
            tool,
            {**args, ("path" if tool == "list" else "file_path"): LONG_NAME},
            f'Error: cannot resolve "{{root}}/{LONG_NAME}": {TOO_LONG}',
            code="FS_IO_ERROR",
        )
        for tool, args in [
            ("read", {}),
            ("write", {"content": "x"}),
            ("edit", {"old_string": "a", "new_string": "b"}),
            ("list", {}),
        ]
    ],
    *[
        Row(
            f"{tool}-beyond-PATH_MAX-{state}",
            tool,
            {**args, ("path" if tool == "list" else "file_path"): f"{DEEP}/f.txt"},
            f'Error: cannot resolve "{{root}}/{DEEP}/f.txt": {TOO_LONG}',
            setup=_make_deep_file if state == "existing" else None,
            code="FS_IO_ERROR",
        )
        for state in ("existing", "missing")
        for tool, args in [
            ("read", {}),
            ("write", {"content": "x"}),
            ("edit", {"old_string": "deep", "new_string": "b"}),
            ("list", {}),
        ]
    ],
    *[
        Row(
            f"{tool}-NUL-in-path",
            tool,
            {**args, ("path" if tool == "list" else "file_path"): "a\x00b.txt"},
            expect,
            setup=_file("a"),
        )
        for tool, args in [
            ("read", {}),
            ("write", {"content": "x"}),
            ("edit", {"old_string": "a", "new_string": "b"}),
            ("list", {}),
        ]
        for expect in ['Error: cannot resolve "{root}/a\\u0000b.txt": path contains a NUL byte']
    ],
    *[
        Row(
            # A JSON "\ud800" escape: a surrogate no file name can hold.
            f"{tool}-unpaired-surrogate-in-path",
            tool,
            {**args, ("path" if tool == "list" else "file_path"): "x\ud800.txt"},
            'Error: cannot resolve "{root}/x\\ud800.txt": path contains an unpaired surrogate',
            setup=_file("a"),
            code="FS_NOT_FOUND",
        )
        for tool, args in [
            ("read", {}),
            ("write", {"content": "x"}),
            ("edit", {"old_string": "a", "new_string": "b"}),
            ("list", {}),
        ]
    ],
    Row(
        "write-content-with-unpaired-surrogate",
        "write",
        {"file_path": "new.txt", "content": "x\ud800"},
        'Error: cannot write "{root}/new.txt": invalid UTF-8 text',
        code="FS_NOT_TEXT",
    ),
    Row(
        "edit-new-string-with-unpaired-surrogate",
        "edit",
        {"file_path": "a", "old_string": "hi", "new_string": "\udcff"},
        'Error: cannot edit "{root}/a": invalid UTF-8 text',
        setup=_file("a"),
        observe="a",
        code="FS_NOT_TEXT",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize("row", [r.param() for r in PATH_ROWS])
async def test_hostile_paths(root: Path, row: Row) -> None:
    await run_in_process(row, root)


# -- special files: FIFOs, devices, sockets, directories -------------------------


def _fifo(name: str) -> Setup:
    return lambda root: os.mkfifo(root / name)


def _socket(name: str) -> Setup:
    def make(root: Path) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(root / name))
        sock.close()  # the socket file stays; nobody listens

    return make


@dataclass(frozen=True)
class Special:
    id: str
    path: str
    setup: Setup | None
    blocking_stdin: bool = False
    outside: bool = False
    """The path is outside the workspace (``/dev/...``): check nothing appeared there."""


SPECIALS = [
    Special("fifo", "{root}/fifo", _fifo("fifo")),
    Special(
        "symlink-to-fifo", "{root}/to-fifo", _steps(_fifo("fifo"), _symlink("to-fifo", "fifo"))
    ),
    Special("socket", "{root}/sock", _socket("sock")),
    Special("dev-zero", "/dev/zero", None, outside=True),
    Special("dev-stdin-pipe", "/dev/stdin", None, blocking_stdin=True, outside=True),
]


def _special_expectations(path: str) -> list[tuple[str, str, dict[str, Any], bool, str]]:
    """(label, tool, args, policy, exact text) for one special file."""
    return [
        (
            "read",
            "read",
            {"file_path": path},
            True,
            f'Error: cannot read "{path}": not a regular file',
        ),
        (
            "read-streamed",
            "read",
            {"file_path": path},
            True,
            f'Error: cannot read "{path}": not a regular file',
        ),
        (
            "write",
            "write",
            {"file_path": path, "content": "x"},
            True,
            f'Error: cannot write "{path}": not a regular file',
        ),
        (
            "write-no-policy",
            "write",
            {"file_path": path, "content": "x"},
            False,
            f'Error: cannot write "{path}": not a regular file',
        ),
        (
            "edit",
            "edit",
            {"file_path": path, "old_string": "a", "new_string": "b"},
            True,
            f'Error: edit requires reading "{path}" first — read the file, then retry',
        ),
        (
            "edit-no-policy",
            "edit",
            {"file_path": path, "old_string": "a", "new_string": "b"},
            False,
            f'Error: cannot edit "{path}": not a regular file',
        ),
        ("list", "list", {"path": path}, True, f'Error: cannot list "{path}": not a directory'),
    ]


SPECIAL_ROWS = [
    pytest.param(
        special,
        label,
        tool,
        args,
        policy,
        expect,
        id=f"{special.id}-{label}",
        marks=known_defect(f"{special.id}-{label}"),
    )
    for special in SPECIALS
    for label, tool, args, policy, expect in _special_expectations(special.path)
]


@pytest.mark.parametrize(("special", "label", "tool", "args", "policy", "expect"), SPECIAL_ROWS)
def test_hostile_special_files_never_block(
    forkserver: ForkServer,
    tmp_path: Path,
    special: Special,
    label: str,
    tool: str,
    args: dict[str, Any],
    policy: bool,
    expect: str,
) -> None:
    root = tmp_path / "w"
    root.mkdir()
    if special.setup is not None:
        special.setup(root)
    before = snapshot_tree(root)
    outside_before = sorted(os.listdir("/dev")) if special.outside else []
    filled = {k: _fill(root, v) if isinstance(v, str) else v for k, v in args.items()}
    params = {
        "cwd": str(root),
        # Outside the workspace a contained backend refuses before any type check:
        # the special-file handling is what is under test, so reach it uncontained.
        "uncontained": special.outside,
        "policy": policy,
        "guard": 2.0,
        "config": {"read_stream_min_size": 1} if label == "read-streamed" else None,
        "calls": [[tool, filled]],
    }
    (report,) = forkserver.run(
        "tool_calls", params, timeout=6.0, blocking_stdin=special.blocking_stdin
    )
    assert report["status"] == "exited", f"the call blocked or crashed: {report!r}"
    (result,) = report["messages"][-1]["result"]["results"]
    assert not result.get("timeout"), "the call did not return within 2 seconds"
    assert result["text"] == _fill(root, expect)
    result["text"].encode("utf-8")
    assert "\n" not in result["text"]
    assert snapshot_tree(root) == before
    if special.outside:
        assert sorted(os.listdir("/dev")) == outside_before


DIRECTORY_ROWS = [
    Row(
        "read-directory",
        "read",
        {"file_path": "sub"},
        'Error: cannot read "{root}/sub": not a regular file',
        setup=lambda root: (root / "sub").mkdir(),
        code="FS_NOT_REGULAR_FILE",
    ),
    Row(
        "read-workspace-dot",
        "read",
        {"file_path": "."},
        'Error: cannot read "{root}": not a regular file',
    ),
    Row(
        "write-directory",
        "write",
        {"file_path": "sub", "content": "x"},
        'Error: cannot write "{root}/sub": not a regular file',
        setup=lambda root: (root / "sub").mkdir(),
        code="FS_NOT_REGULAR_FILE",
    ),
    Row(
        "write-directory-no-policy",
        "write",
        {"file_path": "sub", "content": "x"},
        'Error: cannot write "{root}/sub": not a regular file',
        setup=lambda root: (root / "sub").mkdir(),
        policy=False,
    ),
    Row(
        "write-filesystem-root",
        "write",
        {"file_path": "/", "content": "x"},
        'Error: file_path must not end with "/"',
        contained=False,
        code="INVALID_ARGUMENTS",
    ),
    Row(
        "read-directory-with-slash",
        "read",
        {"file_path": "sub/"},
        'Error: file_path must not end with "/"',
        setup=lambda root: (root / "sub").mkdir(),
        code="INVALID_ARGUMENTS",
    ),
    Row(
        "write-symlink-to-directory",
        "write",
        {"file_path": "link", "content": "x"},
        'Error: cannot write "{root}/link": not a regular file',
        setup=_steps(lambda root: (root / "sub").mkdir(), _symlink("link", "sub")),
    ),
    Row(
        "edit-directory",
        "edit",
        {"file_path": "sub", "old_string": "a", "new_string": "b"},
        'Error: edit requires reading "{root}/sub" first — read the file, then retry',
        setup=lambda root: (root / "sub").mkdir(),
    ),
    Row(
        "edit-directory-no-policy",
        "edit",
        {"file_path": "sub", "old_string": "a", "new_string": "b"},
        'Error: cannot edit "{root}/sub": not a regular file',
        setup=lambda root: (root / "sub").mkdir(),
        policy=False,
        code="FS_NOT_REGULAR_FILE",
    ),
    Row(
        "list-file",
        "list",
        {"path": "file.txt"},
        'Error: cannot list "{root}/file.txt": not a directory',
        setup=_file("file.txt"),
        code="FS_NOT_DIRECTORY",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize("row", [r.param() for r in DIRECTORY_ROWS])
async def test_hostile_directories_as_targets(root: Path, row: Row) -> None:
    await run_in_process(row, root)


# -- names that try to forge output --------------------------------------------------


@dataclass(frozen=True)
class Name:
    id: str
    path: str
    """Relative path of the file (may contain directories)."""
    listed: str
    """How the file's own entry appears in a list of its directory."""
    shown: str
    """How ``{root}/<path>`` appears in a ``<path>`` envelope (the name rule)."""
    sentence: str | None = None
    """How it appears in the edit sentence and in errors, when not as is:
    control characters and lone surrogates JSON-escaped, the rest untouched."""


UNDECODABLE = os.fsdecode(b"bad\xff.txt")
HOSTILE_NAMES = [
    Name("newline", "a\nb.txt", '"a\\nb.txt"', '"{root}/a\\nb.txt"', "{root}/a\\nb.txt"),
    Name(
        "fake-entry-and-footer",
        "a.txt\n\n(1 entry: 0 directories, 1 file)",
        '"a.txt\\n\\n(1 entry: 0 directories, 1 file)"',
        '"{root}/a.txt\\n\\n(1 entry: 0 directories, 1 file)"',
        "{root}/a.txt\\n\\n(1 entry: 0 directories, 1 file)",
    ),
    Name("close-content", "</content>/f.txt", "f.txt", '"{root}/<\\/content>/f.txt"'),
    Name("close-path", "</path>/f.txt", "f.txt", '"{root}/<\\/path>/f.txt"'),
    Name("trailing-at", "x@", '"x@"', '"{root}/x@"'),
    Name("leading-quote", '"q.txt', '"\\"q.txt"', '{root}/"q.txt'),
    Name("backslash", "back\\slash.txt", '"back\\\\slash.txt"', '"{root}/back\\\\slash.txt"'),
    # Sentences and errors spell the undecodable byte as the quoted entry does.
    Name(
        "undecodable",
        UNDECODABLE,
        '"bad\\udcff.txt"',
        '"{root}/bad\\udcff.txt"',
        "{root}/bad\\udcff.txt",
    ),
    Name(
        "tab-and-escape",
        "t\tab\x1b[2J.txt",
        '"t\\tab\\u001b[2J.txt"',
        '"{root}/t\\tab\\u001b[2J.txt"',
        "{root}/t\\tab\\u001b[2J.txt",
    ),
    Name(
        "del-and-c1",
        "d\x7fc\x85.txt",
        '"d\\u007fc\\u0085.txt"',
        '"{root}/d\\u007fc\\u0085.txt"',
        "{root}/d\\u007fc\\u0085.txt",
    ),
    # U+202E is category Cf, not Cc: SPEC 5.9 keeps it verbatim.
    Name("rtl-override", "evil\u202etxt.exe", "evil\u202etxt.exe", "{root}/evil\u202etxt.exe"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name", [pytest.param(n, id=n.id, marks=known_defect(n.id)) for n in HOSTILE_NAMES]
)
async def test_hostile_names_cannot_forge_output(root: Path, name: Name) -> None:
    target = root / name.path
    _write(target, b"hi\n")
    directory = target.parent
    toolfs = ToolFs.from_entry_points(backend="local", plugins=("policy",), cwd=str(root))
    session = Session(cwd=str(root))
    shown = _fill(root, name.shown)

    listing = await toolfs.execute("list", {"path": str(directory)}, session=session)
    check_result(listing)
    listed_dir = (
        str(directory) if directory == root else _fill(root, name.shown)[: -len('/f.txt"')] + '"'
    )
    assert listing.text == (
        f"<path>{listed_dir}</path>\n<type>directory</type>\n<content>\n"
        f"{name.listed}\n\n(1 entry: 0 directories, 1 file)\n</content>"
    )

    read = await toolfs.execute("read", {"file_path": name.path}, session=session)
    check_result(read)
    assert read.text == envelope(shown, "1: hi\n\n(End of file - total 1 lines)")

    write = await toolfs.execute(
        "write", {"file_path": name.path, "content": "one\ntwo\n"}, session=session
    )
    check_result(write)
    assert write.text == envelope(shown, "Updated file")

    edit = await toolfs.execute(
        "edit", {"file_path": name.path, "old_string": "two", "new_string": "2"}, session=session
    )
    check_result(edit)
    # SPEC 5.8 writes the display path as is; its control characters are
    # escaped, so the sentence stays one line (no output is forged).
    in_sentence = _fill(root, name.sentence or "{root}/" + name.path)
    assert edit.text == f"The file {in_sentence} has been updated successfully."
    assert target.read_bytes() == b"one\n2\n"

    missing = await toolfs.execute("read", {"file_path": name.path + ".missing"}, session=session)
    check_result(missing)
    assert missing.text == f'Error: cannot read "{in_sentence}.missing": not found'
    assert missing.error is not None and missing.error.code == "FS_NOT_FOUND"
    assert leftovers(root) == []


# -- content ---------------------------------------------------------------------------

STREAM = {"read_stream_min_size": 1}
NUL_LATE = b"x\n" * 4100 + b"nul\x00here\n"  # the NUL is at byte 8203
INVALID_AT_END = b"ok\n" * 10 + b"\xe2\x82"
BOM_CRLF = b"\xef\xbb\xbfone\r\ntwo\r\n"
CHUNK = 1 << 20
SPLIT_CHAR = b"a" * (CHUNK - 1) + "é\n".encode()  # "é" straddles the first stream chunk


def _both_read_paths(row: Row) -> list[Row]:
    """The row as a whole-file read and as a streamed read (``read_stream_min_size=1``)."""
    return [row, Row(**{**row.__dict__, "id": row.id + "-streamed", "config": STREAM})]


CONTENT_ROWS = [
    *_both_read_paths(
        Row(
            "read-binary",
            "read",
            {"file_path": "f"},
            'Error: cannot read "{root}/f": binary file',
            setup=_file("f", b"\x00\x01\x02abc\n"),
            code="FS_NOT_TEXT",
        )
    ),
    Row(
        "edit-binary-no-policy",
        "edit",
        {"file_path": "f", "old_string": "abc", "new_string": "x"},
        'Error: cannot edit "{root}/f": binary file',
        setup=_file("f", b"\x00\x01\x02abc\n"),
        policy=False,
    ),
    Row(
        "write-over-binary-unread",
        "write",
        {"file_path": "f", "content": "text\n"},
        'Error: cannot overwrite existing "{root}/f" without reading it first'
        " — read the file, then retry",
        setup=_file("f", b"\x00\x01\x02abc\n"),
        code="FS_NOT_OBSERVED",
    ),
    Row(
        # No policy: write replaces whatever was there (by design); before is null.
        "write-over-binary-no-policy",
        "write",
        {"file_path": "f", "content": "text\n"},
        envelope("{root}/f", "Updated file"),
        setup=_file("f", b"\x00\x01\x02abc\n"),
        policy=False,
        check=_bytes_are("f", b"text\n"),
    ),
    *_both_read_paths(
        Row(
            "read-NUL-after-8192",
            "read",
            {"file_path": "f", "offset": 4101},
            envelope("{root}/f", "4101: nul\x00here\n\n(End of file - total 4101 lines)"),
            setup=_file("f", NUL_LATE),
        )
    ),
    Row(
        "edit-NUL-after-8192",
        "edit",
        {"file_path": "f", "old_string": "here", "new_string": "there"},
        'Error: cannot edit "{root}/f": binary file',
        setup=_file("f", NUL_LATE),
        observe="f",
        code="FS_NOT_TEXT",
    ),
    *_both_read_paths(
        Row(
            "read-invalid-UTF-8-at-the-very-end",
            "read",
            {"file_path": "f"},
            'Error: cannot read "{root}/f": invalid UTF-8 text',
            setup=_file("f", INVALID_AT_END),
            code="FS_NOT_TEXT",
        )
    ),
    Row(
        "read-invalid-UTF-8-at-the-end-of-a-3MB-stream",
        "read",
        {"file_path": "f", "limit": 1},
        'Error: cannot read "{root}/f": invalid UTF-8 text',
        setup=_file("f", b"line\n" * (600 * 1024) + b"\xff"),
        config=STREAM,
    ),
    Row(
        "edit-invalid-UTF-8-at-the-very-end",
        "edit",
        {"file_path": "f", "old_string": "ok", "new_string": "ko"},
        'Error: cannot edit "{root}/f": invalid UTF-8 text',
        setup=_file("f", INVALID_AT_END),
        policy=False,
    ),
    *_both_read_paths(
        Row(
            "read-multibyte-char-across-stream-chunks",
            "read",
            {"file_path": "f", "limit": 1},
            envelope(
                "{root}/f",
                "1: " + "a" * 2000 + "... (line truncated to 2000 chars)\n\n"
                "(End of file - total 1 lines)",
            ),
            setup=_file("f", SPLIT_CHAR),
        )
    ),
    *_both_read_paths(
        Row(
            "read-CRLF-split-across-stream-chunks",
            "read",
            {"file_path": "f", "offset": 2},
            envelope("{root}/f", "2: b\n\n(End of file - total 2 lines)"),
            setup=_file("f", b"a" * (CHUNK - 1) + b"\r\nb\r\n"),
        )
    ),
    *_both_read_paths(
        Row(
            "read-NUL-at-byte-8191-is-binary",
            "read",
            {"file_path": "f"},
            'Error: cannot read "{root}/f": binary file',
            setup=_file("f", b"a" * 8191 + b"\x00\n"),
        )
    ),
    *_both_read_paths(
        Row(
            "read-NUL-at-byte-8192-is-text",
            "read",
            {"file_path": "f", "limit": 1},
            envelope(
                "{root}/f",
                "1: " + "a" * 2000 + "... (line truncated to 2000 chars)\n\n"
                "(End of file - total 1 lines)",
            ),
            setup=_file("f", b"a" * 8192 + b"\x00\n"),
        )
    ),
    *_both_read_paths(
        Row(
            "read-BOM-CRLF",
            "read",
            {"file_path": "f"},
            envelope("{root}/f", "1: one\n2: two\n\n(End of file - total 2 lines)"),
            setup=_file("f", BOM_CRLF),
        )
    ),
    Row(
        "edit-BOM-CRLF-keeps-both",
        "edit",
        {"file_path": "f", "old_string": "one", "new_string": "ONE"},
        "The file {root}/f has been updated successfully.",
        setup=_file("f", BOM_CRLF),
        observe="f",
        check=_bytes_are("f", b"\xef\xbb\xbfONE\r\ntwo\r\n"),
    ),
    Row(
        # Documented: write stores exactly the content it is given (SPEC 3.1).
        "write-BOM-file-stores-exactly-the-content",
        "write",
        {"file_path": "f", "content": "one\ntwo\n"},
        envelope("{root}/f", "Updated file"),
        setup=_file("f", BOM_CRLF),
        observe="f",
        check=_bytes_are("f", b"one\ntwo\n"),
    ),
    *_both_read_paths(
        Row(
            "read-empty-file",
            "read",
            {"file_path": "f"},
            envelope("{root}/f", "(End of file - total 0 lines)"),
            setup=_file("f", b""),
        )
    ),
    Row(
        "read-empty-file-offset-2",
        "read",
        {"file_path": "f", "offset": 2},
        'Error: offset 2 is out of range for "{root}/f" (0 lines)',
        setup=_file("f", b""),
        code="FS_NOT_FOUND",
    ),
    Row(
        "edit-empty-file",
        "edit",
        {"file_path": "f", "old_string": "x", "new_string": "y"},
        'Error: old_string was not found in "{root}/f"',
        setup=_file("f", b""),
        observe="f",
        code="FS_EDIT_NOT_FOUND",
    ),
    Row(
        "write-empty-content-creates-empty-file",
        "write",
        {"file_path": "new.txt", "content": ""},
        envelope("{root}/new.txt", "Created file"),
        check=_bytes_are("new.txt", b""),
    ),
    *_both_read_paths(
        Row(
            "read-only-CRLF",
            "read",
            {"file_path": "f"},
            envelope("{root}/f", "1: \n\n(End of file - total 1 lines)"),
            setup=_file("f", b"\r\n"),
        )
    ),
    Row(
        "edit-only-CRLF",
        "edit",
        {"file_path": "f", "old_string": "\n", "new_string": "x\n"},
        "The file {root}/f has been updated successfully.",
        setup=_file("f", b"\r\n"),
        observe="f",
        check=_bytes_are("f", b"x\r\n"),
    ),
    Row(
        "edit-mixed-mostly-CRLF-becomes-CRLF",
        "edit",
        {"file_path": "f", "old_string": "b", "new_string": "B"},
        "The file {root}/f has been updated successfully.",
        setup=_file("f", b"a\r\nb\nc\r\n"),
        observe="f",
        check=_bytes_are("f", b"a\r\nB\r\nc\r\n"),
    ),
    Row(
        "edit-mixed-mostly-LF-becomes-LF",
        "edit",
        {"file_path": "f", "old_string": "b", "new_string": "B"},
        "The file {root}/f has been updated successfully.",
        setup=_file("f", b"a\nb\r\nc\n"),
        observe="f",
        check=_bytes_are("f", b"a\nB\nc\n"),
    ),
    *_both_read_paths(
        Row(
            "read-mixed-line-endings-and-lone-CR",
            "read",
            {"file_path": "f"},
            envelope("{root}/f", "1: a\n2: b\rc\n3: d\n\n(End of file - total 3 lines)"),
            setup=_file("f", b"a\r\nb\rc\nd\r"),
        )
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize("row", [r.param() for r in CONTENT_ROWS])
async def test_hostile_content(root: Path, row: Row) -> None:
    await run_in_process(row, root)


def test_hostile_100MB_single_line_read_stays_bounded(
    forkserver: ForkServer, tmp_path: Path
) -> None:
    """A 100 MB line without a newline: one truncated line, peak memory far below 100 MB."""
    root = tmp_path / "w"
    root.mkdir()
    with open(root / "huge.txt", "wb") as fh:
        block = b"a" * (1 << 20)
        for _ in range(100):
            fh.write(block)
    params = {
        "cwd": str(root),
        "guard": 60.0,
        "memory": True,
        "calls": [["read", {"file_path": "huge.txt"}]],
    }
    result = forkserver.result("tool_calls", params, timeout=90.0)
    (read,) = result["results"]
    assert read["text"] == envelope(
        f"{root}/huge.txt",
        "1: " + "a" * 2000 + "... (line truncated to 2000 chars)\n\n(End of file - total 1 lines)",
    )
    grown_mb = (result["peak_kb"] - result["rss_before_kb"]) / 1024
    print(f"\n100 MB line: peak RSS grew by {grown_mb:.1f} MB in {read['seconds']} s")
    assert grown_mb < 40, f"reading a 100 MB line grew the process by {grown_mb:.0f} MB"


# -- edits -----------------------------------------------------------------------------

MANY = b"x\n" * 100_000

EDIT_ROWS = [
    Row(
        "old-string-is-the-whole-file",
        "edit",
        {"file_path": "f", "old_string": "abc\ndef\n", "new_string": "xyz\n"},
        "The file {root}/f has been updated successfully.",
        setup=_file("f", b"abc\ndef\n"),
        observe="f",
        check=_bytes_are("f", b"xyz\n"),
    ),
    Row(
        "old-string-is-the-whole-file-new-empty",
        "edit",
        {"file_path": "f", "old_string": "abc\ndef\n", "new_string": ""},
        "The file {root}/f has been updated successfully.",
        setup=_file("f", b"abc\ndef\n"),
        observe="f",
        check=_bytes_are("f", b""),
    ),
    Row(
        "old-string-CRLF-against-LF-file",
        "edit",
        {"file_path": "f", "old_string": "one\r\ntwo", "new_string": "1\r\n2"},
        "The file {root}/f has been updated successfully.",
        setup=_file("f", b"one\ntwo\nthree\n"),
        observe="f",
        check=_bytes_are("f", b"1\n2\nthree\n"),
    ),
    Row(
        "old-string-LF-against-CRLF-file",
        "edit",
        {"file_path": "f", "old_string": "one\ntwo", "new_string": "1\n2"},
        "The file {root}/f has been updated successfully.",
        setup=_file("f", b"one\r\ntwo\r\nthree\r\n"),
        observe="f",
        check=_bytes_are("f", b"1\r\n2\r\nthree\r\n"),
    ),
    Row(
        "old-string-lone-CR-does-not-match-CRLF",
        "edit",
        {"file_path": "f", "old_string": "one\r", "new_string": "1"},
        'Error: old_string was not found in "{root}/f"',
        setup=_file("f", b"one\r\ntwo\r\n"),
        observe="f",
    ),
    Row(
        "old-and-new-equal-after-normalization",
        "edit",
        {"file_path": "f", "old_string": "one\r\n", "new_string": "one\n"},
        "The file {root}/f has been updated successfully.",
        setup=_file("f", b"one\r\ntwo\r\n"),
        observe="f",
        check=_bytes_are("f", b"one\r\ntwo\r\n"),
    ),
    Row(
        "replace-all-100000-matches",
        "edit",
        {"file_path": "f", "old_string": "x", "new_string": "yy", "replace_all": True},
        "The file {root}/f has been updated. All occurrences were successfully replaced.",
        setup=_file("f", MANY),
        observe="f",
        check=_bytes_are("f", b"yy\n" * 100_000),
        guard=30.0,
    ),
    Row(
        "100000-matches-without-replace-all",
        "edit",
        {"file_path": "f", "old_string": "x", "new_string": "yy"},
        'Error: old_string matched 100000 times in "{root}/f"; '
        "provide a more specific old_string or set replace_all to true",
        setup=_file("f", MANY),
        observe="f",
        code="FS_AMBIGUOUS_EDIT",
        guard=30.0,
    ),
    Row(
        "overlapping-matches-count-without-overlap",
        "edit",
        {"file_path": "f", "old_string": "aa", "new_string": "b", "replace_all": True},
        "The file {root}/f has been updated. All occurrences were successfully replaced.",
        setup=_file("f", b"aaaaa\n"),
        observe="f",
        check=_bytes_are("f", b"bba\n"),
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize("row", [r.param() for r in EDIT_ROWS])
async def test_hostile_edits(root: Path, row: Row) -> None:
    await run_in_process(row, root)


# -- arguments ---------------------------------------------------------------------------


def _nested_list(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def _nested_dict(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"k": value}
    return value


HUGE = 10**5000
DEEP_LIST = _nested_list(100_000)
DEEP_DICT = _nested_dict(100_000)
THREE = _file("f.txt", b"one\ntwo\nthree\n")


def _arg(id_: str, tool: str, args: Any, message: str, **kw: Any) -> Row:
    return Row(id_, tool, args, f"Error: {message}", setup=THREE, **kw)


ARGUMENT_ROWS = [
    *[
        _arg(f"not-an-object-{i}", "read", value, "arguments must be a JSON object")
        for i, value in enumerate([[], "f.txt", None, 5, 1.5, True, ["file_path", "f.txt"]])
    ],
    *[
        _arg(f"file-path-{label}", "read", {"file_path": value}, "file_path must be a string")
        for label, value in [
            ("int", 5),
            ("float", 1.5),
            ("bool", True),
            ("null", None),
            ("list", ["f.txt"]),
            ("object", {"path": "f.txt"}),
            ("deep-list", DEEP_LIST),
            ("deep-dict", DEEP_DICT),
        ]
    ],
    _arg("content-int", "write", {"file_path": "f.txt", "content": 5}, "content must be a string"),
    _arg(
        "content-null", "write", {"file_path": "f.txt", "content": None}, "content must be a string"
    ),
    _arg(
        "content-deep",
        "write",
        {"file_path": "f.txt", "content": DEEP_LIST},
        "content must be a string",
    ),
    *[
        _arg(f"offset-{label}", "read", {"file_path": "f.txt", "offset": value}, message)
        for label, value, message in [
            ("string", "1", "offset must be an integer"),
            ("bool", True, "offset must be an integer"),
            ("fraction", 1.5, "offset must be an integer"),
            ("nan", float("nan"), "offset must be an integer"),
            ("inf", float("inf"), "offset must be an integer"),
            ("-inf", float("-inf"), "offset must be an integer"),
            ("list", [1], "offset must be an integer"),
            ("deep", DEEP_LIST, "offset must be an integer"),
            ("zero", 0, "offset must be a positive integer"),
            ("zero-float", 0.0, "offset must be a positive integer"),
            ("negative", -1, "offset must be a positive integer"),
            ("very-negative", -(10**18), "offset must be a positive integer"),
            (
                "10e18",
                10**18,
                'offset 1000000000000000000 is out of range for "{root}/f.txt" (3 lines)',
            ),
            (
                "2e100",
                2 * 10**100,
                f'offset {2 * 10**100} is out of range for "{{root}}/f.txt" (3 lines)',
            ),
            (
                "1e18-float",
                1e18,
                'offset 1000000000000000000 is out of range for "{root}/f.txt" (3 lines)',
            ),
        ]
    ],
    *[
        _arg(f"limit-{label}", "read", {"file_path": "f.txt", "limit": value}, message)
        for label, value, message in [
            ("string", "5", "limit must be an integer"),
            ("bool", False, "limit must be an integer"),
            ("fraction", 0.5, "limit must be an integer"),
            ("zero", 0, "limit must be a positive integer"),
            ("negative", -3, "limit must be a positive integer"),
            ("over-read-limit", 2001, "limit must be less than or equal to 2000"),
            ("10e18", 10**18, "limit must be less than or equal to 2000"),
        ]
    ],
    Row(
        "offset-and-limit-integral-floats-accepted",
        "read",
        {"file_path": "f.txt", "offset": 2.0, "limit": 1.0},
        envelope("{root}/f.txt", "2: two\n\n(Showing lines 2-2 of 3. Use offset=3 to continue.)"),
        setup=THREE,
    ),
    Row(
        "null-optional-arguments-mean-absent",
        "read",
        {"file_path": "f.txt", "offset": None, "limit": None},
        envelope("{root}/f.txt", "1: one\n2: two\n3: three\n\n(End of file - total 3 lines)"),
        setup=THREE,
    ),
    _arg(
        "list-offset-10e18",
        "list",
        {"offset": 10**18},
        'offset 1000000000000000000 is out of range for "{root}" (1 entries)',
    ),
    _arg(
        # More digits than int -> str converts by default (4,300): JSON has no limit.
        "read-offset-10e5000",
        "read",
        {"file_path": "f.txt", "offset": HUGE},
        f'offset 1{"0" * 5000} is out of range for "{{root}}/f.txt" (3 lines)',
    ),
    _arg(
        "list-offset-10e5000",
        "list",
        {"offset": HUGE},
        f'offset 1{"0" * 5000} is out of range for "{{root}}/f.txt" (1 entries)'.replace(
            "/f.txt", ""
        ),
    ),
    _arg(
        "limit-10e5000",
        "read",
        {"file_path": "f.txt", "limit": HUGE},
        "limit must be less than or equal to 2000",
    ),
    _arg(
        "offset--10e5000",
        "read",
        {"file_path": "f.txt", "offset": -HUGE},
        "offset must be a positive integer",
    ),
    _arg("list-offset-negative", "list", {"offset": -1}, "offset must be a positive integer"),
    _arg("list-path-int", "list", {"path": 7}, "path must be a string"),
    _arg("unknown-key", "read", {"file_path": "f.txt", "bogus": 1}, 'unknown argument "bogus"'),
    _arg(
        "unknown-key-before-wrong-type",
        "read",
        {"zz": 1, "file_path": 5},
        'unknown argument "zz"',
    ),
    _arg("unknown-keys-first-in-order", "read", {"b": 1, "a": 2}, 'unknown argument "b"'),
    _arg(
        "unknown-key-with-deep-junk",
        "write",
        {"file_path": "f.txt", "content": "x", "junk": DEEP_DICT},
        'unknown argument "junk"',
    ),
    _arg(
        "unknown-key-with-newline",
        "read",
        {"file_path": "f.txt", "a\nb": 1},
        'unknown argument "a\\nb"',
    ),
    _arg(
        "unknown-camel-case-key",
        "read",
        {"filePath": "f.txt"},
        'unknown argument "filePath"',
    ),
    _arg("missing-file-path", "read", {}, "file_path is required"),
    _arg("missing-content", "write", {"file_path": "f.txt"}, "content is required"),
    _arg(
        "missing-old-string",
        "edit",
        {"file_path": "f.txt", "new_string": "x"},
        "old_string is required",
    ),
    _arg(
        "missing-new-string",
        "edit",
        {"file_path": "f.txt", "old_string": "x"},
        "new_string is required",
    ),
    _arg(
        "replace-all-string",
        "edit",
        {"file_path": "f.txt", "old_string": "one", "new_string": "1", "replace_all": "true"},
        "replace_all must be a boolean",
    ),
    _arg(
        "replace-all-int",
        "edit",
        {"file_path": "f.txt", "old_string": "one", "new_string": "1", "replace_all": 1},
        "replace_all must be a boolean",
    ),
    _arg(
        "old-string-empty",
        "edit",
        {"file_path": "f.txt", "old_string": "", "new_string": "1"},
        "old_string must be a non-empty string",
    ),
    _arg(
        "old-equals-new",
        "edit",
        {"file_path": "f.txt", "old_string": "one", "new_string": "one"},
        "old_string and new_string must differ",
    ),
    _arg(
        "old-string-deep",
        "edit",
        {"file_path": "f.txt", "old_string": DEEP_DICT, "new_string": "1"},
        "old_string must be a string",
    ),
    _arg("unknown-tool", "rm", {"file_path": "f.txt"}, 'unknown tool "rm"', code="UNKNOWN_TOOL"),
    _arg("unknown-tool-with-newline", "read\nrm", {}, 'unknown tool "read\\nrm"'),
]


@pytest.mark.anyio
@pytest.mark.parametrize("row", [r.param() for r in ARGUMENT_ROWS])
async def test_hostile_arguments(root: Path, row: Row) -> None:
    result = await run_in_process(row, root)
    if result.is_error and row.code is None and "out of range" not in result.text:
        assert result.error is not None
        assert result.error.code in ("INVALID_ARGUMENTS", "UNKNOWN_TOOL")


# -- a file that grows while it is read ------------------------------------------------


class GrowingWhileStreamed(LocalFileSystem):
    """The local backend, with a writer appending 2 MB after every step of a stream.

    A log file being written while the model reads it, made deterministic:
    the growth always outpaces the reader, whether the reader iterates or
    skips lines (``skip_lines``: the read tool counts the lines after its
    window that way).
    """

    def __init__(self, cwd: str, path: Path) -> None:
        super().__init__(cwd=cwd)
        self.path = path
        self.steps = 0

    def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        inner = super().stream_text(target)
        assert isinstance(inner, TextStream)
        return GrowingStream(inner, self.append)

    def append(self) -> None:
        self.steps += 1
        if self.steps > 30:
            raise AssertionError("the read is chasing a growing file forever")
        with open(self.path, "ab") as fh:
            fh.write(b"more\n" * 400_000)


class GrowingStream(SupportsSkipLines):
    """A stream that calls ``grow`` after each chunk it yields and each skip."""

    def __init__(self, inner: TextStream, grow: Callable[[], None]) -> None:
        self.inner = inner
        self.grow = grow

    def __aiter__(self) -> GrowingStream:
        return self

    async def __anext__(self) -> str:
        chunk = await self.inner.__anext__()
        self.grow()
        return chunk

    async def skip_lines(self, count: int | None = None) -> SkippedLines:
        skipped = await self.inner.skip_lines(count)
        self.grow()
        return skipped

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.anyio
async def test_hostile_read_of_a_growing_file_ends_at_its_size_when_opened(root: Path) -> None:
    path = root / "build.log"
    path.write_bytes(b"line\n" * 500_000)  # 2.5 MB, streamed (threshold 1 byte)
    fs = GrowingWhileStreamed(str(root), path)
    toolfs = ToolFs(fs, config={"read_stream_min_size": 1})
    with anyio.fail_after(20):
        result = await toolfs.execute("read", {"file_path": "build.log", "limit": 1})
    assert result.text == envelope(
        f"{root}/build.log", "1: line\n\n(Showing lines 1-1 of 500000. Use offset=2 to continue.)"
    )


@pytest.mark.parametrize("tool", ["read", "edit", "write"])
def test_hostile_proc_kmsg_a_regular_file_whose_read_blocks_never_hangs(
    forkserver: ForkServer, tmp_path: Path, tool: str
) -> None:
    """``/proc/kmsg`` is a "regular" file of size 0 whose read waits for kernel messages.

    The answer depends on the machine (a container may mask it with
    ``/dev/null``), so only "returns within 2 s, one line" is asserted.
    """
    args: dict[str, Any] = {"file_path": "/proc/kmsg"}
    if tool == "edit":
        args.update(old_string="a", new_string="b")
    elif tool == "write":
        args.update(content="x")
    params = {"cwd": str(tmp_path), "policy": False, "guard": 2.0, "calls": [[tool, args]]}
    (report,) = forkserver.run("tool_calls", params, timeout=6.0)
    assert report["status"] == "exited", f"the call blocked or crashed: {report!r}"
    (result,) = report["messages"][-1]["result"]["results"]
    assert not result.get("timeout"), "the call did not return within 2 seconds"
    if result["is_error"]:
        assert "\n" not in result["text"] and result["code"] != "TOOL_FAILURE", result
    print(f"\n/proc/kmsg {tool}: {result['text'][:100]!r}")
