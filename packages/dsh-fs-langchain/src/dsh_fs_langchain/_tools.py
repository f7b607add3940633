"""The dsh-fs tools as LangChain ``StructuredTool``s over one ``ToolFs`` and one session."""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio
from dsh_tool_fs import Session, ToolDefinition, ToolFs
from langchain_core.tools import StructuredTool, ToolException

__all__ = ["DshFsTool", "dsh_fs_tools"]


class DshFsTool(StructuredTool):
    """One dsh-fs tool: our pydantic model as ``args_schema``, our schema shown, the host's text.

    The model is shown the tool's definition (its JSON Schema under the
    host's config, as ``dsh-fs tools`` prints it). LangChain's own
    validation against ``args_schema`` is left out: the call's arguments
    go to :meth:`ToolFs.execute <dsh_tool_fs.ToolFs.execute>` as the model
    sent them, which validates them with the same model under the host's
    config and answers a bad one with the exact text the model acts on
    (LangChain would raise pydantic's ``ValidationError`` and end the run).
    A failed call is a ``ToolMessage`` with ``status="error"`` whose
    content is the host's ``Error: …`` text.
    """

    definition: ToolDefinition

    @property
    def tool_call_schema(self) -> dict[str, Any]:
        return {**self.definition.parameters, "description": self.description}

    def _parse_input(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> str | dict[str, Any]:
        return tool_input


def dsh_fs_tools(toolfs: ToolFs, *, session: Session | None = None) -> list[DshFsTool]:
    """Every tool of ``toolfs`` (the installed ones, or the subset it was built with), bound
    to one conversation's ``session`` (a new one by default: build the tools per conversation).
    """
    conversation = Session() if session is None else session
    return [_tool(toolfs, conversation, definition) for definition in toolfs.definitions]


def _tool(toolfs: ToolFs, session: Session, definition: ToolDefinition) -> DshFsTool:
    async def call(*undecoded: Any, **args: Any) -> str:
        result = await toolfs.execute(
            definition.name, undecoded[0] if undecoded else args, session=session
        )
        if result.is_error:
            raise ToolException(result.text)
        return result.text

    def call_blocking(*undecoded: Any, **args: Any) -> str:
        return anyio.run(partial(call, *undecoded, **args))

    return DshFsTool(
        name=definition.name,
        description=definition.description,
        args_schema=toolfs.argument_model(definition.name),
        coroutine=call,
        func=call_blocking,
        handle_tool_error=True,
        definition=definition,
    )
