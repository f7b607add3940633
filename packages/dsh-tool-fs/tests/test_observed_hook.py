"""``fs_observed`` reaches exactly the plugins pluggy would call, however they change."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest
from dsh_fs import FsTarget, hookimpl, make_plugin_manager
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import Session, ToolCall, ToolFs, ToolResult

pytestmark = pytest.mark.anyio


class Recorder:
    """Appends ``(name, display_path, version)`` to a shared list on every observation."""

    def __init__(self, name: str, seen: list[tuple[str, str, str]]) -> None:
        self.name = name
        self.seen = seen

    @hookimpl
    def fs_observed(self, target: FsTarget, version: str, actor: Any) -> None:
        self.seen.append((self.name, target.display_path, version))


def make(*plugins: object) -> ToolFs:
    fs = MemoryFileSystem(cwd="/w", files={"/w/a.txt": "alpha\n"})
    return ToolFs(fs, plugins=plugins)


async def read(toolfs: ToolFs, session: Session | None = None) -> None:
    result = await toolfs.execute("read", {"file_path": "a.txt"}, session=session)
    assert not result.is_error, result.text


def names(seen: list[tuple[str, str, str]]) -> list[str]:
    return [name for name, _, _ in seen]


async def test_every_call_reaches_the_registered_plugins_last_registered_first() -> None:
    seen: list[tuple[str, str, str]] = []
    toolfs = make(Recorder("one", seen), Recorder("two", seen))
    for _ in range(3):
        await read(toolfs)
    assert names(seen) == ["two", "one"] * 3
    assert {path for _, path, _ in seen} == {"/w/a.txt"}


async def test_the_order_is_pluggys_own() -> None:
    direct: list[tuple[str, str, str]] = []
    toolfs = make(Recorder("one", direct), Recorder("two", direct), Recorder("three", direct))
    await read(toolfs)
    await read(toolfs)
    through_pluggy: list[tuple[str, str, str]] = []
    pm = ToolFs(MemoryFileSystem()).plugin_manager
    for name in ("one", "two", "three"):
        pm.register(Recorder(name, through_pluggy))
    target = FsTarget("/w/a.txt", "/w/a.txt")
    pm.hook.fs_observed(target=target, version="1", actor=None)
    assert names(direct)[3:] == names(through_pluggy)


async def test_a_plugin_registered_between_calls_is_called_from_the_next_call() -> None:
    seen: list[tuple[str, str, str]] = []
    toolfs = make(Recorder("one", seen))
    await read(toolfs)
    await read(toolfs)
    toolfs.register(Recorder("late", seen))
    await read(toolfs)
    assert names(seen) == ["one", "one", "late", "one"]


async def test_a_plugin_registered_on_the_manager_itself_is_called_too() -> None:
    seen: list[tuple[str, str, str]] = []
    toolfs = make(Recorder("one", seen))
    await read(toolfs)
    await read(toolfs)
    toolfs.plugin_manager.register(Recorder("direct", seen))
    await read(toolfs)
    assert names(seen) == ["one", "one", "direct", "one"]


async def test_an_unregistered_plugin_is_no_longer_called() -> None:
    seen: list[tuple[str, str, str]] = []
    one, two = Recorder("one", seen), Recorder("two", seen)
    toolfs = make(one, two)
    await read(toolfs)
    await read(toolfs)
    toolfs.unregister(two)
    await read(toolfs)
    toolfs.unregister(one)
    await read(toolfs)
    toolfs.register(two)
    await read(toolfs)
    assert names(seen) == ["two", "one", "two", "one", "one", "two"]


async def test_a_plugin_replaced_by_an_equal_one_is_the_new_one_that_is_called() -> None:
    seen: list[tuple[str, str, str]] = []
    first = Recorder("first", seen)
    toolfs = make(first)
    await read(toolfs)
    await read(toolfs)
    toolfs.unregister(first)
    toolfs.register(Recorder("second", seen))
    await read(toolfs)
    assert names(seen) == ["first", "first", "second"]


class Registrar:
    """Registers ``late`` during its first observation."""

    def __init__(self, toolfs: ToolFs, late: object) -> None:
        self.toolfs = toolfs
        self.late: object | None = late

    @hookimpl
    def fs_observed(self, target: FsTarget, version: str, actor: Any) -> None:
        if self.late is not None:
            self.toolfs.register(self.late)
            self.late = None


async def test_a_plugin_registered_during_a_call_is_called_from_the_next_call() -> None:
    seen: list[tuple[str, str, str]] = []
    toolfs = make()
    await read(toolfs)
    await read(toolfs)
    toolfs.register(Registrar(toolfs, Recorder("late", seen)))
    await read(toolfs)
    assert seen == []
    await read(toolfs)
    assert names(seen) == ["late"]


class Partial:
    """Takes only some of the hook's arguments, which pluggy allows."""

    def __init__(self) -> None:
        self.versions: list[str] = []

    @hookimpl
    def fs_observed(self, version: str) -> None:
        self.versions.append(version)


