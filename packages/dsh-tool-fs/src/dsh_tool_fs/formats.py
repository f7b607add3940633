"""Converters of the tool definitions into common wire formats.

Each converter takes the definitions (``ToolFs.definitions``) and returns
plain JSON-ready dicts; the schemas are copied, so callers may mutate them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, Literal

from .definitions import PromptSection, ToolDefinition

Format = Literal["raw", "openai", "anthropic", "mcp"]
FORMATS: tuple[Format, ...] = ("raw", "openai", "anthropic", "mcp")


def to_raw_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """``name``, ``description``, ``parameters``, ``concurrency_safe``."""
    return [copy.deepcopy(d.to_dict()) for d in definitions]


def to_openai_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """OpenAI function tools.

    Each is ``{"type": "function", "function": {name, description, parameters}}``.
    """
    return [
        {
            "type": "function",
            "function": {
                "name": d.name,
                "description": d.description,
                "parameters": copy.deepcopy(d.parameters),
            },
        }
        for d in definitions
    ]


def to_anthropic_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """Anthropic tools: ``{name, description, input_schema}``."""
    return [
        {"name": d.name, "description": d.description, "input_schema": copy.deepcopy(d.parameters)}
        for d in definitions
    ]


def to_mcp_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """MCP tool listings: ``{name, description, inputSchema}``."""
    return [
        {"name": d.name, "description": d.description, "inputSchema": copy.deepcopy(d.parameters)}
        for d in definitions
    ]


def to_tools(definitions: Iterable[ToolDefinition], fmt: Format = "raw") -> list[dict[str, Any]]:
    """The definitions in format ``fmt`` (``raw``, ``openai``, ``anthropic`` or ``mcp``)."""
    converters = {
        "raw": to_raw_tools,
        "openai": to_openai_tools,
        "anthropic": to_anthropic_tools,
        "mcp": to_mcp_tools,
    }
    if fmt not in converters:
        raise ValueError(f'unknown tool format "{fmt}" (choose from raw, openai, anthropic, mcp)')
    return converters[fmt](definitions)


def instructions(sections: Iterable[PromptSection]) -> str:
    """The prompt sections' texts, in order, joined by a blank line."""
    return "\n\n".join(s.text for s in sorted(sections, key=lambda s: s.order))


def tools_document(
    definitions: Iterable[ToolDefinition], sections: Iterable[PromptSection], fmt: Format = "raw"
) -> dict[str, Any]:
    """``{"tools": [...], "instructions": "..."}`` — what ``dsh-fs tools`` prints."""
    return {"tools": to_tools(definitions, fmt), "instructions": instructions(sections)}
