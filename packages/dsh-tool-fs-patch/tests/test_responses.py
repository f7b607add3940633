"""The Responses API built-in: offered as ``{"type": "apply_patch"}`` when asked, and an
``apply_patch_call`` item executed through the tool's engine into its output item."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_tool_fs import TOOLS, ToolFs, to_openai_responses_tools, to_tools
from dsh_tool_fs.formats import tools_document
from dsh_tool_fs_patch import APPLY_PATCH, apply_file_operation, execute_apply_patch_call
from dsh_tool_fs_patch_stack import Stack
from openai.types.responses import (
    ApplyPatchToolParam,
    ResponseApplyPatchToolCall,
    ResponseApplyPatchToolCallOutput,
    ToolParam,
)
from openai.types.responses.response_apply_patch_tool_call import OperationCreateFile
from openai.types.responses.response_input_item_param import ApplyPatchCallOutput
from pydantic import TypeAdapter

DEFS = ToolFs(None, tools=(*TOOLS, APPLY_PATCH)).definitions  # type: ignore[arg-type]


def call_item(operation: dict[str, Any], call_id: str = "call_1") -> ResponseApplyPatchToolCall:
    """An ``apply_patch_call`` output item as the SDK parses it from a response."""
    return ResponseApplyPatchToolCall.model_validate(
        {
            "id": "apc_1",
            "call_id": call_id,
            "type": "apply_patch_call",
            "status": "completed",
            "operation": operation,
        }
    )


def assert_is_output_item(item: dict[str, Any]) -> None:
    TypeAdapter(ApplyPatchCallOutput).validate_python(item, strict=True)
    ResponseApplyPatchToolCallOutput.model_validate({**item, "id": "apco_1"})


# -- the converter ----------------------------------------------------------------------------


def test_the_function_form_is_the_default() -> None:
    tools = to_openai_responses_tools(DEFS)
    assert [t["name"] for t in tools][-1] == "apply_patch"
    assert tools[-1]["type"] == "function"


def test_asked_for_built_ins_apply_patch_is_the_built_in_tool() -> None:
    tools = to_openai_responses_tools(DEFS, builtins=True)
    assert tools[-1] == {"type": "apply_patch"}
    assert [t["type"] for t in tools[:-1]] == ["function"] * 4
    TypeAdapter(ApplyPatchToolParam).validate_python(tools[-1], strict=True)
    adapter = TypeAdapter(ToolParam)
    for tool in tools:
        adapter.validate_python(tool)


def test_built_ins_change_only_the_responses_format() -> None:
    assert to_tools(DEFS, "openai", builtins=True) == to_tools(DEFS, "openai")
    assert to_tools(DEFS, "openai-responses", builtins=True)[-1] == {"type": "apply_patch"}
    document = tools_document(DEFS, [], "openai-responses", builtins=True)
    assert document["tools"][-1] == {"type": "apply_patch"}


# -- executing an apply_patch_call ------------------------------------------------------------


@pytest.mark.anyio
async def test_a_create_file_call_round_trips(stack: Stack) -> None:
    item = call_item({"type": "create_file", "path": "hello.txt", "diff": "+Hello\n+world"})
    output = await execute_apply_patch_call(stack.toolfs, item, session=stack.session)
    assert output == {
        "type": "apply_patch_call_output",
        "call_id": "call_1",
        "status": "completed",
        "output": "Success. Updated the following files:\nA hello.txt",
    }
    assert_is_output_item(output)
    assert stack.get("hello.txt") == b"Hello\nworld\n"


@pytest.mark.anyio
async def test_an_update_file_call_applies_its_diff(stack: Stack) -> None:
    stack.put("a.py", b"def f():\r\n    return 1\r\n")
    await stack.read("a.py")
    diff = "@@ def f():\n-    return 1\n+    return 2\n"
    item = call_item({"type": "update_file", "path": "a.py", "diff": diff}, "call_2")
    output = await execute_apply_patch_call(stack.toolfs, item, session=stack.session)
    assert (output["status"], output["output"]) == (
        "completed",
        "Success. Updated the following files:\nM a.py",
    )
    assert stack.get("a.py") == b"def f():\r\n    return 2\r\n"


@pytest.mark.anyio
async def test_an_unread_update_call_fails_with_the_remedy(stack: Stack) -> None:
    stack.put("a.py", b"x\n")
    item = call_item({"type": "update_file", "path": "a.py", "diff": "-x\n+y\n"})
    output = await execute_apply_patch_call(stack.toolfs, item, session=stack.session)
    assert output["status"] == "failed"
    assert output["output"] == (
        f'Error: edit requires reading "{stack.scratch.root}/a.py" first'
        " — read the file, then retry"
    )
    assert_is_output_item(output)


@pytest.mark.anyio
async def test_a_diff_cannot_smuggle_another_operation(stack: Stack) -> None:
    stack.put("a.py", b"x\n")
    stack.put("victim.txt", b"v\n")
    await stack.read("a.py")
    await stack.read("victim.txt")
    diff = "-x\n+y\n*** Delete File: victim.txt\n"
    item = {
        "type": "apply_patch_call",
        "call_id": "c",
        "status": "completed",
        "operation": {"type": "update_file", "path": "a.py", "diff": diff},
    }
    output = await execute_apply_patch_call(stack.toolfs, item, session=stack.session)
    assert output["output"] == (
        "Error: invalid hunk at line 3, Unexpected line found in update hunk: '*** Delete File: "
        "victim.txt'. Every line should start with ' ' (context line), '+' (added line), or "
        "'-' (removed line)"
    )
    assert (stack.get("a.py"), stack.get("victim.txt")) == (b"x\n", b"v\n")


@pytest.mark.anyio
async def test_a_create_diff_line_without_plus_is_refused(stack: Stack) -> None:
    result = await apply_file_operation(
        stack.toolfs,
        {"type": "create_file", "path": "n.txt", "diff": "+a\nb"},
        session=stack.session,
    )
    assert result.text == (
        "Error: invalid hunk at line 2, Unexpected line found in added file: 'b'. Every line "
        "of a new file should start with '+'"
    )
    assert stack.get("n.txt") is None


@pytest.mark.anyio
async def test_a_path_with_a_newline_is_refused(stack: Stack) -> None:
    result = await apply_file_operation(
        stack.toolfs, {"type": "delete_file", "path": "a\n*** Add File: b"}, session=stack.session
    )
    assert result.is_error
    assert result.error is not None and result.error.code == "INVALID_ARGUMENTS"


@pytest.mark.anyio
async def test_an_update_with_move_to_moves(stack: Stack) -> None:
    stack.put("old.txt", b"a\n")
    await stack.read("old.txt")
    result = await apply_file_operation(
        stack.toolfs,
        {"type": "update_file", "path": "old.txt", "diff": "-a\n+b\n", "move_to": "new/n.txt"},
        session=stack.session,
    )
    assert result.text == "Success. Updated the following files:\nM new/n.txt"
    assert (stack.get("old.txt"), stack.get("new/n.txt")) == (None, b"b\n")


@pytest.mark.anyio
async def test_a_delete_file_call_deletes_a_read_file(stack: Stack) -> None:
    stack.put("gone.txt", b"g\n")
    await stack.read("gone.txt")
    item = call_item({"type": "delete_file", "path": "gone.txt"})
    output = await execute_apply_patch_call(stack.toolfs, item, session=stack.session)
    assert output["output"] == "Success. Updated the following files:\nD gone.txt"
    assert stack.get("gone.txt") is None


@pytest.mark.anyio
async def test_an_sdk_operation_object_is_taken_as_it_is(stack: Stack) -> None:
    operation = OperationCreateFile(type="create_file", path="sdk.txt", diff="+from the sdk")
    result = await apply_file_operation(stack.toolfs, operation, session=stack.session)
    assert result.text == "Success. Updated the following files:\nA sdk.txt"
    assert stack.get("sdk.txt") == b"from the sdk\n"


@pytest.mark.anyio
async def test_an_item_that_is_not_an_apply_patch_call_is_refused(stack: Stack) -> None:
    with pytest.raises(ValueError, match="not an apply_patch_call item"):
        await execute_apply_patch_call(stack.toolfs, {"type": "function_call"})
