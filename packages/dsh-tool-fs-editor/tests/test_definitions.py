"""What each wire format offers: Anthropic's built-in types in ``anthropic`` (validated with
the ``anthropic`` SDK's request types), function tools with the same commands elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest
from anthropic.types import MemoryTool20250818Param, ToolTextEditor20250728Param
from anthropic.types.beta import BetaMemoryTool20250818Param, BetaToolTextEditor20250728Param
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import (
    TOOLS,
    ToolFs,
    ToolFsConfig,
    to_anthropic_tools,
    to_mcp_tools,
    to_openai_responses_tools,
    to_openai_tools,
    to_tools,
)
from dsh_tool_fs_editor import MEMORY, TEXT_EDITOR
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter

EDITOR_BUILTIN = {
    "type": "text_editor_20250728",
    "name": "str_replace_based_edit_tool",
    "max_characters": 16000,
}
MEMORY_BUILTIN = {"type": "memory_20250818", "name": "memory"}


def definitions(**config: Any) -> list[Any]:
    return ToolFs(
        MemoryFileSystem(), config=config or None, tools=(TEXT_EDITOR, MEMORY)
    ).definitions


def test_anthropic_offers_claudes_built_in_types() -> None:
    assert to_anthropic_tools(definitions()) == [EDITOR_BUILTIN, MEMORY_BUILTIN]
    assert to_tools(definitions(), "anthropic") == [EDITOR_BUILTIN, MEMORY_BUILTIN]


def test_max_characters_comes_from_the_config() -> None:
    editor = to_anthropic_tools(definitions(editor_max_characters=10000))[0]
    assert editor["max_characters"] == 10000


def test_the_built_in_types_are_the_anthropic_sdks_request_types() -> None:
    editor, memory = to_anthropic_tools(definitions())
    assert TypeAdapter(ToolTextEditor20250728Param).validate_python(editor) == editor
    assert TypeAdapter(MemoryTool20250818Param).validate_python(memory) == memory
    assert TypeAdapter(BetaToolTextEditor20250728Param).validate_python(editor) == editor
    assert TypeAdapter(BetaMemoryTool20250818Param).validate_python(memory) == memory


def test_anthropic_without_built_ins_offers_function_tools() -> None:
    editor, memory = to_anthropic_tools(definitions(), builtins=False)
    assert editor["name"] == "str_replace_based_edit_tool"
    assert editor["input_schema"]["properties"]["command"]["enum"] == [
        "view",
        "create",
        "str_replace",
        "insert",
    ]
    assert memory["input_schema"]["properties"]["command"]["enum"] == [
        "view",
        "create",
        "str_replace",
        "insert",
        "delete",
        "rename",
    ]


def test_the_function_schema_has_a_command_enum_and_its_fields() -> None:
    editor, memory = definitions()
    assert editor.parameters["required"] == ["command", "path"]
    assert list(editor.parameters["properties"]) == [
        "command",
        "path",
        "file_text",
        "view_range",
        "old_str",
        "new_str",
        "insert_line",
        "insert_text",
    ]
    assert editor.parameters["properties"]["view_range"] == {
        "type": "array",
        "description": (
            "view of a file: [start_line, end_line], 1-based and inclusive; end_line -1 shows "
            "to the end of the file. Without it the whole file is shown."
        ),
        "items": {"type": "integer"},
    }
    assert memory.parameters["required"] == ["command"]
    assert list(memory.parameters["properties"])[-2:] == ["old_path", "new_path"]


def test_openai_formats_offer_function_tools_their_sdk_accepts() -> None:
    chat = TypeAdapter(ChatCompletionToolParam)
    responses = TypeAdapter(FunctionToolParam)
    for tool in to_openai_tools(definitions()):
        assert tool["type"] == "function"
        assert chat.validate_python(tool) == tool
    for tool in to_openai_responses_tools(definitions()):
        assert tool["type"] == "function"
        assert responses.validate_python(tool) == tool


def test_mcp_offers_both_as_mcp_tools() -> None:
    for tool in to_mcp_tools(definitions()):
        validated = mcp_types.Tool.model_validate(tool)
        assert validated.model_dump(by_alias=True, exclude_none=True) == tool
    assert [t["title"] for t in to_mcp_tools(definitions())] == ["Text editor", "Memory"]


def test_the_prompt_sections_follow_the_four_tools() -> None:
    toolfs = ToolFs(MemoryFileSystem(), tools=(*TOOLS, TEXT_EDITOR, MEMORY))
    assert [s.name for s in toolfs.prompt_sections][-2:] == [
        "tool:str_replace_based_edit_tool",
        "tool:memory",
    ]


def test_the_description_states_the_configured_limit() -> None:
    editor = ToolFs(MemoryFileSystem(), config=ToolFsConfig(editor_max_characters=500))
    assert editor.config.editor_max_characters == 500
    (definition,) = ToolFs(
        MemoryFileSystem(), config={"editor_max_characters": 500}, tools=(TEXT_EDITOR,)
    ).definitions
    assert "at most 500 characters" in definition.description


def dsh_fs(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("dsh-fs")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [str(script), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_the_command_offers_them_through_the_entry_points(tmp_path: Path) -> None:
    shown = dsh_fs(
        "tools",
        "--format",
        "anthropic",
        "--tools",
        "read,str_replace_based_edit_tool,memory",
        cwd=tmp_path,
    )
    assert shown.returncode == 0, shown.stderr
    # Installed tools are offered in their entry points' name order.
    assert json.loads(shown.stdout)["tools"][1:] == [MEMORY_BUILTIN, EDITOR_BUILTIN]


def test_the_command_runs_a_memory_call_in_the_memory_dir(tmp_path: Path) -> None:
    args = json.dumps({"command": "create", "path": "/memories/a.md", "file_text": "x\n"})
    done = dsh_fs("call", "memory", args, "--memory-dir", "notes", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "File created successfully at: /memories/a.md\n")
    assert (tmp_path / "notes" / "a.md").read_text() == "x\n"


@pytest.mark.parametrize("fmt", ["raw", "openai", "openai-responses", "mcp"])
def test_every_other_format_offers_function_forms(fmt: str) -> None:
    for tool in to_tools(definitions(), fmt):  # type: ignore[arg-type]
        assert tool.get("type") in (None, "function")
