"""The text editor's commands on both backends: results and errors in Anthropic's words,
the policy's cases, containment, and bytes kept exactly."""

from __future__ import annotations

import anyio
import pytest
from dsh_fs.testing import Scratch
from editor_host import Agent, error, ok

pytestmark = pytest.mark.anyio

CAT = "Here's the result of running `cat -n` on {}:\n"
REVIEW = "Review the changes and make sure they are as expected. Edit the file again if necessary."
REVIEW_INSERT = (
    "Review the changes and make sure they are as expected (correct indentation, no duplicate "
    "lines, etc). Edit the file again if necessary."
)


# -- view -----------------------------------------------------------------------------------


async def test_view_of_a_file_numbers_its_lines_as_cat_n(ws: Scratch) -> None:
    ws.put("a.py", b"def f():\n\treturn 1\n")
    text = ok(await Agent(ws).editor(command="view", path="a.py"))
    assert text == CAT.format("a.py") + "     1\tdef f():\n     2\t\treturn 1\n"


async def test_view_range_shows_those_lines_and_minus_one_runs_to_the_end(ws: Scratch) -> None:
    ws.put("a.txt", b"1\n2\n3\n4\n")
    agent = Agent(ws)
    assert ok(await agent.editor(command="view", path="a.txt", view_range=[2, 3])) == (
        CAT.format("a.txt") + "     2\t2\n     3\t3\n"
    )
    assert ok(await agent.editor(command="view", path="a.txt", view_range=[3, -1])) == (
        CAT.format("a.txt") + "     3\t3\n     4\t4\n"
    )


@pytest.mark.parametrize(
    ("view_range", "message"),
    [
        (
            [0, 2],
            "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of "
            "lines of the file: [1, 3]",
        ),
        (
            [4, -1],
            "Invalid `view_range`: [4, -1]. Its first element `4` should be within the range of "
            "lines of the file: [1, 3]",
        ),
        (
            [1, 9],
            "Invalid `view_range`: [1, 9]. Its second element `9` should be smaller than the "
            "number of lines in the file: `3`",
        ),
        (
            [3, 2],
            "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal "
            "than its first `3`",
        ),
        ([1], "Invalid `view_range`. It should be a list of two integers."),
    ],
)
async def test_a_view_range_outside_the_file_is_refused_in_the_reference_words(
    ws: Scratch, view_range: list[int], message: str
) -> None:
    ws.put("a.txt", b"1\n2\n3\n")
    assert error(await Agent(ws).editor(command="view", path="a.txt", view_range=view_range)) == (
        message
    )


async def test_view_of_a_directory_lists_non_hidden_entries_two_levels_deep(ws: Scratch) -> None:
    """
    src/app.py, src/lib/deep/x.py (third level: not shown), .git/config (hidden),
    README.md, .env (hidden)
    """
    ws.put("src/app.py", b"")
    ws.put("src/lib/deep/x.py", b"")
    ws.put(".git/config", b"")
    ws.put("README.md", b"")
    ws.put(".env", b"")
    text = ok(await Agent(ws).editor(command="view", path="."))
    assert text == (
        "Here's the files and directories up to 2 levels deep in ., excluding hidden items:\n"
        ".\n./README.md\n./src\n./src/app.py\n./src/lib\n"
    )


async def test_view_range_of_a_directory_is_refused(ws: Scratch) -> None:
    ws.mkdir("src")
    assert error(await Agent(ws).editor(command="view", path="src", view_range=[1, 2])) == (
        "The `view_range` parameter is not allowed when `path` points to a directory."
    )


async def test_view_of_a_missing_path_says_it_does_not_exist(ws: Scratch) -> None:
    assert error(await Agent(ws).editor(command="view", path="nope.py")) == (
        "The path nope.py does not exist. Please provide a valid path."
    )


async def test_a_long_view_is_cut_at_max_characters_with_a_note_on_the_rest(ws: Scratch) -> None:
    ws.put("big.txt", b"".join(b"line %d\n" % i for i in range(1, 101)))
    agent = Agent(ws, config={"editor_max_characters": 60})
    text = ok(await agent.editor(command="view", path="big.txt"))
    assert text == (
        CAT.format("big.txt")
        + "".join(f"{i:6}\tline {i}\n" for i in range(1, 5))
        + "<response clipped><NOTE>To save on context only part of this file has been shown "
        "to you. To see the rest, view it again with view_range [5, -1].</NOTE>\n"
    )
    rest = ok(await agent.editor(command="view", path="big.txt", view_range=[5, 6]))
    assert rest == CAT.format("big.txt") + "     5\tline 5\n     6\tline 6\n"


