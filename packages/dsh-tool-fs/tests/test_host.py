"""ToolFs on MemoryFileSystem: seam calls, hooks, exact texts, errors, cancellation."""

from __future__ import annotations

import gc
import importlib.metadata
import json
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import dsh_fs.entry_points
import pytest
from dsh_fs import (
    PLUGINS_GROUP,
    EditGuard,
    EntryPointNotFound,
    FileSystem,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsWriteOutcome,
    WriteIntent,
    hookimpl,
)
from dsh_fs.preconditions import parent_not_directory
from dsh_fs.workspace import Workspace, outside_workspace, read_only_workspace
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import Session, ToolCall, ToolError, ToolFs, ToolFsConfig, ToolResult
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.anyio


class RecordingFs(FileSystem):
    """A real backend (MemoryFileSystem) behind a wrapper that records every primitive.

    ``gates`` hold a primitive before it runs until the test opens the gate;
    ``entered`` is set when the primitive is reached.
    """

    def __init__(self, inner: MemoryFileSystem, *, unknown_size: bool = False) -> None:
        self.inner = inner
        self.calls: list[str] = []
        self.gates: dict[str, anyio.Event] = {}
        self.entered: dict[str, anyio.Event] = {}
        self.unknown_size = unknown_size

    async def _enter(self, name: str) -> None:
        self.calls.append(name)
        if name in self.gates:
            self.entered.setdefault(name, anyio.Event()).set()
            await self.gates[name].wait()

    def gate(self, name: str) -> anyio.Event:
        self.gates[name] = anyio.Event()
        self.entered[name] = anyio.Event()
        return self.entered[name]

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        await self._enter("resolve")
        return await self.inner.resolve(path, cwd=cwd)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        await self._enter("stat")
        info = await self.inner.stat(target)
        if info is not None and self.unknown_size:
            return FsInfo(info.version, info.type, None)
        return info

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        await self._enter("lstat")
        return await self.inner.lstat(path, cwd=cwd)

    async def read_text(self, target: FsTarget) -> str:
        await self._enter("read_text")
        return await self.inner.read_text(target)

    async def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        await self._enter("stream_text")
        async for chunk in self.inner.stream_text(target):
            yield chunk

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        await self._enter(f"list_dir(stat={stat})")
        return await self.inner.list_dir(target, stat=stat)

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        await self._enter("write_text")
        return await self.inner.write_text(target, content, expected)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        await self._enter("edit_text")
        return await self.inner.edit_text(target, edit, expected)


