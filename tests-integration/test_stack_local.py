"""The stack from entry points (local backend + policy) over a real directory, end to end."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import Session, ToolError, ToolFs

pytestmark = pytest.mark.anyio


def edit_args(path: str, old: str, new: str, **extra: object) -> dict[str, object]:
    return {"file_path": path, "old_string": old, "new_string": new, **extra}


async def test_the_stack_is_assembled_from_entry_points(stack: ToolFs) -> None:
    assert type(stack.fs).__name__ == "LocalFileSystem"
    assert [type(p) for p in stack.plugins] == [FsPolicy]
    # dsh-tool-fs-search, -patch and -editor are installed in the workspace: their tools
    # come from entry points.
    assert [d.name for d in stack.definitions] == [
        *("list", "read", "write", "edit", "apply_patch", "glob", "grep"),
        *("memory", "str_replace_based_edit_tool"),
    ]


async def test_all_four_tools_end_to_end(stack: ToolFs, workspace: Path) -> None:
    session = Session()
    created = await stack.execute(
        "write", {"file_path": "src/app.py", "content": "a = 1\nb = 2\n"}, session=session
    )
    assert created.text == (
        f"<path>{workspace}/src/app.py</path>\n<type>file</type>\n<content>\n"
        "Created file\n</content>"
    )
    listing = await stack.execute("list", {}, session=session)
    assert listing.text == (
        f"<path>{workspace}</path>\n<type>directory</type>\n<content>\nsrc/\n\n"
        "(1 entry: 1 directory, 0 files)\n</content>"
    )
    read = await stack.execute("read", {"file_path": "src/app.py"}, session=session)
    assert read.text == (
        f"<path>{workspace}/src/app.py</path>\n<type>file</type>\n<content>\n"
        "1: a = 1\n2: b = 2\n\n(End of file - total 2 lines)\n</content>"
    )
    edited = await stack.execute("edit", edit_args("src/app.py", "b = 2", "b = 3"), session=session)
    assert edited.text == f"The file {workspace}/src/app.py has been updated successfully."
    assert edited.meta == {
        "diffs": [{"path": "src/app.py", "old_text": "a = 1\nb = 2", "new_text": "a = 1\nb = 3"}]
    }
    assert (workspace / "src/app.py").read_bytes() == b"a = 1\nb = 3\n"


async def test_read_then_edit_succeeds(stack: ToolFs, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")
    session = Session()
    await stack.execute("read", {"file_path": "a.txt", "offset": 3, "limit": 1}, session=session)
    result = await stack.execute("edit", edit_args("a.txt", "one", "ONE"), session=session)
    assert result.text == f"The file {workspace}/a.txt has been updated successfully."
    assert (workspace / "a.txt").read_text() == "ONE\ntwo\nthree\n"


async def test_edit_without_read_fails(stack: ToolFs, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    result = await stack.execute("edit", edit_args("a.txt", "one", "1"), session=Session())
    assert result.text == (
        f'Error: edit requires reading "{workspace}/a.txt" first — read the file, then retry'
    )
    assert result.error == ToolError(
        f'edit requires reading "{workspace}/a.txt" first — read the file, then retry',
        "FsError",
        "FS_NOT_OBSERVED",
    )
    assert (workspace / "a.txt").read_text() == "one\n"


async def test_overwrite_without_read_fails_and_create_succeeds(
    stack: ToolFs, workspace: Path
) -> None:
    (workspace / "old.txt").write_text("keep\n")
    session = Session()
    overwrite = await stack.execute(
        "write", {"file_path": "old.txt", "content": "x"}, session=session
    )
    assert overwrite.text == (
        f'Error: cannot overwrite existing "{workspace}/old.txt" without reading it first'
        " — read the file, then retry"
    )
    assert (workspace / "old.txt").read_text() == "keep\n"
    create = await stack.execute("write", {"file_path": "new.txt", "content": "x"}, session=session)
    assert not create.is_error
    assert (workspace / "new.txt").read_text() == "x"


async def test_a_change_behind_the_back_after_a_read_makes_the_next_write_stale(
    stack: ToolFs, workspace: Path
) -> None:
    path = workspace / "a.txt"
    path.write_text("one\n")
    session = Session()
    await stack.execute("read", {"file_path": "a.txt"}, session=session)
    path.write_text("two\n")
    result = await stack.execute("write", {"file_path": "a.txt", "content": "3"}, session=session)
    assert result.text == (
        f'Error: cannot write "{workspace}/a.txt": file changed since it was read'
        " — re-read the file, then retry"
    )
    assert result.error is not None and result.error.code == "FS_STALE_VERSION"
    assert path.read_text() == "two\n"
    edit = await stack.execute("edit", edit_args("a.txt", "two", "2"), session=session)
    assert edit.text == (
        f'Error: cannot edit "{workspace}/a.txt": file changed since it was read'
        " — re-read the file, then retry"
    )
    await stack.execute("read", {"file_path": "a.txt"}, session=session)
    again = await stack.execute("write", {"file_path": "a.txt", "content": "3"}, session=session)
    assert not again.is_error


async def test_a_deleted_file_after_a_read_is_stale(stack: ToolFs, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\n")
    session = Session()
    await stack.execute("read", {"file_path": "a.txt"}, session=session)
    path.unlink()
    result = await stack.execute("write", {"file_path": "a.txt", "content": "3"}, session=session)
    assert result.text == (
        f'Error: cannot write "{workspace}/a.txt": file no longer exists'
        " — re-read the file, then retry"
    )


async def test_two_sessions_do_not_share_observations(stack: ToolFs, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    reader, other = Session(), Session()
    await stack.execute("read", {"file_path": "a.txt"}, session=reader)
    denied = await stack.execute("edit", edit_args("a.txt", "one", "1"), session=other)
    assert denied.text == (
        f'Error: edit requires reading "{workspace}/a.txt" first — read the file, then retry'
    )
    overwrite = await stack.execute("write", {"file_path": "a.txt", "content": "x"}, session=other)
    assert overwrite.error is not None and overwrite.error.code == "FS_NOT_OBSERVED"
    allowed = await stack.execute("edit", edit_args("a.txt", "one", "1"), session=reader)
    assert not allowed.is_error


async def test_without_the_policy_writes_and_edits_are_unconditional(
    bare_stack: ToolFs, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\n")
    edited = await bare_stack.execute("edit", edit_args("a.txt", "one", "1"), session=Session())
    assert not edited.is_error
    written = await bare_stack.execute("write", {"file_path": "a.txt", "content": "x"})
    assert written.value is not None and written.value["operation"] == "update"
    assert (workspace / "a.txt").read_text() == "x"


async def test_crlf_files_stay_crlf(stack: ToolFs, workspace: Path) -> None:
    path = workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    session = Session()
    read = await stack.execute("read", {"file_path": "win.txt"}, session=session)
    assert "1: one\n2: two\n3: three\n\n(End of file - total 3 lines)" in read.text
    edited = await stack.execute(
        "edit", edit_args("win.txt", "two\nthree", "2\n3\n4"), session=session
    )
    assert not edited.is_error, edited.text
    assert edited.value == {
        "path": f"{workspace}/win.txt",
        "before": "one\ntwo\nthree\n",
        "after": "one\n2\n3\n4\n",
    }
    assert path.read_bytes() == b"one\r\n2\r\n3\r\n4\r\n"


async def test_relative_paths_follow_the_session_cwd(stack: ToolFs, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub/x.txt").write_text("x\n")
    result = await stack.execute(
        "read", {"file_path": "x.txt"}, session=Session(cwd=str(workspace / "sub"))
    )
    assert result.text.startswith(f"<path>{workspace}/sub/x.txt</path>")


async def test_the_policy_knows_a_file_by_its_identity(stack: ToolFs, workspace: Path) -> None:
    (workspace / "real.txt").write_text("one\n")
    os.symlink("real.txt", workspace / "link.txt")
    session = Session()
    await stack.execute("read", {"file_path": "link.txt"}, session=session)
    result = await stack.execute("edit", edit_args("real.txt", "one", "1"), session=session)
    assert not result.is_error, result.text
    assert (workspace / "link.txt").is_symlink()


async def test_an_already_set_cancel_event_touches_nothing(stack: ToolFs, workspace: Path) -> None:
    cancel = anyio.Event()
    cancel.set()
    result = await stack.execute("write", {"file_path": "a.txt", "content": "x"}, cancel=cancel)
    assert result.text == "Error: resolve aborted"
    assert not (workspace / "a.txt").exists()


async def test_a_streamed_read_gives_the_same_window_as_a_whole_read(workspace: Path) -> None:
    text = "".join(f"línea {n} — ✓\r\n" for n in range(1, 400)) + "end"
    (workspace / "big.txt").write_text(text, encoding="utf-8", newline="")
    whole = ToolFs.from_entry_points(
        backend="local", plugins=("policy",), cwd=str(workspace), config={"readMaxBytes": 300}
    )
    streamed = ToolFs.from_entry_points(
        backend="local",
        plugins=("policy",),
        cwd=str(workspace),
        config={"readStreamMinSize": 1, "readMaxBytes": 300},
    )
    for args in (
        {"file_path": "big.txt", "offset": 390, "limit": 20},
        {"file_path": "big.txt", "offset": 7},
    ):
        expected = (await whole.execute("read", args)).to_dict()
        assert (await streamed.execute("read", args)).to_dict() == expected
    capped = await streamed.execute("read", {"file_path": "big.txt", "offset": 2})
    assert capped.text.endswith("to continue.)\n</content>")
    assert "(Output capped. Showing lines 2-" in capped.text


async def test_two_concurrent_writes_from_one_observation_exactly_one_wins(
    stack: ToolFs, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("base\n")
    session = Session()
    await stack.execute("read", {"file_path": "a.txt"}, session=session)
    results: dict[str, str] = {}

    async def write(content: str) -> None:
        result = await stack.execute(
            "write", {"file_path": "a.txt", "content": content}, session=session
        )
        results[content] = result.text

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(write, "first\n")
            tg.start_soon(write, "second\n")
    stale = (
        f'Error: cannot write "{workspace}/a.txt": file changed since it was read'
        " — re-read the file, then retry"
    )
    assert sorted(text == stale for text in results.values()) == [False, True]
    winner = next(content for content, text in results.items() if text != stale)
    assert (workspace / "a.txt").read_text() == winner
