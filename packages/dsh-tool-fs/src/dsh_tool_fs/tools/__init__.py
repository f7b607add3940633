"""The tools, one :class:`~dsh_tool_fs.ToolSpec` each, and what is built from them.

:data:`TOOLS` is the list of the four built-in tools. Other distributions
add tools through the ``dsh_tool_fs.tools`` entry-point group (:data:`TOOLS_GROUP`),
each entry point naming one ``ToolSpec`` (``dsh-tool-fs-search`` declares
``glob`` and ``grep`` that way); :func:`installed_tools` gives the built-in
tools followed by the installed ones, or a chosen subset. The host runs the
tools it is given, and the definitions, prompt sections, converters, CLI and
MCP server are built from them (``docs/extending/adding-a-tool.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import entry_points
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
    "TOOLS_GROUP",
    "TOOL_NAMES",
    "WRITE",
    "EditArgs",
    "ListArgs",
    "ReadArgs",
    "UnknownToolError",
    "WriteArgs",
    "build_definitions",
    "build_prompt_sections",
    "installed_tool_names",
    "installed_tools",
    "offered_tool_names",
]

TOOLS: tuple[ToolSpec[Any, Any], ...] = (LIST, READ, WRITE, EDIT)
"""The tools, in the order the model is shown them."""

TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in TOOLS)

TOOLS_GROUP = "dsh_tool_fs.tools"
"""The entry-point group of tools from other distributions: ``name = "module:TOOL_SPEC"``."""


class UnknownToolError(LookupError):
    """A tool chosen by name that is neither built in nor installed."""


def installed_tool_names() -> list[str]:
    """The names :func:`installed_tools` offers, in its order, without importing a tool."""
    points = sorted(entry_points(group=TOOLS_GROUP), key=lambda ep: (ep.name, ep.value))
    return [*(spec.name for spec in TOOLS), *(ep.name for ep in points)]


def offered_tool_names(names: Iterable[str] | None = None) -> list[str]:
    """The names :func:`installed_tools` ``(names)`` offers, in its order, without importing a
    tool; a name that is not installed raises :class:`UnknownToolError` as it does."""
    return _offered(installed_tool_names(), names)


def _offered(available: list[str], names: Iterable[str] | None) -> list[str]:
    if names is None:
        return available
    chosen: set[str] = set()
    for name in names:
        if name not in available:
            raise UnknownToolError(f'unknown tool "{name}" (installed: {", ".join(available)})')
        chosen.add(name)
    return [name for name in available if name in chosen]


def installed_tools(names: Iterable[str] | None = None) -> tuple[ToolSpec[Any, Any], ...]:
    """The built-in tools, then every :data:`TOOLS_GROUP` entry point's, in name order.

    ``names`` chooses a subset (shown in that same order, whatever order the
    names come in), and only its entry points are imported; a name that is
    not there raises :class:`UnknownToolError` ``unknown tool "<name>"
    (installed: <names>)``. An entry point must name a
    :class:`~dsh_tool_fs.ToolSpec` whose ``name`` is the entry point's and
    that no other tool has, else ``TypeError`` / ``ValueError`` names it.
    """
    builtin = {spec.name: spec for spec in TOOLS}
    points = sorted(entry_points(group=TOOLS_GROUP), key=lambda ep: (ep.name, ep.value))
    for ep in points:
        if ep.name in builtin:
            raise ValueError(f'{TOOLS_GROUP} entry point "{ep.name}": that tool already exists')
    chosen = set(_offered([*builtin, *(ep.name for ep in points)], names))
    tools = [spec for name, spec in builtin.items() if name in chosen]
    for ep in points:
        if ep.name in chosen:
            spec = ep.load()
            if not isinstance(spec, ToolSpec) or spec.name != ep.name:
                raise TypeError(
                    f'{TOOLS_GROUP} entry point "{ep.name}" is not a ToolSpec of that name'
                )
            tools.append(spec)
    return tuple(tools)


def build_definitions(
    config: ToolFsConfig, tools: Iterable[ToolSpec[Any, Any]] = TOOLS
) -> list[ToolDefinition]:
    """The definitions of ``tools`` (by default the four built-in ones) for ``config``, in order."""
    return [spec.definition(config) for spec in tools]


def build_prompt_sections(tools: Iterable[ToolSpec[Any, Any]] = TOOLS) -> list[PromptSection]:
    """The prompt sections of ``tools``, sorted by order."""
    return sorted((spec.prompt for spec in tools), key=lambda section: section.order)
