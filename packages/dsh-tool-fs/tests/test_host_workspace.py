"""The workspace through ToolFs: resolve's refusal speaks with the tool's verb, and comes
before the policy.
"""

from __future__ import annotations

from typing import Any

import pytest
from dsh_fs import (
    FsError,
    FsErrorCode,
    FsTarget,
)
from dsh_fs.preconditions import parent_not_directory
from dsh_fs.workspace import outside_workspace, read_only_workspace
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import Session, ToolError, ToolFs, ToolResult
from dsh_tool_fs_host_doubles import TREE, HookLog, RecordingFs

pytestmark = pytest.mark.anyio


# -- the workspace (SPEC 3.3): resolve's refusal, with the tool's verb -------------

OUTSIDE_TREE = {**TREE, "/w-old/secret.txt": "secret\n", "/etc/conf": "conf\n"}


def edit_of(path: str) -> dict[str, str]:
    return {"file_path": path, "old_string": "conf", "new_string": "x"}


ESCAPES = [
    ("read", {"file_path": "/w-old/secret.txt"}, "/w-old/secret.txt"),
    ("read", {"file_path": "../etc/conf"}, "/etc/conf"),
    ("list", {"path": ".."}, "/"),
    ("list", {"path": "/w-old"}, "/w-old"),
    ("write", {"file_path": "/w-old/secret.txt", "content": "x\n"}, "/w-old/secret.txt"),
    ("write", {"file_path": "../w-old/missing.txt", "content": "x\n"}, "/w-old/missing.txt"),
    ("edit", edit_of("/etc/conf"), "/etc/conf"),
]


@pytest.mark.parametrize(("name", "args", "shown"), ESCAPES)
async def test_an_escape_is_refused_with_the_tool_verb_before_any_intent(
    name: str, args: dict[str, Any], shown: str
) -> None:
    fs = RecordingFs(MemoryFileSystem(cwd="/w", files=OUTSIDE_TREE))
    log = HookLog()
    tool = ToolFs(fs, plugins=[FsPolicy(), log])
    result = await tool.execute(name, args, session=Session())
    message = f'cannot {name} "{shown}": outside the workspace'
    assert result == ToolResult.failure(message, "FsError", "FS_OUTSIDE_WORKSPACE")
    assert result.text == f"Error: {message}"  # never "read it first" nor "edit requires"
    assert (fs.calls, log.events) == (["resolve"], [])
    assert fs.inner.files() == {path: text.encode() for path, text in OUTSIDE_TREE.items()}


@pytest.mark.parametrize(
    ("options", "path"),
    [({"read_only_roots": ["/lib"]}, "/lib/conf"), ({"read_only": True}, "/w/conf")],
)
@pytest.mark.parametrize("name", ["write", "edit"])
async def test_a_read_only_refusal_comes_before_the_policy(
    options: dict[str, Any], path: str, name: str
) -> None:
    files = {"/w/conf": "conf\n", "/lib/conf": "conf\n"}
    fs = MemoryFileSystem(cwd="/w", files=files, **options)
    log = HookLog()
    tool = ToolFs(fs, plugins=[FsPolicy(), log])
    args = edit_of(path) if name == "edit" else {"file_path": path, "content": "x\n"}
    result = await tool.execute(name, args, session=Session())
    message = f'cannot {name} "{path}": read-only workspace'
    assert result == ToolResult.failure(message, "FsError", "FS_READ_ONLY")  # not "read it first"
    assert log.events == []
    assert fs.files() == {p: t.encode() for p, t in files.items()}


class RefusingFs(RecordingFs):
    """``resolve`` answers with the error it is given (as a backend's early refusal)."""

    def __init__(self, error: FsError) -> None:
        super().__init__(MemoryFileSystem(cwd="/w", files=TREE))
        self.error = error

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        await self.entering("resolve")
        raise self.error


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (read_only_workspace("resolve", "/r/a"), 'cannot write "/r/a": read-only workspace'),
        (
            outside_workspace("resolve", "/x" * 600),  # the cut of a long path is kept
            f'cannot write "{"/x" * 512}…": outside the workspace',
        ),
        # Only the workspace refusals take the tool's verb: resolve's other errors keep theirs.
        (
            parent_not_directory("resolve", "/w/a.txt/b"),
            'cannot resolve "/w/a.txt/b": a parent path segment is not a directory',
        ),
        # A refusal worded otherwise by its backend is passed on as it is.
        (FsError("/x is outside", FsErrorCode.FS_OUTSIDE_WORKSPACE), "/x is outside"),
    ],
)
async def test_only_resolves_workspace_refusals_take_the_tool_verb(
    error: FsError, expected: str
) -> None:
    tool = ToolFs(RefusingFs(error), plugins=[FsPolicy()])
    result = await tool.execute("write", {"file_path": "a", "content": ""})
    assert result.error == ToolError(expected, "FsError", error.code.value)