async def test_an_implementation_taking_fewer_arguments_gets_them() -> None:
    partial = Partial()
    toolfs = make(partial)
    await read(toolfs)
    await read(toolfs)
    assert len(partial.versions) == 2 and partial.versions[0] == partial.versions[1]


class Wrapper:
    def __init__(self) -> None:
        self.events: list[str] = []

    @hookimpl(wrapper=True)
    def fs_observed(self, target: FsTarget, version: str, actor: Any) -> Generator[None, Any, Any]:
        self.events.append("before")
        result = yield
        self.events.append("after")
        return result


async def test_a_wrapper_still_wraps_every_call() -> None:
    seen: list[tuple[str, str, str]] = []
    wrapper = Wrapper()
    toolfs = make(Recorder("one", seen))
    await read(toolfs)
    await read(toolfs)
    toolfs.register(wrapper)
    await read(toolfs)
    await read(toolfs)
    assert wrapper.events == ["before", "after"] * 2
    toolfs.unregister(wrapper)
    await read(toolfs)
    assert wrapper.events == ["before", "after"] * 2
    assert names(seen) == ["one"] * 5


async def test_hook_call_monitoring_sees_every_call() -> None:
    seen: list[tuple[str, str, str]] = []
    toolfs = make(Recorder("one", seen))
    await read(toolfs)
    await read(toolfs)
    monitored: list[str] = []
    undo = toolfs.plugin_manager.add_hookcall_monitoring(
        lambda name, impls, kwargs: monitored.append(name), lambda *rest: None
    )
    await read(toolfs)
    await read(toolfs)
    undo()
    await read(toolfs)
    assert monitored == ["fs_observed"] * 2
    assert names(seen) == ["one"] * 5


class Failing:
    @hookimpl
    def fs_observed(self, target: FsTarget, version: str, actor: Any) -> None:
        raise RuntimeError("observer broke")


async def test_an_exception_from_an_implementation_fails_the_call() -> None:
    seen: list[tuple[str, str, str]] = []
    toolfs = make(Failing(), Recorder("two", seen))
    for _ in range(2):
        result = await toolfs.execute("read", {"file_path": "a.txt"})
        assert result.is_error and result.text == "Error: observer broke"
    # Last registered first: the recorder ran before the failing plugin, as through pluggy.
    assert names(seen) == ["two", "two"]


async def test_a_replaced_plugin_manager_is_the_one_called() -> None:
    seen: list[tuple[str, str, str]] = []
    toolfs = make(Recorder("old", seen))
    await read(toolfs)
    await read(toolfs)
    other = make_plugin_manager()
    other.register(Recorder("new", seen))
    toolfs.plugin_manager = other
    await read(toolfs)
    assert names(seen) == ["old", "old", "new"]


async def test_the_policy_still_authorizes_an_edit_after_a_read() -> None:
    toolfs = make(FsPolicy())
    session = Session(cwd="/w")
    await read(toolfs, session)
    await read(toolfs, session)
    result = await toolfs.execute(
        "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}, session=session
    )
    assert not result.is_error, result.text


async def test_the_result_and_actor_are_the_frozen_public_types() -> None:
    calls: list[Any] = []

    class Keep:
        @hookimpl
        def fs_observed(self, target: FsTarget, version: str, actor: Any) -> None:
            calls.append(actor)

    toolfs = make(Keep())
    session = Session(cwd="/w")
    result = await toolfs.execute("read", {"file_path": "a.txt"}, session=session)
    expected = ToolResult(is_error=False, text=result.text, value=result.value, meta=None)
    assert result == expected and repr(result) == repr(expected)
    with pytest.raises(AttributeError):
        result.text = "changed"  # type: ignore[misc]
    actor = calls[0]
    assert type(actor) is ToolCall
    assert (actor.session, actor.tool) == (session, "read")
    assert repr(actor) == repr(ToolCall(session=session, tool="read"))
    with pytest.raises(AttributeError):
        actor.tool = "write"  # type: ignore[misc]
