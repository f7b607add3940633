"""``dsh-fs mcp`` where agents really run: over Streamable HTTP with a token, with the
client's roots, cancelled by the client, reporting progress — each driven by the official
SDK client against the real command started as a subprocess.

Calls that must be in flight when the client cancels them run on a ``slow`` backend and
plugin, installed for the server process through entry points (:func:`slow_site`): its
``list_dir`` of a directory named ``slow``, and its edit intent for a file named
``slow.txt``, write a marker file and wait, so that a test cancels exactly there.

Kept as one file: the server started over both transports, the slow stack and
the client helpers are shared by every test, most of which run over stdio and
HTTP alike.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from dsh_tool_fs.tools import installed_tools
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

TIMEOUT = 60
TOKEN = "s3cret-for-tests"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

SLOW_STACK = '''
"""A backend and a plugin that wait where a test needs a call in flight."""
import os

import anyio
from dsh_fs import hookimpl
from dsh_fs_local import LocalFileSystem


def entered(name):
    open(os.path.join(os.environ["DSH_FS_TEST_MARKERS"], name), "w").close()


class SlowFileSystem(LocalFileSystem):
    """Listing ``slow/`` waits. Search goes through the seam (no held directory for
    the native path), and lists directories with ``list_dirs`` or ``list_dir``."""

    async def hold_directory(self, target, *, verb):
        return None

    async def list_dir(self, target, *, stat=False):
        await self._wait_at(target)
        return await super().list_dir(target, stat=stat)

    async def list_dirs(self, targets, *, stat=False):
        for target in targets:
            await self._wait_at(target)
        return await super().list_dirs(targets, stat=stat)

    async def _wait_at(self, target):
        if target.display_path.rstrip("/").endswith("/slow"):
            entered("list_dir")
            await anyio.sleep(120)


class SlowPlugin:
    @hookimpl(tryfirst=True)
    def fs_edit_intent(self, target, actor):
        if target.display_path.endswith("/slow.txt"):
            return self._wait()
        return None

    async def _wait(self):
        entered("edit_intent")
        await anyio.sleep(120)
'''


@pytest.fixture
def slow_site(tmp_path: Path) -> Path:
    """A directory for ``PYTHONPATH`` holding the ``slow`` backend and plugin, with the
    entry points that make ``--backend slow --plugin slow`` find them."""
    site = tmp_path / "site"
    info = site / "dsh_fs_slow-0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_fs_slow.py").write_text(SLOW_STACK)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-fs-slow\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[dsh_fs.backends]\nslow = dsh_fs_slow:SlowFileSystem\n"
        "[dsh_fs.plugins]\nslow = dsh_fs_slow:SlowPlugin\n"
    )
    (tmp_path / "markers").mkdir()
    return site


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """``ws/`` holding ``a.txt`` (one), ``slow.txt`` (keep), ``slow/`` and ``src/`` with
    twelve files in three directories, each with the line ``needle 1``."""
    ws = tmp_path / "ws"
    (ws / "slow").mkdir(parents=True)
    (ws / "a.txt").write_text("one\n")
    (ws / "slow.txt").write_text("keep\n")
    (ws / "slow" / "x.txt").write_text("needle 1\n")
    for d in range(3):
        folder = ws / "src" / f"d{d}"
        folder.mkdir(parents=True)
        for f in range(4):
            (folder / f"f{f}.txt").write_text("needle 1\n")
    return Path(os.path.realpath(ws))


def server_env(tmp_path: Path, site: Path | None = None) -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "PYTHONPATH", "HOME") if key in os.environ}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env["DSH_FS_TEST_MARKERS"] = str(tmp_path / "markers")
    env["DSH_FS_MCP_TOKEN"] = TOKEN
    env["DSH_FS_SEARCH_NATIVE"] = "0"  # the seam path: its walk lists directories
    return env


async def wait_for_marker(tmp_path: Path, name: str) -> None:
    marker = tmp_path / "markers" / name
    with anyio.fail_after(TIMEOUT):
        while not marker.exists():  # noqa: ASYNC110 (another process writes it)
            await anyio.sleep(0.05)


def text_of(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


# -- the HTTP server as a subprocess -------------------------------------------------------------


class Served:
    """A running ``dsh-fs mcp --http``: its URL and what it wrote on stderr so far."""

    def __init__(self, proc: subprocess.Popen[bytes], url: str) -> None:
        self.proc = proc
        self.url = url
        self.log: list[str] = []

    def logged(self, text: str) -> bool:
        return any(text in line for line in list(self.log))

    async def wait_for_log_count(self, text: str, count: int) -> None:
        with anyio.fail_after(TIMEOUT):
            while sum(text in line for line in list(self.log)) < count:  # noqa: ASYNC110
                await anyio.sleep(0.05)

    async def wait_for_log(self, text: str) -> None:
        with anyio.fail_after(TIMEOUT):
            while not self.logged(text):  # noqa: ASYNC110 (a thread collects the log)
                await anyio.sleep(0.05)


@contextmanager
def http_server(
    workspace: Path, env: dict[str, str], *extra: str, stop: int = signal.SIGTERM
) -> Iterator[Served]:
    """``dsh-fs mcp --http 127.0.0.1:0`` (a free port), stopped with ``stop`` (SIGTERM) at
    the end: it must exit ``128 + stop`` without a traceback."""
    argv = [sys.executable, "-m", "dsh_tool_fs.cli", "mcp", "--http", "127.0.0.1:0"]
    argv += ["--cwd", str(workspace), "--log-level", "INFO", *extra]
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    earlier: list[str] = []
    while "serving MCP over Streamable HTTP at" not in (line := proc.stderr.readline().decode()):
        assert line, "".join(earlier)  # the server ended before serving
        earlier.append(line)
    assert " at http://127.0.0.1:" in line, line
    served = Served(proc, line.split(" at ")[1].split(" ")[0])
    served.log += [*earlier, line]

    def collect() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            served.log.append(line.decode(errors="replace"))

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    try:
        yield served
    finally:
        proc.send_signal(stop)
        try:
            status = proc.wait(timeout=TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        reader.join(timeout=TIMEOUT)
    assert status == 128 + stop, "".join(served.log)
    assert not served.logged("Traceback"), "".join(served.log)


@asynccontextmanager
async def http_client(url: str, **options: Any) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, **options) as client,
    ):
        await client.initialize()
        yield client


@asynccontextmanager
async def stdio_session(
    workspace: Path, env: dict[str, str], *extra: str, **options: Any
) -> AsyncIterator[ClientSession]:
    """A client of ``dsh-fs mcp`` over stdio; the server's stderr (``--log-level INFO``)
    goes to ``<tmp>/markers/../server.log``."""
    args = ["-m", "dsh_tool_fs.cli", "mcp", "--cwd", str(workspace), "--log-level", "INFO"]
    params = StdioServerParameters(command=sys.executable, args=[*args, *extra], env=env)
    log_path = Path(env["DSH_FS_TEST_MARKERS"]).parent / "server.log"
    with log_path.open("w") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write, **options) as client,
        ):
            await client.initialize()
            yield client


async def wait_for_server_log(tmp_path: Path, text: str) -> None:
    log = tmp_path / "server.log"
    with anyio.fail_after(TIMEOUT):
        while text not in log.read_text():  # noqa: ASYNC110 (the server writes it)
            await anyio.sleep(0.05)


# -- HTTP: the token, the origin, one Session per MCP session -----------------------------------


@pytest.mark.anyio
async def test_http_without_the_token_is_answered_401(workspace: Path, tmp_path: Path) -> None:
    with http_server(workspace, server_env(tmp_path)) as served:
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            bare = await http.post(served.url, json=INITIALIZE, headers=MCP_HEADERS)
            wrong = await http.post(
                served.url,
                json=INITIALIZE,
                headers={**MCP_HEADERS, "Authorization": "Bearer not-the-token"},
            )
            right = await http.post(
                served.url,
                json=INITIALIZE,
                headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"},
            )
    assert (bare.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert bare.json() == {"error": "invalid_token", "error_description": "Authentication required"}


@pytest.mark.anyio
async def test_http_refuses_a_request_from_another_origin(workspace: Path, tmp_path: Path) -> None:
    with http_server(workspace, server_env(tmp_path)) as served:
        own = served.url.removesuffix("/mcp")
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            evil = await http.post(
                served.url, json=INITIALIZE, headers={**headers, "Origin": "http://evil.example"}
            )
            same = await http.post(served.url, json=INITIALIZE, headers={**headers, "Origin": own})
    assert (evil.status_code, evil.text) == (403, "Invalid Origin header")
    assert same.status_code == 200


@pytest.mark.anyio
async def test_over_http_each_mcp_session_is_its_own_observation_owner(
    workspace: Path, tmp_path: Path
) -> None:
    edit = {"file_path": "a.txt", "old_string": "one", "new_string": "two"}
    back = {"file_path": "a.txt", "old_string": "two", "new_string": "one"}
    refused = f'Error: edit requires reading "{workspace}/a.txt" first — read the file, then retry'
    with http_server(workspace, server_env(tmp_path)) as served, anyio.fail_after(TIMEOUT):
        async with http_client(served.url) as first, http_client(served.url) as second:
            assert (await first.call_tool("read", {"file_path": "a.txt"})).is_error is False
            assert text_of(await second.call_tool("edit", edit)) == refused
            edited = await first.call_tool("edit", edit)
            assert text_of(edited) == f"The file {workspace}/a.txt has been updated successfully."
        async with http_client(served.url) as third:  # the first session ended (DELETE)
            assert text_of(await third.call_tool("edit", back)) == refused
    assert (workspace / "a.txt").read_text() == "two\n"


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # about 8 s of waiting: one loop
async def test_an_idle_mcp_session_ends_and_its_state_is_dropped(
    workspace: Path, tmp_path: Path, anyio_backend: str
) -> None:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    read = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "read", "arguments": {"file_path": "a.txt"}},
    }
    env = server_env(tmp_path)
    with http_server(workspace, env, "--idle-timeout", "1") as served, anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient(timeout=TIMEOUT, headers=headers) as http:
            opened = await http.post(served.url, json=INITIALIZE)
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
            await http.post(served.url, json=initialized, headers=session)
            answered = await http.post(served.url, json=read, headers=session)
            assert "1: one" in answered.text
            await served.wait_for_log(f"MCP session {session['Mcp-Session-Id']} ended")
            gone = await http.post(served.url, json=read, headers=session)
    assert gone.status_code == 404


@pytest.mark.anyio
async def test_ctrl_c_stops_the_http_server_with_status_130(
    workspace: Path, tmp_path: Path
) -> None:
    with http_server(workspace, server_env(tmp_path), stop=signal.SIGINT) as served:
        async with http_client(served.url) as client:
            assert (await client.call_tool("list")).is_error is False


@pytest.mark.anyio
async def test_sigterm_aborts_an_edit_in_flight_and_leaves_the_file_unchanged(
    workspace: Path, tmp_path: Path, slow_site: Path
) -> None:
    env = server_env(tmp_path, slow_site)
    edit = {"file_path": "slow.txt", "old_string": "keep", "new_string": "lost"}

    async def edit_until_the_server_stops(client: ClientSession) -> None:
        with contextlib.suppress(Exception):  # the connection ends with the server
            await client.call_tool("edit", edit)

    with http_server(workspace, env, "--plugin", "slow") as served, anyio.fail_after(TIMEOUT):
        async with http_client(served.url) as client, anyio.create_task_group() as tg:
            await client.call_tool("read", {"file_path": "slow.txt"})
            tg.start_soon(edit_until_the_server_stops, client)
            await wait_for_marker(tmp_path, "edit_intent")
            served.proc.send_signal(signal.SIGTERM)
            await served.wait_for_log("tools/call edit cancelled: Error: edit aborted")
            tg.cancel_scope.cancel()
    assert (workspace / "slow.txt").read_text() == "keep\n"


# -- cancellation and progress, over both transports -------------------------------------------


@asynccontextmanager
async def served_client(
    transport: str,
    workspace: Path,
    tmp_path: Path,
    env: dict[str, str],
    *extra: str,
    **options: Any,
) -> AsyncIterator[tuple[ClientSession, Callable[[str], Awaitable[None]]]]:
    """A client of the server over ``transport`` (``options``: the ``ClientSession``'s), and a
    wait for a line in the server's log."""
    if transport == "http":
        with http_server(workspace, env, *extra) as served:
            async with http_client(served.url, **options) as client:
                yield client, served.wait_for_log
    else:
        async with stdio_session(workspace, env, *extra, **options) as client:
            yield client, partial(wait_for_server_log, tmp_path)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_cancelled_grep_is_aborted_and_the_session_goes_on(
    workspace: Path, tmp_path: Path, slow_site: Path, transport: str
) -> None:
    env = server_env(tmp_path, slow_site)
    with anyio.fail_after(TIMEOUT):
        async with served_client(transport, workspace, tmp_path, env, "--backend", "slow") as (
            client,
            wait_for_log,
        ):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "grep", {"pattern": "ne+dle", "path": "slow"})
                await wait_for_marker(tmp_path, "list_dir")
                tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled
            await wait_for_log("tools/call grep cancelled: Error: grep aborted")
            found = await client.call_tool("grep", {"pattern": "ne+dle", "path": "src"})
            assert text_of(found).endswith("(12 matches in 12 files)\n</content>")


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_cancelled_edit_is_aborted_and_the_file_unchanged(
    workspace: Path, tmp_path: Path, slow_site: Path, transport: str
) -> None:
    env = server_env(tmp_path, slow_site)
    edit = {"file_path": "slow.txt", "old_string": "keep", "new_string": "lost"}
    with anyio.fail_after(TIMEOUT):
        async with served_client(transport, workspace, tmp_path, env, "--plugin", "slow") as (
            client,
            wait_for_log,
        ):
            await client.call_tool("read", {"file_path": "slow.txt"})
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "edit", edit)
                await wait_for_marker(tmp_path, "edit_intent")
                tg.cancel_scope.cancel()
            await wait_for_log("tools/call edit cancelled: Error: edit aborted")
            assert (await client.call_tool("read", {"file_path": "a.txt"})).is_error is False
    assert (workspace / "slow.txt").read_text() == "keep\n"


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("tool", ["glob", "grep"])
async def test_search_reports_progress_when_the_client_asks(
    workspace: Path, tmp_path: Path, transport: str, tool: str
) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    args = {"pattern": "*.txt"} if tool == "glob" else {"pattern": "ne+dle"}
    env = server_env(tmp_path)
    with anyio.fail_after(TIMEOUT):
        async with served_client(transport, workspace, tmp_path, env) as (client, _):
            result = await client.call_tool(tool, args, progress_callback=on_progress)
            assert result.is_error is False
            unasked = await client.call_tool(tool, args)  # no progressToken: answered as usual
            assert unasked.is_error is False
    assert len(seen) >= 1
    progress, _, message = seen[0]
    assert progress > 0
    assert message is not None and message.endswith("files found")
    assert [p for p, _, _ in seen] == sorted({p for p, _, _ in seen})  # strictly growing


