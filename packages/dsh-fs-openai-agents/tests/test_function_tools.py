"""dsh_fs_function_tools in the Agents SDK's real run loop, driven by its ScriptedModel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from dsh_fs_openai_agents import dsh_fs_function_tools, strict_compatible
from dsh_tool_fs import Session, ToolFs

CRLF_AFTER = b"DEBUG = False\r\nPORT = 8000\r\n"
EDIT = {"file_path": "app.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}

set_tracing_disabled(True)  # no trace upload from a test


def scripted(*calls: tuple[str, dict[str, Any] | str]) -> ScriptedModel:
    steps: list[Any] = [
        [function_call(name, args, call_id=f"call_{n}")] for n, (name, args) in enumerate(calls)
    ]
    return ScriptedModel([*steps, [assistant_message("done")]])


async def run(toolfs: ToolFs, model: ScriptedModel, session: Session | None = None) -> list[str]:
    """The outputs the model got back, call by call."""
    agent = Agent(
        name="coder",
        instructions=toolfs.instructions,
        model=model,
        tools=list(dsh_fs_function_tools(toolfs, session=session)),
    )
    result = await Runner.run(agent, "Turn DEBUG off.")
    assert result.final_output == "done"
    return [
        item["output"]
        for item in model.calls[-1].input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


@pytest.mark.anyio
async def test_unread_edit_is_refused_then_read_and_edit_keep_crlf(
    toolfs: ToolFs, project: Path
) -> None:
    outputs = await run(
        toolfs, scripted(("edit", EDIT), ("read", {"file_path": "app.py"}), ("edit", EDIT))
    )
    app = project / "app.py"
    assert outputs == [
        f'Error: edit requires reading "{app}" first — read the file, then retry',
        f"<path>{app}</path>\n<type>file</type>\n<content>\n1: DEBUG = True\n2: PORT = 8000\n"
        "\n(End of file - total 2 lines)\n</content>",
        f"The file {app} has been updated successfully.",
    ]
    assert app.read_bytes() == CRLF_AFTER


@pytest.mark.anyio
async def test_path_outside_the_workspace_is_refused(toolfs: ToolFs, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("key\n")
    outputs = await run(toolfs, scripted(("read", {"file_path": str(outside)})))
    assert outputs == [f'Error: cannot read "{outside}": outside the workspace']


@pytest.mark.anyio
async def test_bad_arguments_get_the_hosts_message(toolfs: ToolFs) -> None:
    outputs = await run(
        toolfs, scripted(("read", {"file_path": "app.py", "limit": 0}), ("read", "{not json"))
    )
    assert outputs == [
        "Error: limit must be a positive integer",
        "Error: arguments must be a JSON object",
    ]


@pytest.mark.anyio
async def test_tools_are_the_installed_tools_of_dsh_fs_tools(
    toolfs: ToolFs, dsh_fs_tools_names: list[str]
) -> None:
    model = scripted()
    await run(toolfs, model)
    assert [tool.name for tool in model.calls[0].tools] == dsh_fs_tools_names


def test_a_chosen_subset_is_all_the_tools(project: Path) -> None:
    subset = ToolFs.from_entry_points(backend="local", cwd=str(project), tools=["read", "edit"])
    assert [tool.name for tool in dsh_fs_function_tools(subset)] == ["read", "edit"]


@pytest.mark.anyio
async def test_the_tool_guidance_is_the_agents_instructions(toolfs: ToolFs) -> None:
    model = scripted()
    await run(toolfs, model)
    assert model.calls[0].system_instructions == toolfs.instructions


def test_strict_only_where_every_argument_is_required(toolfs: ToolFs) -> None:
    tools = {tool.name: tool for tool in dsh_fs_function_tools(toolfs)}
    assert {name: tool.strict_json_schema for name, tool in tools.items()} == {
        "list": False,
        "read": False,
        "write": True,
        "edit": False,
        "apply_patch": True,
        "glob": False,
        "grep": False,
    }
    write = next(d for d in toolfs.definitions if d.name == "write")
    assert tools["write"].params_json_schema == write.parameters


def test_a_schema_with_an_optional_argument_is_not_strict_compatible() -> None:
    optional = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert not strict_compatible(optional)
    assert strict_compatible({**optional, "required": ["a", "b"]})
    assert not strict_compatible({**optional, "required": ["a", "b"], "additionalProperties": True})


@pytest.mark.anyio
async def test_a_read_authorizes_edits_in_its_own_session_only(
    toolfs: ToolFs, project: Path
) -> None:
    session = Session()
    await run(toolfs, scripted(("read", {"file_path": "app.py"})), session)
    assert await run(toolfs, scripted(("edit", EDIT))) == [
        f'Error: edit requires reading "{project / "app.py"}" first — read the file, then retry'
    ]
    assert await run(toolfs, scripted(("edit", EDIT)), session) == [
        f"The file {project / 'app.py'} has been updated successfully."
    ]


@pytest.mark.anyio
async def test_a_session_can_come_from_the_runs_context(toolfs: ToolFs, project: Path) -> None:
    session = Session()
    await toolfs.execute("read", {"file_path": "app.py"}, session=session)
    model = scripted(("edit", EDIT))
    agent = Agent[Session](
        name="coder",
        model=model,
        tools=list(dsh_fs_function_tools(toolfs, session=lambda ctx: ctx.context)),
    )
    await Runner.run(agent, "Turn DEBUG off.", context=session)
    assert (project / "app.py").read_bytes() == CRLF_AFTER
