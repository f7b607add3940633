"""What a model (or an MCP client) is told about a tool, as plain data.

An agent framework turns :class:`ToolDefinition` into its own tool format
(see :mod:`dsh_tool_fs.formats` for OpenAI, Anthropic and MCP). Definitions
are built from each tool's :class:`~dsh_tool_fs.ToolSpec`
(:func:`dsh_tool_fs.tools.build_definitions`); schemas stay small, stable JSON
Schema: ``type``, ``description``, ``default``, ``minimum``/``maximum`` and
nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PromptSection", "ToolAnnotations", "ToolDefinition"]


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """The MCP behaviour hints of a tool (``readOnlyHint`` …); ``None`` leaves a hint out."""

    read_only: bool
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool = False

    def to_mcp(self) -> dict[str, bool]:
        """The hints under their MCP names, in the order of the MCP schema."""
        hints = {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }
        return {name: value for name, value in hints.items() if value is not None}


@dataclass(frozen=True, slots=True, eq=True)
class ToolDefinition:
    """One tool as a model sees it: name, description, JSON Schema of its arguments.

    ``title`` and ``annotations`` are the MCP tool metadata; the raw form
    (:meth:`to_dict`) carries only ``name``, ``description``, ``parameters`` and
    ``concurrency_safe``.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    concurrency_safe: bool
    title: str | None = None
    annotations: ToolAnnotations | None = None
    builtins: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per wire format, the provider's built-in tool that may stand for this one
    (``{"openai-responses": {"type": "apply_patch"}}``): a converter offers it instead
    of the function form when asked for built-ins."""

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
