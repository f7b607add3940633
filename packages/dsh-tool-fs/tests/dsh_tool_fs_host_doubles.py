"""The test doubles of the host tests: a recording backend, a hook log, a tree, a host."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
from dsh_fs import (
    FsInfo,
    FsTarget,
    hookimpl,
)
from dsh_fs.testing import ForwardingFileSystem
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import ToolFs, ToolFsConfig


class RecordingFs(ForwardingFileSystem[MemoryFileSystem]):
    """A real backend (MemoryFileSystem) behind a wrapper that records every primitive.

    ``gates`` hold a primitive before it runs until the test opens the gate;
    ``entered`` is set when the primitive is reached.
    """

    def __init__(self, inner: MemoryFileSystem, *, unknown_size: bool = False) -> None:
        super().__init__(inner)
        self.calls: list[str] = []
        self.gates: dict[str, anyio.Event] = {}
        self.entered: dict[str, anyio.Event] = {}
        self.unknown_size = unknown_size

    async def entering(self, primitive: str) -> None:
        self.calls.append(primitive)
        if primitive in self.gates:
            self.entered.setdefault(primitive, anyio.Event()).set()
            await self.gates[primitive].wait()

    def gate(self, name: str) -> anyio.Event:
        self.gates[name] = anyio.Event()
        self.entered[name] = anyio.Event()
        return self.entered[name]

    async def stat(self, target: FsTarget) -> FsInfo | None:
        info = await super().stat(target)
        if info is not None and self.unknown_size:
            return FsInfo(info.version, info.type, None)
        return info


class HookLog:
    """A plugin that records every event, and answers no intent."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []

    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> None:
        self.events.append(("write_intent", target.display_path, actor))

    @hookimpl
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> None:
        self.events.append(("edit_intent", target.display_path, actor))

    @hookimpl
    def fs_observed(self, target: FsTarget, version: str | None, actor: Any) -> None:
        self.events.append(("observed", target.display_path, version))

    def names(self) -> list[str]:
        return [name for name, _, _ in self.events]


TREE = {"/w/a.txt": "alpha\nbeta\ngamma\n", "/w/src/main.py": "print(1)\n", "/w/b.md": "# b\n"}


def make(
    *,
    policy: bool = True,
    config: ToolFsConfig | None = None,
    unknown_size: bool = False,
) -> tuple[ToolFs, RecordingFs, HookLog]:
    fs = RecordingFs(MemoryFileSystem(cwd="/w", files=TREE), unknown_size=unknown_size)
    log = HookLog()
    plugins: list[object] = [FsPolicy(), log] if policy else [log]
    return ToolFs(fs, plugins=plugins, config=config), fs, log
