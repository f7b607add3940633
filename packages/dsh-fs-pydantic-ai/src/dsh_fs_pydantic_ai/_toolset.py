"""``DshFsToolset``: a pydantic-ai ``AbstractToolset`` over one ``ToolFs``.

The toolset maps pydantic-ai's types onto :meth:`ToolFs.execute` and does
nothing more: the schema a model sees is the tool's definition (generated
from its pydantic model under the host's config), the arguments are
validated by the host with that model, and the answer is the host's text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from dsh_tool_fs import Session, ToolFs
from pydantic_ai import RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

__all__ = ["DshFsToolset", "SessionChoice"]

SessionChoice = Session | Callable[[RunContext[Any]], Session]
"""A :class:`~dsh_tool_fs.Session`, or a function that picks one for a run
(``lambda ctx: ctx.deps.session``)."""

_UNDECODED = "dsh_fs_undecoded_arguments"
"""Where an argument text that is not a JSON object travels to the host, which
answers it with its own message (``arguments must be a JSON object``)."""


class _HostValidates:
    """pydantic-ai's argument validator, leaving validation to the host.

    :meth:`ToolFs.execute` validates with the tool's pydantic model under the
    host's config and answers a bad argument with the exact text the model
    acts on. A validator that raised instead would send pydantic's own error
    list and spend the tool's retry budget, ending the run after a few.
    """

    def validate_json(
        self,
        input: str | bytes | bytearray,
        *,
        allow_partial: bool | Literal["off", "on", "trailing-strings"] = False,
        **kwargs: Any,
    ) -> Any:
        try:
            decoded = json.loads(input)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict):
            return decoded
        text = input if isinstance(input, str) else bytes(input).decode(errors="replace")
        return {_UNDECODED: text}

    def validate_python(
        self,
        input: Any,
        *,
        allow_partial: bool | Literal["off", "on", "trailing-strings"] = False,
        **kwargs: Any,
    ) -> Any:
        return input if isinstance(input, dict) else {_UNDECODED: input}


class DshFsToolset(AbstractToolset[Any]):
    """Every tool of ``toolfs`` as pydantic-ai tools, with its guidance as instructions.

    ``session`` is the conversation's :class:`~dsh_tool_fs.Session` (what the
    model has read, and its workspace), or a function choosing one from the
    run context; by default the toolset makes one, so one toolset is one
    conversation (``agent.run(..., toolsets=[DshFsToolset(toolfs)])`` adds
    one for a run). A tool that is not concurrency-safe (``write``,
    ``edit``) runs alone (pydantic-ai's ``sequential``). ``max_retries``
    bounds pydantic-ai's own retries (a call to an unknown tool); the tools'
    refusals never spend it.
    """

    def __init__(
        self,
        toolfs: ToolFs,
        *,
        session: SessionChoice | None = None,
        id: str | None = None,
        max_retries: int = 1,
    ) -> None:
        self.toolfs = toolfs
        self._session: SessionChoice = Session() if session is None else session
        self._id = id
        self.max_retries = max_retries
        self._validator = _HostValidates()

    @property
    def id(self) -> str | None:
        return self._id

    def session_for(self, ctx: RunContext[Any]) -> Session:
        """The session of this run's calls."""
        if isinstance(self._session, Session):
            return self._session
        return self._session(ctx)

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        return self.toolfs.instructions or None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {
            definition.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=definition.name,
                    description=definition.description,
                    parameters_json_schema=definition.parameters,
                    sequential=not definition.concurrency_safe,
                ),
                max_retries=self.max_retries,
                args_validator=self._validator,
            )
            for definition in self.toolfs.definitions
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str:
        args: Any = tool_args.get(_UNDECODED, tool_args)
        result = await self.toolfs.execute(name, args, session=self.session_for(ctx))
        return result.text
