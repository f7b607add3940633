"""DshFsToolset driven by pydantic-ai's own scripted model (FunctionModel) on real files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from dsh_fs_pydantic_ai import DshFsToolset
from dsh_tool_fs import Session, ToolFs
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

CRLF_BEFORE = b"DEBUG = True\r\nPORT = 8000\r\n"
CRLF_AFTER = b"DEBUG = False\r\nPORT = 8000\r\n"
EDIT = {"file_path": "app.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}


@pytest.fixture
def anyio_backend() -> str:
    """pydantic-ai's agent loop runs on asyncio only."""
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_bytes(CRLF_BEFORE)
    return root


@pytest.fixture
def toolfs(project: Path) -> ToolFs:
    return ToolFs.from_entry_points(backend="local", cwd=str(project))


class Script:
    """A scripted model: one list of parts per turn; records what each turn was sent."""

    def __init__(self, *turns: list[ModelResponsePart]) -> None:
        self._turns: Iterator[list[ModelResponsePart]] = iter(turns)
        self.returns: list[str] = []
        self.instructions: list[str | None] = []
        self.tool_names: list[list[str]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.instructions.append(info.instructions)
        self.tool_names.append([tool.name for tool in info.function_tools])
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        for part in last.parts:
            if isinstance(part, ToolReturnPart):
                assert isinstance(part.content, str)
                self.returns.append(part.content)
        return ModelResponse(parts=next(self._turns))


def call(name: str, args: dict[str, Any] | str) -> ToolCallPart:
    return ToolCallPart(name, args)


def done() -> list[ModelResponsePart]:
    return [TextPart("done")]


async def run(toolset: DshFsToolset, script: Script) -> str:
    agent = Agent(FunctionModel(script), toolsets=[toolset])
    return (await agent.run("Turn DEBUG off in app.py.")).output


@pytest.mark.anyio
async def test_unread_edit_is_refused_then_read_and_edit_keep_crlf(
    toolfs: ToolFs, project: Path
) -> None:
    script = Script(
        [call("edit", EDIT)], [call("read", {"file_path": "app.py"})], [call("edit", EDIT)], done()
    )
    assert await run(DshFsToolset(toolfs), script) == "done"
    app = project / "app.py"
    assert script.returns == [
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
    script = Script([call("read", {"file_path": str(outside)})], done())
    await run(DshFsToolset(toolfs), script)
    assert script.returns == [f'Error: cannot read "{outside}": outside the workspace']


@pytest.mark.anyio
async def test_bad_arguments_get_the_hosts_message_not_a_retry(toolfs: ToolFs) -> None:
    script = Script(
        [call("read", {"file_path": "app.py", "limit": 0})],
        [call("read", "{not json")],
        [call("read", {"file_path": "app.py", "limit": 0})],
        done(),
    )
    assert await run(DshFsToolset(toolfs), script) == "done"
    assert script.returns == [
        "Error: limit must be a positive integer",
        "Error: arguments must be a JSON object",
        "Error: limit must be a positive integer",
    ]


@pytest.mark.anyio
async def test_tools_are_the_installed_tools_of_dsh_fs_tools(
    toolfs: ToolFs, dsh_fs_tools_names: list[str]
) -> None:
    script = Script(done())
    await run(DshFsToolset(toolfs), script)
    assert script.tool_names == [dsh_fs_tools_names]


@pytest.mark.anyio
async def test_a_chosen_subset_is_all_the_model_gets(project: Path) -> None:
    subset = ToolFs.from_entry_points(backend="local", cwd=str(project), tools=["read", "edit"])
    script = Script(done())
    await run(DshFsToolset(subset), script)
    assert script.tool_names == [["read", "edit"]]


@pytest.mark.anyio
async def test_the_tool_guidance_is_the_agents_instructions(toolfs: ToolFs) -> None:
    script = Script(done())
    await run(DshFsToolset(toolfs), script)
    assert script.instructions == [toolfs.instructions]


@pytest.mark.anyio
async def test_a_read_authorizes_edits_in_its_own_conversation_only(
    toolfs: ToolFs, project: Path
) -> None:
    first = DshFsToolset(toolfs)
    await run(first, Script([call("read", {"file_path": "app.py"})], done()))
    other = Script([call("edit", EDIT)], done())
    await run(DshFsToolset(toolfs), other)
    assert other.returns == [
        f'Error: edit requires reading "{project / "app.py"}" first — read the file, then retry'
    ]
    same = Script([call("edit", EDIT)], done())
    await run(first, same)
    assert same.returns == [f"The file {project / 'app.py'} has been updated successfully."]


@pytest.mark.anyio
async def test_a_session_can_come_from_the_runs_deps(toolfs: ToolFs, project: Path) -> None:
    session = Session(cwd=str(project))
    await toolfs.execute("read", {"file_path": "app.py"}, session=session)
    toolset = DshFsToolset(toolfs, session=lambda ctx: ctx.deps)
    script = Script([call("edit", EDIT)], done())
    agent = Agent(FunctionModel(script), deps_type=Session, toolsets=[toolset])
    await agent.run("Turn DEBUG off.", deps=session)
    assert script.returns == [f"The file {project / 'app.py'} has been updated successfully."]


@pytest.mark.anyio
async def test_writes_and_edits_run_alone(toolfs: ToolFs) -> None:
    tools = await DshFsToolset(toolfs).get_tools(cast(RunContext[Any], None))  # ctx is not used
    sequential = {name: tool.tool_def.sequential for name, tool in tools.items()}
    assert sequential == {
        "list": False,
        "read": False,
        "write": True,
        "edit": True,
        "apply_patch": True,
        "glob": False,
        "grep": False,
    }
