"""The glob and grep definitions, guidance and MCP metadata, in every wire format."""

from __future__ import annotations

from typing import Any

import mcp.types as mcp_types
from anthropic.types import ToolParam
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import (
    TOOLS,
    ToolFs,
    ToolFsConfig,
    to_anthropic_tools,
    to_mcp_tools,
    to_openai_responses_tools,
    to_openai_tools,
)
from dsh_tool_fs.tools import build_definitions
from dsh_tool_fs_search import GLOB, GREP
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter

DEFS = build_definitions(ToolFsConfig(), (*TOOLS, GLOB, GREP))

GLOB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob the file paths must match, relative to "
            "path: * and ? within a segment, ** across "
            "segments, [abc], {a,b}. Without a / it matches "
            "file names at any depth (*.py); with one, "
            "whole paths (src/**/*.ts).",
        },
        "path": {
            "type": "string",
            "description": "Directory to search, absolute or relative to the "
            "session workspace. Defaults to the session "
            "workspace.",
        },
        "offset": {
            "type": "integer",
            "description": "1-based number of the first file to show. Defaults to 1.",
            "minimum": 1,
            "default": 1,
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}

GREP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Regular expression to search for, in RE2 "
            "syntax (no backreferences or lookaround). ^ "
            "and $ match at line starts and ends; a match "
            "never spans lines.",
        },
        "path": {
            "type": "string",
            "description": "Directory or file to search, absolute or relative "
            "to the session workspace. Defaults to the session "
            "workspace.",
        },
        "include": {
            "type": "string",
            "description": "Glob the searched files' paths must match, as "
            "in the glob tool (*.py, src/**/*.{ts,tsx}). "
            "Defaults to every file.",
        },
        "ignore_case": {
            "type": "boolean",
            "description": "Match letters case-insensitively. Defaults to false.",
            "default": False,
        },
        "offset": {
            "type": "integer",
            "description": "1-based number of the first match to show. Defaults to 1.",
            "minimum": 1,
            "default": 1,
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}

GLOB_SECTION = (
    "Use the glob tool — not shell find or ls -R — to find files by name or path pattern, "
    "such as **/*.py or src/**/test_*.ts. Results are newest first and skip what .gitignore "
    "excludes; to look inside an ignored directory, pass it as path."
)
GREP_SECTION = (
    "Use the grep tool — not shell grep or rg — to search file contents with a regular "
    "expression. It returns matching lines with line numbers, grouped by file; narrow it "
    "with path and include. A match is not a read: read the file before you edit it."
)


def test_the_schemas_are_exact() -> None:
    assert GLOB.definition(ToolFsConfig()).parameters == GLOB_SCHEMA
    assert GREP.definition(ToolFsConfig()).parameters == GREP_SCHEMA


def test_the_descriptions_state_the_configured_page_sizes() -> None:
    config = ToolFsConfig(glob_max_results=7, grep_max_matches=9)
    assert "up to 7 per page" in GLOB.definition(config).description
    assert "up to 9 matches per page" in GREP.definition(config).description


def test_the_prompt_sections_follow_the_four_in_order() -> None:
    toolfs = ToolFs(MemoryFileSystem(), tools=(*TOOLS, GLOB, GREP))
    sections = toolfs.prompt_sections
    assert [(s.name, s.order) for s in sections[4:]] == [("tool:glob", 103), ("tool:grep", 104)]
    assert [s.text for s in sections[4:]] == [GLOB_SECTION, GREP_SECTION]
    assert toolfs.instructions.endswith("\n\n" + GLOB_SECTION + "\n\n" + GREP_SECTION)


def test_mcp_titles_and_annotations() -> None:
    tools = to_mcp_tools(DEFS)[4:]
    assert [(t["name"], t["title"], t["annotations"]) for t in tools] == [
        ("glob", "Find files", {"readOnlyHint": True, "openWorldHint": False}),
        ("grep", "Search file contents", {"readOnlyHint": True, "openWorldHint": False}),
    ]
    assert [d.concurrency_safe for d in DEFS[4:]] == [True, True]


def test_every_converter_output_validates_against_its_sdk_type() -> None:
    for adapter, tools in (
        (TypeAdapter(ChatCompletionToolParam), to_openai_tools(DEFS)),
        (TypeAdapter(FunctionToolParam), to_openai_responses_tools(DEFS)),
        (TypeAdapter(ToolParam), to_anthropic_tools(DEFS)),
    ):
        assert [adapter.validate_python(tool) for tool in tools] == tools
    for tool in to_mcp_tools(DEFS):
        validated = mcp_types.Tool.model_validate(tool)
        assert validated.model_dump(by_alias=True, exclude_none=True) == tool
