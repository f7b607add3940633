"""``DshMemoryTool``: the ``anthropic`` SDK's abstract memory tool, backed by dsh-fs.

The SDK ships ``BetaAsyncAbstractMemoryTool`` (and ``BetaAbstractMemoryTool`` for
its synchronous client) for a client to implement; its own local implementation
writes through path strings. ``DshMemoryTool`` (and ``DshMemoryToolSync``) answers
every command through a :class:`dsh_tool_fs.ToolFs` offering the ``memory``
tool, so any backend — local, memory, SFTP — holds the memories, contained,
atomically written and, with a policy plugin, viewed before changed. The SDK's
tool runner (``client.beta.messages.tool_runner(tools=[tool], ...)``) or your
own loop calls it; a failure is the SDK's ``ToolError``, which the runner
sends back as an error result.

Needs the ``anthropic`` extra: ``pip install "dsh-tool-fs-editor[anthropic]"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import anyio
from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from dsh_fs import FileSystem
from dsh_tool_fs import Session, ToolFs

from .memory_tool import MEMORY

__all__ = ["DshMemoryTool", "DshMemoryToolSync"]

_Command = (
    BetaMemoryTool20250818ViewCommand
    | BetaMemoryTool20250818CreateCommand
    | BetaMemoryTool20250818StrReplaceCommand
    | BetaMemoryTool20250818InsertCommand
    | BetaMemoryTool20250818DeleteCommand
    | BetaMemoryTool20250818RenameCommand
)


class DshMemoryTool(BetaAsyncAbstractMemoryTool):
    """The SDK's memory tool over ``toolfs`` (which must offer ``memory``), in ``session``.

    ``session`` is the observation owner (one per conversation, as for any
    tool of the host); by default a new one, in the backend's default
    directory. :meth:`over` builds the host from a backend.
    """

    def __init__(
        self,
        toolfs: ToolFs,
        *,
        session: Session | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        if "memory" not in toolfs.tool_names:
            raise ValueError('the host does not offer the "memory" tool')
        self.toolfs = toolfs
        self.session = session if session is not None else Session()

    @classmethod
    def over(
        cls,
        fs: FileSystem,
        memory_dir: str,
        *,
        plugins: Iterable[object] = (),
        session: Session | None = None,
    ) -> DshMemoryTool:
        """The memory tool on backend ``fs``, its ``/memories`` being ``memory_dir`` (a
        directory inside the backend's workspace); ``plugins`` such as ``FsPolicy()``."""
        toolfs = ToolFs(fs, plugins, tools=(MEMORY,), tool_options={"memory_dir": memory_dir})
        return cls(toolfs, session=session)

    async def _run(self, command: _Command) -> str:
        args: dict[str, Any] = command.model_dump(exclude_none=True)
        result = await self.toolfs.execute("memory", args, session=self.session)
        if result.is_error:
            raise ToolError(result.text)
        return result.text

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self._run(command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self._run(command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self._run(command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self._run(command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self._run(command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self._run(command)


class DshMemoryToolSync(BetaAbstractMemoryTool):
    """:class:`DshMemoryTool` for the SDK's synchronous client and tool runner: each command
    runs the asynchronous tool to completion (``anyio.run``), so call it from synchronous
    code, never from inside an event loop."""

    def __init__(
        self,
        toolfs: ToolFs,
        *,
        session: Session | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.tool = DshMemoryTool(toolfs, session=session)

    @classmethod
    def over(
        cls,
        fs: FileSystem,
        memory_dir: str,
        *,
        plugins: Iterable[object] = (),
        session: Session | None = None,
    ) -> DshMemoryToolSync:
        """As :meth:`DshMemoryTool.over`."""
        tool = DshMemoryTool.over(fs, memory_dir, plugins=plugins, session=session)
        return cls(tool.toolfs, session=tool.session)

    def _run(self, command: _Command) -> str:
        return anyio.run(self.tool._run, command)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._run(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._run(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._run(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._run(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._run(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._run(command)
