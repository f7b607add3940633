"""Three behaviours shared with the reference design, through every surface, on both backends.

1. **A read that finds nothing is an observation of absence.** A file deleted
   after a read is recreated by a write once the model has read that it is
   gone; that write may create, never overwrite; an edit says ``not found``.
2. **The two refusals a model can act on say what to do next**: ``—
   re-read the file, then retry`` (stale) and ``— read the file, then
   retry`` (not observed), in the text the model sees and in
   ``ToolResult.error.message``; the backend's and the policy's ``FsError``
   stay bare.
3. **Diff hunks are their lines joined by ``\\n``**, without a trailing newline.

The tree is one workspace, on the local backend (``<tmp>/ws``) or the memory
backend (``/srv/ws``), changed behind the tools' back the way another process
would. Behaviours 1 and 2 run through the Python API and an MCP client (the
official SDK, in memory); MCP results are text only, so 3 runs through the
Python API and ``dsh-fs call --json``. ``dsh-fs session`` runs the whole
sequence of 1 on the local backend.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from dsh_fs import CreateIfAbsent, FsError, FsErrorCode, ReplaceIfVersion
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import Session, ToolFs
from dsh_tool_fs.mcp_server import build_server
from mcp import ClientSession
from mcp.shared.memory import create_client_server_memory_streams

pytestmark = pytest.mark.anyio

TIMEOUT = 60
MEMORY_ROOT = "/srv/ws"
REREAD = " — re-read the file, then retry"
READ_FIRST = " — read the file, then retry"

Call = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, str]]]


class Tree:
    """One workspace and the stack over it, plus out-of-band access to its files."""

    def __init__(self, backend: str, local_root: Path) -> None:
        self.backend = backend
        if backend == "local":
            self.root = str(local_root)
            self.toolfs = ToolFs.from_entry_points(
                backend="local", plugins=("policy",), cwd=self.root
            )
        else:
            self.root = MEMORY_ROOT
            self.toolfs = ToolFs.from_entry_points(
                backend="memory", plugins=("policy",), cwd=self.root
            )
            self.memory.mkdir(self.root)

    @property
    def memory(self) -> MemoryFileSystem:
        fs = self.toolfs.fs
        assert isinstance(fs, MemoryFileSystem)
        return fs

    def path(self, name: str) -> str:
        return f"{self.root}/{name}"

    def put(self, name: str, text: str) -> None:
        if self.backend == "local":
            Path(self.path(name)).write_bytes(text.encode())
        else:
            self.memory.put_text(self.path(name), text)

    def remove(self, name: str) -> None:
        if self.backend == "local":
            Path(self.path(name)).unlink()
        else:
            self.memory.remove(self.path(name))

    def get(self, name: str) -> bytes | None:
        if self.backend == "local":
            path = Path(self.path(name))
            return path.read_bytes() if path.exists() else None
        return self.memory.get_bytes(self.path(name))


@pytest.fixture(params=["local", "memory"])
def tree(request: pytest.FixtureRequest, workspace: Path) -> Tree:
    return Tree(request.param, workspace)


@asynccontextmanager
async def python_api(tree: Tree) -> AsyncIterator[Call]:
    session = Session(cwd=tree.root)

    async def call(name: str, args: dict[str, Any]) -> tuple[bool, str]:
        result = await tree.toolfs.execute(name, args, session=session)
        return result.is_error, result.text

    yield call


@asynccontextmanager
async def mcp_client(tree: Tree) -> AsyncIterator[Call]:
    """One MCP client connection (one session) to the server ``dsh-fs mcp`` builds."""
    server = build_server(tree.toolfs, cwd=tree.root)
    with anyio.fail_after(TIMEOUT):
        async with (
            create_client_server_memory_streams() as (client_streams, server_streams),
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(server.run, *server_streams, server.create_initialization_options())
            async with ClientSession(*client_streams) as client:
                await client.initialize()

                async def call(name: str, args: dict[str, Any]) -> tuple[bool, str]:
                    result = await client.call_tool(name, args)
                    (content,) = result.content
                    assert isinstance(content, types.TextContent)
                    return bool(result.is_error), content.text

                yield call
            tg.cancel_scope.cancel()


SURFACES = {"python": python_api, "mcp": mcp_client}


@pytest.fixture(params=list(SURFACES))
def surface(request: pytest.FixtureRequest) -> Callable[[Tree], AbstractAsyncContextManager[Call]]:
    return SURFACES[request.param]


def created(path: str) -> tuple[bool, str]:
    return False, f"<path>{path}</path>\n<type>file</type>\n<content>\nCreated file\n</content>"


def failed(message: str) -> tuple[bool, str]:
    return True, f"Error: {message}"


# -- 1. absence -------------------------------------------------------------------------------


async def test_a_file_deleted_after_a_read_is_recreated_edited_and_deleted_again(
    tree: Tree, surface: Callable[[Tree], AbstractAsyncContextManager[Call]]
) -> None:
    p = tree.path("a.txt")
    tree.put("a.txt", "one\n")
    async with surface(tree) as call:
        assert (await call("read", {"file_path": "a.txt"}))[0] is False  # 1. present
        tree.remove("a.txt")
        assert await call("write", {"file_path": "a.txt", "content": "x\n"}) == failed(
            f'cannot write "{p}": file no longer exists{REREAD}'
        )
        assert await call("read", {"file_path": "a.txt"}) == failed(  # 2. absent (read)
            f'cannot read "{p}": not found'
        )
        edit = {"file_path": "a.txt", "old_string": "two", "new_string": "three"}
        assert await call("edit", edit) == failed(f'cannot edit "{p}": not found')
        assert await call("write", {"file_path": "a.txt", "content": "two\n"}) == created(p)
        assert tree.get("a.txt") == b"two\n"  # 3. recreated by write
        assert (await call("read", {"file_path": "a.txt"}))[0] is False
        assert await call("edit", edit) == (  # 4. edited after a read
            False,
            f"The file {p} has been updated successfully.",
        )
        assert tree.get("a.txt") == b"three\n"
        tree.remove("a.txt")  # 5. deleted again
        assert await call("read", {"file_path": "a.txt"}) == failed(f'cannot read "{p}": not found')
        assert await call("write", {"file_path": "a.txt", "content": "four\n"}) == created(p)
    assert tree.get("a.txt") == b"four\n"


async def test_absence_never_authorizes_overwriting_a_file_that_appeared_since(
    tree: Tree, surface: Callable[[Tree], AbstractAsyncContextManager[Call]]
) -> None:
    p = tree.path("b.txt")
    async with surface(tree) as call:
        assert await call("read", {"file_path": "b.txt"}) == failed(f'cannot read "{p}": not found')
        tree.put("b.txt", "someone else's\n")
        assert await call("write", {"file_path": "b.txt", "content": "mine\n"}) == failed(
            f'cannot overwrite existing "{p}" without reading it first{READ_FIRST}'
        )
        assert tree.get("b.txt") == b"someone else's\n"
        edit = {"file_path": "b.txt", "old_string": "someone", "new_string": "x"}
        assert await call("edit", edit) == failed(f'cannot edit "{p}": not found')
        assert tree.get("b.txt") == b"someone else's\n"


# -- 2. remedies ------------------------------------------------------------------------------


async def test_the_two_refusals_a_model_can_act_on_say_what_to_do_next(
    tree: Tree, surface: Callable[[Tree], AbstractAsyncContextManager[Call]]
) -> None:
    tree.put("a.txt", "one\n")
    tree.put("c.txt", "unread\n")
    p = tree.path("a.txt")
    async with surface(tree) as call:
        await call("read", {"file_path": "a.txt"})
        tree.put("a.txt", "changed behind the back\n")
        edit = {"file_path": "a.txt", "old_string": "one", "new_string": "1"}
        assert await call("edit", edit) == failed(
            f'cannot edit "{p}": file changed since it was read{REREAD}'
        )
        assert await call("write", {"file_path": "a.txt", "content": "x\n"}) == failed(
            f'cannot write "{p}": file changed since it was read{REREAD}'
        )
        unread = {"file_path": "c.txt", "old_string": "unread", "new_string": "x"}
        assert await call("edit", unread) == failed(
            f'edit requires reading "{tree.path("c.txt")}" first{READ_FIRST}'
        )
        await call("read", {"file_path": "a.txt"})
        missing = {"file_path": "a.txt", "old_string": "zzz", "new_string": "x"}
        assert await call("edit", missing) == failed(f'old_string was not found in "{p}"')
    assert tree.get("a.txt") == b"changed behind the back\n"
    assert tree.get("c.txt") == b"unread\n"


async def test_the_remedy_is_in_the_error_message_and_the_fs_errors_stay_bare(
    tree: Tree,
) -> None:
    tree.put("a.txt", "one\n")
    p = tree.path("a.txt")
    session = Session(cwd=tree.root)
    result = await tree.toolfs.execute(
        "write", {"file_path": "a.txt", "content": "x"}, session=session
    )
    assert result.error is not None
    assert (result.error.message, result.error.code) == (
        f'cannot overwrite existing "{p}" without reading it first{READ_FIRST}',
        "FS_NOT_OBSERVED",
    )
    assert result.text == f"Error: {result.error.message}"
    fs = tree.toolfs.fs
    target = await fs.resolve("a.txt")
    with pytest.raises(FsError) as backend:
        await fs.write_text(target, "x", CreateIfAbsent())
    assert str(backend.value) == f'cannot overwrite existing "{p}" without reading it first'
    with pytest.raises(FsError) as stale:
        await fs.write_text(target, "x", ReplaceIfVersion("an old version"))
    assert (str(stale.value), stale.value.code) == (
        f'cannot write "{p}": file changed since it was read',
        FsErrorCode.FS_STALE_VERSION,
    )
    hook = tree.toolfs.plugin_manager.hook
    with pytest.raises(FsError) as policy:
        hook.fs_edit_intent(target=target, actor=type("Actor", (), {"session": session})())
    assert str(policy.value) == f'edit requires reading "{p}" first'


# -- 3. diff hunks ----------------------------------------------------------------------------

TEN = "".join(f"line {i}\n" for i in range(1, 11))


async def test_a_hunk_of_seven_lines_is_seven_lines_without_a_trailing_newline(
    tree: Tree,
) -> None:
    tree.put("ten.txt", TEN)
    session = Session(cwd=tree.root)
    await tree.toolfs.execute("read", {"file_path": "ten.txt"}, session=session)
    edit = {"file_path": "ten.txt", "old_string": "line 5", "new_string": "five"}
    result = await tree.toolfs.execute("edit", edit, session=session)
    assert result.meta == {
        "diffs": [
            {
                "path": "ten.txt",
                "old_text": "line 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8",
                "new_text": "line 2\nline 3\nline 4\nfive\nline 6\nline 7\nline 8",
            }
        ]
    }


async def test_an_overwrite_with_brand_new_reads_brand_new(tree: Tree) -> None:
    tree.put("a.txt", "old\n")
    session = Session(cwd=tree.root)
    await tree.toolfs.execute("read", {"file_path": "a.txt"}, session=session)
    write = {"file_path": "a.txt", "content": "brand new\n"}
    result = await tree.toolfs.execute("write", write, session=session)
    assert result.meta == {"diffs": [{"path": "a.txt", "old_text": "old", "new_text": "brand new"}]}
    assert tree.get("a.txt") == b"brand new\n"


# -- the command ------------------------------------------------------------------------------


def dsh_fs(*args: str, cwd: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "dsh_tool_fs.cli", *args, "--cwd", str(cwd)]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def test_dsh_fs_call_json_shows_hunks_without_a_trailing_newline(workspace: Path) -> None:
    (workspace / "a.txt").write_text("old\n")
    proc = dsh_fs(
        "call",
        "write",
        '{"file_path": "a.txt", "content": "brand new\\n"}',
        "--json",
        "--no-policy",
        cwd=workspace,
    )
    stdout, _ = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0
    assert json.loads(stdout)["meta"] == {
        "diffs": [{"path": "a.txt", "old_text": "old", "new_text": "brand new"}]
    }


def test_dsh_fs_session_recreates_a_file_deleted_after_a_read(workspace: Path) -> None:
    p = workspace / "a.txt"
    p.write_text("one\n")
    proc = dsh_fs("session", cwd=workspace)
    assert proc.stdin is not None and proc.stdout is not None

    def call(tool: str, **args: Any) -> tuple[bool, str]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"tool": tool, "args": args}).encode() + b"\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        return answer["is_error"], answer["text"]

    try:
        assert call("read", file_path="a.txt")[0] is False
        p.unlink()
        assert call("write", file_path="a.txt", content="x\n") == failed(
            f'cannot write "{p}": file no longer exists{REREAD}'
        )
        assert call("read", file_path="a.txt") == failed(f'cannot read "{p}": not found')
        assert call("edit", file_path="a.txt", old_string="x", new_string="y") == failed(
            f'cannot edit "{p}": not found'
        )
        assert call("write", file_path="a.txt", content="two\n") == created(str(p))
        assert call("read", file_path="a.txt")[0] is False
        assert call("edit", file_path="a.txt", old_string="two", new_string="three") == (
            False,
            f"The file {p} has been updated successfully.",
        )
        p.unlink()
        assert call("read", file_path="a.txt") == failed(f'cannot read "{p}": not found')
        p.write_text("appeared\n")
        assert call("write", file_path="a.txt", content="mine\n") == failed(
            f'cannot overwrite existing "{p}" without reading it first{READ_FIRST}'
        )
    finally:
        proc.stdin.close()
        proc.wait(timeout=TIMEOUT)
    assert proc.returncode == 0
    assert p.read_text() == "appeared\n"
