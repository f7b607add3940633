"""The tools, one :class:`~dsh_tool_fs.ToolSpec` each, and what is built from them.

:data:`TOOLS` is the one list of tools: the host runs them, and the
definitions, prompt sections, converters, CLI and MCP server are built from
it. Adding a tool is one module here and one entry in :data:`TOOLS`
(``docs/adding-a-tool.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..config import ToolFsConfig
from ..definitions import PromptSection, ToolDefinition
from ..spec import ToolSpec
from .edit_tool import EDIT, EditArgs
from .list_tool import LIST, ListArgs
from .read_tool import READ, ReadArgs
from .write_tool import WRITE, WriteArgs

__all__ = [
    "EDIT",
    "LIST",
    "READ",
    "TOOLS",
    "TOOL_NAMES",
    "WRITE",
    "EditArgs",
    "ListArgs",
    "ReadArgs",
    "WriteArgs",
    "build_definitions",
    "build_prompt_sections",
]

TOOLS: tuple[ToolSpec[Any, Any], ...] = (LIST, READ, WRITE, EDIT)
"""The tools, in the order the model is shown them."""

TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in TOOLS)


def build_definitions(
    config: ToolFsConfig, tools: Iterable[ToolSpec[Any, Any]] = TOOLS
) -> list[ToolDefinition]:
    """The definitions of ``tools`` (by default the four) for ``config``, in order."""
    return [spec.definition(config) for spec in tools]


def build_prompt_sections(tools: Iterable[ToolSpec[Any, Any]] = TOOLS) -> list[PromptSection]:
    """The prompt sections of ``tools``, sorted by order."""
    return sorted((spec.prompt for spec in tools), key=lambda section: section.order)
