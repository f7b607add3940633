"""Wire-format converters and the instructions text (SPEC 5.1, 6)."""

from __future__ import annotations

import json

import pytest
from dsh_tool_fs import (
    ToolFsConfig,
    instructions,
    to_anthropic_tools,
    to_mcp_tools,
    to_openai_tools,
    to_raw_tools,
    to_tools,
    tools_document,
)
from dsh_tool_fs.tools import build_definitions, build_prompt_sections

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


def test_mcp_tools() -> None:
    tools = to_mcp_tools(DEFS)
    assert tools[2] == {
        "name": "write",
        "description": DEFS[2].description,
        "inputSchema": DEFS[2].parameters,
    }


def test_converted_schemas_are_copies() -> None:
    tools = to_openai_tools(DEFS)
    tools[0]["function"]["parameters"]["properties"].clear()
    assert DEFS[0].parameters["properties"]


def test_to_tools_by_name_and_unknown_format() -> None:
    assert to_tools(DEFS, "mcp") == to_mcp_tools(DEFS)
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