async def test_the_note_keeps_the_end_of_the_range_asked_for(ws: Scratch) -> None:
    ws.put("big.txt", b"".join(b"line %d\n" % i for i in range(1, 101)))
    agent = Agent(ws, config={"editor_max_characters": 30})
    text = ok(await agent.editor(command="view", path="big.txt", view_range=[10, 20]))
    assert text.endswith("view it again with view_range [12, 20].</NOTE>\n")


async def test_tabs_are_never_expanded_and_crlf_is_not_shown(ws: Scratch) -> None:
    ws.put("t.txt", b"a\tb\r\n\tc\r\n")
    assert ok(await Agent(ws).editor(command="view", path="t.txt")) == (
        CAT.format("t.txt") + "     1\ta\tb\n     2\t\tc\n"
    )


# -- create ---------------------------------------------------------------------------------


async def test_create_writes_a_new_file_and_its_parents(ws: Scratch) -> None:
    text = ok(await Agent(ws).editor(command="create", path="n/m.py", file_text="x = 1\n"))
    assert text == "File created successfully at: n/m.py"
    assert ws.get("n/m.py") == b"x = 1\n"


async def test_create_never_overwrites_a_file_even_one_viewed(ws: Scratch) -> None:
    ws.put("a.py", b"keep\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.py"))
    assert error(await agent.editor(command="create", path="a.py", file_text="gone")) == (
        "File already exists at: a.py. Cannot overwrite files using command `create`."
    )
    assert ws.get("a.py") == b"keep\n"


async def test_create_without_file_text_is_refused_before_any_call(ws: Scratch) -> None:
    result = await Agent(ws).editor(command="create", path="a.py")
    assert error(result) == "Parameter `file_text` is required for command: create"
    assert result.error is not None and result.error.code == "INVALID_ARGUMENTS"
    assert ws.get("a.py") is None


# -- str_replace ----------------------------------------------------------------------------


async def test_str_replace_after_a_view_edits_and_shows_a_snippet(ws: Scratch) -> None:
    ws.put("a.py", b"".join(b"l%d\n" % i for i in range(1, 11)))
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.py"))
    text = ok(await agent.editor(command="str_replace", path="a.py", old_str="l6", new_str="six"))
    assert text == (
        "The file a.py has been edited. Here's the result of running `cat -n` on a snippet of "
        "a.py:\n     2\tl2\n     3\tl3\n     4\tl4\n     5\tl5\n     6\tsix\n     7\tl7\n"
        "     8\tl8\n     9\tl9\n    10\tl10\n" + REVIEW
    )
    assert ws.get("a.py") == b"".join(b"l%d\n" % i for i in range(1, 11)).replace(b"l6", b"six")


async def test_a_view_of_any_range_counts_as_reading_the_file(ws: Scratch) -> None:
    ws.put("a.txt", b"1\n2\n3\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.txt", view_range=[1, 1]))
    ok(await agent.editor(command="str_replace", path="a.txt", old_str="3", new_str="three"))
    assert ws.get("a.txt") == b"1\n2\nthree\n"


async def test_a_directory_view_is_not_a_read_of_its_files(ws: Scratch) -> None:
    ws.put("a.txt", b"x\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="."))
    result = await agent.editor(command="str_replace", path="a.txt", old_str="x", new_str="y")
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"


async def test_str_replace_of_an_unread_file_is_refused_with_the_remedy(ws: Scratch) -> None:
    ws.put("a.py", b"x\n")
    result = await Agent(ws).editor(command="str_replace", path="a.py", old_str="x", new_str="y")
    assert error(result) == (
        f'edit requires reading "{ws.root}/a.py" first — read the file, then retry'
    )
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    assert ws.get("a.py") == b"x\n"


async def test_str_replace_of_a_file_changed_since_the_view_is_refused(ws: Scratch) -> None:
    ws.put("a.py", b"x\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.py"))
    ws.put("a.py", b"x = 2\n")
    result = await agent.editor(command="str_replace", path="a.py", old_str="x", new_str="y")
    assert error(result) == (
        f'cannot edit "{ws.root}/a.py": file changed since it was read — re-read the file, '
        "then retry"
    )
    assert ws.get("a.py") == b"x = 2\n"


