"""The V4A grammar: what parses to which operations, and Codex's words for what does not."""

from __future__ import annotations

import pytest
from dsh_tool_fs_patch import AddFile, Chunk, DeleteFile, PatchSyntaxError, UpdateFile, parse_patch
from dsh_tool_fs_patch.grammar import WHITESPACE
from hypothesis import given
from hypothesis import strategies as st


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"])


def error_of(text: str) -> str:
    with pytest.raises(PatchSyntaxError) as caught:
        parse_patch(text)
    return str(caught.value)


def test_the_three_operations_and_a_move_parse_in_order() -> None:
    text = patch(
        "*** Add File: path/add.py",
        "+abc",
        "+def",
        "*** Delete File: path/delete.py",
        "*** Update File: path/update.py",
        "*** Move to: path/update2.py",
        "@@ def f():",
        "-    pass",
        "+    return 123",
    )
    assert parse_patch(text) == [
        AddFile("path/add.py", "abc\ndef\n"),
        DeleteFile("path/delete.py"),
        UpdateFile(
            "path/update.py",
            (Chunk("def f():", ("    pass",), ("    return 123",)),),
            "path/update2.py",
        ),
    ]


def test_an_added_file_is_its_plus_lines_each_with_a_newline() -> None:
    assert parse_patch(patch("*** Add File: a", "+", "+x")) == [AddFile("a", "\nx\n")]


def test_an_added_file_without_lines_is_empty() -> None:
    assert parse_patch(patch("*** Add File: a")) == [AddFile("a", "")]


def test_the_first_chunk_may_omit_its_at_at_line() -> None:
    text = patch("*** Update File: f.py", " import foo", "+bar")
    assert parse_patch(text) == [
        UpdateFile("f.py", (Chunk(None, ("import foo",), ("import foo", "bar")),))
    ]


def test_a_later_chunk_must_start_with_at_at() -> None:
    text = patch("*** Update File: f", "@@", "-a", "+b", "bad")
    assert error_of(text) == (
        "invalid hunk at line 6, Expected update hunk to start with a @@ context marker, got: 'bad'"
    )


def test_an_empty_line_inside_a_chunk_is_an_empty_context_line() -> None:
    text = patch("*** Update File: f", "@@ ctx", "", " context", "-remove", "+add")
    assert parse_patch(text) == [
        UpdateFile("f", (Chunk("ctx", ("", "context", "remove"), ("", "context", "add")),))
    ]


def test_blank_lines_after_end_of_file_are_skipped() -> None:
    text = patch("*** Update File: f", "@@", "-a", "*** End of File", "", " \t", "@@", "+b")
    assert parse_patch(text) == [
        UpdateFile("f", (Chunk(None, ("a",), (), True), Chunk(None, (), ("b",))))
    ]


def test_a_line_of_spaces_opening_an_update_is_a_context_line() -> None:
    text = patch("*** Update File: f", "   ", "@@", "-a", "+b")
    assert parse_patch(text) == [
        UpdateFile("f", (Chunk(None, ("  ",), ("  ",)), Chunk(None, ("a",), ("b",))))
    ]


def test_a_blank_line_after_a_chunk_is_not_skipped() -> None:
    assert error_of(patch("*** Update File: f", "@@", "-a", "\t", "@@", "+b")) == (
        "invalid hunk at line 5, Expected update hunk to start with a @@ context marker, got: '\t'"
    )


def test_end_of_file_closes_a_chunk_and_anchors_it_at_the_end() -> None:
    text = patch("*** Update File: f", "@@", "+line", "*** End of File")
    assert parse_patch(text) == [UpdateFile("f", (Chunk(None, (), ("line",), True),))]


def test_several_chunks_each_with_an_anchor() -> None:
    text = patch("*** Update File: f", "@@ one", "-a", "+b", "@@ two", "-c", "+d")
    assert parse_patch(text) == [
        UpdateFile("f", (Chunk("one", ("a",), ("b",)), Chunk("two", ("c",), ("d",))))
    ]


