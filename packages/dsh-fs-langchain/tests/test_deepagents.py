"""DshFsBackend under a real ``create_deep_agent``, driven by LangChain's scripted chat model,
and its operations one by one on the memory backend.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deepagents import create_deep_agent
from deepagents.backends.protocol import FileInfo, GrepMatch, ReadResult
from dsh_fs_langchain.deepagents import DshFsBackend, literal_pattern
from dsh_fs_langchain_doubles import CRLF_AFTER, CRLF_BEFORE, ScriptedChatModel, turn
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import ToolFs, installed_tools
from langchain_core.messages import AIMessage, ToolMessage


async def run_deep_agent(project: Path, *turns: AIMessage) -> list[tuple[str, Any]]:
    toolfs = ToolFs.from_entry_points(backend="local", cwd=str(project))
    model = ScriptedChatModel(messages=iter([*turns, AIMessage("done")]))
    agent = create_deep_agent(model=model, backend=DshFsBackend(toolfs))
    state = await agent.ainvoke({"messages": [{"role": "user", "content": "Turn DEBUG off."}]})
    return [(m.status, m.content) for m in state["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.anyio
async def test_deep_agent_unread_edit_is_refused_then_read_and_edit_keep_crlf(
    project: Path,
) -> None:
    app = str(project / "app.py")
    edit = {"file_path": app, "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
    results = await run_deep_agent(
        project,
        turn("edit_file", edit, 1),
        turn("read_file", {"file_path": app}, 2),
        turn("edit_file", edit, 3),
    )
    assert results[0] == (
        "error",
        f'Error: edit requires reading "{app}" first — read the file, then retry',
    )
    assert results[1][0] == "success" and "DEBUG = True" in results[1][1]
    assert results[2] == (
        "success",
        f"Successfully replaced 1 instance(s) of the string in '{app}'",
    )
    assert (project / "app.py").read_bytes() == CRLF_AFTER


@pytest.mark.anyio
async def test_deep_agent_path_outside_the_workspace_is_refused(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("key\n")
    results = await run_deep_agent(
        project,
        turn("read_file", {"file_path": str(outside)}, 1),
        turn("write_file", {"file_path": str(outside), "content": "x\n"}, 2),
    )
    assert results == [
        ("error", f'Error: cannot read "{outside}": outside the workspace'),
        ("error", f'Error: cannot write "{outside}": outside the workspace'),
    ]
    assert outside.read_text() == "key\n"


@pytest.mark.anyio
async def test_deep_agent_overwrite_of_an_unread_file_is_refused(project: Path) -> None:
    app = str(project / "app.py")
    results = await run_deep_agent(
        project, turn("write_file", {"file_path": app, "content": "x\n"}, 1)
    )
    assert results == [
        (
            "error",
            f'Error: cannot overwrite existing "{app}" without reading it first'
            " — read the file, then retry",
        )
    ]
    assert (project / "app.py").read_bytes() == CRLF_BEFORE


# -- the operations, one by one, on the memory backend --------------------------------------------


@pytest.fixture
def backend() -> DshFsBackend:
    files = {
        "/w/app.py": "one\ntwo\nthree\n",
        "/w/src/a.py": "x = f(1)\ny = f(2)\nz = g(3)\n",
        "/w/src/b.txt": "f(1) again\n",
    }
    fs = MemoryFileSystem(cwd="/w", files=files)
    return DshFsBackend(ToolFs(fs, plugins=[FsPolicy()], tools=installed_tools()))


@pytest.mark.anyio
async def test_ls_gives_absolute_paths_a_directory_ending_with_a_slash(
    backend: DshFsBackend,
) -> None:
    listing = await backend.als("/w")
    assert listing.entries == [
        FileInfo(path="/w/src/", is_dir=True),
        FileInfo(path="/w/app.py", is_dir=False),
    ]


@pytest.mark.anyio
async def test_ls_of_a_missing_directory_gives_the_hosts_message(backend: DshFsBackend) -> None:
    assert (await backend.als("/w/nope")).error == 'cannot list "/w/nope": not found'


@pytest.mark.anyio
async def test_read_gives_a_window_and_where_to_continue(backend: DshFsBackend) -> None:
    assert await backend.aread("/w/app.py", offset=1, limit=1) == ReadResult(
        file_data={"content": "two", "encoding": "utf-8"},
        start_line=2,
        end_line=2,
        total_lines=3,
        next_offset=2,
    )


@pytest.mark.anyio
async def test_read_of_no_lines_inspects_nothing(backend: DshFsBackend) -> None:
    result = await backend.aread("/w/app.py", limit=0)
    assert result.no_lines_requested and result.file_data == {"content": "", "encoding": "utf-8"}


@pytest.mark.anyio
async def test_grep_matches_the_pattern_literally(backend: DshFsBackend) -> None:
    result = await backend.agrep("f(1)", "/w/src")
    assert sorted(result.matches or [], key=lambda match: match["path"]) == [
        GrepMatch(path="/w/src/a.py", line=1, text="x = f(1)"),
        GrepMatch(path="/w/src/b.txt", line=1, text="f(1) again"),
    ]


@pytest.mark.anyio
async def test_grep_stops_at_max_count_and_says_so(backend: DshFsBackend) -> None:
    result = await backend.agrep("= ", "/w/src", "*.py", max_count=2)
    assert result.truncated and [m["line"] for m in result.matches or []] == [1, 2]


def test_literal_pattern_escapes_every_re2_operator() -> None:
    assert literal_pattern(r"a.b*(c)[d]{2}^$|\?+") == r"a\.b\*\(c\)\[d\]\{2\}\^\$\|\\\?\+"


@pytest.mark.anyio
async def test_glob_finds_files_with_absolute_paths(backend: DshFsBackend) -> None:
    result = await backend.aglob("**/*.py", "/w")
    assert sorted(info["path"] for info in result.matches or []) == ["/w/app.py", "/w/src/a.py"]


@pytest.mark.anyio
async def test_edit_counts_the_occurrences_it_replaced(backend: DshFsBackend) -> None:
    await backend.aread("/w/src/a.py")
    result = await backend.aedit("/w/src/a.py", "f(", "h(", replace_all=True)
    assert (result.path, result.occurrences) == ("/w/src/a.py", 2)


def test_blocking_operations_run_their_async_twins(backend: DshFsBackend) -> None:
    assert backend.write("/w/new.txt", "hello\n").path == "/w/new.txt"
    assert backend.read("/w/new.txt").file_data == {"content": "hello", "encoding": "utf-8"}


@pytest.mark.anyio
async def test_delete_of_an_unread_file_is_refused(backend: DshFsBackend) -> None:
    result = await backend.adelete("/w/app.py")
    assert result.error == (
        'Error: cannot delete "/w/app.py" without reading it first — read the file, then retry'
    )
    assert (await backend.aread("/w/app.py")).file_data is not None


@pytest.mark.anyio
async def test_delete_of_a_read_file_removes_it(backend: DshFsBackend) -> None:
    await backend.aread("/w/app.py")
    assert (await backend.adelete("/w/app.py")).path == "/w/app.py"
    assert (await backend.aread("/w/app.py")).error == 'cannot read "/w/app.py": not found'


@pytest.mark.anyio
async def test_delete_of_a_directory_removes_its_tree(backend: DshFsBackend) -> None:
    assert (await backend.adelete("/w/src")).path == "/w/src"
    assert (await backend.als("/w")).entries == [FileInfo(path="/w/app.py", is_dir=False)]


@pytest.mark.anyio
async def test_delete_outside_the_workspace_is_refused(backend: DshFsBackend) -> None:
    assert (await backend.adelete("/etc")).error == (
        'Error: cannot delete "/etc": outside the workspace'
    )


@pytest.mark.anyio
async def test_deep_agent_deletes_a_file_it_read(project: Path) -> None:
    app = str(project / "app.py")
    results = await run_deep_agent(
        project,
        turn("delete", {"file_path": app}, 1),
        turn("read_file", {"file_path": app}, 2),
        turn("delete", {"file_path": app}, 3),
    )
    assert results[0] == (
        "error",
        f'Error: cannot delete "{app}" without reading it first — read the file, then retry',
    )
    assert results[2] == ("success", f"Deleted {app}")
    assert not (project / "app.py").exists()
