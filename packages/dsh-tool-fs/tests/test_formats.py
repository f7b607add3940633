"""Wire-format converters and the instructions text (SPEC 5.1, 6)."""

from __future__ import annotations

import dataclasses
import json

import mcp.types as mcp_types
import pytest
from anthropic.types import ToolParam
from dsh_tool_fs import (
    ToolFsConfig,
    instructions,
    to_anthropic_tools,
    to_mcp_tools,
    to_openai_responses_tools,
    to_openai_tools,
    to_raw_tools,
    to_tools,
    tools_document,
)
from dsh_tool_fs.tools import build_definitions, build_prompt_sections
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter

DEFS = build_definitions(ToolFsConfig())


def test_raw_tools_are_the_definitions() -> None:
    raw = to_raw_tools(DEFS)
    assert [set(t) for t in raw] == [{"name", "description", "parameters", "concurrency_safe"}] * 4
    assert raw[1]["parameters"] == DEFS[1].parameters


def test_openai_function_tools() -> None:
    tools = to_openai_tools(DEFS)
    assert tools[0] == {
        "type": "function",
        "function": {
            "name": "list",
            "description": DEFS[0].description,
            "parameters": DEFS[0].parameters,
        },
    }
    assert [t["function"]["name"] for t in tools] == ["list", "read", "write", "edit"]


def test_anthropic_tools() -> None:
    tools = to_anthropic_tools(DEFS)
    assert tools[3] == {
        "name": "edit",
        "description": DEFS[3].description,
        "input_schema": DEFS[3].parameters,
    }


def test_openai_responses_function_tools() -> None:
    tools = to_openai_responses_tools(DEFS)
    assert tools[1] == {
        "type": "function",
        "name": "read",
        "description": DEFS[1].description,
        "parameters": DEFS[1].parameters,
        "strict": False,
    }
    assert [t["name"] for t in tools] == ["list", "read", "write", "edit"]


def test_mcp_tools_carry_title_and_annotations() -> None:
    tools = to_mcp_tools(DEFS)
    assert tools[2] == {
        "name": "write",
        "title": "Write file",
        "description": DEFS[2].description,
        "inputSchema": DEFS[2].parameters,
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    }
    assert [list(t) for t in tools] == [
        ["name", "title", "description", "inputSchema", "annotations"]
    ] * 4


def test_mcp_titles_and_annotations_per_tool() -> None:
    tools = {t["name"]: t for t in to_mcp_tools(DEFS)}
    assert {name: t["title"] for name, t in tools.items()} == {
        "list": "List directory",
        "read": "Read file",
        "write": "Write file",
        "edit": "Edit file",
    }
    read_only = {"readOnlyHint": True, "openWorldHint": False}
    assert {name: t["annotations"] for name, t in tools.items()} == {
        "list": read_only,
        "read": read_only,
        "write": {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        "edit": {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": False,
            "openWorldHint": False,
        },
    }


# -- each converter's output is exactly what that SDK's own request type accepts ---------
# A TypedDict adapter drops the keys its type does not know: an item equal to its own
# validation has the SDK's shape, and a change on either side fails here.


def test_openai_tools_are_chat_completions_tool_params() -> None:
    adapter = TypeAdapter(ChatCompletionToolParam)
    for tool in to_openai_tools(DEFS):
        assert adapter.validate_python(tool) == tool


def test_openai_responses_tools_are_responses_function_tool_params() -> None:
    adapter = TypeAdapter(FunctionToolParam)
    for tool in to_openai_responses_tools(DEFS):
        assert adapter.validate_python(tool) == tool


def test_anthropic_tools_are_anthropic_tool_params() -> None:
    adapter = TypeAdapter(ToolParam)
    for tool in to_anthropic_tools(DEFS):
        assert adapter.validate_python(tool) == tool


def test_mcp_tools_are_mcp_tool_objects() -> None:
    for tool in to_mcp_tools(DEFS):
        validated = mcp_types.Tool.model_validate(tool)
        assert validated.model_dump(by_alias=True, exclude_none=True) == tool
        assert validated.annotations is not None
        assert validated.annotations.open_world_hint is False


def test_converted_schemas_are_copies() -> None:
    tools = to_openai_tools(DEFS)
    tools[0]["function"]["parameters"]["properties"].clear()
    assert DEFS[0].parameters["properties"]


def test_to_tools_by_name_and_unknown_format() -> None:
    assert to_tools(DEFS, "mcp") == to_mcp_tools(DEFS)
    assert to_tools(DEFS, "openai-responses") == to_openai_responses_tools(DEFS)
    with pytest.raises(ValueError, match="unknown tool format"):
        to_tools(DEFS, "xml")  # type: ignore[arg-type]


def test_instructions_join_the_sections_with_a_blank_line() -> None:
    sections = build_prompt_sections()
    text = instructions(reversed(sections))
    assert text == "\n\n".join(s.text for s in sections)
    assert text.startswith("Use the list tool")
    assert text.count("\n\n") == 3


def test_tools_document_is_json() -> None:
    doc = tools_document(DEFS, build_prompt_sections(), "anthropic")
    assert set(doc) == {"tools", "instructions"}
    assert json.loads(json.dumps(doc)) == doc


def test_a_built_in_form_replaces_the_function_tool_only_when_asked() -> None:
    builtin = {"type": "web_search"}
    defs = [dataclasses.replace(DEFS[0], builtins={"openai-responses": builtin}), *DEFS[1:]]
    assert to_openai_responses_tools(defs) == to_openai_responses_tools(DEFS)
    offered = to_openai_responses_tools(defs, builtins=True)
    assert offered[0] == builtin and offered[0] is not builtin  # a copy
    assert offered[1:] == to_openai_responses_tools(DEFS)[1:]
    assert to_tools(defs, "anthropic", builtins=True) == to_anthropic_tools(DEFS)
