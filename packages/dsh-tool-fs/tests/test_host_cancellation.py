"""Cancellation through ToolFs: the cancel event aborts the primitive in flight (files
unchanged), and the caller's own scope propagates.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from dsh_fs import (
    FsTarget,
    hookimpl,
)
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import Session, ToolError, ToolFs, ToolResult
from dsh_tool_fs_host_doubles import TREE, HookLog, RecordingFs, make

pytestmark = pytest.mark.anyio


# -- cancellation ------------------------------------------------------------------


async def run_cancelled_at(
    primitive: str, name: str, args: dict[str, Any], session: Session | None = None
) -> tuple[ToolResult, RecordingFs]:
    tool, fs, _ = make(policy=False)
    entered = fs.gate(primitive)
    cancel = anyio.Event()
    results: list[ToolResult] = []

    async def call() -> None:
        results.append(await tool.execute(name, args, session=session, cancel=cancel))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await entered.wait()
            cancel.set()
    return results[0], fs


@pytest.mark.parametrize(
    ("primitive", "name", "args", "verb"),
    [
        ("resolve", "list", {}, "resolve"),
        ("list_dir(stat=False)", "list", {}, "list"),
        ("stat", "read", {"file_path": "a.txt"}, "stat"),
        ("stream_text", "read", {"file_path": "a.txt"}, "read"),
        ("write_text", "write", {"file_path": "a.txt", "content": "x"}, "write"),
        (
            "edit_text",
            "edit",
            {"file_path": "a.txt", "old_string": "beta", "new_string": "B"},
            "edit",
        ),
    ],
)
async def test_a_set_cancel_event_aborts_the_primitive_in_flight(
    primitive: str, name: str, args: dict[str, Any], verb: str
) -> None:
    result, fs = await run_cancelled_at(primitive, name, args)
    assert result.text == f"Error: {verb} aborted"
    assert result.error == ToolError(f"{verb} aborted", "FsError", "FS_ABORTED")
    assert fs.calls[-1] == primitive
    assert fs.inner.get_bytes("/w/a.txt") == b"alpha\nbeta\ngamma\n"


class CancelWhileDeciding:
    """A plugin whose intent hooks set the call's cancel event while they answer."""

    def __init__(self, cancel: anyio.Event) -> None:
        self.cancel = cancel

    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> None:
        self.cancel.set()

    @hookimpl
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> None:
        self.cancel.set()


class CancelWhileDecidingAsync:
    """The same with awaitable answers that set the event and then answer at once."""

    def __init__(self, cancel: anyio.Event) -> None:
        self.cancel = cancel

    async def _decide(self) -> None:
        self.cancel.set()

    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> Awaitable[None]:
        return self._decide()

    @hookimpl
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> Awaitable[None]:
        return self._decide()


MUTATIONS = [
    ("write", {"file_path": "a.txt", "content": "x"}),
    ("edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}),
]


@pytest.mark.parametrize("plugin", [CancelWhileDeciding, CancelWhileDecidingAsync])
@pytest.mark.parametrize(("name", "args"), MUTATIONS)
async def test_a_cancel_event_set_while_the_intent_is_asked_aborts_the_mutation(
    plugin: Callable[[anyio.Event], object], name: str, args: dict[str, Any]
) -> None:
    cancel = anyio.Event()
    fs = RecordingFs(MemoryFileSystem(cwd="/w", files=TREE))
    log = HookLog()
    tool = ToolFs(fs, plugins=[plugin(cancel), log])
    result = await tool.execute(name, args, cancel=cancel)
    assert result.text == f"Error: {name} aborted"
    assert result.error == ToolError(f"{name} aborted", "FsError", "FS_ABORTED")
    assert fs.calls == ["resolve"]  # the mutation primitive never started
    assert fs.inner.get_bytes("/w/a.txt") == b"alpha\nbeta\ngamma\n"
    assert "observed" not in log.names()


async def test_a_cancel_event_set_before_the_call_gives_resolve_aborted() -> None:
    tool, fs, _ = make()
    cancel = anyio.Event()
    cancel.set()
    result = await tool.execute("write", {"file_path": "a.txt", "content": "x"}, cancel=cancel)
    assert result.text == "Error: resolve aborted"
    assert result.error is not None and result.error.code == "FS_ABORTED"
    assert fs.calls == []


async def test_an_unset_cancel_event_changes_nothing() -> None:
    tool, _, _ = make()
    result = await tool.execute("read", {"file_path": "a.txt"}, cancel=anyio.Event())
    assert not result.is_error


async def test_a_failure_under_a_cancel_event_is_still_a_result() -> None:
    tool, _, _ = make()
    result = await tool.execute("read", {"file_path": "nope"}, cancel=anyio.Event())
    assert result.text == 'Error: cannot read "/w/nope": not found'


async def test_cancelling_the_callers_scope_propagates() -> None:
    tool, fs, _ = make(policy=False)
    entered = fs.gate("write_text")
    results: list[ToolResult] = []

    async def call() -> None:
        args = {"file_path": "a.txt", "content": "x"}
        results.append(await tool.execute("write", args, cancel=anyio.Event()))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await entered.wait()
            tg.cancel_scope.cancel()
    assert results == []  # never turned into a result
    assert fs.inner.get_bytes("/w/a.txt") == b"alpha\nbeta\ngamma\n"


async def test_cancelling_the_callers_scope_without_an_event_propagates() -> None:
    tool, fs, _ = make(policy=False)
    entered = fs.gate("edit_text")
    done: list[ToolResult] = []

    async def call(body: Callable[[], Awaitable[ToolResult]]) -> None:
        done.append(await body())

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                call,
                lambda: tool.execute(
                    "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}
                ),
            )
            await entered.wait()
            tg.cancel_scope.cancel()
    assert done == []
    assert fs.inner.get_bytes("/w/a.txt") == b"alpha\nbeta\ngamma\n"
