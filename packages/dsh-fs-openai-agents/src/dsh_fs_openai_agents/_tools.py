"""The dsh-fs tools as the OpenAI Agents SDK's ``FunctionTool``s over one ``ToolFs``."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from agents import FunctionTool, RunContextWrapper
from agents.tool_context import ToolContext
from dsh_tool_fs import Session, ToolDefinition, ToolFs

__all__ = ["SessionChoice", "dsh_fs_function_tools", "strict_compatible"]

SessionChoice = Session | Callable[[RunContextWrapper[Any]], Session]
"""A :class:`~dsh_tool_fs.Session`, or a function that picks one from the run's
context (``lambda ctx: ctx.context.session``)."""


def strict_compatible(parameters: dict[str, Any]) -> bool:
    """Whether a schema means the same in strict mode: a closed object whose every property
    is required. (Strict mode makes every property required: an optional argument would
    become one the model must always send.)"""
    properties = parameters.get("properties", {})
    return parameters.get("additionalProperties") is False and set(
        parameters.get("required", [])
    ) == set(properties)


def dsh_fs_function_tools(
    toolfs: ToolFs, *, session: SessionChoice | None = None
) -> list[FunctionTool]:
    """Every tool of ``toolfs`` (the installed ones, or the subset it was built with) as a
    ``FunctionTool`` with the tool's JSON Schema, ``strict_json_schema`` only where the
    schema can honour it (:func:`strict_compatible`).

    ``session`` is the conversation's (a new one by default: build the tools per
    conversation), or a function choosing one from the run's context. Every call's
    answer is the host's text, a refusal included (``Error: …``): the model reads it
    and the run goes on.
    """
    chosen: SessionChoice = Session() if session is None else session
    return [_tool(toolfs, chosen, definition) for definition in toolfs.definitions]


def _tool(toolfs: ToolFs, session: SessionChoice, definition: ToolDefinition) -> FunctionTool:
    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        try:
            args: Any = json.loads(arguments or "{}")
        except ValueError:
            args = arguments  # the host answers "arguments must be a JSON object"
        conversation = session if isinstance(session, Session) else session(ctx)
        return (await toolfs.execute(definition.name, args, session=conversation)).text

    return FunctionTool(
        name=definition.name,
        description=definition.description,
        params_json_schema=copy.deepcopy(definition.parameters),  # strict mode rewrites it
        on_invoke_tool=invoke,
        strict_json_schema=strict_compatible(definition.parameters),
    )
