"""A host with the two tools and the policy, and one session in the scratch workspace."""

from __future__ import annotations

from typing import Any

from dsh_fs.testing import Scratch
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import TOOLS, Session, ToolFs, ToolResult
from dsh_tool_fs_editor import MEMORY, TEXT_EDITOR

EDITOR = "str_replace_based_edit_tool"


class Agent:
    """One agent session over ``ws``: ``await agent.editor(command=..., ...)``."""

    def __init__(self, ws: Scratch, *, policy: bool = True, **host: Any) -> None:
        plugins = [FsPolicy()] if policy else []
        self.toolfs = ToolFs(ws.fs, plugins=plugins, tools=(*TOOLS, TEXT_EDITOR, MEMORY), **host)
        self.session = Session(cwd=ws.root)

    async def editor(self, **args: Any) -> ToolResult:
        return await self.toolfs.execute(EDITOR, args, session=self.session)

    async def memory(self, **args: Any) -> ToolResult:
        return await self.toolfs.execute("memory", args, session=self.session)


def ok(result: ToolResult) -> str:
    """The text of a successful result."""
    assert not result.is_error, result.text
    return result.text


def error(result: ToolResult) -> str:
    """The message of a failed result (``Error: `` left out)."""
    assert result.is_error, result.text
    assert result.error is not None
    return result.error.message