def test_markers_are_trimmed_of_surrounding_whitespace() -> None:
    text = "*** Begin Patch \n  *** Update File: foo.txt\n@@\n-old\n+new\n *** End Patch\n"
    assert parse_patch(text) == [UpdateFile("foo.txt", (Chunk(None, ("old",), ("new",)),))]


def test_crlf_patch_lines_parse_as_lf_ones() -> None:
    text = patch("*** Add File: a", "+x").replace("\n", "\r\n")
    assert parse_patch(text) == [AddFile("a", "x\n")]


@pytest.mark.parametrize("opener", ["<<EOF", "<<'EOF'", '<<"EOF"'])
def test_a_heredoc_wrapper_is_stripped(opener: str) -> None:
    text = f"{opener}\n{patch('*** Add File: a', '+x')}\nEOF\n"
    assert parse_patch(text) == [AddFile("a", "x\n")]


def test_a_heredoc_with_mismatched_quotes_is_not_a_wrapper() -> None:
    text = f"<<\"EOF'\n{patch('*** Add File: a', '+x')}\nEOF\n"
    assert error_of(text) == "invalid patch: The first line of the patch must be '*** Begin Patch'"


def test_a_heredoc_without_end_patch_names_the_last_line() -> None:
    text = "<<EOF\n*** Begin Patch\n*** Update File: f\nEOF\n"
    assert error_of(text) == "invalid patch: The last line of the patch must be '*** End Patch'"


def test_an_envelope_without_operations_parses_to_nothing() -> None:
    assert parse_patch(patch()) == []


def test_a_patch_must_begin_with_begin_patch() -> None:
    assert error_of("bad") == (
        "invalid patch: The first line of the patch must be '*** Begin Patch'"
    )


def test_a_patch_must_end_with_end_patch() -> None:
    assert error_of("*** Begin Patch\nbad") == (
        "invalid patch: The last line of the patch must be '*** End Patch'"
    )


def test_an_empty_input_names_the_last_line() -> None:
    assert error_of("") == "invalid patch: The last line of the patch must be '*** End Patch'"


def test_an_unknown_header_is_refused_with_the_valid_ones() -> None:
    assert error_of(patch("*** Frobnicate File: a")) == (
        "invalid hunk at line 2, '*** Frobnicate File: a' is not a valid hunk header. "
        "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', "
        "'*** Update File: {path}'"
    )


def test_an_update_without_chunks_is_empty() -> None:
    assert error_of(patch("*** Update File: test.py")) == (
        "invalid hunk at line 2, Update file hunk for path 'test.py' is empty"
    )


def test_an_at_at_line_alone_has_no_lines() -> None:
    assert error_of(patch("*** Update File: f", "@@")) == (
        "invalid hunk at line 4, Update hunk does not contain any lines"
    )


def test_end_of_file_right_after_at_at_has_no_lines() -> None:
    assert error_of(patch("*** Update File: f", "@@", "*** End of File")) == (
        "invalid hunk at line 4, Update hunk does not contain any lines"
    )


def test_a_line_without_a_prefix_after_at_at_is_unexpected() -> None:
    assert error_of(patch("*** Update File: f", "@@", "bad")) == (
        "invalid hunk at line 4, Unexpected line found in update hunk: 'bad'. Every line "
        "should start with ' ' (context line), '+' (added line), or '-' (removed line)"
    )


def test_an_unexpected_first_line_without_at_at_is_numbered_as_itself() -> None:
    assert error_of(patch("*** Update File: f", "bad")) == (
        "invalid hunk at line 3, Unexpected line found in update hunk: 'bad'. Every line "
        "should start with ' ' (context line), '+' (added line), or '-' (removed line)"
    )


def test_two_at_at_lines_in_a_row_are_refused_as_codex_does() -> None:
    assert error_of(patch("*** Update File: f", "@@ class A", "@@ def m():", "-a")) == (
        "invalid hunk at line 4, Unexpected line found in update hunk: '@@ def m():'. Every "
        "line should start with ' ' (context line), '+' (added line), or '-' (removed line)"
    )


def test_a_move_to_path_is_read_without_trailing_whitespace() -> None:
    text = patch("*** Update File: a", "*** Move to:  b  ", "@@", "-x")
    assert parse_patch(text) == [UpdateFile("a", (Chunk(None, ("x",), ()),), " b")]


