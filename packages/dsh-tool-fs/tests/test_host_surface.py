"""ToolFs's public surface: definitions, config, results, unknown tools and arguments, paths,
assembly from entry points, and a property: the host never raises.
"""

from __future__ import annotations

import gc
import json
import weakref
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from dsh_fs import (
    EntryPointNotFound,
    FsError,
    FsErrorCode,
)
from dsh_fs.workspace import Workspace
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import Session, ToolError, ToolFs, ToolResult
from dsh_tool_fs_host_doubles import make
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.anyio


# -- the public surface -------------------------------------------------------


def test_definitions_and_prompt_sections() -> None:
    tool, _, _ = make()
    assert [d.name for d in tool.definitions] == ["list", "read", "write", "edit"]
    assert [s.order for s in tool.prompt_sections] == [99, 100, 101, 102]
    assert tool.instructions == "\n\n".join(s.text for s in tool.prompt_sections)


def test_result_of_an_fs_error_carries_the_remedy_the_host_gives() -> None:
    message = 'cannot delete "/w/a.txt" without reading it first'
    unread = FsError(message, FsErrorCode.FS_NOT_OBSERVED)
    result = ToolResult.from_fs_error(unread)
    assert result.text == (
        'Error: cannot delete "/w/a.txt" without reading it first — read the file, then retry'
    )
    assert result.error == ToolError(
        message='cannot delete "/w/a.txt" without reading it first — read the file, then retry',
        name="FsError",
        code="FS_NOT_OBSERVED",
    )


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