class HookLog:
    """A plugin that records every event, and answers no intent."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []

    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> None:
        self.events.append(("write_intent", target.display_path, actor))

    @hookimpl
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> None:
        self.events.append(("edit_intent", target.display_path, actor))

    @hookimpl
    def fs_observed(self, target: FsTarget, version: str | None, actor: Any) -> None:
        self.events.append(("observed", target.display_path, version))

    def names(self) -> list[str]:
        return [name for name, _, _ in self.events]


TREE = {"/w/a.txt": "alpha\nbeta\ngamma\n", "/w/src/main.py": "print(1)\n", "/w/b.md": "# b\n"}


def make(
    *,
    policy: bool = True,
    config: ToolFsConfig | None = None,
    unknown_size: bool = False,
) -> tuple[ToolFs, RecordingFs, HookLog]:
    fs = RecordingFs(MemoryFileSystem(cwd="/w", files=TREE), unknown_size=unknown_size)
    log = HookLog()
    plugins: list[object] = [FsPolicy(), log] if policy else [log]
    return ToolFs(fs, plugins=plugins, config=config), fs, log


# -- the public surface -------------------------------------------------------


def test_definitions_and_prompt_sections() -> None:
    tool, _, _ = make()
    assert [d.name for d in tool.definitions] == ["list", "read", "write", "edit"]
    assert [s.order for s in tool.prompt_sections] == [99, 100, 101, 102]
    assert tool.instructions == "\n\n".join(s.text for s in tool.prompt_sections)


def test_config_may_be_a_mapping_of_aliases() -> None:
    tool = ToolFs(MemoryFileSystem(), config={"readLimit": 10})
    assert tool.config.read_limit == 10
    read = next(d for d in tool.definitions if d.name == "read")
    assert read.parameters["properties"]["limit"]["default"] == 10


def test_session_is_hashable_by_identity_and_weakly_referenceable() -> None:
    a, b = Session(cwd="/w"), Session(cwd="/w")
    assert a != b
    assert len({a, b, a}) == 2
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is None


def test_tool_result_json_form() -> None:
    result = ToolResult.failure("boom", "FsError", "FS_IO_ERROR")
    assert result.to_dict() == {
        "is_error": True,
        "text": "Error: boom",
        "value": None,
        "error": {"message": "boom", "name": "FsError", "code": "FS_IO_ERROR"},
        "meta": None,
    }
    assert json.loads(result.to_json()) == result.to_dict()
    assert result.error == ToolError("boom", "FsError", "FS_IO_ERROR")


# -- unknown tool and arguments -------------------------------------------------


async def test_unknown_tool() -> None:
    tool, fs, _ = make()
    result = await tool.execute("grep", {"pattern": "x"})
    assert result.is_error
    assert result.text == 'Error: unknown tool "grep"'
    assert result.error == ToolError('unknown tool "grep"', "ToolNotFoundError", "UNKNOWN_TOOL")
    assert result.value is None and result.meta is None
    assert fs.calls == []


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("read", [], "arguments must be a JSON object"),
        ("read", {"file_path": "a", "x": 1}, 'unknown argument "x"'),
        ("write", {"file_path": "a"}, "content is required"),
        ("read", {"file_path": "a", "limit": True}, "limit must be an integer"),
        ("read", {"file_path": " "}, "file_path must be a non-empty string"),
        ("list", {"path": ""}, "path must be a non-empty string when given"),
        ("list", {"offset": 0}, "offset must be a positive integer"),
        ("read", {"file_path": "a", "limit": 0}, "limit must be a positive integer"),
        ("read", {"file_path": "a", "limit": 2001}, "limit must be less than or equal to 2000"),
        (
            "edit",
            {"file_path": "a.txt", "old_string": "", "new_string": "x"},
            "old_string must be a non-empty string",
        ),
        (
            "edit",
            {"file_path": "a.txt", "old_string": "x", "new_string": "x"},
            "old_string and new_string must differ",
        ),
    ],
)
async def test_invalid_arguments_fail_before_any_filesystem_call(
    name: str, args: Any, message: str
) -> None:
    tool, fs, log = make()
    result = await tool.execute(name, args)
    assert result.text == f"Error: {message}"
    assert result.error == ToolError(message, "ToolArgumentError", "INVALID_ARGUMENTS")
    assert fs.calls == []
    assert log.events == []


# -- list ------------------------------------------------------------------------


async def test_list_calls_resolve_and_one_list_dir_and_observes_nothing() -> None:
    tool, fs, log = make()
    result = await tool.execute("list", {}, session=Session())
    assert fs.calls == ["resolve", "list_dir(stat=False)"]
    assert log.events == []
    assert result.text == (
        "<path>/w</path>\n"
        "<type>directory</type>\n"
        "<content>\n"
        "src/\n"
        "a.txt\n"
        "b.md\n"
        "\n"
        "(3 entries: 1 directory, 2 files)\n"
        "</content>"
    )
    assert result.value == {
        "path": "/w",
        "offset": 1,
        "entries": [
            {"name": "src", "type": "directory"},
            {"name": "a.txt", "type": "file"},
            {"name": "b.md", "type": "file"},
        ],
        "totalEntries": 3,
        "counts": {"directories": 1, "files": 2, "other": 0},
    }
    assert result.meta is None


async def test_list_pages_with_the_configured_size() -> None:
    tool, _, _ = make(config=ToolFsConfig(list_max_entries=2))
    first = await tool.execute("list", {"path": "/w"})
    assert first.text.endswith(
        "src/\na.txt\n\n"
        "(Showing entries 1-2 of 3: 1 directory, 2 files. Use offset=3 to continue.)\n"
        "</content>"
    )
    last = await tool.execute("list", {"path": "/w", "offset": 3})
    assert "b.md\n\n(Showing entries 3-3 of 3: 1 directory, 2 files.)\n</content>" in last.text


async def test_list_offset_out_of_range() -> None:
    tool, _, _ = make()
    result = await tool.execute("list", {"offset": 4})
    assert result.text == 'Error: offset 4 is out of range for "/w" (3 entries)'
    assert result.error is not None
    assert (result.error.name, result.error.code) == ("FsError", "FS_NOT_FOUND")


async def test_list_errors_come_from_the_backend() -> None:
    tool, fs, _ = make()
    missing = await tool.execute("list", {"path": "nope"})
    assert missing.text == 'Error: cannot list "/w/nope": not found'
    not_dir = await tool.execute("list", {"path": "a.txt"})
    assert not_dir.text == 'Error: cannot list "/w/a.txt": not a directory'
    assert not_dir.error is not None and not_dir.error.code == "FS_NOT_DIRECTORY"
    assert fs.calls == ["resolve", "list_dir(stat=False)"] * 2


async def test_a_list_does_not_authorize_an_edit() -> None:
    tool, _, _ = make()
    session = Session()
    await tool.execute("list", {}, session=session)
    result = await tool.execute(
        "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}, session=session
    )
    assert result.text == (
        'Error: edit requires reading "/w/a.txt" first'
        " — read the file, then retry"
    )


# -- read ------------------------------------------------------------------------


async def test_read_calls_resolve_one_stat_read_text_then_observes_the_stat_version() -> None:
    tool, fs, log = make()
    session = Session()
    result = await tool.execute("read", {"file_path": "a.txt"}, session=session)
    assert fs.calls == ["resolve", "stat", "read_text"]
    info = await fs.inner.stat(await fs.inner.resolve("/w/a.txt"))
    assert info is not None
    assert log.events == [("observed", "/w/a.txt", info.version)]
    assert result.text == (
        "<path>/w/a.txt</path>\n"
        "<type>file</type>\n"
        "<content>\n"
        "1: alpha\n"
        "2: beta\n"
        "3: gamma\n"
        "\n"
        "(End of file - total 3 lines)\n"
        "</content>"
    )
    assert result.value == {
        "path": "/w/a.txt",
        "offset": 1,
        "lines": [
            {"number": 1, "text": "alpha"},
            {"number": 2, "text": "beta"},
            {"number": 3, "text": "gamma"},
        ],
        "totalLines": 3,
    }
    assert result.meta is None


async def test_read_window_footer_with_offset_and_limit() -> None:
    tool, _, _ = make()
    result = await tool.execute("read", {"file_path": "a.txt", "offset": 2, "limit": 1})
    assert result.text == (
        "<path>/w/a.txt</path>\n<type>file</type>\n<content>\n2: beta\n\n"
        "(Showing lines 2-2 of 3. Use offset=3 to continue.)\n</content>"
    )


async def test_read_streams_at_the_configured_size() -> None:
    tool, fs, log = make(config=ToolFsConfig(read_stream_min_size=len(TREE["/w/a.txt"])))
    result = await tool.execute("read", {"file_path": "a.txt"})
    assert fs.calls == ["resolve", "stat", "stream_text"]
    assert "3: gamma\n\n(End of file - total 3 lines)" in result.text
    assert log.names() == ["observed"]


async def test_read_below_the_threshold_reads_whole() -> None:
    tool, fs, _ = make(config=ToolFsConfig(read_stream_min_size=len(TREE["/w/a.txt"]) + 1))
    await tool.execute("read", {"file_path": "a.txt"})
    assert fs.calls == ["resolve", "stat", "read_text"]


async def test_read_of_unknown_size_streams() -> None:
    tool, fs, _ = make(unknown_size=True)
    result = await tool.execute("read", {"file_path": "a.txt"})
    assert fs.calls == ["resolve", "stat", "stream_text"]
    assert not result.is_error


async def test_read_of_a_missing_file_observes_its_absence() -> None:
    tool, fs, log = make()
    result = await tool.execute("read", {"file_path": "nope.txt"})
    assert result.text == 'Error: cannot read "/w/nope.txt": not found'
    assert result.error == ToolError(
        'cannot read "/w/nope.txt": not found', "FsError", "FS_NOT_FOUND"
    )
    assert fs.calls == ["resolve", "stat"]
    assert log.events == [("observed", "/w/nope.txt", None)]


async def test_read_of_a_directory_or_other_entry_observes_nothing() -> None:
    tool, fs, log = make()
    fs.inner.add_other("/w/sock")
    for path in ("src", "sock"):
        result = await tool.execute("read", {"file_path": path})
        assert result.text == f'Error: cannot read "/w/{path}": not a regular file'
        assert result.error is not None and result.error.code == "FS_NOT_REGULAR_FILE"
    assert "read_text" not in fs.calls
    assert log.events == []


async def test_only_a_read_that_finds_nothing_observes_absence() -> None:
    tool, _, log = make(policy=False)
    await tool.execute("list", {"path": "nope"})
    await tool.execute("edit", {"file_path": "nope.txt", "old_string": "a", "new_string": "b"})
    await tool.execute("read", {"file_path": "nope/deeper.txt"})
    await tool.execute("read", {"file_path": "src"})  # not a regular file
    assert [event for event in log.events if event[0] == "observed"] == [
        ("observed", "/w/nope/deeper.txt", None)
    ]


async def test_read_offset_out_of_range_observes_nothing() -> None:
    tool, _, log = make()
    result = await tool.execute("read", {"file_path": "a.txt", "offset": 5})
    assert result.text == 'Error: offset 5 is out of range for "/w/a.txt" (3 lines)'
    assert log.events == []


async def test_read_of_an_empty_file_at_offset_one() -> None:
    tool, fs, _ = make()
    fs.inner.put_text("/w/empty.txt", "")
    result = await tool.execute("read", {"file_path": "empty.txt"})
    assert result.text == (
        "<path>/w/empty.txt</path>\n<type>file</type>\n<content>\n"
        "(End of file - total 0 lines)\n</content>"
    )


async def test_read_of_binary_content() -> None:
    tool, fs, _ = make()
    fs.inner.put_bytes("/w/bin", b"\x00\x01")
    result = await tool.execute("read", {"file_path": "bin"})
    assert result.text == 'Error: cannot read "/w/bin": binary file'
    assert result.error is not None and result.error.code == "FS_NOT_TEXT"


# -- write -----------------------------------------------------------------------


async def test_create_calls_resolve_intent_write_then_observes_the_outcome_version() -> None:
    tool, fs, log = make()
    session = Session()
    result = await tool.execute(
        "write", {"file_path": "new/c.txt", "content": "one\ntwo\n"}, session=session
    )
    assert fs.calls == ["resolve", "write_text"]
    stat = await fs.inner.stat(await fs.inner.resolve("/w/new/c.txt"))
    assert stat is not None
    assert log.names() == ["observed"]  # the policy answered the intent first
    assert log.events[0][2] == stat.version
    assert result.text == (
        "<path>/w/new/c.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    )
    assert result.value == {
        "path": "/w/new/c.txt",
        "operation": "create",
        "before": None,
        "after": "one\ntwo\n",
    }
    assert result.meta == {"diffs": []}
    assert fs.inner.get_bytes("/w/new/c.txt") == b"one\ntwo\n"


async def test_update_after_read() -> None:
    tool, fs, _ = make()
    session = Session()
    await tool.execute("read", {"file_path": "a.txt"}, session=session)
    fs.calls.clear()
    result = await tool.execute(
        "write", {"file_path": "a.txt", "content": "alpha\nBETA\ngamma\n"}, session=session
    )
    assert fs.calls == ["resolve", "write_text"]
    assert result.text == (
        "<path>/w/a.txt</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"
    )
    assert result.value is not None and result.value["operation"] == "update"
    assert result.value["before"] == "alpha\nbeta\ngamma\n"
    assert result.meta == {
        "diffs": [
            {
                "path": "a.txt",
                "old_text": "alpha\nbeta\ngamma",
                "new_text": "alpha\nBETA\ngamma",
            }
        ]
    }


async def test_overwrite_without_read_fails_under_the_policy() -> None:
    tool, fs, _ = make()
    result = await tool.execute("write", {"file_path": "a.txt", "content": "x"}, session=Session())
    assert result.text == (
        'Error: cannot overwrite existing "/w/a.txt" without reading it first'
        " — read the file, then retry"
    )
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    assert fs.inner.get_bytes("/w/a.txt") == b"alpha\nbeta\ngamma\n"


async def test_without_the_policy_the_hooks_are_asked_and_writes_are_unconditional() -> None:
    tool, _, log = make(policy=False)
    result = await tool.execute("write", {"file_path": "a.txt", "content": "x"})
    assert result.value is not None and result.value["operation"] == "update"
    assert log.names() == ["write_intent", "observed"]
    actor = log.events[0][2]
    assert isinstance(actor, ToolCall)
    assert (actor.session, actor.tool) == (None, "write")


async def test_the_actor_carries_the_session_and_the_tool() -> None:
    tool, _, log = make(policy=False)
    session = Session()
    await tool.execute(
        "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}, session=session
    )
    actor = log.events[0][2]
    assert log.events[0][0] == "edit_intent"
    assert actor.session is session and actor.tool == "edit"


# -- edit ------------------------------------------------------------------------


async def test_edit_after_a_windowed_read() -> None:
    tool, fs, log = make()
    session = Session()
    await tool.execute("read", {"file_path": "a.txt", "limit": 1}, session=session)
    fs.calls.clear()
    log.events.clear()
    result = await tool.execute(
        "edit", {"file_path": "a.txt", "old_string": "gamma", "new_string": "G"}, session=session
    )
    assert fs.calls == ["resolve", "edit_text"]
    assert log.names() == ["observed"]
    assert result.text == "The file /w/a.txt has been updated successfully."
    assert result.value == {
        "path": "/w/a.txt",
        "before": "alpha\nbeta\ngamma\n",
        "after": "alpha\nbeta\nG\n",
    }
    assert result.meta == {
        "diffs": [
            {"path": "a.txt", "old_text": "alpha\nbeta\ngamma", "new_text": "alpha\nbeta\nG"}
        ]
    }


async def test_edit_with_replace_all() -> None:
    tool, fs, _ = make()
    fs.inner.put_text("/w/r.txt", "x x x\n")
    session = Session()
    await tool.execute("read", {"file_path": "r.txt"}, session=session)
    result = await tool.execute(
        "edit",
        {"file_path": "r.txt", "old_string": "x", "new_string": "y", "replace_all": True},
        session=session,
    )
    assert result.text == (
        "The file /w/r.txt has been updated. All occurrences were successfully replaced."
    )
    assert fs.inner.get_bytes("/w/r.txt") == b"y y y\n"


async def test_consecutive_edits_need_no_new_read() -> None:
    tool, _, _ = make()
    session = Session()
    await tool.execute("write", {"file_path": "n.txt", "content": "a\n"}, session=session)
    for old, new in (("a", "b"), ("b", "c")):
        result = await tool.execute(
            "edit", {"file_path": "n.txt", "old_string": old, "new_string": new}, session=session
        )
        assert not result.is_error, result.text


async def test_edit_without_read_fails() -> None:
    tool, fs, _ = make()
    result = await tool.execute(
        "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}, session=Session()
    )
    assert result.text == (
        'Error: edit requires reading "/w/a.txt" first'
        " — read the file, then retry"
    )
    assert result.error == ToolError(
        'edit requires reading "/w/a.txt" first — read the file, then retry',
        "FsError",
        "FS_NOT_OBSERVED",
    )
    assert fs.calls == ["resolve"]


async def test_edit_errors_reach_the_model_verbatim() -> None:
    tool, fs, _ = make()
    fs.inner.put_text("/w/d.txt", "x x\n")
    session = Session()
    await tool.execute("read", {"file_path": "d.txt"}, session=session)
    ambiguous = await tool.execute(
        "edit", {"file_path": "d.txt", "old_string": "x", "new_string": "y"}, session=session
    )
    assert ambiguous.text == (
        'Error: old_string matched 2 times in "/w/d.txt"; provide a more specific old_string '
        "or set replace_all to true"
    )
    missing = await tool.execute(
        "edit", {"file_path": "d.txt", "old_string": "zz", "new_string": "y"}, session=session
    )
    assert missing.text == 'Error: old_string was not found in "/w/d.txt"'
    fs.inner.put_text("/w/d.txt", "changed\n")
    stale = await tool.execute(
        "edit", {"file_path": "d.txt", "old_string": "zz", "new_string": "y"}, session=session
    )
    assert stale.text == (
        'Error: cannot edit "/w/d.txt": file changed since it was read'
        " — re-read the file, then retry"
    )


async def test_sessions_do_not_share_observations() -> None:
    tool, _, _ = make()
    a, b = Session(), Session()
    await tool.execute("read", {"file_path": "a.txt"}, session=a)
    edit = {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}
    assert (await tool.execute("edit", edit, session=b)).is_error
    assert not (await tool.execute("edit", edit, session=a)).is_error


async def test_a_call_without_a_session_is_never_authorized() -> None:
    tool, _, _ = make()
    await tool.execute("read", {"file_path": "a.txt"})
    result = await tool.execute(
        "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}
    )
    assert result.text == (
        'Error: edit requires reading "/w/a.txt" first'
        " — read the file, then retry"
    )


# -- paths -----------------------------------------------------------------------


async def test_relative_paths_resolve_against_the_session_cwd() -> None:
    tool, _, _ = make()
    result = await tool.execute("read", {"file_path": "main.py"}, session=Session(cwd="/w/src"))
    assert result.text.startswith("<path>/w/src/main.py</path>")
    listing = await tool.execute("list", {}, session=Session(cwd="/w/src"))
    assert listing.text.startswith("<path>/w/src</path>")


async def test_without_a_session_cwd_the_backend_default_applies() -> None:
    tool, _, _ = make()
    result = await tool.execute("read", {"file_path": "a.txt"}, session=Session())
    assert result.text.startswith("<path>/w/a.txt</path>")


async def test_absolute_paths_ignore_the_session_cwd() -> None:
    tool, _, _ = make()
    result = await tool.execute("read", {"file_path": "/w/b.md"}, session=Session(cwd="/w/src"))
    assert result.text.startswith("<path>/w/b.md</path>")


async def test_a_path_that_needs_quoting_is_quoted_in_envelopes() -> None:
    tool, _, _ = make()
    result = await tool.execute("write", {"file_path": "x\ny.txt", "content": ""})
    assert result.text.startswith('<path>"/w/x\\ny.txt"</path>\n')


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
        await self._enter("resolve")
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


# -- plugins, errors and awaitables ----------------------------------------------


class AsyncDecider:
    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> Awaitable[Any]:
        async def decide() -> None:
            await anyio.lowlevel.checkpoint()
            self.awaited = True

        return decide()

    awaited = False


async def test_an_awaitable_intent_is_awaited() -> None:
    fs = MemoryFileSystem(cwd="/w", files=TREE)
    decider = AsyncDecider()
    tool = ToolFs(fs, plugins=[decider])
    result = await tool.execute("write", {"file_path": "a.txt", "content": "x"})
    assert decider.awaited
    assert not result.is_error


class BadObserver:
    @hookimpl
    def fs_observed(self, target: FsTarget, version: str, actor: Any) -> None:
        raise RuntimeError("observer broke")


async def test_an_unexpected_exception_becomes_a_tool_failure_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tool = ToolFs(MemoryFileSystem(cwd="/w", files=TREE), plugins=[BadObserver()])
    with caplog.at_level(logging.ERROR, logger="dsh_tool_fs"):
        result = await tool.execute("read", {"file_path": "a.txt"})
    assert result.text == "Error: observer broke"
    assert result.error == ToolError("observer broke", "RuntimeError", "TOOL_FAILURE")
    assert result.value is None
    assert any(r.exc_info for r in caplog.records)


class WrongIntent:
    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> Any:
        return "yes"


async def test_an_intent_of_the_wrong_type_is_a_tool_failure() -> None:
    tool = ToolFs(MemoryFileSystem(cwd="/w", files=TREE), plugins=[WrongIntent()])
    result = await tool.execute("write", {"file_path": "a.txt", "content": "x"})
    assert result.error is not None
    assert (result.error.name, result.error.code) == ("TypeError", "TOOL_FAILURE")


async def test_unregistering_the_policy_drops_its_state() -> None:
    fs = MemoryFileSystem(cwd="/w", files=TREE)
    policy = FsPolicy()
    tool = ToolFs(fs, plugins=[policy])
    session = Session()
    await tool.execute("read", {"file_path": "a.txt"}, session=session)
    assert policy.owner_count() == 1
    tool.unregister(policy)
    assert policy.owner_count() == 0
    assert policy not in tool.plugins
    tool.register(policy)
    result = await tool.execute(
        "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}, session=session
    )
    assert result.text == (
        'Error: edit requires reading "/w/a.txt" first'
        " — read the file, then retry"
    )


async def test_a_discarded_session_frees_the_policy_state() -> None:
    policy = FsPolicy()
    tool = ToolFs(MemoryFileSystem(cwd="/w", files=TREE), plugins=[policy])
    session = Session()
    await tool.execute("read", {"file_path": "a.txt"}, session=session)
    assert policy.owner_count() == 1
    del session
    gc.collect()
    assert policy.owner_count() == 0


def test_from_entry_points_builds_the_named_backend_and_plugins() -> None:
    tool = ToolFs.from_entry_points(backend="memory", plugins=("policy",), cwd="/ws")
    assert isinstance(tool.fs, MemoryFileSystem)
    assert tool.fs.cwd == "/ws"
    assert [type(p).__name__ for p in tool.plugins] == ["FsPolicy"]
    assert tool.plugin_manager.get_plugin("policy") is tool.plugins[0]


def test_from_entry_points_passes_the_workspace_options_to_the_backend() -> None:
    tool = ToolFs.from_entry_points(
        "memory", (), "/w", roots=["/w", "/lib"], read_only_roots=["/docs"], read_only=True
    )
    assert isinstance(tool.fs, MemoryFileSystem)
    assert tool.fs.workspace == Workspace(("/w", "/lib"), ("/docs",), read_only=True)
    default = ToolFs.from_entry_points("memory", (), "/w").fs
    assert isinstance(default, MemoryFileSystem)
    assert default.workspace == Workspace(("/w",))  # contained to cwd by default


def test_from_entry_points_with_an_unknown_name() -> None:
    with pytest.raises(EntryPointNotFound, match='named "nope"'):
        ToolFs.from_entry_points(backend="nope")
    with pytest.raises(EntryPointNotFound, match='named "audit-xyz"'):
        ToolFs.from_entry_points(backend="memory", plugins=("policy", "audit-xyz"))


# -- cancellation ------------------------------------------------------------------


async def run_cancelled_at(
    primitive: str, name: str, args: dict[str, Any], session: Session | None = None
) -> tuple[ToolResult, RecordingFs]:
    tool, fs, _ = make(policy=False)
    entered = fs.gate(primitive)
    cancel = anyio.Event()
    results: list[ToolResult] = []

    async def call() -> None:
        results.append(await tool.execute(name, args, session=session, cancel=cancel))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await entered.wait()
            cancel.set()
    return results[0], fs


@pytest.mark.parametrize(
    ("primitive", "name", "args", "verb"),
    [
        ("resolve", "list", {}, "resolve"),
        ("list_dir(stat=False)", "list", {}, "list"),
        ("stat", "read", {"file_path": "a.txt"}, "stat"),
        ("read_text", "read", {"file_path": "a.txt"}, "read"),
        ("write_text", "write", {"file_path": "a.txt", "content": "x"}, "write"),
        (
            "edit_text",
            "edit",
            {"file_path": "a.txt", "old_string": "beta", "new_string": "B"},
            "edit",
        ),
    ],
)
async def test_a_set_cancel_event_aborts_the_primitive_in_flight(
    primitive: str, name: str, args: dict[str, Any], verb: str
) -> None:
    result, fs = await run_cancelled_at(primitive, name, args)
    assert result.text == f"Error: {verb} aborted"
    assert result.error == ToolError(f"{verb} aborted", "FsError", "FS_ABORTED")
    assert fs.calls[-1] == primitive
    assert fs.inner.get_bytes("/w/a.txt") == b"alpha\nbeta\ngamma\n"


class CancelWhileDeciding:
    """A plugin whose intent hooks set the call's cancel event while they answer."""

    def __init__(self, cancel: anyio.Event) -> None:
        self.cancel = cancel

    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> None:
        self.cancel.set()

    @hookimpl
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> None:
        self.cancel.set()


