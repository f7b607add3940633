"""What the apply_patch tests share: a scratch tree, the host over it, one session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dsh_fs_local.testing import LocalScratch
from dsh_fs_memory import MemoryScratch
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import TOOLS, Session, ToolFs, ToolResult
from dsh_tool_fs_patch import APPLY_PATCH


@dataclass
class Stack:
    """A scratch tree, a host with the policy over it, and one session in its root."""

    scratch: LocalScratch | MemoryScratch
    toolfs: ToolFs
    session: Session

    async def patch(self, text: str, session: Session | None = None) -> ToolResult:
        return await self.toolfs.execute(
            "apply_patch", {"input": text}, session=session or self.session
        )

    async def read(self, path: str, session: Session | None = None) -> None:
        """Read ``path`` with the read tool (an observation under the policy)."""
        result = await self.toolfs.execute(
            "read", {"file_path": path}, session=session or self.session
        )
        assert not result.is_error, result.text

    def put(self, path: str, data: bytes) -> None:
        self.scratch.put(path, data)

    def get(self, path: str) -> bytes | None:
        return self.scratch.get(path)


def make_stack(scratch: LocalScratch | MemoryScratch, *, policy: bool = True) -> Stack:
    plugins: list[Any] = [FsPolicy()] if policy else []
    toolfs = ToolFs(scratch.fs, plugins=plugins, tools=(*TOOLS, APPLY_PATCH))
    return Stack(scratch, toolfs, Session(scratch.root))
