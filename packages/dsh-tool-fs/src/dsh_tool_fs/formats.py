"""Converters of the tool definitions into common wire formats.

Each converter takes the definitions (``ToolFs.definitions``) and returns
plain JSON-ready dicts; the schemas are copied, so callers may mutate them.
Each output validates against that SDK's own request type (the tests check
it with the OpenAI, Anthropic and MCP SDKs).

A tool with a built-in form in a format (:attr:`ToolDefinition.builtins`) is
offered in that form when built-ins are asked for: by default in the
``anthropic`` format (Claude's text editor and memory tools are built-in
types there), only when asked in ``openai-responses`` (``apply_patch``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, Literal

from .definitions import PromptSection, ToolDefinition

Format = Literal["raw", "openai", "openai-responses", "anthropic", "mcp"]
FORMATS: tuple[Format, ...] = ("raw", "openai", "openai-responses", "anthropic", "mcp")


def to_raw_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """``name``, ``description``, ``parameters``, ``concurrency_safe``."""
    return [copy.deepcopy(d.to_dict()) for d in definitions]


def to_openai_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """OpenAI Chat Completions function tools.

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


def to_openai_responses_tools(
    definitions: Iterable[ToolDefinition], *, builtins: bool = False
) -> list[dict[str, Any]]:
    """OpenAI Responses API function tools.

    Each is ``{"type": "function", name, description, parameters, "strict": False}``:
    not strict, because strict mode requires every property to be required
    and our optional arguments have defaults. With ``builtins``, a tool that
    has a Responses built-in form (``apply_patch``: ``{"type": "apply_patch"}``)
    is offered in that form instead.
    """
    return [
        copy.deepcopy(dict(d.builtins["openai-responses"]))
        if builtins and "openai-responses" in d.builtins
        else {
            "type": "function",
            "name": d.name,
            "description": d.description,
            "parameters": copy.deepcopy(d.parameters),
            "strict": False,
        }
        for d in definitions
    ]


def to_anthropic_tools(
    definitions: Iterable[ToolDefinition], *, builtins: bool = True
) -> list[dict[str, Any]]:
    """Anthropic tools: ``{name, description, input_schema}``.

    With ``builtins`` (the default) a tool that is one of Claude's built-in
    client tools is offered as that type instead (``{"type":
    "text_editor_20250728", "name": "str_replace_based_edit_tool",
    "max_characters": <n>}``, ``{"type": "memory_20250818", "name": "memory"}``):
    the model knows its schema.
    """
    return [
        copy.deepcopy(dict(d.builtins["anthropic"]))
        if builtins and "anthropic" in d.builtins
        else {
            "name": d.name,
            "description": d.description,
            "input_schema": copy.deepcopy(d.parameters),
        }
        for d in definitions
    ]


def to_mcp_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """MCP tool listings: ``{name, title, description, inputSchema, annotations}``.

    ``title`` and ``annotations`` are left out for a definition without them.
    """
    tools = []
    for d in definitions:
        tool: dict[str, Any] = {"name": d.name}
        if d.title is not None:
            tool["title"] = d.title
        tool["description"] = d.description
        tool["inputSchema"] = copy.deepcopy(d.parameters)
        if d.annotations is not None:
            tool["annotations"] = d.annotations.to_mcp()
        tools.append(tool)
    return tools


_CONVERTERS = {
    "raw": to_raw_tools,
    "openai": to_openai_tools,
    "openai-responses": to_openai_responses_tools,
    "anthropic": to_anthropic_tools,
    "mcp": to_mcp_tools,
}


def to_tools(
    definitions: Iterable[ToolDefinition], fmt: Format = "raw", *, builtins: bool | None = None
) -> list[dict[str, Any]]:
    """The definitions in format ``fmt`` (one of :data:`FORMATS`); with ``builtins``, a
    tool with a built-in form in that format is offered in it (``None``: the format's
    default — ``anthropic`` offers built-ins, ``openai-responses`` does not)."""
    converter = _CONVERTERS.get(fmt)
    if converter is None:
        choices = ", ".join(FORMATS)
        raise ValueError(f'unknown tool format "{fmt}" (choose from {choices})')
    if fmt == "openai-responses":
        return to_openai_responses_tools(definitions, builtins=bool(builtins))
    if fmt == "anthropic":
        return to_anthropic_tools(definitions, builtins=builtins is not False)
    return converter(definitions)


def instructions(sections: Iterable[PromptSection]) -> str:
    """The prompt sections' texts, in order, joined by a blank line."""
    return "\n\n".join(s.text for s in sorted(sections, key=lambda s: s.order))


def tools_document(
    definitions: Iterable[ToolDefinition],
    sections: Iterable[PromptSection],
    fmt: Format = "raw",
    *,
    builtins: bool | None = None,
) -> dict[str, Any]:
    """``{"tools": [...], "instructions": "..."}`` — what ``dsh-fs tools`` prints."""
    tools = to_tools(definitions, fmt, builtins=builtins)
    return {"tools": tools, "instructions": instructions(sections)}