class CancelWhileDecidingAsync:
    """The same with awaitable answers that set the event and then answer at once."""

    def __init__(self, cancel: anyio.Event) -> None:
        self.cancel = cancel

    async def _decide(self) -> None:
        self.cancel.set()

    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> Awaitable[None]:
        return self._decide()

    @hookimpl
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> Awaitable[None]:
        return self._decide()


MUTATIONS = [
    ("write", {"file_path": "a.txt", "content": "x"}),
    ("edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}),
]


@pytest.mark.parametrize("plugin", [CancelWhileDeciding, CancelWhileDecidingAsync])
@pytest.mark.parametrize(("name", "args"), MUTATIONS)
async def test_a_cancel_event_set_while_the_intent_is_asked_aborts_the_mutation(
    plugin: Callable[[anyio.Event], object], name: str, args: dict[str, Any]
) -> None:
    cancel = anyio.Event()
    fs = RecordingFs(MemoryFileSystem(cwd="/w", files=TREE))
    log = HookLog()
    tool = ToolFs(fs, plugins=[plugin(cancel), log])
    result = await tool.execute(name, args, cancel=cancel)
    assert result.text == f"Error: {name} aborted"
    assert result.error == ToolError(f"{name} aborted", "FsError", "FS_ABORTED")
    assert fs.calls == ["resolve"]  # the mutation primitive never started
    assert fs.inner.get_bytes("/w/a.txt") == b"alpha\nbeta\ngamma\n"
    assert "observed" not in log.names()


async def test_a_cancel_event_aborts_a_streamed_read() -> None:
    tool, fs, _ = make(policy=False, unknown_size=True)
    entered = fs.gate("stream_text")
    cancel = anyio.Event()
    results: list[ToolResult] = []

    async def call() -> None:
        results.append(await tool.execute("read", {"file_path": "a.txt"}, cancel=cancel))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await entered.wait()
            cancel.set()
    assert results[0].text == "Error: read aborted"
    assert fs.calls == ["resolve", "stat", "stream_text"]


async def test_a_cancel_event_set_before_the_call_gives_resolve_aborted() -> None:
    tool, fs, _ = make()
    cancel = anyio.Event()
    cancel.set()
    result = await tool.execute("write", {"file_path": "a.txt", "content": "x"}, cancel=cancel)
    assert result.text == "Error: resolve aborted"
    assert result.error is not None and result.error.code == "FS_ABORTED"
    assert fs.calls == []


async def test_an_unset_cancel_event_changes_nothing() -> None:
    tool, _, _ = make()
    result = await tool.execute("read", {"file_path": "a.txt"}, cancel=anyio.Event())
    assert not result.is_error


async def test_a_failure_under_a_cancel_event_is_still_a_result() -> None:
    tool, _, _ = make()
    result = await tool.execute("read", {"file_path": "nope"}, cancel=anyio.Event())
    assert result.text == 'Error: cannot read "/w/nope": not found'


async def test_cancelling_the_callers_scope_propagates() -> None:
    tool, fs, _ = make(policy=False)
    entered = fs.gate("write_text")
    results: list[ToolResult] = []

    async def call() -> None:
        args = {"file_path": "a.txt", "content": "x"}
        results.append(await tool.execute("write", args, cancel=anyio.Event()))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await entered.wait()
            tg.cancel_scope.cancel()
    assert results == []  # never turned into a result
    assert fs.inner.get_bytes("/w/a.txt") == b"alpha\nbeta\ngamma\n"


async def test_cancelling_the_callers_scope_without_an_event_propagates() -> None:
    tool, fs, _ = make(policy=False)
    entered = fs.gate("edit_text")
    done: list[ToolResult] = []

    async def call(body: Callable[[], Awaitable[ToolResult]]) -> None:
        done.append(await body())

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                call,
                lambda: tool.execute(
                    "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "B"}
                ),
            )
            await entered.wait()
            tg.cancel_scope.cancel()
    assert done == []
    assert fs.inner.get_bytes("/w/a.txt") == b"alpha\nbeta\ngamma\n"


