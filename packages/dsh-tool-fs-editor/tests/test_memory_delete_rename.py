"""The memory tool's ``delete`` and ``rename`` on both backends: the seam's guarded delete
and move, whole directory trees, and the documented texts."""

from __future__ import annotations

import pytest
from dsh_fs import FileSystem
from dsh_fs.testing import Scratch
from editor_host import Agent, error, ok

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _backend_removes_and_moves(ws: Scratch) -> None:
    """The seam's delete and move are a backend's to implement (the default refuses):
    until a backend has them these tests say so instead of failing on its refusal."""
    fs = type(ws.fs)
    if fs.delete is FileSystem.delete or fs.move is FileSystem.move:
        pytest.skip(f"{fs.__name__} has no delete/move yet")


def agent_with(ws: Scratch, *, policy: bool = True) -> Agent:
    return Agent(ws, policy=policy, tool_options={"memory_dir": f"{ws.root}/.mem"})


# -- delete ---------------------------------------------------------------------------------


async def test_delete_of_a_viewed_memory_removes_it(ws: Scratch) -> None:
    ws.put(".mem/a.md", b"x")
    agent = agent_with(ws)
    ok(await agent.memory(command="view", path="/memories/a.md"))
    assert ok(await agent.memory(command="delete", path="/memories/a.md")) == (
        "Successfully deleted /memories/a.md"
    )
    assert ws.get(".mem/a.md") is None


async def test_delete_of_an_unread_memory_is_refused(ws: Scratch) -> None:
    ws.put(".mem/a.md", b"x")
    result = await agent_with(ws).memory(command="delete", path="/memories/a.md")
    assert error(result) == (
        f'cannot delete "{ws.root}/.mem/a.md" without reading it first — read the file, then retry'
    )
    assert ws.get(".mem/a.md") == b"x"


async def test_delete_of_a_directory_removes_the_whole_tree(ws: Scratch) -> None:
    """.mem/old/a.md, .mem/old/deep/b.md, .mem/keep.md"""
    ws.put(".mem/old/a.md", b"a")
    ws.put(".mem/old/deep/b.md", b"b")
    ws.put(".mem/keep.md", b"k")
    agent = agent_with(ws)
    assert ok(await agent.memory(command="delete", path="/memories/old")) == (
        "Successfully deleted /memories/old"
    )
    assert ws.get(".mem/old/a.md") is None
    assert ws.get(".mem/old/deep/b.md") is None
    assert ws.get(".mem/keep.md") == b"k"
    assert ok(await agent.memory(command="view", path="/memories")).endswith(
        "1B\t/memories\n1B\t/memories/keep.md"
    )


async def test_delete_of_a_missing_path_says_it_does_not_exist(ws: Scratch) -> None:
    ws.mkdir(".mem")
    assert error(await agent_with(ws).memory(command="delete", path="/memories/no.md")) == (
        "The path /memories/no.md does not exist"
    )


async def test_the_memory_directory_itself_is_never_deleted(ws: Scratch) -> None:
    ws.put(".mem/a.md", b"x")
    assert error(await agent_with(ws).memory(command="delete", path="/memories")) == (
        "Cannot delete the /memories directory itself"
    )
    assert ws.get(".mem/a.md") == b"x"


# -- rename ---------------------------------------------------------------------------------


async def test_rename_of_a_viewed_memory_moves_it(ws: Scratch) -> None:
    ws.put(".mem/draft.md", b"text\r\n")
    agent = agent_with(ws)
    ok(await agent.memory(command="view", path="/memories/draft.md"))
    text = ok(
        await agent.memory(
            command="rename", old_path="/memories/draft.md", new_path="/memories/done/final.md"
        )
    )
    assert text == "Successfully renamed /memories/draft.md to /memories/done/final.md"
    assert ws.get(".mem/draft.md") is None
    assert ws.get(".mem/done/final.md") == b"text\r\n"


async def test_a_renamed_memory_can_be_edited_at_its_new_path(ws: Scratch) -> None:
    ws.put(".mem/a.md", b"old\n")
    agent = agent_with(ws)
    ok(await agent.memory(command="view", path="/memories/a.md"))
    ok(await agent.memory(command="rename", old_path="/memories/a.md", new_path="/memories/b.md"))
    ok(
        await agent.memory(
            command="str_replace", path="/memories/b.md", old_str="old", new_str="new"
        )
    )
    assert ws.get(".mem/b.md") == b"new\n"


async def test_rename_of_a_directory_moves_the_whole_tree(ws: Scratch) -> None:
    ws.put(".mem/p/a.md", b"a")
    ws.put(".mem/p/q/b.md", b"b")
    agent = agent_with(ws)
    ok(await agent.memory(command="rename", old_path="/memories/p", new_path="/memories/r"))
    assert ws.get(".mem/r/a.md") == b"a"
    assert ws.get(".mem/r/q/b.md") == b"b"
    assert ws.get(".mem/p/a.md") is None


async def test_rename_never_overwrites(ws: Scratch) -> None:
    ws.put(".mem/a.md", b"a")
    ws.put(".mem/b.md", b"b")
    agent = agent_with(ws)
    ok(await agent.memory(command="view", path="/memories/a.md"))
    ok(await agent.memory(command="view", path="/memories/b.md"))
    result = await agent.memory(
        command="rename", old_path="/memories/a.md", new_path="/memories/b.md"
    )
    assert error(result) == "The destination /memories/b.md already exists"
    assert (ws.get(".mem/a.md"), ws.get(".mem/b.md")) == (b"a", b"b")


async def test_rename_of_a_missing_memory_says_it_does_not_exist(ws: Scratch) -> None:
    ws.mkdir(".mem")
    result = await agent_with(ws).memory(
        command="rename", old_path="/memories/no.md", new_path="/memories/b.md"
    )
    assert error(result) == "The path /memories/no.md does not exist"


async def test_rename_of_an_unread_memory_is_refused(ws: Scratch) -> None:
    ws.put(".mem/a.md", b"a")
    result = await agent_with(ws).memory(
        command="rename", old_path="/memories/a.md", new_path="/memories/b.md"
    )
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    assert ws.get(".mem/a.md") == b"a"


async def test_the_memory_directory_itself_is_never_renamed(ws: Scratch) -> None:
    ws.mkdir(".mem")
    result = await agent_with(ws).memory(
        command="rename", old_path="/memories", new_path="/memories/x"
    )
    assert error(result) == "Cannot rename the /memories directory itself"


async def test_rename_out_of_memories_is_refused(ws: Scratch) -> None:
    ws.put(".mem/a.md", b"a")
    result = await agent_with(ws, policy=False).memory(
        command="rename", old_path="/memories/a.md", new_path="/memories/../a.md"
    )
    assert error(result) == "Path /memories/../a.md would escape /memories directory"
    assert ws.get(".mem/a.md") == b"a"
    assert ws.get("a.md") is None
