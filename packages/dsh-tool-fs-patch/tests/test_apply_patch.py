"""The apply_patch tool in a host, on the memory and local backends: results, bytes kept,
all or nothing, containment and the policy."""

from __future__ import annotations

import anyio
import pytest
from dsh_fs_local.testing import LocalScratch
from dsh_fs_memory import MemoryScratch
from dsh_fs_policy import FsPolicy
from dsh_tool_fs import TOOLS, Session, ToolFs
from dsh_tool_fs_patch import APPLY_PATCH
from dsh_tool_fs_patch_stack import Stack, make_stack

pytestmark = pytest.mark.anyio


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"])


SUMMARY = "Success. Updated the following files:"


# -- results ----------------------------------------------------------------------------------


async def test_an_added_file_is_written_as_given_and_summarized(stack: Stack) -> None:
    result = await stack.patch(patch("*** Add File: src/new.py", "+print(1)", "+"))
    assert result.text == f"{SUMMARY}\nA src/new.py"
    assert stack.get("src/new.py") == b"print(1)\n\n"


async def test_an_updated_file_is_summarized_with_m(stack: Stack) -> None:
    stack.put("a.txt", b"one\ntwo\nthree\n")
    await stack.read("a.txt")
    result = await stack.patch(patch("*** Update File: a.txt", "@@", " one", "-two", "+2"))
    assert result.text == f"{SUMMARY}\nM a.txt"
    assert stack.get("a.txt") == b"one\n2\nthree\n"


async def test_the_summary_lists_added_then_updated_files_with_paths_as_written(
    stack: Stack,
) -> None:
    stack.put("b.txt", b"x\n")
    await stack.read("b.txt")
    text = patch("*** Update File: ./b.txt", "-x", "+y", "*** Add File: c.txt", "+c")
    result = await stack.patch(text)
    assert result.text == f"{SUMMARY}\nA c.txt\nM ./b.txt"


async def test_the_value_lists_each_operation_and_its_new_version(stack: Stack) -> None:
    stack.put("b.txt", b"x\n")
    await stack.read("b.txt")
    result = await stack.patch(
        patch("*** Add File: c.txt", "+c", "*** Update File: b.txt", "-x", "+y")
    )
    assert result.value is not None
    files = result.value["files"]
    assert [(f["path"], f["operation"], f["new_path"]) for f in files] == [
        ("c.txt", "add", None),
        ("b.txt", "update", None),
    ]
    for f in files:
        info = await stack.scratch.fs.stat(
            await stack.scratch.fs.resolve(f["path"], cwd=stack.scratch.root)
        )
        assert info is not None and f["version"] == info.version


async def test_meta_carries_the_diff_hunks_of_every_written_file(stack: Stack) -> None:
    stack.put("a.txt", b"1\n2\n3\n4\n5\n6\n7\n8\n9\n")
    await stack.read("a.txt")
    result = await stack.patch(patch("*** Update File: a.txt", "@@", "-5", "+five"))
    assert result.meta == {
        "diffs": [
            {
                "path": "a.txt",
                "old_text": "2\n3\n4\n5\n6\n7\n8",
                "new_text": "2\n3\n4\nfive\n6\n7\n8",
            }
        ]
    }


async def test_an_empty_patch_modifies_nothing(stack: Stack) -> None:
    result = await stack.patch(patch())
    assert result.text == "Error: No files were modified."
    assert result.error is not None and result.error.code == "INVALID_ARGUMENTS"


async def test_a_parse_failure_is_codex_wording_and_an_argument_error(stack: Stack) -> None:
    result = await stack.patch("*** Begin Patch\n*** Update File: a\n*** End Patch")
    assert result.text == "Error: invalid hunk at line 2, Update file hunk for path 'a' is empty"
    assert result.error is not None and result.error.name == "ToolArgumentError"


