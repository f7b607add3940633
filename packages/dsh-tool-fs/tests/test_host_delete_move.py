"""Removing and moving through ``ToolFs``, the policy and the memory backend.

The core four tools neither remove nor move, so this file gives the host two
test-local tools that do what a removing or moving tool body must: resolve,
name the primitive (``Execution.step``), ask ``delete_guard``/``move_guard``,
call the primitive, and report ``fs_observed`` — ``None`` for every path that
no longer exists, the reported version for a moved entry's new path.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from dsh_fs import FsTarget, hookimpl
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import Session, ToolFs
from dsh_tool_fs.arguments import FilePath, ToolArguments
from dsh_tool_fs.definitions import PromptSection, ToolAnnotations
from dsh_tool_fs.execution import Execution
from dsh_tool_fs.spec import ToolOutput, ToolSpec
from dsh_tool_fs.tools import TOOLS
from pydantic import Field

pytestmark = pytest.mark.anyio

TREE = {"/w/a.txt": "alpha\n", "/w/b.txt": "beta\n", "/w/d/c.txt": "gamma\n"}


class RemoveArgs(ToolArguments):
    file_path: FilePath = Field(description="Entry to remove.")
    recursive: bool = Field(default=False, description="Remove a whole directory tree.")


class RenameArgs(ToolArguments):
    file_path: FilePath = Field(description="Entry to move.")
    new_path: FilePath = Field(description="Where it goes.")
    replace: bool = Field(default=False, description="Replace an existing destination.")


async def run_remove(ex: Execution, args: RemoveArgs) -> str:
    target = await ex.resolve(args.file_path)
    ex.step("delete")
    guard = await ex.delete_guard(target)
    ex.step("delete")
    outcome = await ex.fs.delete(target, recursive=args.recursive, expected=guard)
    ex.observed(target, None)
    return f"removed {outcome.type} {target.display_path}"


async def run_rename(ex: Execution, args: RenameArgs) -> str:
    source = await ex.resolve(args.file_path)
    destination = await ex.resolve(args.new_path)
    ex.step("move")
    guard = await ex.move_guard(source, destination)
    ex.step("move")
    outcome = await ex.fs.move(source, destination, replace=args.replace, expected=guard)
    ex.observed(source, None)
    ex.observed(destination, outcome.version)
    return f"moved {source.display_path} to {destination.display_path}"


def said(args: Any, text: str) -> ToolOutput:
    return ToolOutput(text, {"text": text})


def spec(name: str, arguments: type[ToolArguments], body: Any) -> ToolSpec[Any, Any]:
    return ToolSpec(
        name=name,
        title=name,
        arguments=arguments,
        description=f"test-local {name}",
        prompt=PromptSection(f"tool:{name}", 900, f"test-local {name}"),
        annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=False),
        concurrency_safe=False,
        body=body,
        render=said,
    )


REMOVE = spec("remove", RemoveArgs, run_remove)
RENAME = spec("rename", RenameArgs, run_rename)


def host(**workspace: Any) -> tuple[ToolFs, MemoryFileSystem]:
    fs = MemoryFileSystem(cwd="/w", files=TREE, **workspace)
    return ToolFs(fs, plugins=[FsPolicy()], tools=(*TOOLS, REMOVE, RENAME)), fs


async def test_a_never_read_file_is_not_removed_and_the_model_is_told_to_read_it() -> None:
    tool, fs = host()
    result = await tool.execute("remove", {"file_path": "a.txt"}, session=Session())
    assert result.is_error
    assert result.text == (
        'Error: cannot delete "/w/a.txt" without reading it first — read the file, then retry'
    )
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    assert fs.get_bytes("a.txt") == b"alpha\n"


async def test_a_file_read_in_the_session_is_removed_and_may_then_be_created_again() -> None:
    tool, fs = host()
    session = Session()
    await tool.execute("read", {"file_path": "a.txt"}, session=session)
    removed = await tool.execute("remove", {"file_path": "a.txt"}, session=session)
    assert removed.text == "removed file /w/a.txt"
    assert fs.names() == ["b.txt", "d"]
    again = await tool.execute("write", {"file_path": "a.txt", "content": "new\n"}, session=session)
    assert not again.is_error
    assert fs.get_bytes("a.txt") == b"new\n"


async def test_a_file_changed_since_the_read_is_not_removed_and_the_model_is_told_to_reread() -> (
    None
):
    tool, fs = host()
    session = Session()
    await tool.execute("read", {"file_path": "a.txt"}, session=session)
    fs.put_text("a.txt", "changed behind the model's back\n")
    result = await tool.execute("remove", {"file_path": "a.txt"}, session=session)
    assert result.text == (
        'Error: cannot delete "/w/a.txt": file changed since it was read'
        " — re-read the file, then retry"
    )
    assert fs.get_bytes("a.txt") == b"changed behind the model's back\n"


async def test_another_sessions_read_does_not_authorize_a_removal() -> None:
    tool, fs = host()
    await tool.execute("read", {"file_path": "a.txt"}, session=Session())
    result = await tool.execute("remove", {"file_path": "a.txt"}, session=Session())
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    assert fs.get_bytes("a.txt") == b"alpha\n"


async def test_a_directory_tree_is_removed_unread() -> None:
    tool, fs = host()
    result = await tool.execute("remove", {"file_path": "d", "recursive": True})
    assert result.text == "removed directory /w/d"
    assert fs.names() == ["a.txt", "b.txt"]


async def test_a_moved_file_may_be_edited_at_its_new_path_without_reading_it_again() -> None:
    tool, fs = host()
    session = Session()
    await tool.execute("read", {"file_path": "a.txt"}, session=session)
    moved = await tool.execute(
        "rename", {"file_path": "a.txt", "new_path": "e/a.txt"}, session=session
    )
    assert moved.text == "moved /w/a.txt to /w/e/a.txt"
    edit = {"file_path": "e/a.txt", "old_string": "alpha", "new_string": "ALPHA"}
    edited = await tool.execute("edit", edit, session=session)
    assert not edited.is_error, edited.text
    assert fs.files() == {
        "/w/b.txt": b"beta\n",
        "/w/d/c.txt": b"gamma\n",
        "/w/e/a.txt": b"ALPHA\n",
    }


async def test_a_move_onto_an_unread_file_is_refused() -> None:
    tool, fs = host()
    session = Session()
    await tool.execute("read", {"file_path": "a.txt"}, session=session)
    args = {"file_path": "a.txt", "new_path": "b.txt", "replace": True}
    result = await tool.execute("rename", args, session=session)
    assert result.text == (
        'Error: cannot overwrite existing "/w/b.txt" without reading it first'
        " — read the file, then retry"
    )
    assert fs.files()["/w/b.txt"] == b"beta\n"


async def test_a_read_only_workspace_refuses_before_the_policy() -> None:
    tool, fs = host(read_only=True)
    result = await tool.execute("remove", {"file_path": "a.txt"})
    assert result.text == 'Error: cannot delete "/w/a.txt": read-only workspace'
    moved = await tool.execute("rename", {"file_path": "d", "new_path": "e"})
    assert moved.text == 'Error: cannot move "/w/d": read-only workspace'
    assert fs.names() == ["a.txt", "b.txt", "d"]


class CancelsWhileDeciding:
    """Sets the call's cancel event while the intent is being decided."""

    def __init__(self, cancel: anyio.Event) -> None:
        self.cancel = cancel

    @hookimpl
    def fs_delete_intent(self, target: FsTarget, actor: Any) -> None:
        self.cancel.set()

    @hookimpl
    def fs_move_intent(self, source: FsTarget, destination: FsTarget, actor: Any) -> None:
        self.cancel.set()


@pytest.mark.parametrize(
    ("name", "args", "verb"),
    [
        ("remove", {"file_path": "d", "recursive": True}, "delete"),
        ("rename", {"file_path": "d", "new_path": "e"}, "move"),
    ],
)
async def test_an_abort_while_the_intent_is_decided_names_the_primitive_and_changes_nothing(
    name: str, args: dict[str, Any], verb: str
) -> None:
    cancel = anyio.Event()
    fs = MemoryFileSystem(cwd="/w", files=TREE)
    tool = ToolFs(fs, plugins=[CancelsWhileDeciding(cancel)], tools=(REMOVE, RENAME))
    result = await tool.execute(name, args, cancel=cancel)
    assert result.text == f"Error: {verb} aborted"
    assert result.error is not None and result.error.code == "FS_ABORTED"
    assert fs.names() == ["a.txt", "b.txt", "d"]