async def test_a_created_file_can_be_edited_without_a_view(ws: Scratch) -> None:
    agent = Agent(ws)
    ok(await agent.editor(command="create", path="a.py", file_text="x\n"))
    ok(await agent.editor(command="str_replace", path="a.py", old_str="x", new_str="y"))
    assert ws.get("a.py") == b"y\n"


async def test_str_replace_without_a_match_says_so_verbatim(ws: Scratch) -> None:
    ws.put("a.py", b"x\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.py"))
    assert error(await agent.editor(command="str_replace", path="a.py", old_str="z")) == (
        "No replacement was performed, old_str `z` did not appear verbatim in a.py."
    )


async def test_str_replace_of_several_matches_names_their_lines(ws: Scratch) -> None:
    ws.put("a.py", b"x = 1\ny = 2\nx = 3\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.py"))
    result = await agent.editor(command="str_replace", path="a.py", old_str="x =", new_str="z =")
    assert error(result) == (
        "No replacement was performed. Multiple occurrences of old_str `x =` in lines [1, 3]. "
        "Please ensure it is unique"
    )
    assert ws.get("a.py") == b"x = 1\ny = 2\nx = 3\n"


async def test_each_match_is_listed_by_its_line_so_two_on_a_line_count_twice(
    ws: Scratch,
) -> None:
    ws.put("a.py", b"a = a\nb\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.py"))
    assert error(await agent.editor(command="str_replace", path="a.py", old_str="a")) == (
        "No replacement was performed. Multiple occurrences of old_str `a` in lines [1, 1]. "
        "Please ensure it is unique"
    )


async def test_str_replace_without_new_str_deletes_old_str(ws: Scratch) -> None:
    ws.put("a.py", b"keep drop\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.py"))
    ok(await agent.editor(command="str_replace", path="a.py", old_str=" drop"))
    assert ws.get("a.py") == b"keep\n"


async def test_str_replace_on_a_directory_says_only_view_applies(ws: Scratch) -> None:
    ws.mkdir("src")
    agent = Agent(ws, policy=False)
    assert error(await agent.editor(command="str_replace", path="src", old_str="a")) == (
        "The path src is a directory and only the `view` command can be used on directories"
    )


async def test_str_replace_of_a_missing_file_without_policy_says_it_does_not_exist(
    ws: Scratch,
) -> None:
    agent = Agent(ws, policy=False)
    assert error(await agent.editor(command="str_replace", path="no.py", old_str="a")) == (
        "The path no.py does not exist. Please provide a valid path."
    )


async def test_crlf_bom_and_tabs_are_kept_byte_for_byte(ws: Scratch) -> None:
    ws.put("w.txt", b"\xef\xbb\xbfone\r\n\ttwo\r\nthree\r\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="w.txt"))
    ok(
        await agent.editor(
            command="str_replace", path="w.txt", old_str="\ttwo", new_str="\t2\n\t2b"
        )
    )
    assert ws.get("w.txt") == b"\xef\xbb\xbfone\r\n\t2\r\n\t2b\r\nthree\r\n"
    ok(await agent.editor(command="insert", path="w.txt", insert_line=1, insert_text="\tnew"))
    assert ws.get("w.txt") == b"\xef\xbb\xbfone\r\n\tnew\r\n\t2\r\n\t2b\r\nthree\r\n"


# -- insert ---------------------------------------------------------------------------------


async def test_insert_after_a_line_shows_the_snippet(ws: Scratch) -> None:
    ws.put("a.txt", b"a\nb\nc\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.txt"))
    text = ok(await agent.editor(command="insert", path="a.txt", insert_line=1, insert_text="X"))
    assert text == (
        "The file a.txt has been edited. Here's the result of running `cat -n` on a snippet of "
        "the edited file:\n     1\ta\n     2\tX\n     3\tb\n     4\tc\n" + REVIEW_INSERT
    )
    assert ws.get("a.txt") == b"a\nX\nb\nc\n"


async def test_insert_line_zero_goes_before_the_first_line(ws: Scratch) -> None:
    ws.put("a.txt", b"a\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.txt"))
    ok(await agent.editor(command="insert", path="a.txt", insert_line=0, insert_text="top\n"))
    assert ws.get("a.txt") == b"top\na\n"