# -- client roots -------------------------------------------------------------------------------


class Roots:
    """The roots a test client declares, changed as the test goes."""

    def __init__(self, *paths: Path) -> None:
        self.paths = list(paths)

    async def __call__(self, context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root.model_validate({"uri": p.as_uri()}) for p in self.paths]
        )


@pytest.fixture
def two_projects(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    for project in (first, second):
        project.mkdir()
        (project / f"{project.name}.txt").write_text(f"{project.name}\n")
    return Path(os.path.realpath(first)), Path(os.path.realpath(second))


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_workspace_follows_the_client_roots_and_their_changes(
    workspace: Path, tmp_path: Path, two_projects: tuple[Path, Path], transport: str
) -> None:
    first, second = two_projects
    roots = Roots(first)
    env = server_env(tmp_path)
    with anyio.fail_after(TIMEOUT):
        async with served_client(
            transport, workspace, tmp_path, env, "--client-roots", list_roots_callback=roots
        ) as (client, _):
            listed = await client.call_tool("list")
            assert text_of(listed).startswith(f"<path>{first}</path>\n")
            outside = await client.call_tool("read", {"file_path": str(workspace / "a.txt")})
            assert (
                text_of(outside) == f'Error: cannot read "{workspace}/a.txt": outside the workspace'
            )

            roots.paths = [second, first]
            await client.send_notification(types.RootsListChangedNotification())
            await anyio.sleep(0.5)  # the notification is handled before the next call
            listed = await client.call_tool("list")
            assert text_of(listed).startswith(f"<path>{second}</path>\n")
            also = await client.call_tool("read", {"file_path": str(first / "first.txt")})
            assert also.is_error is False

            roots.paths = []
            await client.send_notification(types.RootsListChangedNotification())
            await anyio.sleep(0.5)
            refused = await client.call_tool("list")
    assert refused.is_error is True
    assert text_of(refused) == (
        "Error: no workspace: the MCP client declared no roots — open a folder in the client "
        "(the server follows the client's roots)"
    )


@pytest.mark.anyio
async def test_a_client_without_roots_gets_every_call_refused(
    workspace: Path, tmp_path: Path
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with stdio_session(workspace, server_env(tmp_path), "--client-roots") as client:
            refused = await client.call_tool("read", {"file_path": "a.txt"})
    assert text_of(refused).startswith("Error: no workspace: the MCP client declared no roots")


@pytest.mark.anyio
async def test_without_the_flag_client_roots_are_ignored(
    workspace: Path, tmp_path: Path, two_projects: tuple[Path, Path]
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with stdio_session(
            workspace, server_env(tmp_path), list_roots_callback=Roots(two_projects[0])
        ) as client:
            listed = await client.call_tool("list")
    assert text_of(listed).startswith(f"<path>{workspace}</path>\n")


# -- the MCP Inspector's CLI mode (npm), over both transports ------------------------------------

INSPECTOR = ["npx", "-y", "@modelcontextprotocol/inspector@0.15", "--cli"]


@pytest.fixture
def npx() -> None:
    """The Inspector comes from npm through ``npx``: CI has it (``.ci/run``), so there it
    must be found; elsewhere a machine without Node skips these tests."""
    if subprocess.run(["which", "npx"], capture_output=True).returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("npx is missing: CI must install Node.js (.ci/run)")
        pytest.skip("needs npx (Node.js) for the MCP Inspector")


def inspect(*argv: str) -> dict[str, Any]:
    proc = subprocess.run(
        [*INSPECTOR, *argv], capture_output=True, timeout=180, stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    document: dict[str, Any] = json.loads(proc.stdout)
    return document


@pytest.mark.usefixtures("npx")
def test_the_inspector_calls_the_tools_over_stdio(workspace: Path) -> None:
    server = [sys.executable, "-m", "dsh_tool_fs.cli", "mcp", "--cwd", str(workspace)]
    listed = inspect(*server, "--method", "tools/list")
    assert [tool["name"] for tool in listed["tools"]] == [spec.name for spec in installed_tools()]
    read = inspect(
        *server, "--method", "tools/call", "--tool-name", "read", "--tool-arg", "file_path=a.txt"
    )
    assert read["content"][0]["text"].startswith(f"<path>{workspace}/a.txt</path>\n")


@pytest.mark.usefixtures("npx")
def test_the_inspector_calls_the_tools_over_http(workspace: Path, tmp_path: Path) -> None:
    """Inspector 0.15 sends no header of its own: a loopback server without auth."""
    with http_server(workspace, server_env(tmp_path), "--no-auth") as served:
        listed = inspect(served.url, "--transport", "http", "--method", "tools/list")
        found = inspect(
            served.url,
            "--transport",
            "http",
            "--method",
            "tools/call",
            "--tool-name",
            "grep",
            "--tool-arg",
            "pattern=one",
        )
    assert [tool["name"] for tool in listed["tools"]][:4] == ["list", "read", "write", "edit"]
    assert found["content"][0]["text"].endswith("(1 match in 1 file)\n</content>")


# -- load ---------------------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.long  # about 90 s here: run with --long
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # one event loop is enough for load
async def test_twenty_http_sessions_of_two_hundred_calls_each_leave_every_file_exact(
    tmp_path: Path, anyio_backend: str
) -> None:
    """Reads and guarded edits of distinct files; then every session has ended and its state
    is gone (one log line each), and the server's memory did not grow with them."""
    sessions, calls = 20, 200
    ws = tmp_path / "load"
    ws.mkdir()

    async def one_session(url: str, s: int, calls: int) -> None:
        name = f"s{s}.txt"
        async with http_client(url) as client:
            for i in range(calls // 2):
                read = await client.call_tool("read", {"file_path": name})
                assert read.is_error is False, text_of(read)
                edit = {"file_path": name, "old_string": f"{i}\n", "new_string": f"{i + 1}\n"}
                edited = await client.call_tool("edit", edit)
                assert edited.is_error is False, text_of(edited)

    async def round_of(url: str, calls: int) -> None:
        for s in range(sessions):
            (ws / f"s{s}.txt").write_text("0\n")
        async with anyio.create_task_group() as tg:
            for s in range(sessions):
                tg.start_soon(one_session, url, s, calls)

    with http_server(ws, server_env(tmp_path)) as served, anyio.fail_after(600):
        await round_of(served.url, 10)  # warm up: the server's memory after 20 sessions
        warm = rss_kib(served.proc.pid)
        await round_of(served.url, calls)
        loaded = rss_kib(served.proc.pid)
        await served.wait_for_log_count("ended: its observations are dropped", 2 * sessions)
    for s in range(sessions):
        assert (ws / f"s{s}.txt").read_text() == f"{calls // 2}\n"
    assert loaded < warm * 1.5, (warm, loaded)
