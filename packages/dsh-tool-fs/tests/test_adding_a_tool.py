"""The worked example of docs/adding-a-tool.md: a fifth tool is one ToolSpec.

``STAT`` below is the doc's ``tools/stat_tool.py`` with absolute imports. It
does not ship; handing it to ``ToolFs(tools=...)`` shows that one spec, its
body and its renderer are all a tool needs: the schema, validation,
definition, prompt section, MCP metadata and dispatch follow from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import pytest
from dsh_fs import FsError, FsErrorCode, FsInfo
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import (
    TOOLS,
    Argument,
    Execution,
    PromptSection,
    ToolAnnotations,
    ToolError,
    ToolFs,
    ToolOutput,
    ToolSpec,
    to_mcp_tools,
)
from dsh_tool_fs.names import quote_name

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass(frozen=True, slots=True)
class StatArgs:
    path: Annotated[
        str,
        Argument(
            "File or directory to describe, absolute or relative to the session workspace.",
            not_blank=True,
        ),
    ]


@dataclass(frozen=True, slots=True)
class Described:
    display_path: str
    info: FsInfo


async def run_stat(ex: Execution, args: StatArgs) -> Described:
    target = await ex.resolve(args.path)
    ex.step("stat")
    info = await ex.fs.stat(target)
    if info is None:
        raise FsError.cannot("stat", target.display_path, "not found", FsErrorCode.FS_NOT_FOUND)
    return Described(target.display_path, info)


def render(args: StatArgs, described: Described) -> ToolOutput:
    p, info = described.display_path, described.info
    size = "" if info.size is None else f", {info.size} bytes"
    return ToolOutput(
        f"{quote_name(p)}: {info.type}{size}",
        {"path": p, "type": info.type, "size": info.size},
    )


STAT = ToolSpec(
    name="stat",
    title="Describe path",
    arguments=StatArgs,
    description=(
        "Tell whether a path is a file, a directory or something else, and a file's size "
        "in bytes, without reading it."
    ),
    prompt=PromptSection(
        "tool:stat",
        103,
        "Use the stat tool to check whether a path exists and how large a file is before "
        "reading it.",
    ),
    annotations=ToolAnnotations(read_only=True),
    concurrency_safe=True,
    body=run_stat,
    render=render,
)


def stack() -> ToolFs:
    fs = MemoryFileSystem(cwd="/w", files={"/w/a.txt": "alpha\n", "/w/src/main.py": ""})
    return ToolFs(fs, tools=(*TOOLS, STAT))


def test_the_new_tool_is_defined_from_its_spec() -> None:
    toolfs = stack()
    assert [d.name for d in toolfs.definitions] == ["list", "read", "write", "edit", "stat"]
    assert toolfs.definitions[4].parameters == {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": (
                    "File or directory to describe, absolute or relative to the session workspace."
                ),
            }
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    assert toolfs.prompt_sections[-1].name == "tool:stat"
    assert to_mcp_tools(toolfs.definitions)[4]["annotations"] == {
        "readOnlyHint": True,
        "openWorldHint": False,
    }


async def test_the_new_tool_runs_and_is_validated_like_the_others() -> None:
    toolfs = stack()
    result = await toolfs.execute("stat", {"path": "a.txt"})
    assert result.text == "/w/a.txt: file, 6 bytes"
    assert result.value == {"path": "/w/a.txt", "type": "file", "size": 6}
    missing = await toolfs.execute("stat", {"path": "nope"})
    assert missing.error == ToolError('cannot stat "/w/nope": not found', "FsError", "FS_NOT_FOUND")
    blank = await toolfs.execute("stat", {"path": " "})
    assert blank.text == "Error: path must be a non-empty string"
    unknown = await toolfs.execute("stat", {"file_path": "a.txt"})
    assert unknown.text == 'Error: unknown argument "file_path"'
