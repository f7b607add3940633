"""The ``dsh-fs`` command end to end: every subcommand run as a real subprocess.

The stack is assembled from the installed entry points (``local`` backend,
``policy`` plugin), exactly as a user's shell would get it. Each test works
in its own ``tmp_path`` workspace (``--cwd``).

Kept as one file: the helpers that run the command and read its output are
shared by every subcommand's tests, which read in the order of the guide
(docs/using/cli.md).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

TIMEOUT = 60
# The workspace installs dsh-tool-fs-search, -patch and -editor: their tools follow the four.
TOOL_NAMES = [
    "list",
    "read",
    "write",
    "edit",
    "apply_patch",
    "glob",
    "grep",
    "memory",
    "str_replace_based_edit_tool",
]
LIST_SECTION = (
    "Use the list tool — not shell ls — to see what a directory contains. It returns the direct "
    "children of one directory, files and subdirectories alike, and defaults to the session "
    "workspace, so it is the first step for orienting in an unfamiliar project. When a result is "
    "capped, continue with the offset named in its footer."
)
RESULT_KEYS = ["is_error", "text", "value", "error", "meta"]


def dsh_fs(
    *args: str, cwd: Path | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``dsh-fs ARGS`` (``--cwd`` added when given) and capture its output."""
    command = [sys.executable, "-m", "dsh_tool_fs.cli", *args]
    if cwd is not None:
        command += ["--cwd", str(cwd)]
    return subprocess.run(
        command, input=stdin if stdin is not None else b"", capture_output=True, timeout=TIMEOUT
    )


