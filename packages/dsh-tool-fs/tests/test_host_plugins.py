"""Plugins through ToolFs: awaitable intents, failing hooks, wrong intents, unregistering, and
a third-party plugin found by entry point name.
"""

from __future__ import annotations

import gc
import importlib.metadata
import logging
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import dsh_fs.entry_points
import pytest
from dsh_fs import (
    PLUGINS_GROUP,
    FsTarget,
    hookimpl,
)
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import Session, ToolError, ToolFs
from dsh_tool_fs_host_doubles import TREE

pytestmark = pytest.mark.anyio


# -- plugins, errors and awaitables ----------------------------------------------


class AsyncDecider:
    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> Awaitable[Any]:
        async def decide() -> None:
            await anyio.lowlevel.checkpoint()
            self.awaited = True

        return decide()

    awaited = False


async def test_an_awaitable_intent_is_awaited() -> None:
    fs = MemoryFileSystem(cwd="/w", files=TREE)
    decider = AsyncDecider()
    tool = ToolFs(fs, plugins=[decider])
    result = await tool.execute("write", {"file_path": "a.txt", "content": "x"})
    assert decider.awaited
    assert not result.is_error


class BadObserver:
    @hookimpl
    def fs_observed(self, target: FsTarget, version: str, actor: Any) -> None:
        raise RuntimeError("observer broke")


async def test_an_unexpected_exception_becomes_a_tool_failure_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tool = ToolFs(MemoryFileSystem(cwd="/w", files=TREE), plugins=[BadObserver()])
    with caplog.at_level(logging.ERROR, logger="dsh_tool_fs"):
        result = await tool.execute("read", {"file_path": "a.txt"})
    assert result.text == "Error: observer broke"
    assert result.error == ToolError("observer broke", "RuntimeError", "TOOL_FAILURE")
    assert result.value is None
    assert any(r.exc_info for r in caplog.records)


class WrongIntent:
    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> Any:
        return "yes"


async def test_an_intent_of_the_wrong_type_is_a_tool_failure() -> None:
    tool = ToolFs(MemoryFileSystem(cwd="/w", files=TREE), plugins=[WrongIntent()])
    result = await tool.execute("write", {"file_path": "a.txt", "content": "x"})
    assert result.error is not None
    assert (result.error.name, result.error.code) == ("TypeError", "TOOL_FAILURE")


async def test_unregistering_the_policy_drops_its_state() -> None:
    fs = MemoryFileSystem(cwd="/w", files=TREE)
    policy = FsPolicy()
    tool = ToolFs(fs, plugins=[policy])
    session = Session()
    await tool.execute("read", {"file_path": "a.txt"}, session=session)
    assert policy.owner_count() == 1
    tool.unregister(policy)
    assert policy.owner_count() == 0
    assert policy not in tool.plugins
    tool.register(policy)
    result = await tool.execute(
        "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}, session=session
    )
    assert result.text == (
        'Error: edit requires reading "/w/a.txt" first — read the file, then retry'
    )


async def test_a_discarded_session_frees_the_policy_state() -> None:
    policy = FsPolicy()
    tool = ToolFs(MemoryFileSystem(cwd="/w", files=TREE), plugins=[policy])
    session = Session()
    await tool.execute("read", {"file_path": "a.txt"}, session=session)
    assert policy.owner_count() == 1
    del session
    gc.collect()
    assert policy.owner_count() == 0


AUDIT_PLUGIN = """
import logging

from dsh_fs import hookimpl

log = logging.getLogger("audit_xyz")


class AuditPlugin:
    def __init__(self):
        self.seen = []

    @hookimpl
    def fs_observed(self, target, version, actor):
        self.seen.append((actor.tool, target.display_path))
        log.info("%s observed %s at %s", actor.tool, target.display_path, version)
"""


async def test_a_third_party_plugin_is_loaded_by_entry_point_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "audit_xyz_plugin.py").write_text(AUDIT_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    real = importlib.metadata.entry_points
    extra = importlib.metadata.EntryPoint(
        name="audit-xyz", value="audit_xyz_plugin:AuditPlugin", group=PLUGINS_GROUP
    )

    def entry_points(*, group: str) -> list[importlib.metadata.EntryPoint]:
        found = list(real(group=group))
        return [*found, extra] if group == PLUGINS_GROUP else found

    monkeypatch.setattr(dsh_fs.entry_points, "entry_points", entry_points)
    tool = ToolFs.from_entry_points(backend="memory", plugins=("policy", "audit-xyz"), cwd="/w")
    assert [type(p).__name__ for p in tool.plugins] == ["FsPolicy", "AuditPlugin"]
    await tool.execute("write", {"file_path": "n.txt", "content": "x"}, session=Session())
    await tool.execute("read", {"file_path": "n.txt"})
    audit: Any = tool.plugin_manager.get_plugin("audit-xyz")
    assert audit.seen == [("write", "/w/n.txt"), ("read", "/w/n.txt")]