async def test_lines_not_found_are_codex_wording(stack: Stack) -> None:
    stack.put("a.txt", b"a\n")
    await stack.read("a.txt")
    result = await stack.patch(patch("*** Update File: a.txt", "-nope", "+x"))
    assert result.text == "Error: Failed to find expected lines in a.txt:\\nnope"
    assert result.error is not None and result.error.code == "FS_EDIT_NOT_FOUND"


async def test_an_anchor_not_found_is_codex_wording(stack: Stack) -> None:
    stack.put("a.txt", b"a\n")
    await stack.read("a.txt")
    result = await stack.patch(patch("*** Update File: a.txt", "@@ def nope():", "-a", "+b"))
    assert result.text == "Error: Failed to find context 'def nope():' in a.txt"


# -- bytes kept -------------------------------------------------------------------------------


async def test_a_crlf_file_stays_crlf_byte_for_byte(stack: Stack) -> None:
    stack.put("w.txt", b"alpha\r\nbeta\r\ngamma\r\n")
    await stack.read("w.txt")
    await stack.patch(patch("*** Update File: w.txt", "@@", " alpha", "-beta", "+BETA", "+beta2"))
    assert stack.get("w.txt") == b"alpha\r\nBETA\r\nbeta2\r\ngamma\r\n"


async def test_a_bom_stays(stack: Stack) -> None:
    stack.put("b.txt", b"\xef\xbb\xbfone\ntwo\n")
    await stack.read("b.txt")
    await stack.patch(patch("*** Update File: b.txt", "-one", "+ONE"))
    assert stack.get("b.txt") == b"\xef\xbb\xbfONE\ntwo\n"


async def test_a_bom_and_crlf_file_keeps_both(stack: Stack) -> None:
    stack.put("b.txt", b"\xef\xbb\xbfone\r\ntwo")
    await stack.read("b.txt")
    await stack.patch(patch("*** Update File: b.txt", "-two", "+2", "+3"))
    assert stack.get("b.txt") == b"\xef\xbb\xbfone\r\n2\r\n3"


async def test_a_missing_final_newline_stays_missing(stack: Stack) -> None:
    stack.put("n.txt", b"a\nb")
    await stack.read("n.txt")
    await stack.patch(patch("*** Update File: n.txt", "-b", "+c"))
    assert stack.get("n.txt") == b"a\nc"


async def test_lines_outside_the_chunk_keep_their_trailing_whitespace(stack: Stack) -> None:
    stack.put("t.txt", b"keep  \nold\nkeep\t\n")
    await stack.read("t.txt")
    await stack.patch(patch("*** Update File: t.txt", " keep", "-old", "+new", " keep"))
    assert stack.get("t.txt") == b"keep  \nnew\nkeep\t\n"


async def test_a_binary_file_is_not_patched(stack: Stack) -> None:
    stack.put("bin", b"a\x00b\n")
    result = await stack.patch(patch("*** Update File: bin", "-a", "+b"))
    assert result.text.startswith("Error: ")
    assert stack.get("bin") == b"a\x00b\n"


# -- all or nothing ---------------------------------------------------------------------------


async def test_a_failing_later_chunk_leaves_every_earlier_file_unchanged(stack: Stack) -> None:
    stack.put("a.txt", b"a\n")
    stack.put("b.txt", b"b\n")
    await stack.read("a.txt")
    await stack.read("b.txt")
    text = patch(
        "*** Add File: new.txt",
        "+new",
        "*** Update File: a.txt",
        "-a",
        "+A",
        "*** Update File: b.txt",
        "-missing",
        "+B",
    )
    result = await stack.patch(text)
    assert result.text == "Error: Failed to find expected lines in b.txt:\\nmissing"
    assert (stack.get("new.txt"), stack.get("a.txt"), stack.get("b.txt")) == (None, b"a\n", b"b\n")


async def test_a_policy_refusal_of_a_later_file_leaves_earlier_ones_unchanged(stack: Stack) -> None:
    stack.put("a.txt", b"a\n")
    stack.put("unread.txt", b"u\n")
    await stack.read("a.txt")
    text = patch("*** Update File: a.txt", "-a", "+A", "*** Update File: unread.txt", "-u", "+U")
    result = await stack.patch(text)
    assert result.is_error
    assert stack.get("a.txt") == b"a\n"


