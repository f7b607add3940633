"""``dsh-fs mcp`` driven by the official MCP client, over stdio and in memory.

The stdio test starts the real command as a subprocess, exactly as Claude
Desktop or Cursor would; the in-memory test serves two client connections
from one server object to show that each connection is its own observation
owner.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from dsh_tool_fs import ToolFs
from dsh_tool_fs.mcp_server import InterruptibleStdin, build_server
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.memory import create_client_server_memory_streams

TIMEOUT = 60
# With dsh-tool-fs-search, -patch and -editor installed (as in the workspace) the server
# offers their tools after the four.
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


def expected_stack(workspace: Path | None = None) -> ToolFs:
    """The stack the server assembles (contained to ``workspace``), built in-process."""
    cwd = None if workspace is None else str(workspace)
    return ToolFs.from_entry_points(backend="local", plugins=("policy",), cwd=cwd)


def server_parameters(workspace: Path, *extra: str) -> StdioServerParameters:
    # The client passes only a minimal environment to the server; keep an
    # explicit PYTHONPATH (if any) so the server imports what this test imports.
    env = {key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ}
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "dsh_tool_fs.cli", "mcp", "--cwd", str(workspace), *extra],
        env=env,
    )


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


@pytest.mark.anyio
async def test_mcp_server_over_stdio_lists_reads_edits_and_refuses_an_unread_edit(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("hello\nworld\n")
    (tmp_path / "b.txt").write_text("untouched\n")
    stack = expected_stack()
    stray: list[Any] = []

    async def on_message(message: Any) -> None:
        stray.append(message)  # anything that is not a protocol message ends up here

    with anyio.fail_after(TIMEOUT):
        async with (
            stdio_client(server_parameters(tmp_path, "--log-level", "DEBUG")) as (read, write),
            ClientSession(read, write, message_handler=on_message) as client,
        ):
            init = await client.initialize()
            assert init.server_info.name == "dsh-fs"
            assert init.instructions == stack.instructions
            assert init.instructions.startswith("Use the list tool — not shell ls —")

            listed = await client.list_tools()
            assert [tool.name for tool in listed.tools] == TOOL_NAMES
            for tool, definition in zip(listed.tools, stack.definitions, strict=True):
                assert tool.description == definition.description
                assert tool.input_schema == definition.parameters
            assert [tool.title for tool in listed.tools] == [
                "List directory",
                "Read file",
                "Write file",
                "Edit file",
                "Apply patch",
                "Find files",
                "Search file contents",
                "Memory",
                "Text editor",
            ]
            assert [tool.annotations for tool in listed.tools] == [
                types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
                types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
                types.ToolAnnotations(
                    read_only_hint=False,
                    destructive_hint=True,
                    idempotent_hint=True,
                    open_world_hint=False,
                ),
                types.ToolAnnotations(
                    read_only_hint=False,
                    destructive_hint=True,
                    idempotent_hint=False,
                    open_world_hint=False,
                ),
                types.ToolAnnotations(  # apply_patch: as edit
                    read_only_hint=False,
                    destructive_hint=True,
                    idempotent_hint=False,
                    open_world_hint=False,
                ),
                types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
                types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
                *[
                    types.ToolAnnotations(
                        read_only_hint=False,
                        destructive_hint=True,
                        idempotent_hint=False,
                        open_world_hint=False,
                    )
                ]
                * 2,
            ]

            found = await client.call_tool("glob", {"pattern": "*.txt"})
            assert found.is_error is False
            assert text_of(found).startswith(f"<path>{tmp_path}</path>\n<type>glob</type>\n")
            assert text_of(found).endswith("\n\n(2 files)\n</content>")
            matched = await client.call_tool("grep", {"pattern": "^wor"})
            assert text_of(matched) == (
                f"<path>{tmp_path}</path>\n<type>grep</type>\n<content>\n"
                "a.txt\n2: world\n\n(1 match in 1 file)\n</content>"
            )

            read_result = await client.call_tool("read", {"file_path": "a.txt"})
            assert read_result.is_error is False
            assert text_of(read_result) == (
                f"<path>{tmp_path}/a.txt</path>\n<type>file</type>\n<content>\n"
                "1: hello\n2: world\n\n(End of file - total 2 lines)\n</content>"
            )

            edit_args = {"file_path": "a.txt", "old_string": "hello", "new_string": "bye"}
            edited = await client.call_tool("edit", edit_args)
            assert edited.is_error is False
            assert text_of(edited) == f"The file {tmp_path}/a.txt has been updated successfully."
            assert (tmp_path / "a.txt").read_text() == "bye\nworld\n"

            unread_args = {"file_path": "b.txt", "old_string": "untouched", "new_string": "x"}
            refused = await client.call_tool("edit", unread_args)
            assert refused.is_error is True
            assert text_of(refused) == (
                f'Error: edit requires reading "{tmp_path}/b.txt" first — read the file, then retry'
            )
            assert (tmp_path / "b.txt").read_text() == "untouched\n"

            bad = await client.call_tool("read", {"file_path": "a.txt", "limit": 0})
            assert bad.is_error is True
            assert text_of(bad) == "Error: limit must be a positive integer"

            unknown = await client.call_tool("bash", {})
            assert unknown.is_error is True
            assert text_of(unknown) == 'Error: unknown tool "bash"'

            listing = await client.call_tool("list")  # no arguments at all
            assert listing.is_error is False
            assert text_of(listing).endswith(
                "a.txt\nb.txt\n\n(2 entries: 0 directories, 2 files)\n</content>"
            )
    assert stray == []


@pytest.mark.anyio
async def test_each_client_connection_is_its_own_observation_owner(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    server = build_server(expected_stack(tmp_path), cwd=str(tmp_path))
    edit_args = {"file_path": "a.txt", "old_string": "one", "new_string": "two"}

    with anyio.fail_after(TIMEOUT):
        async with (
            create_client_server_memory_streams() as (first_client, first_server),
            create_client_server_memory_streams() as (second_client, second_server),
            anyio.create_task_group() as tg,
        ):
            for streams in (first_server, second_server):
                tg.start_soon(
                    server.run, streams[0], streams[1], server.create_initialization_options()
                )
            async with (
                ClientSession(*first_client) as first,
                ClientSession(*second_client) as second,
            ):
                await first.initialize()
                await second.initialize()
                assert (await first.call_tool("read", {"file_path": "a.txt"})).is_error is False

                refused = await second.call_tool("edit", edit_args)
                assert text_of(refused) == (
                    f'Error: edit requires reading "{tmp_path}/a.txt" first'
                    " — read the file, then retry"
                )
                edited = await first.call_tool("edit", edit_args)
                assert edited.is_error is False
            tg.cancel_scope.cancel()
    assert (tmp_path / "a.txt").read_text() == "two\n"


@pytest.fixture
def undecodable_workspace(tmp_path: Path) -> Path:
    """``<tmp>/w\\xff`` (not valid UTF-8) holding ``a.txt`` = ``one``."""
    workspace = tmp_path / os.fsdecode(b"w\xff")
    workspace.mkdir()
    (workspace / "a.txt").write_bytes(b"one\n")
    return workspace


@pytest.mark.anyio
@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses non-UTF-8 file names")
async def test_texts_naming_an_undecodable_path_reach_the_client_escaped(
    undecodable_workspace: Path,
) -> None:
    """JSON-RPC must be UTF-8: a lone surrogate in a result text is sent as its escape."""
    shown = f"{undecodable_workspace.parent}/w\\udcff"  # how the texts spell the workspace
    edit_args = {"file_path": "a.txt", "old_string": "one", "new_string": "two"}

    with anyio.fail_after(TIMEOUT):
        async with (
            stdio_client(server_parameters(undecodable_workspace)) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            refused = await client.call_tool("edit", edit_args)
            assert refused.is_error is True
            assert text_of(refused) == (
                f'Error: edit requires reading "{shown}/a.txt" first — read the file, then retry'
            )
            seen = await client.call_tool("read", {"file_path": "a.txt"})
            assert text_of(seen).startswith(f'<path>"{shown}/a.txt"</path>\n')
            edited = await client.call_tool("edit", edit_args)
            assert text_of(edited) == f"The file {shown}/a.txt has been updated successfully."
    assert (undecodable_workspace / "a.txt").read_bytes() == b"two\n"


# -- started by hand -------------------------------------------------------------------------

STOP_BOUND = 10.0
"""Seconds from Ctrl-C to the exit, interpreter teardown included (about 1 s on a loaded
machine). Before the fix the server waited for the next input line: it never exited."""

ON_A_TERMINAL = (
    "dsh-fs mcp: serving MCP on stdio (JSON-RPC on stdin and stdout); an MCP client starts "
    "this command itself, see https://github.com/dsh-fs/dsh-fs/blob/main/docs/using/mcp-server.md "
    "(Ctrl-C stops it)"
)

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

# A fork-safe launcher: a new session whose controlling terminal is the pty on fd 0, so the
# terminal's ^C (ISIG) sends SIGINT to the server as pressing Ctrl-C in a shell would.
ON_A_TERMINAL_LAUNCHER = (
    "import fcntl, os, sys, termios; os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def _read_until(fd: int, marker: bytes, deadline: float) -> bytes:
    seen = b""
    while marker not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no {marker!r} from the server; it wrote {seen!r}"
        readable, _, _ = select.select([fd], [], [], remaining)
        if readable:
            seen += os.read(fd, 4096)
    return seen


def test_ctrl_c_on_a_terminal_stops_the_server_promptly_with_status_130(tmp_path: Path) -> None:
    controller, terminal = os.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", ON_A_TERMINAL_LAUNCHER, "-m", "dsh_tool_fs.cli", "mcp"],
            cwd=tmp_path,
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
        )
        os.close(terminal)
        try:
            shown = _read_until(controller, b"(Ctrl-C stops it)", time.monotonic() + TIMEOUT)
            assert shown.decode().strip() == ON_A_TERMINAL
            # A request typed at the terminal, answered: the server now waits for the next line.
            os.write(controller, json.dumps(PING).encode() + b"\n")
            _read_until(controller, b'"result"', time.monotonic() + TIMEOUT)
            pressed = time.monotonic()
            os.write(controller, b"\x03")  # Ctrl-C, through the terminal's line discipline
            status = proc.wait(timeout=STOP_BOUND)
            assert time.monotonic() - pressed < STOP_BOUND
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert status == 130
    finally:
        os.close(controller)


def test_sigint_stops_a_server_waiting_on_a_pipe_with_status_130(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dsh_tool_fs.cli", "mcp", "--cwd", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(PING).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1  # serving, now waiting for input
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=STOP_BOUND) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    assert proc.stderr is not None
    assert proc.stderr.read() == b""  # stdin is no terminal: no line for a human
    proc.stderr.close()


@pytest.mark.anyio
async def test_interruptible_stdin_reads_utf8_lines_and_a_last_line_without_newline() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b'{"a": 1}\n{"b": "\xc3\xa9\xff"}\nlast')
    os.close(write_end)
    try:
        lines = [line async for line in InterruptibleStdin(read_end)]
    finally:
        os.close(read_end)
    assert lines == ['{"a": 1}\n', '{"b": "\u00e9\ufffd"}\n', "last"]


@pytest.mark.anyio
async def test_interruptible_stdin_reads_a_line_longer_than_the_pipe_whole() -> None:
    read_end, write_end = os.pipe()
    long_line = b"x" * (1 << 20) + b"\n"

    def client() -> None:
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(long_line + b"short\n")

    writer = threading.Thread(target=client)
    writer.start()
    try:
        lines = [line async for line in InterruptibleStdin(read_end)]
    finally:
        writer.join()
        os.close(read_end)
    assert lines == [long_line.decode(), "short\n"]


@pytest.mark.anyio
async def test_interruptible_stdin_gives_up_waiting_when_cancelled() -> None:
    read_end, write_end = os.pipe()  # open, and silent: a client that sends nothing yet
    try:
        stdin = InterruptibleStdin(read_end)
        started = time.monotonic()
        with anyio.move_on_after(0.2) as scope:
            await stdin.readline()
        assert scope.cancelled_caught
        # A reader that ignored the cancellation would wait for input forever.
        assert time.monotonic() - started < STOP_BOUND
        os.write(write_end, b"after\n")
        assert await stdin.readline() == "after\n"  # nothing was lost by the cancellation
    finally:
        os.close(read_end)
        os.close(write_end)
