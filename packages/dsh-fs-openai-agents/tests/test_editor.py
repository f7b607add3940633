"""DshFsEditor behind the SDK's built-in apply-patch tool, in the SDK's run loop with its
ScriptedModel, and operation by operation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agents import Agent, ApplyPatchTool, FunctionTool, Runner, set_tracing_disabled
from agents.editor import ApplyPatchOperation, ApplyPatchResult
from agents.testing import ScriptedModel, assistant_message, function_call
from dsh_fs_openai_agents import DshFsEditor, dsh_fs_function_tools
from dsh_tool_fs import ToolFs
from openai.types.responses import ResponseApplyPatchToolCall

CRLF_AFTER = b"DEBUG = False\r\nPORT = 8000\r\n"
UPDATE = {"type": "update_file", "path": "app.py", "diff": "@@\n-DEBUG = True\n+DEBUG = False\n"}

set_tracing_disabled(True)  # no trace upload from a test


def apply_patch_call(n: int, operation: dict[str, Any]) -> ResponseApplyPatchToolCall:
    return ResponseApplyPatchToolCall.model_validate(
        {
            "id": f"apc_{n}",
            "call_id": f"apc_{n}",
            "operation": operation,
            "status": "completed",
            "type": "apply_patch_call",
        }
    )


@pytest.mark.anyio
async def test_builtin_patch_of_an_unread_file_is_refused_then_read_and_patched_keeps_crlf(
    toolfs: ToolFs, project: Path
) -> None:
    model = ScriptedModel(
        [
            [apply_patch_call(1, UPDATE)],
            [function_call("read", {"file_path": "app.py"}, call_id="call_2")],
            [apply_patch_call(3, UPDATE)],
            [assistant_message("done")],
        ]
    )
    tools = dsh_fs_function_tools(toolfs, builtin_apply_patch=True)
    agent = Agent(name="coder", instructions=toolfs.instructions, model=model, tools=list(tools))
    await Runner.run(agent, "Turn DEBUG off.")
    outputs = [
        (item["status"], item["output"])
        for item in model.calls[-1].input
        if isinstance(item, dict) and item.get("type") == "apply_patch_call_output"
    ]
    app = project / "app.py"
    assert outputs == [
        ("failed", f'Error: edit requires reading "{app}" first — read the file, then retry'),
        ("completed", "Success. Updated the following files:\nM app.py"),
    ]
    assert app.read_bytes() == CRLF_AFTER


def test_builtin_apply_patch_replaces_its_function_form(toolfs: ToolFs) -> None:
    tools = dsh_fs_function_tools(toolfs, builtin_apply_patch=True)
    kinds = {tool.name: type(tool) for tool in tools}
    assert kinds.pop("apply_patch") is ApplyPatchTool
    assert set(kinds.values()) == {FunctionTool}


@pytest.mark.anyio
async def test_editor_creates_a_file(toolfs: ToolFs, project: Path) -> None:
    editor = DshFsEditor(toolfs)
    operation = ApplyPatchOperation(type="create_file", path="notes.md", diff="+# Notes\n+hi\n")
    assert await editor.create_file(operation) == ApplyPatchResult(
        status="completed", output="Success. Updated the following files:\nA notes.md"
    )
    assert (project / "notes.md").read_text() == "# Notes\nhi\n"


@pytest.mark.anyio
async def test_editor_refuses_a_path_outside_the_workspace(toolfs: ToolFs, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    operation = ApplyPatchOperation(type="create_file", path=str(outside), diff="+x\n")
    result = await DshFsEditor(toolfs).create_file(operation)
    assert result == ApplyPatchResult(
        status="failed", output=f'Error: cannot write "{outside}": outside the workspace'
    )
    assert not outside.exists()


@pytest.mark.anyio
async def test_editor_deletes_a_file_it_read_in_its_session(toolfs: ToolFs, project: Path) -> None:
    editor = DshFsEditor(toolfs)
    delete = ApplyPatchOperation(type="delete_file", path="app.py")
    refused = await editor.delete_file(delete)
    assert refused.status == "failed" and (project / "app.py").exists()
    await toolfs.execute("read", {"file_path": "app.py"}, session=editor.session_for(None))
    assert await editor.delete_file(delete) == ApplyPatchResult(
        status="completed", output="Success. Updated the following files:\nD app.py"
    )
    assert not (project / "app.py").exists()