async def test_a_file_changed_twice_in_one_patch_is_refused(stack: Stack) -> None:
    stack.put("a.txt", b"a\n")
    await stack.read("a.txt")
    text = patch("*** Update File: a.txt", "-a", "+A", "*** Update File: ./a.txt", "-A", "+B")
    result = await stack.patch(text)
    root = stack.scratch.root
    assert result.text == f'Error: cannot patch "{root}/a.txt": the patch changes it more than once'
    assert stack.get("a.txt") == b"a\n"


# -- containment ------------------------------------------------------------------------------


async def test_a_path_above_the_workspace_is_refused_before_anything(stack: Stack) -> None:
    parent = stack.scratch.root.rsplit("/", 1)[0]
    result = await stack.patch(
        patch("*** Add File: ok.txt", "+x", "*** Add File: ../out.txt", "+x")
    )
    assert result.text == f'Error: cannot write "{parent}/out.txt": outside the workspace'
    assert stack.get("ok.txt") is None


async def test_an_absolute_path_outside_the_workspace_is_refused(stack: Stack) -> None:
    result = await stack.patch(patch("*** Update File: /etc/hostname", "-a", "+b"))
    assert result.text == 'Error: cannot edit "/etc/hostname": outside the workspace'


async def test_an_absolute_path_inside_the_workspace_is_accepted(stack: Stack) -> None:
    result = await stack.patch(patch(f"*** Add File: {stack.scratch.root}/abs.txt", "+x"))
    assert not result.is_error
    assert stack.get("abs.txt") == b"x\n"


async def test_a_link_out_of_the_workspace_is_refused(stack: Stack) -> None:
    stack.scratch.symlink("out", "/etc")
    result = await stack.patch(patch("*** Add File: out/x.txt", "+x"))
    root = stack.scratch.root
    assert result.text == f'Error: cannot write "{root}/out/x.txt": outside the workspace'


async def test_a_read_only_workspace_refuses_the_patch(
    scratch: LocalScratch | MemoryScratch,
) -> None:
    scratch.put("a.txt", b"a\n")
    stack = make_stack(scratch)
    stack.toolfs = ToolFs(
        scratch.backend(scratch.root, read_only=True),
        plugins=[FsPolicy()],
        tools=(*TOOLS, APPLY_PATCH),
    )
    await stack.read("a.txt")
    result = await stack.patch(patch("*** Update File: a.txt", "-a", "+b"))
    assert result.text == f'Error: cannot edit "{scratch.root}/a.txt": read-only workspace'
    assert scratch.get("a.txt") == b"a\n"


# -- the policy -------------------------------------------------------------------------------


async def test_an_unread_update_is_refused_with_the_remedy(stack: Stack) -> None:
    stack.put("a.txt", b"a\n")
    result = await stack.patch(patch("*** Update File: a.txt", "-a", "+b"))
    root = stack.scratch.root
    assert result.text == (
        f'Error: edit requires reading "{root}/a.txt" first — read the file, then retry'
    )
    assert stack.get("a.txt") == b"a\n"


async def test_an_add_over_an_unread_file_is_refused(stack: Stack) -> None:
    stack.put("a.txt", b"old\n")
    result = await stack.patch(patch("*** Add File: a.txt", "+new"))
    root = stack.scratch.root
    assert result.text == (
        f'Error: cannot overwrite existing "{root}/a.txt" without reading it first'
        " — read the file, then retry"
    )
    assert stack.get("a.txt") == b"old\n"


async def test_an_add_over_a_read_file_replaces_it(stack: Stack) -> None:
    stack.put("a.txt", b"old\n")
    await stack.read("a.txt")
    result = await stack.patch(patch("*** Add File: a.txt", "+new"))
    assert result.text == f"{SUMMARY}\nA a.txt"
    assert stack.get("a.txt") == b"new\n"


