"""The four tool definitions and their prompt sections, as plain data.

An agent framework turns :class:`ToolDefinition` into its own tool format
(see :mod:`dsh_tool_fs.formats` for OpenAI, Anthropic and MCP). Schemas are
written by hand so they stay small, stable JSON Schema: ``type``,
``description``, ``default``, ``minimum``/``maximum`` and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config import ToolFsConfig

TOOL_NAMES: tuple[str, ...] = ("list", "read", "write", "edit")


@dataclass(frozen=True, slots=True, eq=True)
class ToolDefinition:
    """One tool as a model sees it: name, description, JSON Schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]
    concurrency_safe: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "concurrency_safe": self.concurrency_safe,
        }


@dataclass(frozen=True, slots=True)
class PromptSection:
    """Guidance for the system prompt; sections are joined in ``order``."""

    name: str
    order: int
    text: str


LIST_GUIDANCE = (
    "Use the list tool — not shell ls — to see what a directory contains. It returns the "
    "direct children of one directory, files and subdirectories alike, and defaults to the "
    "session workspace, so it is the first step for orienting in an unfamiliar project. When "
    "a result is capped, continue with the offset named in its footer."
)
READ_GUIDANCE = (
    "Use the read tool — not shell commands like cat — to inspect text files. Results include "
    "line numbers. Use offset and limit to continue reading large files."
)
WRITE_GUIDANCE = (
    "Use the write tool to create files or completely replace file contents. Existing files "
    "are overwritten, so read an existing file first (the default fs-policy requires it) and "
    "prefer edit for targeted changes."
)
EDIT_GUIDANCE = (
    "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal "
    "old_string with new_string; by default old_string must appear exactly once. If "
    "old_string appears multiple times, provide a more specific old_string or set replace_all "
    "to true. Read the file first (the default fs-policy requires it), unless you just created "
    "or edited it in this session."
)


def build_prompt_sections() -> list[PromptSection]:
    """The four guidance sections of SPEC 5.3, sorted by order."""
    return [
        PromptSection("tool:list", 99, LIST_GUIDANCE),
        PromptSection("tool:read", 100, READ_GUIDANCE),
        PromptSection("tool:write", 101, WRITE_GUIDANCE),
        PromptSection("tool:edit", 102, EDIT_GUIDANCE),
    ]


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def build_definitions(config: ToolFsConfig) -> list[ToolDefinition]:
    """The ``list``, ``read``, ``write`` and ``edit`` definitions for ``config``."""
    page = config.list_max_entries
    read_limit = config.read_limit
    list_def = ToolDefinition(
        name="list",
        description=(
            "List the direct children of one directory with their types: directories first, "
            "then files, then other entries, each group in alphabetical order. Directories end "
            f"with /, other entries with @. Shows up to {page} entries per page; the footer "
            "gives the complete count and, when more remain, the offset to continue with."
        ),
        parameters=_object(
            {
                "path": {
                    "type": "string",
                    "description": (
                        "Directory to list, absolute or relative to the session workspace. "
                        "Defaults to the session workspace."
                    ),
                },
                "offset": {
                    "type": "integer",
                    "description": "1-based number of the first entry to show. Defaults to 1.",
                    "minimum": 1,
                    "default": 1,
                },
            },
            [],
        ),
        concurrency_safe=True,
    )
    read_def = ToolDefinition(
        name="read",
        description=(
            "Read a UTF-8 text file. Returns its lines with line numbers and a footer that "
            "says whether the file continues. offset is the 1-based first line; limit is the "
            f"most lines returned (default and maximum {read_limit}). Very long lines are "
            "truncated and large outputs are capped; continue with the offset the footer names."
        ),
        parameters=_object(
            {
                "file_path": {
                    "type": "string",
                    "description": ("File to read, absolute or relative to the session workspace."),
                },
                "offset": {
                    "type": "integer",
                    "description": "1-based number of the first line to return. Defaults to 1.",
                    "minimum": 1,
                    "default": 1,
                },
                "limit": {
                    "type": "integer",
                    "description": f"Most lines to return (at most {read_limit}).",
                    "minimum": 1,
                    "maximum": read_limit,
                    "default": read_limit,
                },
            },
            ["file_path"],
        ),
        concurrency_safe=True,
    )
    write_def = ToolDefinition(
        name="write",
        description=(
            "Create a UTF-8 text file or completely replace its contents; missing parent "
            "directories are created. Creating a new file needs no prior read, but under the "
            "default fs-policy overwriting an existing file requires having read it first in "
            "this session, and fails if it changed since. Prefer edit for targeted changes."
        ),
        parameters=_object(
            {
                "file_path": {
                    "type": "string",
                    "description": (
                        "File to write, absolute or relative to the session workspace."
                    ),
                },
                "content": {
                    "type": "string",
                    "description": "The complete new UTF-8 text of the file.",
                },
            },
            ["file_path", "content"],
        ),
        concurrency_safe=False,
    )
    edit_def = ToolDefinition(
        name="edit",
        description=(
            "Edit an existing UTF-8 text file by literal replacement of old_string with "
            "new_string (no regular expressions). old_string must match exactly once unless "
            "replace_all is true. Under the default fs-policy the file must have been read "
            "first in this session (any read window counts, as does an earlier write or edit) "
            "and must not have changed since."
        ),
        parameters=_object(
            {
                "file_path": {
                    "type": "string",
                    "description": ("File to edit, absolute or relative to the session workspace."),
                },
                "old_string": {
                    "type": "string",
                    "description": "The literal text to replace; must not be empty.",
                },
                "new_string": {
                    "type": "string",
                    "description": (
                        "The literal replacement text; must differ from old_string. An empty "
                        "string deletes the match."
                    ),
                },
                "replace_all": {
                    "type": "boolean",
                    "description": (
                        "Replace every occurrence instead of requiring exactly one. "
                        "Defaults to false."
                    ),
                    "default": False,
                },
            },
            ["file_path", "old_string", "new_string"],
        ),
        concurrency_safe=False,
    )
    return [list_def, read_def, write_def, edit_def]