async def test_insert_takes_the_older_new_str_spelling(ws: Scratch) -> None:
    ws.put("a.txt", b"a\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.txt"))
    ok(await agent.editor(command="insert", path="a.txt", insert_line=1, new_str="b"))
    assert ws.get("a.txt") == b"a\nb\n"


async def test_insert_after_a_last_line_without_newline_keeps_it_so(ws: Scratch) -> None:
    ws.put("a.txt", b"a\nb")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.txt"))
    ok(await agent.editor(command="insert", path="a.txt", insert_line=2, insert_text="c"))
    assert ws.get("a.txt") == b"a\nb\nc"


async def test_insert_into_an_empty_file(ws: Scratch) -> None:
    ws.put("e.txt", b"")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="e.txt"))
    ok(await agent.editor(command="insert", path="e.txt", insert_line=0, insert_text="first"))
    assert ws.get("e.txt") == b"first\n"


async def test_insert_beyond_the_last_line_is_refused(ws: Scratch) -> None:
    ws.put("a.txt", b"a\nb\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.txt"))
    assert error(
        await agent.editor(command="insert", path="a.txt", insert_line=3, new_str="x")
    ) == (
        "Invalid `insert_line` parameter: 3. It should be within the range of lines of the "
        "file: [0, 2]"
    )
    assert ws.get("a.txt") == b"a\nb\n"


async def test_insert_into_an_unread_file_is_refused(ws: Scratch) -> None:
    ws.put("a.txt", b"a\n")
    result = await Agent(ws).editor(command="insert", path="a.txt", insert_line=0, new_str="x")
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    assert ws.get("a.txt") == b"a\n"


async def test_insert_into_a_file_changed_since_the_view_is_refused(ws: Scratch) -> None:
    ws.put("a.txt", b"a\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.txt"))
    ws.put("a.txt", b"changed\n")
    result = await agent.editor(command="insert", path="a.txt", insert_line=0, new_str="x")
    assert error(result) == (
        f'cannot edit "{ws.root}/a.txt": file changed since it was read — re-read the file, '
        "then retry"
    )
    assert ws.get("a.txt") == b"changed\n"


async def test_insert_without_its_text_is_refused(ws: Scratch) -> None:
    assert error(await Agent(ws).editor(command="insert", path="a.txt", insert_line=0)) == (
        "Parameter `insert_text` is required for command: insert"
    )


# -- arguments and containment --------------------------------------------------------------


async def test_an_unknown_command_is_refused(ws: Scratch) -> None:
    assert error(await Agent(ws).editor(command="undo_edit", path="a.txt")) == (
        "command must be one of: view, create, str_replace, insert"
    )


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd"])
async def test_paths_outside_the_workspace_are_refused(ws: Scratch, path: str) -> None:
    message = error(await Agent(ws).editor(command="view", path=path))
    assert message.startswith('cannot view "') and message.endswith('": outside the workspace')


async def test_create_outside_the_workspace_is_refused_and_writes_nothing(
    ws: Scratch,
) -> None:
    result = await Agent(ws).editor(command="create", path="../x.txt", file_text="x")
    assert result.error is not None and result.error.code == "FS_OUTSIDE_WORKSPACE"


async def test_a_link_out_of_the_workspace_is_refused(ws: Scratch) -> None:
    ws.symlink("out", "/etc")
    result = await Agent(ws).editor(command="view", path="out/hostname")
    assert result.error is not None and result.error.code == "FS_OUTSIDE_WORKSPACE"


# -- cancellation ---------------------------------------------------------------------------


async def test_a_call_cancelled_before_it_starts_changes_nothing(ws: Scratch) -> None:
    ws.put("a.txt", b"a\n")
    agent = Agent(ws)
    ok(await agent.editor(command="view", path="a.txt"))
    cancel = anyio.Event()
    cancel.set()
    result = await agent.toolfs.execute(
        "str_replace_based_edit_tool",
        {"command": "insert", "path": "a.txt", "insert_line": 0, "insert_text": "x"},
        session=agent.session,
        cancel=cancel,
    )
    assert error(result) == "resolve aborted"
    assert result.error is not None and result.error.code == "FS_ABORTED"
    assert ws.get("a.txt") == b"a\n"