async def test_a_second_patch_to_the_same_files_needs_no_read(stack: Stack) -> None:
    stack.put("a.txt", b"1\n")
    await stack.read("a.txt")
    await stack.patch(patch("*** Update File: a.txt", "-1", "+2", "*** Add File: n.txt", "+n"))
    result = await stack.patch(
        patch("*** Update File: a.txt", "-2", "+3", "*** Update File: n.txt", "-n", "+m")
    )
    assert result.text == f"{SUMMARY}\nM a.txt\nM n.txt"


async def test_a_file_changed_since_it_was_read_is_stale(stack: Stack) -> None:
    stack.put("a.txt", b"1\n")
    await stack.read("a.txt")
    stack.put("a.txt", b"1\nchanged behind\n")
    result = await stack.patch(patch("*** Update File: a.txt", "-1", "+2"))
    root = stack.scratch.root
    assert result.text == (
        f'Error: cannot edit "{root}/a.txt": file changed since it was read'
        " — re-read the file, then retry"
    )


async def test_two_sessions_patching_one_observed_version_one_wins(stack: Stack) -> None:
    stack.put("a.txt", b"base\n")
    other = Session(stack.scratch.root)
    await stack.read("a.txt")
    await stack.read("a.txt", other)
    first = await stack.patch(patch("*** Update File: a.txt", "-base", "+first"))
    second = await stack.patch(patch("*** Update File: a.txt", "-base", "+second"), other)
    assert not first.is_error
    assert second.error is not None and second.error.code == "FS_STALE_VERSION"
    assert stack.get("a.txt") == b"first\n"


async def test_without_a_policy_an_unread_update_applies(bare: Stack) -> None:
    bare.put("a.txt", b"a\n")
    result = await bare.patch(patch("*** Update File: a.txt", "-a", "+b"))
    assert result.text == f"{SUMMARY}\nM a.txt"
    assert bare.get("a.txt") == b"b\n"


async def test_an_update_of_a_missing_file_is_not_found(bare: Stack) -> None:
    result = await bare.patch(patch("*** Update File: gone.txt", "-a", "+b"))
    assert result.text == f'Error: cannot edit "{bare.scratch.root}/gone.txt": not found'


# -- delete and move --------------------------------------------------------------------------


async def test_a_read_file_is_deleted_and_summarized_with_d(stack: Stack) -> None:
    stack.put("old.txt", b"x\n")
    await stack.read("old.txt")
    result = await stack.patch(patch("*** Delete File: old.txt"))
    assert result.text == f"{SUMMARY}\nD old.txt"
    assert stack.get("old.txt") is None


async def test_an_unread_delete_is_refused_with_the_remedy(stack: Stack) -> None:
    stack.put("old.txt", b"x\n")
    result = await stack.patch(patch("*** Delete File: old.txt"))
    assert result.text == (
        f'Error: cannot delete "{stack.scratch.root}/old.txt" without reading it first'
        " — read the file, then retry"
    )
    assert stack.get("old.txt") == b"x\n"


async def test_deleting_a_missing_file_is_not_found(bare: Stack) -> None:
    result = await bare.patch(patch("*** Delete File: nope.txt"))
    assert result.text == f'Error: cannot delete "{bare.scratch.root}/nope.txt": not found'


async def test_deleting_a_directory_is_refused(bare: Stack) -> None:
    bare.scratch.mkdir("d")
    result = await bare.patch(patch("*** Delete File: d"))
    assert result.text == f'Error: cannot delete "{bare.scratch.root}/d": not a regular file'


async def test_a_deleted_file_is_observed_absent(stack: Stack) -> None:
    stack.put("old.txt", b"x\n")
    await stack.read("old.txt")
    await stack.patch(patch("*** Delete File: old.txt"))
    result = await stack.patch(patch("*** Update File: old.txt", "-x", "+y"))
    assert result.text == f'Error: cannot edit "{stack.scratch.root}/old.txt": not found'


