"""The apply_patch definition, guidance and MCP metadata, and its entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dsh_tool_fs import TOOLS, ToolFsConfig, to_mcp_tools
from dsh_tool_fs.tools import build_definitions, installed_tools
from dsh_tool_fs_patch import APPLY_PATCH, parse_patch

DEFS = build_definitions(ToolFsConfig(), (*TOOLS, APPLY_PATCH))


def test_the_schema_is_one_required_string() -> None:
    assert DEFS[-1].parameters == {
        "type": "object",
        "properties": {
            "input": {
                "type": "string",
                "description": "The whole patch, from the line *** Begin Patch to the line "
                "*** End Patch.",
            }
        },
        "required": ["input"],
        "additionalProperties": False,
    }


def test_it_is_not_concurrency_safe() -> None:
    assert DEFS[-1].concurrency_safe is False


def test_the_mcp_listing_has_the_title_and_edits_annotations() -> None:
    tool = to_mcp_tools(DEFS)[-1]
    edit = to_mcp_tools(DEFS)[3]
    assert (tool["name"], tool["title"]) == ("apply_patch", "Apply patch")
    assert tool["annotations"] == edit["annotations"]


def test_the_prompt_section_follows_the_search_tools() -> None:
    assert (APPLY_PATCH.prompt.name, APPLY_PATCH.prompt.order) == ("tool:apply_patch", 105)


def test_the_prompt_example_is_a_patch_that_parses() -> None:
    example = APPLY_PATCH.prompt.text.split("Example:\n", 1)[1]
    kinds = [type(op).__name__ for op in parse_patch(example)]
    assert kinds == ["AddFile", "UpdateFile", "DeleteFile"]


def test_the_entry_point_offers_apply_patch() -> None:
    assert "apply_patch" in [spec.name for spec in installed_tools()]


def test_dsh_fs_tools_offers_the_built_in_with_the_flag(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "dsh_tool_fs.cli", "tools", "--format", "openai-responses"]
    plain = json.loads(subprocess.run(argv, capture_output=True, check=True, cwd=tmp_path).stdout)
    built = json.loads(
        subprocess.run([*argv, "--builtins"], capture_output=True, check=True, cwd=tmp_path).stdout
    )
    assert {"type": "apply_patch"} in built["tools"]
    assert [t.get("name") for t in plain["tools"]].count("apply_patch") == 1
    assert [t for t in built["tools"] if t.get("name") == "apply_patch"] == []
