"""Tool definitions and prompt sections: the schema tests the RFC asks for (SPEC 5.3)."""

from __future__ import annotations

import json
import re

from dsh_tool_fs import ToolFsConfig
from dsh_tool_fs.tools import build_definitions, build_prompt_sections

DEFS = {d.name: d for d in build_definitions(ToolFsConfig())}


def _required(name: str) -> list[str]:
    return list(DEFS[name].parameters["required"])


def _optional(name: str) -> list[str]:
    props = DEFS[name].parameters["properties"]
    return [key for key in props if key not in _required(name)]


def test_all_four_tools_are_registered_in_order() -> None:
    assert [d.name for d in build_definitions(ToolFsConfig())] == ["list", "read", "write", "edit"]


def test_required_and_optional_parameter_sets_per_tool() -> None:
    assert (_required("list"), _optional("list")) == ([], ["path", "offset"])
    assert (_required("read"), _optional("read")) == (["file_path"], ["offset", "limit"])
    assert (_required("write"), _optional("write")) == (["file_path", "content"], [])
    assert (_required("edit"), _optional("edit")) == (
        ["file_path", "old_string", "new_string"],
        ["replace_all"],
    )


def test_parameter_types() -> None:
    types = {
        name: {k: v["type"] for k, v in d.parameters["properties"].items()}
        for name, d in DEFS.items()
    }
    assert types == {
        "list": {"path": "string", "offset": "integer"},
        "read": {"file_path": "string", "offset": "integer", "limit": "integer"},
        "write": {"file_path": "string", "content": "string"},
        "edit": {
            "file_path": "string",
            "old_string": "string",
            "new_string": "string",
            "replace_all": "boolean",
        },
    }


def test_schemas_are_closed_objects() -> None:
    for d in DEFS.values():
        assert d.parameters["type"] == "object"
        assert d.parameters["additionalProperties"] is False


def test_field_names_are_snake_case() -> None:
    for d in DEFS.values():
        for key in d.parameters["properties"]:
            assert re.fullmatch(r"[a-z]+(_[a-z]+)*", key), key


def test_replace_all_defaults_to_false() -> None:
    assert DEFS["edit"].parameters["properties"]["replace_all"]["default"] is False


def test_read_limit_default_and_maximum_come_from_the_config() -> None:
    limit = DEFS["read"].parameters["properties"]["limit"]
    assert (limit["default"], limit["maximum"], limit["minimum"]) == (2000, 2000, 1)
    small = {d.name: d for d in build_definitions(ToolFsConfig(read_limit=50))}
    assert small["read"].parameters["properties"]["limit"]["default"] == 50
    assert "50" in small["read"].description


def test_list_description_names_the_page_size_from_the_config() -> None:
    assert "up to 200 entries" in DEFS["list"].description
    small = {d.name: d for d in build_definitions(ToolFsConfig(list_max_entries=7))}
    assert "up to 7 entries" in small["list"].description


def test_concurrency_safe_flags() -> None:
    assert {n: d.concurrency_safe for n, d in DEFS.items()} == {
        "list": True,
        "read": True,
        "write": False,
        "edit": False,
    }


def test_write_and_edit_descriptions_state_the_observation_policy() -> None:
    for name in ("write", "edit"):
        description = DEFS[name].description
        assert "default fs-policy" in description
        assert "read first" in description or "read it first" in description


def test_descriptions_state_what_matters() -> None:
    assert "directories first, then files, then other" in DEFS["list"].description
    assert "alphabetical" in DEFS["list"].description
    assert "line numbers" in DEFS["read"].description
    assert "1-based" in DEFS["read"].description
    assert "completely replace" in DEFS["write"].description
    assert "literal" in DEFS["edit"].description
    assert "exactly once unless replace_all" in DEFS["edit"].description


def test_schemas_carry_no_pydantic_noise_and_are_json() -> None:
    allowed = {"type", "description", "default", "minimum", "maximum"}
    for d in DEFS.values():
        json.dumps(d.parameters)
        assert set(d.parameters) == {"type", "properties", "required", "additionalProperties"}
        for prop in d.parameters["properties"].values():
            assert set(prop) <= allowed


def test_definitions_are_stable() -> None:
    again = build_definitions(ToolFsConfig())
    assert [d.to_dict() for d in again] == [d.to_dict() for d in DEFS.values()]


def test_prompt_sections_exact_text_and_order() -> None:
    sections = build_prompt_sections()
    assert [(s.name, s.order) for s in sections] == [
        ("tool:list", 99),
        ("tool:read", 100),
        ("tool:write", 101),
        ("tool:edit", 102),
    ]
    texts = {s.name: s.text for s in sections}
    assert texts["tool:list"] == (
        "Use the list tool — not shell ls — to see what a directory contains. It returns the "
        "direct children of one directory, files and subdirectories alike, and defaults to the "
        "session workspace, so it is the first step for orienting in an unfamiliar project. "
        "When a result is capped, continue with the offset named in its footer."
    )
    assert texts["tool:read"] == (
        "Use the read tool — not shell commands like cat — to inspect text files. Results "
        "include line numbers. Use offset and limit to continue reading large files."
    )
    assert texts["tool:write"] == (
        "Use the write tool to create files or completely replace file contents. Existing "
        "files are overwritten, so read an existing file first (the default fs-policy requires "
        "it) and prefer edit for targeted changes."
    )
    assert texts["tool:edit"] == (
        "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces "
        "literal old_string with new_string; by default old_string must appear exactly once. "
        "If old_string appears multiple times, provide a more specific old_string or set "
        "replace_all to true. Read the file first (the default fs-policy requires it), unless "
        "you just created or edited it in this session."
    )
