"""The memory tool on both backends: /memories mapped onto the memory directory and
contained to it, every command's texts as Anthropic documents them, and the policy."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_fs.testing import Scratch
from editor_host import Agent, error, ok

pytestmark = pytest.mark.anyio

LISTING = (
    "Here're the files and directories up to 2 levels deep in {}, excluding hidden items "
    "and node_modules:\n"
)


def agent_with(ws: Scratch, memory_dir: str = ".mem", **host: Any) -> Agent:
    return Agent(ws, tool_options={"memory_dir": f"{ws.root}/{memory_dir}"}, **host)


# -- the memory directory -------------------------------------------------------------------


async def test_a_missing_memory_directory_views_as_empty(ws: Scratch) -> None:
    assert ok(await agent_with(ws).memory(command="view", path="/memories")) == (
        LISTING.format("/memories") + "0B\t/memories"
    )


async def test_memories_live_in_the_memory_directory(ws: Scratch) -> None:
    agent = agent_with(ws)
    text = ok(await agent.memory(command="create", path="/memories/notes.md", file_text="tea\n"))
    assert text == "File created successfully at: /memories/notes.md"
    assert ws.get(".mem/notes.md") == b"tea\n"


async def test_the_default_memory_directory_is_memories_in_the_workspace(ws: Scratch) -> None:
    agent = Agent(ws)
    ok(await agent.memory(command="create", path="/memories/a.md", file_text="x"))
    assert ws.get("memories/a.md") == b"x"


async def test_view_lists_two_levels_with_sizes_hidden_and_node_modules_left_out(
    ws: Scratch,
) -> None:
    """
    .mem/prefs.md (10 B), .mem/projects/app.md (2000 B), .mem/projects/deep/x.md (not shown),
    .mem/.hidden, .mem/node_modules/m.js
    """
    ws.put(".mem/prefs.md", b"likes tea\n")
    ws.put(".mem/projects/app.md", b"x" * 2000)
    ws.put(".mem/projects/deep/x.md", b"deep")
    ws.put(".mem/.hidden", b"")
    ws.put(".mem/node_modules/m.js", b"")
    assert ok(await agent_with(ws).memory(command="view", path="/memories")) == (
        LISTING.format("/memories")
        + "2.0K\t/memories\n10B\t/memories/prefs.md\n2.0K\t/memories/projects/\n"
        "2.0K\t/memories/projects/app.md\n0B\t/memories/projects/deep/"
    )


async def test_view_of_a_memory_numbers_its_lines(ws: Scratch) -> None:
    ws.put(".mem/notes.md", b"Hello World\nThis is line two\n")
    assert ok(await agent_with(ws).memory(command="view", path="/memories/notes.md")) == (
        "Here's the content of /memories/notes.md with line numbers:\n"
        "     1\tHello World\n     2\tThis is line two\n"
    )


async def test_view_of_a_missing_memory_says_it_does_not_exist(ws: Scratch) -> None:
    assert error(await agent_with(ws).memory(command="view", path="/memories/no.md")) == (
        "The path /memories/no.md does not exist. Please provide a valid path."
    )


# -- containment ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "/memories/../secret.txt",
            "Path /memories/../secret.txt would escape /memories directory",
        ),
        ("/memories/a/../../x", "Path /memories/a/../../x would escape /memories directory"),
        ("/etc/passwd", "Path must start with /memories, got: /etc/passwd"),
        ("memories/a.md", "Path must start with /memories, got: memories/a.md"),
        ("/memoriesX/a.md", "Path must start with /memories, got: /memoriesX/a.md"),
    ],
)
async def test_paths_outside_memories_are_refused(ws: Scratch, path: str, message: str) -> None:
    ws.put("secret.txt", b"s")
    result = await agent_with(ws).memory(command="view", path=path)
    assert error(result) == message
    assert result.error is not None and result.error.code == "FS_OUTSIDE_WORKSPACE"


async def test_a_link_out_of_the_memory_directory_is_refused(ws: Scratch) -> None:
    ws.put("project/secret.txt", b"s")
    ws.mkdir(".mem")
    ws.symlink(".mem/link", f"{ws.root}/project")
    agent = agent_with(ws)
    assert error(await agent.memory(command="view", path="/memories/link/secret.txt")) == (
        "Path /memories/link/secret.txt would escape /memories directory"
    )
    result = await agent.memory(command="create", path="/memories/link/new.md", file_text="x")
    assert result.error is not None and result.error.code == "FS_OUTSIDE_WORKSPACE"
    assert ws.get("project/new.md") is None


async def test_a_memory_directory_outside_the_workspace_is_refused(ws: Scratch) -> None:
    agent = Agent(ws, tool_options={"memory_dir": "/elsewhere"})
    result = await agent.memory(command="view", path="/memories")
    assert error(result) == 'cannot view "/elsewhere": outside the workspace'


# -- create, str_replace, insert ------------------------------------------------------------


async def test_create_refuses_an_existing_memory(ws: Scratch) -> None:
    ws.put(".mem/a.md", b"keep")
    result = await agent_with(ws).memory(command="create", path="/memories/a.md", file_text="x")
    assert error(result) == "File /memories/a.md already exists"
    assert result.error is not None and result.error.code == "FS_ALREADY_EXISTS"
    assert ws.get(".mem/a.md") == b"keep"


async def test_str_replace_after_a_view_shows_the_changed_lines(ws: Scratch) -> None:
    ws.put(".mem/p.md", b"a\nb\nFavorite color: blue\nc\nd\ne\n")
    agent = agent_with(ws)
    ok(await agent.memory(command="view", path="/memories/p.md"))
    text = ok(
        await agent.memory(
            command="str_replace", path="/memories/p.md", old_str="blue", new_str="green"
        )
    )
    assert text == (
        "The memory file has been edited. Here is the snippet showing the change (with line "
        "numbers):\n     1\ta\n     2\tb\n     3\tFavorite color: green\n     4\tc\n     5\td"
    )
    assert ws.get(".mem/p.md") == b"a\nb\nFavorite color: green\nc\nd\ne\n"


async def test_a_memory_is_viewed_before_it_is_changed(ws: Scratch) -> None:
    ws.put(".mem/p.md", b"blue\n")
    result = await agent_with(ws).memory(
        command="str_replace", path="/memories/p.md", old_str="blue", new_str="green"
    )
    assert error(result) == (
        f'edit requires reading "{ws.root}/.mem/p.md" first — read the file, then retry'
    )
    assert ws.get(".mem/p.md") == b"blue\n"


async def test_str_replace_texts_of_no_and_several_matches(ws: Scratch) -> None:
    ws.put(".mem/p.md", b"x\ny\nx\n")
    agent = agent_with(ws)
    ok(await agent.memory(command="view", path="/memories/p.md"))
    assert error(await agent.memory(command="str_replace", path="/memories/p.md", old_str="z")) == (
        "No replacement was performed, old_str `z` did not appear verbatim in /memories/p.md."
    )
    assert error(await agent.memory(command="str_replace", path="/memories/p.md", old_str="x")) == (
        "No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 3. "
        "Please ensure it is unique"
    )


async def test_str_replace_of_a_directory_says_it_does_not_exist(ws: Scratch) -> None:
    ws.mkdir(".mem/dir")
    agent = agent_with(ws, policy=False)
    assert error(await agent.memory(command="str_replace", path="/memories/dir", old_str="a")) == (
        "The path /memories/dir does not exist. Please provide a valid path."
    )


async def test_insert_adds_a_line_and_says_the_file_was_edited(ws: Scratch) -> None:
    ws.put(".mem/todo.md", b"- a\n- b\n")
    agent = agent_with(ws)
    ok(await agent.memory(command="view", path="/memories/todo.md"))
    text = ok(
        await agent.memory(
            command="insert", path="/memories/todo.md", insert_line=2, insert_text="- c\n"
        )
    )
    assert text == "The file /memories/todo.md has been edited."
    assert ws.get(".mem/todo.md") == b"- a\n- b\n- c\n"


async def test_insert_texts_of_a_missing_file_and_a_line_out_of_range(ws: Scratch) -> None:
    ws.put(".mem/t.md", b"a\n")
    agent = agent_with(ws, policy=False)
    assert (
        error(
            await agent.memory(
                command="insert", path="/memories/no.md", insert_line=0, insert_text="x"
            )
        )
        == "The path /memories/no.md does not exist"
    )
    assert error(
        await agent.memory(command="insert", path="/memories/t.md", insert_line=5, insert_text="x")
    ) == (
        "Invalid `insert_line` parameter: 5. It should be within the range of lines of the "
        "file: [0, 1]"
    )


async def test_a_command_without_its_path_is_refused(ws: Scratch) -> None:
    assert error(await agent_with(ws).memory(command="view")) == (
        "Parameter `path` is required for command: view"
    )


async def test_rename_without_new_path_is_refused(ws: Scratch) -> None:
    assert error(await agent_with(ws).memory(command="rename", old_path="/memories/a")) == (
        "Parameter `new_path` is required for command: rename"
    )