def out(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode("utf-8")


def session_lines(proc: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    lines = out(proc).splitlines()
    return [json.loads(line) for line in lines]


def requests(*items: Any) -> bytes:
    return "".join(
        (item if isinstance(item, str) else json.dumps(item)) + "\n" for item in items
    ).encode()


# -- tools ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def raw_tools() -> dict[str, Any]:
    proc = dsh_fs("tools")
    assert proc.returncode == 0, proc.stderr
    document: dict[str, Any] = json.loads(out(proc))
    return document


def test_tools_prints_every_installed_raw_definition_and_the_instructions(
    raw_tools: dict[str, Any],
) -> None:
    document = raw_tools
    assert list(document) == ["tools", "instructions"]
    assert [tool["name"] for tool in document["tools"]] == TOOL_NAMES
    for tool in document["tools"]:
        assert list(tool) == ["name", "description", "parameters", "concurrency_safe"]
        assert tool["parameters"]["additionalProperties"] is False
    safe = [True, True, False, False, False, True, True, False, False]
    assert [tool["concurrency_safe"] for tool in document["tools"]] == safe
    sections = document["instructions"].split("\n\n")
    assert len(sections) == len(TOOL_NAMES)
    assert sections[0] == LIST_SECTION
    assert sections[1].startswith("Use the read tool — not shell commands like cat —")


@pytest.mark.parametrize(
    ("fmt", "keys", "schema_key"),
    [
        ("openai", ["type", "function"], "parameters"),
        ("openai-responses", ["type", "name", "description", "parameters", "strict"], "parameters"),
        ("anthropic", ["name", "description", "input_schema"], "input_schema"),
        ("mcp", ["name", "title", "description", "inputSchema", "annotations"], "inputSchema"),
    ],
)
def test_tools_in_each_wire_format_carries_the_same_schemas(
    raw_tools: dict[str, Any], fmt: str, keys: list[str], schema_key: str
) -> None:
    raw = raw_tools["tools"]
    # Claude's tools are built-in types in the anthropic format unless --no-builtins
    # (packages/dsh-tool-fs-editor/tests/test_definitions.py pins the built-in form).
    builtins = ["--no-builtins"] if fmt == "anthropic" else []
    proc = dsh_fs("tools", "--format", fmt, *builtins)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(out(proc))
    tools = document["tools"]
    assert [list(tool) for tool in tools] == [keys] * len(TOOL_NAMES)
    if fmt == "openai":
        assert all(tool["type"] == "function" for tool in tools)
        flat = [tool["function"] for tool in tools]
        assert [list(f) for f in flat] == [["name", "description", "parameters"]] * len(TOOL_NAMES)
    else:
        flat = tools
    schemas = [f[schema_key] for f in flat]
    assert [f["name"] for f in flat] == TOOL_NAMES
    assert [f["description"] for f in flat] == [tool["description"] for tool in raw]
    assert schemas == [tool["parameters"] for tool in raw]
    assert document["instructions"].startswith(LIST_SECTION)
    if fmt == "openai-responses":
        assert all(tool["type"] == "function" and tool["strict"] is False for tool in tools)


def test_tools_format_mcp_prints_titles_and_annotations() -> None:
    proc = dsh_fs("tools", "--format", "mcp")
    assert proc.returncode == 0, proc.stderr
    tools = json.loads(out(proc))["tools"]
    assert [(tool["title"], tool["annotations"]) for tool in tools] == [
        ("List directory", {"readOnlyHint": True, "openWorldHint": False}),
        ("Read file", {"readOnlyHint": True, "openWorldHint": False}),
        (
            "Write file",
            {
                "readOnlyHint": False,
                "destructiveHint": True,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        ),
        (
            "Edit file",
            {
                "readOnlyHint": False,
                "destructiveHint": True,
                "idempotentHint": False,
                "openWorldHint": False,
            },
        ),
        (
            "Apply patch",
            {
                "readOnlyHint": False,
                "destructiveHint": True,
                "idempotentHint": False,
                "openWorldHint": False,
            },
        ),
        ("Find files", {"readOnlyHint": True, "openWorldHint": False}),
        ("Search file contents", {"readOnlyHint": True, "openWorldHint": False}),
        ("Memory", EDITS),
        ("Text editor", EDITS),
    ]


EDITS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": False,
}


# -- call -------------------------------------------------------------------------------------


def test_call_list_prints_the_model_projection_and_exits_0(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "a.txt").write_text("a\n")
    proc = dsh_fs("call", "list", "{}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out(proc) == (
        f"<path>{tmp_path}</path>\n<type>directory</type>\n<content>\nsrc/\na.txt\n\n"
        "(2 entries: 1 directory, 1 file)\n</content>\n"
    )


def test_the_readme_main_job_lists_the_packages() -> None:
    """README "Quick start": the list tool on this repository's packages/ directory."""
    root = Path(__file__).resolve().parent.parent
    proc = dsh_fs("call", "list", "-", cwd=root, stdin=b'{"path": "packages"}')
    assert proc.returncode == 0, proc.stderr
    assert out(proc) == (
        f"<path>{root}/packages</path>\n<type>directory</type>\n<content>\n"
        "dsh-fs/\ndsh-fs-langchain/\ndsh-fs-local/\ndsh-fs-memory/\ndsh-fs-openai-agents/\n"
        "dsh-fs-policy/\ndsh-fs-pydantic-ai/\ndsh-fs-sftp/\ndsh-tool-fs/\ndsh-tool-fs-editor/\n"
        "dsh-tool-fs-patch/\ndsh-tool-fs-search/\n\n(12 entries: 12 directories, 0 files)\n"
        "</content>\n"
    )


def test_call_without_arguments_passes_an_empty_object(tmp_path: Path) -> None:
    proc = dsh_fs("call", "list", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out(proc).endswith("(Empty directory)\n</content>\n")


def test_call_read_of_a_missing_file_prints_the_error_and_exits_1(tmp_path: Path) -> None:
    proc = dsh_fs("call", "read", '{"file_path": "nope.txt"}', cwd=tmp_path)
    assert proc.returncode == 1
    assert out(proc) == f'Error: cannot read "{tmp_path}/nope.txt": not found\n'


def test_call_with_arguments_that_are_not_json_is_bad_usage(tmp_path: Path) -> None:
    proc = dsh_fs("call", "read", "{file_path: a.txt}", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert b"dsh-fs: ARGS is not valid JSON: Expecting property name" in proc.stderr


def test_call_with_an_unknown_backend_names_the_installed_ones(tmp_path: Path) -> None:
    proc = dsh_fs("call", "list", "{}", "--backend", "s3", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert (
        b'dsh-fs: unknown backend "s3" (installed dsh_fs.backends: local, memory, sftp)'
        in proc.stderr
    )


def test_call_json_prints_the_whole_result_as_one_object(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    proc = dsh_fs("call", "read", '{"file_path": "a.txt", "limit": 1}', "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out(proc).count("\n") == 1
    result = json.loads(out(proc))
    assert list(result) == RESULT_KEYS
    assert result["value"] == {
        "path": f"{tmp_path}/a.txt",
        "offset": 1,
        "lines": [{"number": 1, "text": "one"}],
        "totalLines": 2,
    }
    assert result["error"] is None


def test_call_write_creates_a_file(tmp_path: Path) -> None:
    args = json.dumps({"file_path": "notes/todo.txt", "content": "ship it\n"})
    proc = dsh_fs("call", "write", args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out(proc) == (
        f"<path>{tmp_path}/notes/todo.txt</path>\n<type>file</type>\n<content>\n"
        "Created file\n</content>\n"
    )
    assert (tmp_path / "notes" / "todo.txt").read_text() == "ship it\n"


def test_call_edit_of_an_unread_file_is_refused_by_the_policy(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    args = json.dumps({"file_path": "a.txt", "old_string": "old", "new_string": "new"})
    proc = dsh_fs("call", "edit", args, cwd=tmp_path)
    assert proc.returncode == 1
    assert out(proc) == (
        f'Error: edit requires reading "{tmp_path}/a.txt" first — read the file, then retry\n'
    )
    assert (tmp_path / "a.txt").read_text() == "old\n"


def test_call_edit_with_no_policy_is_unguarded(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    args = json.dumps({"file_path": "a.txt", "old_string": "old", "new_string": "new"})
    proc = dsh_fs("call", "edit", args, "--no-policy", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out(proc) == f"The file {tmp_path}/a.txt has been updated successfully.\n"
    assert (tmp_path / "a.txt").read_text() == "new\n"


def test_call_on_the_memory_backend(tmp_path: Path) -> None:
    proc = dsh_fs("call", "list", '{"path": "/"}', "--backend", "memory")
    assert proc.returncode == 0, proc.stderr
    assert out(proc) == (
        "<path>/</path>\n<type>directory</type>\n<content>\n(Empty directory)\n</content>\n"
    )


def test_logs_go_to_stderr_never_stdout(tmp_path: Path) -> None:
    proc = dsh_fs("call", "list", "{}", "--log-level", "DEBUG", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out(proc) == (
        f"<path>{tmp_path}</path>\n<type>directory</type>\n<content>\n(Empty directory)\n"
        "</content>\n"
    )


# -- undecodable names ------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses non-UTF-8 file names")
def test_undecodable_names_round_trip_through_json_output(tmp_path: Path) -> None:
    os.close(os.open(os.path.join(os.fsencode(tmp_path), b"bad\xff.txt"), os.O_CREAT | os.O_WRONLY))
    proc = dsh_fs("call", "list", "{}", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert b"bad\\udcff.txt" in proc.stdout  # a JSON escape: the line stays valid UTF-8
    result = json.loads(out(proc))
    assert result["value"]["entries"] == [{"name": "bad\udcff.txt", "type": "file"}]
    assert 'bad\\udcff.txt"\n' in result["text"]  # the name rule quotes it for the model

    read = dsh_fs("call", "read", json.dumps({"file_path": "bad\udcff.txt"}), cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    assert read.stdout.endswith(b"(End of file - total 0 lines)\n</content>\n")


def test_plain_output_spells_an_undecodable_byte_as_the_list_tool_does(tmp_path: Path) -> None:
    proc = dsh_fs("call", "read", json.dumps({"file_path": "x\udcfe"}), cwd=tmp_path)
    assert proc.returncode == 1
    # Error texts spell an undecodable byte as the list tool's quoted names do.
    expected = f'Error: cannot read "{tmp_path}/x\\udcfe": not found\n'.encode()
    assert proc.stdout == expected


# -- session ----------------------------------------------------------------------------------


def test_session_read_authorizes_a_later_edit_and_an_unread_edit_fails(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\nworld\n")
    (tmp_path / "b.txt").write_text("untouched\n")
    stdin = requests(
        {"tool": "read", "args": {"file_path": "a.txt"}},
        {
            "tool": "edit",
            "args": {"file_path": "a.txt", "old_string": "hello", "new_string": "bye"},
        },
        {
            "tool": "edit",
            "args": {"file_path": "b.txt", "old_string": "untouched", "new_string": "x"},
        },
        {
            "tool": "edit",
            "args": {"file_path": "a.txt", "old_string": "world", "new_string": "all"},
        },
    )
    proc = dsh_fs("session", cwd=tmp_path, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    read, edit, unread, second = session_lines(proc)
    assert [list(line) for line in (read, edit, unread, second)] == [RESULT_KEYS] * 4
    assert read["is_error"] is False
    assert read["value"]["lines"] == [
        {"number": 1, "text": "hello"},
        {"number": 2, "text": "world"},
    ]
    assert edit["is_error"] is False
    assert edit["text"] == f"The file {tmp_path}/a.txt has been updated successfully."
    assert unread["is_error"] is True
    assert unread["text"] == (
        f'Error: edit requires reading "{tmp_path}/b.txt" first — read the file, then retry'
    )
    assert unread["error"]["code"] == "FS_NOT_OBSERVED"
    assert second["is_error"] is False  # its own edit keeps the session's observation fresh
    assert (tmp_path / "a.txt").read_text() == "bye\nall\n"
    assert (tmp_path / "b.txt").read_text() == "untouched\n"


def test_session_answers_a_malformed_line_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    stdin = requests(
        {"tool": "read", "args": {"file_path": "a.txt"}},
        "this is not json",
        {"tool": "edit", "args": {"file_path": "a.txt", "old_string": "one", "new_string": "two"}},
    )
    proc = dsh_fs("session", cwd=tmp_path, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    read, malformed, edit = session_lines(proc)
    assert read["is_error"] is False
    message = "request is not valid JSON: Expecting value (line 1 column 1)"
    assert malformed == {
        "is_error": True,
        "text": f"Error: {message}",
        "value": None,
        "error": {"message": message, "name": "SessionRequestError", "code": "INVALID_REQUEST"},
        "meta": None,
    }
    assert edit["is_error"] is False
    assert (tmp_path / "a.txt").read_text() == "two\n"


def test_session_skips_blank_lines_and_ends_cleanly_at_eof(tmp_path: Path) -> None:
    stdin = b'\n  \n{"tool": "list"}\n\n{"tool": "list", "args": {}}'  # no final newline
    proc = dsh_fs("session", cwd=tmp_path, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    assert [line["is_error"] for line in session_lines(proc)] == [False, False]


def test_session_answers_each_line_before_reading_the_next(tmp_path: Path) -> None:
    """A client may wait for each answer before sending its next request."""
    command = [sys.executable, "-m", "dsh_tool_fs.cli", "session", "--cwd", str(tmp_path)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for path in ("a.txt", "b.txt"):
                request = {"tool": "write", "args": {"file_path": path, "content": path}}
                proc.stdin.write(json.dumps(request).encode() + b"\n")
                proc.stdin.flush()
                answer = json.loads(proc.stdout.readline())
                assert answer["is_error"] is False
                assert (tmp_path / path).read_text() == path
            proc.stdin.close()
            assert proc.wait(timeout=TIMEOUT) == 0
        finally:
            proc.kill()


def test_one_call_imports_only_the_tool_it_calls(tmp_path: Path) -> None:
    """``call read`` offers the search tools' names but never imports their modules:
    a one-shot call pays for the tool it runs (start-up, bench S1)."""
    (tmp_path / "a.txt").write_text("x\n")
    argv = ["call", "read", '{"file_path": "a.txt"}', "--cwd", str(tmp_path)]
    probe = (
        "import sys; from dsh_tool_fs.cli import main; "
        f"code = main({argv!r}); "
        "print(sorted(m for m in sys.modules if m.startswith('dsh_tool_fs_search'))); "
        "sys.exit(code)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, timeout=TIMEOUT, check=True
    )
    assert proc.stdout.decode().splitlines()[-1] == "[]"


def test_call_still_refuses_an_unknown_name_in_tools(tmp_path: Path) -> None:
    proc = dsh_fs("call", "read", '{"file_path": "a.txt"}', "--tools", "read,bash", cwd=tmp_path)
    assert proc.returncode == 2
    assert b'--tools: unknown tool "bash"' in proc.stderr


def test_call_of_a_tool_left_out_by_tools_is_unknown(tmp_path: Path) -> None:
    proc = dsh_fs("call", "grep", '{"pattern": "x"}', "--tools", "read,glob", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == b'dsh-fs: unknown tool "grep" (tools: read, glob)\n'


# -- stopping ---------------------------------------------------------------------------------

STOP_BOUND = 10.0
"""Seconds from SIGINT to the exit, interpreter teardown included. Before the fix the session
waited for the next input line in a worker thread: it never exited."""


def test_sigint_stops_a_session_waiting_on_an_open_pipe_with_status_130(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "dsh_tool_fs.cli", "session", "--cwd", str(tmp_path)]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            proc.stdin.write(b'{"tool": "list"}\n')
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["is_error"] is False  # now waiting
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=STOP_BOUND) == 130
            assert proc.stderr.read() == b""  # no traceback, no "Fatal Python error"
        finally:
            proc.kill()


# A fork-safe launcher: a new session whose controlling terminal is the pty on fd 0, so the
# terminal's ^C (ISIG) sends SIGINT to the command as pressing Ctrl-C in a shell would.
ON_A_TERMINAL = (
    "import fcntl, os, sys, termios; os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def test_ctrl_c_on_a_terminal_stops_a_session_at_once_with_status_130(tmp_path: Path) -> None:
    """Before, the first Ctrl-C left the session waiting in a worker thread for a line, and
    a second one aborted Python (exit 134, ``_enter_buffered_busy``)."""
    controller, terminal = os.openpty()
    argv = [sys.executable, "-c", ON_A_TERMINAL, "-m", "dsh_tool_fs.cli", "session"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdin=terminal, stdout=terminal, stderr=terminal)
    os.close(terminal)
    try:
        os.write(controller, b'{"tool": "list"}\n')
        seen, deadline = b"", time.monotonic() + TIMEOUT
        while b'"is_error"' not in seen:  # answered: the session now waits for a line
            assert time.monotonic() < deadline, seen
            if select.select([controller], [], [], 1)[0]:
                seen += os.read(controller, 4096)
        os.write(controller, b"\x03")  # Ctrl-C, through the terminal's line discipline
        assert proc.wait(timeout=STOP_BOUND) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(controller)