def test_a_move_to_line_padded_in_front_is_a_context_line() -> None:
    text = patch("*** Update File: a", " *** Move to: b", "-x")
    assert parse_patch(text) == [
        UpdateFile("a", (Chunk(None, ("*** Move to: b", "x"), ("*** Move to: b",)),))
    ]


def test_an_at_at_line_is_read_without_trailing_whitespace() -> None:
    text = patch("*** Update File: f", "@@ \t", "-a", "@@   def m():  ", "-b")
    assert parse_patch(text) == [
        UpdateFile("f", (Chunk(None, ("a",), ()), Chunk("  def m():", ("b",), ())))
    ]


def test_an_at_at_line_padded_in_front_is_a_context_line() -> None:
    text = patch("*** Update File: f", " @@", "-a")
    assert parse_patch(text) == [UpdateFile("f", (Chunk(None, ("@@", "a"), ("@@",)),))]


def test_line_numbers_count_from_begin_patch_across_operations() -> None:
    text = patch("*** Add File: a", "+x", "+y", "*** Update File: b", "*** Move to: c", "@@", "z")
    assert error_of(text).startswith("invalid hunk at line 8, Unexpected line")


def test_an_update_followed_by_another_operation() -> None:
    text = patch("*** Update File: f", "@@", "+line", "*** Add File: g", "+content")
    assert parse_patch(text) == [
        UpdateFile("f", (Chunk(None, (), ("line",)),)),
        AddFile("g", "content\n"),
    ]


# -- property: what we write, we read back --------------------------------------------------

_text = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"))
_path = _text.map(lambda s: "p" + s.strip() + "q")


@st.composite
def _chunks(draw: st.DrawFn) -> Chunk:
    kinds = draw(st.lists(st.tuples(st.sampled_from(" +-"), _text), min_size=1, max_size=8))
    # an @@ line is read without trailing whitespace: an anchor never ends with any
    anchor = draw(st.one_of(st.none(), _text.map(lambda s: s.rstrip(WHITESPACE) + "x")))
    old = tuple(text for kind, text in kinds if kind in " -")
    new = tuple(text for kind, text in kinds if kind in " +")
    return Chunk(anchor, old, new, draw(st.booleans()))


def _render(operations: list[AddFile | DeleteFile | UpdateFile]) -> str:
    lines: list[str] = []
    for op in operations:
        if isinstance(op, AddFile):
            lines.append(f"*** Add File: {op.path}")
            lines += ["+" + line for line in op.content.split("\n")[:-1]]
        elif isinstance(op, DeleteFile):
            lines.append(f"*** Delete File: {op.path}")
        else:
            lines.append(f"*** Update File: {op.path}")
            if op.move_to is not None:
                lines.append(f"*** Move to: {op.move_to}")
            for chunk in op.chunks:
                lines.append("@@" if chunk.anchor is None else f"@@ {chunk.anchor}")
                # the lines in an order that rebuilds old and new: removed, added, then context
                lines += ["-" + t for t in chunk.old]
                lines += ["+" + t for t in chunk.new]
                if chunk.end_of_file:
                    lines.append("*** End of File")
    return patch(*lines)


_operation = st.one_of(
    st.builds(
        AddFile, _path, st.lists(_text, max_size=5).map(lambda ls: "".join(x + "\n" for x in ls))
    ),
    st.builds(DeleteFile, _path),
    st.builds(
        UpdateFile,
        _path,
        st.lists(_chunks(), min_size=1, max_size=3).map(
            lambda cs: (
                tuple(Chunk(c.anchor, c.old, c.new, c.end_of_file) for c in cs if c.old or c.new)
                or (Chunk(None, ("a",), ("b",)),)
            )
        ),
        st.one_of(st.none(), _path),
    ),
)


@given(st.lists(_operation, max_size=5))
def test_a_rendered_patch_parses_back_to_its_operations(
    operations: list[AddFile | DeleteFile | UpdateFile],
) -> None:
    assert parse_patch(_render(operations)) == operations
