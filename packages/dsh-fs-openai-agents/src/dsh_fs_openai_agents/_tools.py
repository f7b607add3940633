"""The dsh-fs tools as the OpenAI Agents SDK's ``FunctionTool``s over one ``ToolFs``."""

from __future__ import annotations

import copy
import json
from typing import Any, Literal, overload

from agents import ApplyPatchTool, FunctionTool
from agents.tool_context import ToolContext
from dsh_tool_fs import Session, ToolDefinition, ToolFs

from ._editor import apply_patch_tool
from ._session import SessionChoice, session_of

__all__ = ["dsh_fs_function_tools", "strict_compatible"]


def strict_compatible(parameters: dict[str, Any]) -> bool:
    """Whether a schema means the same in strict mode: a closed object whose every property
    is required. (Strict mode makes every property required: an optional argument would
    become one the model must always send.)"""
    properties = parameters.get("properties", {})
    return parameters.get("additionalProperties") is False and set(
        parameters.get("required", [])
    ) == set(properties)


@overload
def dsh_fs_function_tools(
    toolfs: ToolFs,
    *,
    session: SessionChoice | None = None,
    builtin_apply_patch: Literal[False] = False,
) -> list[FunctionTool]: ...


@overload
def dsh_fs_function_tools(
    toolfs: ToolFs, *, session: SessionChoice | None = None, builtin_apply_patch: bool
) -> list[FunctionTool | ApplyPatchTool]: ...


def dsh_fs_function_tools(
    toolfs: ToolFs, *, session: SessionChoice | None = None, builtin_apply_patch: bool = False
) -> list[FunctionTool] | list[FunctionTool | ApplyPatchTool]:
    """Every tool of ``toolfs`` (the installed ones, or the subset it was built with) as a
    ``FunctionTool`` with the tool's JSON Schema, ``strict_json_schema`` only where the
    schema can honour it (:func:`strict_compatible`).

    ``session`` is the conversation's (a new one by default: build the tools per
    conversation), or a function choosing one from the run's context. Every call's
    answer is the host's text, a refusal included (``Error: …``): the model reads it
    and the run goes on.

    ``builtin_apply_patch=True`` offers ``apply_patch`` as the SDK's built-in
    ``ApplyPatchTool`` (a Responses API model's own tool) with a
    :class:`~dsh_fs_openai_agents.DshFsEditor` in the same session, instead of its
    function form.
    """
    chosen: SessionChoice = Session() if session is None else session
    tools: list[FunctionTool | ApplyPatchTool] = []
    for definition in toolfs.definitions:
        if builtin_apply_patch and definition.name == "apply_patch":
            tools.append(apply_patch_tool(toolfs, session=chosen))
        else:
            tools.append(_tool(toolfs, chosen, definition))
    return tools


def _tool(toolfs: ToolFs, session: SessionChoice, definition: ToolDefinition) -> FunctionTool:
    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        try:
            args: Any = json.loads(arguments or "{}")
        except ValueError:
            args = arguments  # the host answers "arguments must be a JSON object"
        result = await toolfs.execute(definition.name, args, session=session_of(session, ctx))
        return result.text

    return FunctionTool(
        name=definition.name,
        description=definition.description,
        params_json_schema=copy.deepcopy(definition.parameters),  # strict mode rewrites it
        on_invoke_tool=invoke,
        strict_json_schema=strict_compatible(definition.parameters),
    )
