"""Each tool through ToolFs on MemoryFileSystem: exactly the seam calls and hooks of its
execution, and its exact texts.
"""

from __future__ import annotations

import pytest
from dsh_tool_fs import Session, ToolCall, ToolError, ToolFsConfig
from dsh_tool_fs_host_doubles import TREE, make

pytestmark = pytest.mark.anyio


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
        'Error: edit requires reading "/w/a.txt" first — read the file, then retry'
    )


# -- read ------------------------------------------------------------------------


async def test_read_calls_resolve_one_stat_stream_text_then_observes_the_stat_version() -> None:
    tool, fs, log = make()
    session = Session()
    result = await tool.execute("read", {"file_path": "a.txt"}, session=session)
    assert fs.calls == ["resolve", "stat", "stream_text"]
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


@pytest.mark.parametrize("stream_min_size", [1, len(TREE["/w/a.txt"]) + 1, 10485760])
async def test_read_streams_a_file_of_any_size(stream_min_size: int) -> None:
    """The size ``stat`` saw may be stale by the time the file is read: never ``read_text``."""
    tool, fs, log = make(config=ToolFsConfig(read_stream_min_size=stream_min_size))
    result = await tool.execute("read", {"file_path": "a.txt"})
    assert fs.calls == ["resolve", "stat", "stream_text"]
    assert "3: gamma\n\n(End of file - total 3 lines)" in result.text
    assert log.names() == ["observed"]


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
    assert fs.calls == ["resolve", "stat", "resolve", "stat"]
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
        "diffs": [{"path": "a.txt", "old_text": "alpha\nbeta\ngamma", "new_text": "alpha\nbeta\nG"}]
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
        'Error: edit requires reading "/w/a.txt" first — read the file, then retry'
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
        'Error: edit requires reading "/w/a.txt" first — read the file, then retry'
    )
