"""``DshMemoryTool``: the ``anthropic`` SDK's abstract memory tool, answered by dsh-fs."""

from __future__ import annotations

from pathlib import Path

import pytest
from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from dsh_fs.testing import Scratch
from dsh_fs_local import LocalFileSystem
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import Session
from dsh_tool_fs_editor.anthropic_sdk import DshMemoryTool, DshMemoryToolSync

pytestmark = pytest.mark.anyio


def tool(ws: Scratch) -> DshMemoryTool:
    return DshMemoryTool.over(
        ws.fs, f"{ws.root}/.mem", plugins=[FsPolicy()], session=Session(cwd=ws.root)
    )


async def test_it_is_the_sdks_memory_tool_with_its_request_form(ws: Scratch) -> None:
    memory = tool(ws)
    assert isinstance(memory, BetaAsyncAbstractMemoryTool)
    assert memory.to_dict() == {"type": "memory_20250818", "name": "memory"}
    assert memory.name == "memory"


async def test_the_sdks_commands_run_on_the_backend(ws: Scratch) -> None:
    memory = tool(ws)
    created = await memory.call(
        {"command": "create", "path": "/memories/me.md", "file_text": "likes tea\n"}
    )
    assert created == "File created successfully at: /memories/me.md"
    assert ws.get(".mem/me.md") == b"likes tea\n"
    edited = await memory.call(
        {"command": "str_replace", "path": "/memories/me.md", "old_str": "tea", "new_str": "coffee"}
    )
    assert isinstance(edited, str) and edited.startswith("The memory file has been edited.")
    assert await memory.call({"command": "view", "path": "/memories/me.md"}) == (
        "Here's the content of /memories/me.md with line numbers:\n     1\tlikes coffee\n"
    )


async def test_a_refusal_is_the_sdks_tool_error(ws: Scratch) -> None:
    with pytest.raises(ToolError) as caught:
        await tool(ws).call({"command": "view", "path": "/memories/../x"})
    assert str(caught.value) == "Error: Path /memories/../x would escape /memories directory"


async def test_a_host_without_the_memory_tool_is_refused(ws: Scratch) -> None:
    from dsh_tool_fs import ToolFs

    with pytest.raises(ValueError, match='does not offer the "memory" tool'):
        DshMemoryTool(ToolFs(ws.fs))


def test_the_synchronous_tool_runs_each_command_to_completion(tmp_path: Path) -> None:
    memory = DshMemoryToolSync.over(
        LocalFileSystem(cwd=tmp_path), str(tmp_path / ".mem"), session=Session(cwd=str(tmp_path))
    )
    assert isinstance(memory, BetaAbstractMemoryTool)
    assert memory.call({"command": "create", "path": "/memories/a.md", "file_text": "x\n"}) == (
        "File created successfully at: /memories/a.md"
    )
    assert (tmp_path / ".mem" / "a.md").read_text() == "x\n"
    with pytest.raises(ToolError):
        memory.call({"command": "delete", "path": "/memories"})
