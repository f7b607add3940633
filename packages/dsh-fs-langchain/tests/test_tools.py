"""dsh_fs_tools driven by LangChain's scripted chat model in a real ``create_agent`` loop."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_fs_langchain import dsh_fs_tools
from dsh_fs_langchain_doubles import (
    CRLF_AFTER,
    ScriptedChatModel,
    turn,
)
from dsh_tool_fs import Session, ToolFs
from dsh_tool_fs.tools import EditArgs
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

EDIT = {"file_path": "app.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}


async def run(
    toolfs: ToolFs, model: ScriptedChatModel, session: Session | None = None
) -> list[ToolMessage]:
    agent = create_agent(
        model, tools=dsh_fs_tools(toolfs, session=session), system_prompt=toolfs.instructions
    )
    state = await agent.ainvoke({"messages": [{"role": "user", "content": "Turn DEBUG off."}]})
    return [message for message in state["messages"] if isinstance(message, ToolMessage)]


def script(*turns: AIMessage) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter([*turns, AIMessage("done")]))


@pytest.mark.anyio
async def test_unread_edit_is_refused_then_read_and_edit_keep_crlf(
    toolfs: ToolFs, project: Path
) -> None:
    model = script(
        turn("edit", EDIT, 1), turn("read", {"file_path": "app.py"}, 2), turn("edit", EDIT, 3)
    )
    results = await run(toolfs, model)
    app = project / "app.py"
    assert [(m.status, m.content) for m in results] == [
        ("error", f'Error: edit requires reading "{app}" first — read the file, then retry'),
        (
            "success",
            f"<path>{app}</path>\n<type>file</type>\n<content>\n1: DEBUG = True\n2: PORT = 8000\n"
            "\n(End of file - total 2 lines)\n</content>",
        ),
        ("success", f"The file {app} has been updated successfully."),
    ]
    assert app.read_bytes() == CRLF_AFTER


@pytest.mark.anyio
async def test_path_outside_the_workspace_is_refused(toolfs: ToolFs, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("key\n")
    results = await run(toolfs, script(turn("read", {"file_path": str(outside)}, 1)))
    assert [m.content for m in results] == [
        f'Error: cannot read "{outside}": outside the workspace'
    ]


@pytest.mark.anyio
async def test_bad_arguments_get_the_hosts_message(toolfs: ToolFs) -> None:
    model = script(
        turn("read", {"file_path": "app.py", "limit": 0}, 1),
        turn("edit", {**EDIT, "replace_every": True}, 2),
    )
    results = await run(toolfs, model)
    assert [(m.status, m.content) for m in results] == [
        ("error", "Error: limit must be a positive integer"),
        ("error", 'Error: unknown argument "replace_every"'),
    ]


@pytest.mark.anyio
async def test_tools_are_the_installed_tools_of_dsh_fs_tools(
    toolfs: ToolFs, dsh_fs_tools_names: list[str]
) -> None:
    model = script()
    await run(toolfs, model)
    assert model.offered == [dsh_fs_tools_names]


def test_a_chosen_subset_is_all_the_tools(project: Path) -> None:
    subset = ToolFs.from_entry_points(backend="local", cwd=str(project), tools=["read", "edit"])
    assert [tool.name for tool in dsh_fs_tools(subset)] == ["read", "edit"]


@pytest.mark.anyio
async def test_the_tool_guidance_is_the_system_prompt(toolfs: ToolFs) -> None:
    model = script()
    await run(toolfs, model)
    assert model.sent[0][0] == SystemMessage(toolfs.instructions)


def test_args_schema_is_our_model_and_the_model_sees_our_schema(toolfs: ToolFs) -> None:
    edit = next(tool for tool in dsh_fs_tools(toolfs) if tool.name == "edit")
    assert edit.args_schema is EditArgs
    definition = next(d for d in toolfs.definitions if d.name == "edit")
    assert convert_to_openai_tool(edit)["function"]["parameters"] == definition.parameters


@pytest.mark.anyio
async def test_a_read_authorizes_edits_in_its_own_session_only(
    toolfs: ToolFs, project: Path
) -> None:
    session = Session()
    await run(toolfs, script(turn("read", {"file_path": "app.py"}, 1)), session)
    other = await run(toolfs, script(turn("edit", EDIT, 1)))
    assert [m.content for m in other] == [
        f'Error: edit requires reading "{project / "app.py"}" first — read the file, then retry'
    ]
    same = await run(toolfs, script(turn("edit", EDIT, 1)), session)
    assert [m.content for m in same] == [
        f"The file {project / 'app.py'} has been updated successfully."
    ]


def test_a_blocking_invoke_runs_the_tool(toolfs: ToolFs, project: Path) -> None:
    read = next(tool for tool in dsh_fs_tools(toolfs) if tool.name == "read")
    assert read.invoke({"file_path": "app.py", "limit": 1}) == (
        f"<path>{project / 'app.py'}</path>\n<type>file</type>\n<content>\n1: DEBUG = True\n"
        "\n(Showing lines 1-1 of 2. Use offset=2 to continue.)\n</content>"
    )