async def test_an_update_with_a_move_writes_the_new_path_and_removes_the_old(
    stack: Stack,
) -> None:
    stack.put("src/old.py", b"a = 1\r\nb = 2\r\n")
    await stack.read("src/old.py")
    text = patch("*** Update File: src/old.py", "*** Move to: lib/new.py", "-b = 2", "+b = 3")
    result = await stack.patch(text)
    assert result.text == f"{SUMMARY}\nM lib/new.py"
    assert (stack.get("src/old.py"), stack.get("lib/new.py")) == (None, b"a = 1\r\nb = 3\r\n")
    assert result.value is not None
    assert result.value["files"][0]["operation"] == "move"
    assert result.value["files"][0]["new_path"] == "lib/new.py"


async def test_a_moved_file_needs_no_read_at_its_new_path(stack: Stack) -> None:
    stack.put("a.txt", b"1\n")
    await stack.read("a.txt")
    await stack.patch(patch("*** Update File: a.txt", "*** Move to: b.txt", "-1", "+2"))
    result = await stack.patch(patch("*** Update File: b.txt", "-2", "+3"))
    assert result.text == f"{SUMMARY}\nM b.txt"
    assert stack.get("b.txt") == b"3\n"


async def test_a_move_onto_an_unread_file_is_refused(stack: Stack) -> None:
    stack.put("a.txt", b"1\n")
    stack.put("b.txt", b"precious\n")
    await stack.read("a.txt")
    result = await stack.patch(patch("*** Update File: a.txt", "*** Move to: b.txt", "-1", "+2"))
    assert result.text == (
        f'Error: cannot overwrite existing "{stack.scratch.root}/b.txt" without reading it first'
        " — read the file, then retry"
    )
    assert (stack.get("a.txt"), stack.get("b.txt")) == (b"1\n", b"precious\n")


async def test_a_move_onto_a_read_file_replaces_it(stack: Stack) -> None:
    stack.put("a.txt", b"1\n")
    stack.put("b.txt", b"old\n")
    await stack.read("a.txt")
    await stack.read("b.txt")
    result = await stack.patch(patch("*** Update File: a.txt", "*** Move to: b.txt", "-1", "+2"))
    assert result.text == f"{SUMMARY}\nM b.txt"
    assert (stack.get("a.txt"), stack.get("b.txt")) == (None, b"2\n")


async def test_a_move_out_of_the_workspace_is_refused(stack: Stack) -> None:
    stack.put("a.txt", b"1\n")
    await stack.read("a.txt")
    parent = stack.scratch.root.rsplit("/", 1)[0]
    result = await stack.patch(patch("*** Update File: a.txt", "*** Move to: ../b.txt", "-1", "+2"))
    assert result.text == f'Error: cannot move to "{parent}/b.txt": outside the workspace'
    assert stack.get("a.txt") == b"1\n"


async def test_a_failing_chunk_after_a_delete_leaves_the_deleted_file(stack: Stack) -> None:
    stack.put("gone.txt", b"g\n")
    stack.put("a.txt", b"a\n")
    await stack.read("gone.txt")
    await stack.read("a.txt")
    text = patch("*** Delete File: gone.txt", "*** Update File: a.txt", "-zzz", "+b")
    result = await stack.patch(text)
    assert result.is_error
    assert (stack.get("gone.txt"), stack.get("a.txt")) == (b"g\n", b"a\n")


async def test_a_call_cancelled_before_it_starts_changes_nothing(stack: Stack) -> None:
    stack.put("a.txt", b"a\n")
    await stack.read("a.txt")
    cancel = anyio.Event()
    cancel.set()
    result = await stack.toolfs.execute(
        "apply_patch",
        {"input": patch("*** Update File: a.txt", "-a", "+b")},
        session=stack.session,
        cancel=cancel,
    )
    assert result.text == "Error: resolve aborted"
    assert stack.get("a.txt") == b"a\n"