AUDIT_PLUGIN = """
import logging

from dsh_fs import hookimpl

log = logging.getLogger("audit_xyz")


class AuditPlugin:
    def __init__(self):
        self.seen = []

    @hookimpl
    def fs_observed(self, target, version, actor):
        self.seen.append((actor.tool, target.display_path))
        log.info("%s observed %s at %s", actor.tool, target.display_path, version)
"""


async def test_a_third_party_plugin_is_loaded_by_entry_point_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "audit_xyz_plugin.py").write_text(AUDIT_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    real = importlib.metadata.entry_points
    extra = importlib.metadata.EntryPoint(
        name="audit-xyz", value="audit_xyz_plugin:AuditPlugin", group=PLUGINS_GROUP
    )

    def entry_points(*, group: str) -> list[importlib.metadata.EntryPoint]:
        found = list(real(group=group))
        return [*found, extra] if group == PLUGINS_GROUP else found

    monkeypatch.setattr(dsh_fs.entry_points, "entry_points", entry_points)
    tool = ToolFs.from_entry_points(backend="memory", plugins=("policy", "audit-xyz"), cwd="/w")
    assert [type(p).__name__ for p in tool.plugins] == ["FsPolicy", "AuditPlugin"]
    await tool.execute("write", {"file_path": "n.txt", "content": "x"}, session=Session())
    await tool.execute("read", {"file_path": "n.txt"})
    audit: Any = tool.plugin_manager.get_plugin("audit-xyz")
    assert audit.seen == [("write", "/w/n.txt"), ("read", "/w/n.txt")]


# -- property: the host never raises for arbitrary calls --------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=5,
)
paths = st.sampled_from(["a.txt", "src", "src/main.py", "nope", "/w", "", "new/x.txt", "a.txt/x"])
call_args = st.fixed_dictionaries(
    {},
    optional={
        "path": paths | json_values,
        "file_path": paths | json_values,
        "offset": st.integers(min_value=-2, max_value=6) | json_values,
        "limit": st.integers(min_value=-1, max_value=3) | json_values,
        "content": st.text(max_size=10),
        "old_string": st.sampled_from(["alpha", "a", "", "zz"]) | json_values,
        "new_string": st.sampled_from(["A", "", "alpha"]),
        "replace_all": st.booleans() | json_values,
    },
)


@settings(max_examples=150, deadline=None)
@given(
    calls=st.lists(
        st.tuples(st.sampled_from(["list", "read", "write", "edit", "nope"]), call_args),
        min_size=1,
        max_size=4,
    )
)
def test_arbitrary_calls_always_give_a_result(calls: list[tuple[str, Any]]) -> None:
    async def run() -> None:
        tool, _, _ = make()
        session = Session()
        for name, args in calls:
            result = await tool.execute(name, args, session=session)
            if result.is_error:
                assert result.error is not None
                assert result.text == f"Error: {result.error.message}"
                assert result.error.code != "TOOL_FAILURE", result.text
                assert result.value is None
            else:
                assert result.error is None and result.value is not None
            json.dumps(result.to_dict())

    anyio.run(run)
