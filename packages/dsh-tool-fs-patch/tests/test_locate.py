"""Locating chunks (Codex's passes, forward only) and applying them with every byte kept."""

from __future__ import annotations

import pytest
from dsh_tool_fs_patch import Chunk, LocateError, UpdateFile, apply_chunks, parse_patch
from dsh_tool_fs_patch.locate import file_lines, seek
from hypothesis import given
from hypothesis import strategies as st


def chunk(old: list[str], new: list[str], anchor: str | None = None, eof: bool = False) -> Chunk:
    return Chunk(anchor, tuple(old), tuple(new), eof)


def failure(text: str, *chunks: Chunk) -> str:
    with pytest.raises(LocateError) as caught:
        apply_chunks(text, chunks, "f.txt")
    return str(caught.value)


# -- the passes -------------------------------------------------------------------------------


def test_an_exact_match_wins() -> None:
    assert seek(["foo", "bar", "baz"], ["bar", "baz"], 0, False) == 1


def test_trailing_whitespace_is_ignored_in_the_second_pass() -> None:
    assert seek(["foo   ", "bar\t\t"], ["foo", "bar"], 0, False) == 0


def test_surrounding_whitespace_is_ignored_in_the_third_pass() -> None:
    assert seek(["    foo   ", "   bar\t"], ["foo", "bar"], 0, False) == 0


def test_typographic_punctuation_reads_as_ascii_in_the_fourth_pass() -> None:
    lines = ["x = \u201cquoted\u201d \u2014 it\u2019s\u00a0here"]
    assert seek(lines, ['x = "quoted" - it\'s here'], 0, False) == 0


def test_a_stricter_pass_anywhere_beats_a_looser_one_earlier() -> None:
    assert seek(["foo ", "foo"], ["foo"], 0, False) == 1


def test_the_search_starts_at_the_given_line() -> None:
    assert seek(["a", "b", "a"], ["a"], 1, False) == 2


def test_a_pattern_longer_than_the_file_is_not_found() -> None:
    assert seek(["one"], ["too", "many"], 0, False) is None


def test_end_of_file_only_matches_the_last_lines() -> None:
    assert seek(["a", "b", "a"], ["a"], 0, True) == 2
    assert seek(["a", "b"], ["a"], 0, True) is None


# -- applying ---------------------------------------------------------------------------------


def test_a_chunk_replaces_its_old_lines() -> None:
    text = "one\ntwo\nthree\n"
    assert apply_chunks(text, [chunk(["one", "two"], ["one", "2"])], "f") == "one\n2\nthree\n"


def test_the_anchor_is_found_first_and_the_lines_after_it() -> None:
    text = "def a():\n    pass\ndef b():\n    pass\n"
    result = apply_chunks(text, [chunk(["    pass"], ["    return 1"], "def b():")], "f")
    assert result == "def a():\n    pass\ndef b():\n    return 1\n"


def test_chunks_are_located_forward_only() -> None:
    text = "x\ny\nx\n"
    chunks = [chunk(["y"], ["Y"]), chunk(["x"], ["X"])]
    assert apply_chunks(text, chunks, "f") == "x\nY\nX\n"


def test_an_anchor_that_is_not_there_is_named() -> None:
    assert failure("a\n", chunk(["a"], ["b"], "class Nope")) == (
        "Failed to find context 'class Nope' in f.txt"
    )


def test_lines_that_are_not_there_are_listed() -> None:
    assert (
        failure("a\n", chunk(["x", "y"], ["z"])) == "Failed to find expected lines in f.txt:\nx\ny"
    )


def test_a_chunk_behind_the_previous_one_is_not_found() -> None:
    assert failure("x\ny\n", chunk(["y"], ["Y"]), chunk(["x"], ["X"])) == (
        "Failed to find expected lines in f.txt:\nx"
    )


def test_a_chunk_without_old_lines_appends_at_the_end() -> None:
    assert apply_chunks("a\nb\n", [chunk([], ["c"], "a")], "f") == "a\nb\nc\n"


def test_an_appended_line_goes_after_a_final_empty_line_as_codex_does() -> None:
    assert apply_chunks("a\n\n", [chunk([], ["c"])], "f") == "a\n\nc\n"


def test_a_final_empty_old_line_that_is_not_there_stands_for_the_final_newline() -> None:
    assert apply_chunks("a\nb\n", [chunk(["b", ""], ["B", ""])], "f") == "a\nB\n"


def test_end_of_file_lines_before_the_anchor_are_not_found() -> None:
    found = failure("alpha\nalpha\n", chunk(["alpha", "alpha"], [], "alpha", eof=True))
    assert found == "Failed to find expected lines in f.txt:\nalpha\nalpha"


def test_end_of_file_replaces_the_last_lines() -> None:
    text = "end\nmiddle\nend\n"
    assert apply_chunks(text, [chunk(["end"], ["END"], eof=True)], "f") == "end\nmiddle\nEND\n"


def test_a_crlf_file_keeps_crlf_and_gets_crlf_for_new_lines() -> None:
    text = "one\r\ntwo\r\nthree\r\n"
    result = apply_chunks(text, [chunk(["two"], ["2", "2b"])], "f")
    assert result == "one\r\n2\r\n2b\r\nthree\r\n"


def test_new_lines_take_the_dominant_ending_and_others_keep_theirs() -> None:
    text = "a\r\nb\r\nc\nd\r\n"
    assert apply_chunks(text, [chunk(["b"], ["B"])], "f") == "a\r\nB\r\nc\nd\r\n"


def test_a_file_without_a_final_newline_still_has_none() -> None:
    assert apply_chunks("a\nb", [chunk(["b"], ["B", "C"])], "f") == "a\nB\nC"


def test_appending_to_a_file_without_a_final_newline_ends_without_one() -> None:
    assert apply_chunks("a\nb", [chunk([], ["c"])], "f") == "a\nb\nc"


def test_removing_the_last_lines_keeps_the_missing_final_newline() -> None:
    assert apply_chunks("a\nb", [chunk(["b"], [])], "f") == "a"


def test_an_empty_file_gets_its_lines_with_newlines() -> None:
    assert apply_chunks("", [chunk([], ["x"])], "f") == "x\n"


def test_a_lone_carriage_return_inside_a_line_is_kept() -> None:
    assert apply_chunks("a\rb\nc\n", [chunk(["c"], ["C"])], "f") == "a\rb\nC\n"


def test_the_lines_of_a_file_leave_out_their_endings() -> None:
    assert file_lines("a\r\nb\nc") == (["a", "b", "c"], ["\r\n", "\n", ""])


# -- properties -------------------------------------------------------------------------------

_line = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"), max_size=6)
_ending = st.sampled_from(["\n", "\r\n"])


@given(
    st.lists(st.tuples(_line, _ending), min_size=1, max_size=12),
    st.data(),
    st.booleans(),
)
def test_only_the_replaced_lines_change(
    lines: list[tuple[str, str]], data: st.DataObject, final_newline: bool
) -> None:
    """Replacing lines i..j (found at their first exact occurrence) changes those bytes only."""
    final_newline = final_newline or not lines[-1][0]  # an empty last line needs its newline
    if not final_newline:
        lines[-1] = (lines[-1][0], "")
    text = "".join(a + b for a, b in lines)
    i = data.draw(st.integers(0, len(lines) - 1))
    j = data.draw(st.integers(i + 1, len(lines)))
    old = [a for a, _ in lines[i:j]]
    contents = [a for a, _ in lines]
    k = next(k for k in range(len(lines)) if contents[k : k + len(old)] == old)
    end = k + len(old)
    result = apply_chunks(text, [Chunk(None, tuple(old), ("\u2603new",))], "f")
    newline = "\r\n" if _crlf(text) else "\n"
    replaced_end = newline if (end < len(lines) or final_newline) else ""
    head = "".join(a + b for a, b in lines[:k])
    tail = "".join(a + b for a, b in lines[end:])
    assert result == head + "\u2603new" + replaced_end + tail


def _crlf(text: str) -> bool:
    head = text[:4096]
    crlf = head.count("\r\n")
    return crlf > head.count("\n") - crlf


@given(st.lists(_line, max_size=10), st.lists(_line, min_size=1, max_size=3))
def test_a_pure_addition_keeps_every_existing_byte(lines: list[str], added: list[str]) -> None:
    text = "".join(line + "\n" for line in lines)
    result = apply_chunks(text, [Chunk(None, (), tuple(added))], "f")
    assert result == text + "".join(a + "\n" for a in added)


def test_each_context_line_is_the_file_line_it_matched() -> None:
    text = "\n".join(["*** Begin Patch", "*** Update File: f", "@@", " x = 1  ", "+alpha",
                      " x = 1  ", " alpha", "*** End Patch"])  # fmt: skip
    (update,) = parse_patch(text)
    assert isinstance(update, UpdateFile)
    assert (
        apply_chunks("x = 1\nx = 1\nalpha\n", update.chunks, "f") == "x = 1\nalpha\nx = 1\nalpha\n"
    )


def test_context_lines_stay_as_the_file_has_them() -> None:
    text = "keep  \nold\n\u201cq\u201d\r\n"
    result = apply_chunks(text, [chunk(["keep", "old", '"q"'], ["keep", "new", '"q"'])], "f")
    assert result == "keep  \nnew\n\u201cq\u201d\r\n"


# -- what Codex gives, the same here ----------------------------------------------------------


def test_interleaved_chunks_and_an_end_of_file_append() -> None:
    chunks = [
        chunk(["a", "b"], ["a", "B"]),
        chunk(["d", "e"], ["d", "E"]),
        chunk(["f"], ["f", "g"], eof=True),
    ]
    assert apply_chunks("a\nb\nc\nd\ne\nf\n", chunks, "f") == "a\nB\nc\nd\nE\nf\ng\n"


def test_a_pure_addition_then_a_removal_before_it() -> None:
    chunks = [
        chunk([], ["after-context", "second-line"]),
        chunk(["line1", "line2", "line3"], ["line1", "line2-replacement"]),
    ]
    result = apply_chunks("line1\nline2\nline3\n", chunks, "f")
    assert result == "line1\nline2-replacement\nafter-context\nsecond-line\n"


def test_an_ascii_patch_replaces_a_line_with_typographic_dashes() -> None:
    text = "import asyncio  # local import \u2013 avoids top\u2011level dep\n"
    old = ["import asyncio  # local import - avoids top-level dep"]
    assert apply_chunks(text, [chunk(old, ["import asyncio  # HELLO"])], "f") == (
        "import asyncio  # HELLO\n"
    )


def test_a_carriage_return_inside_a_crlf_line_survives_an_append() -> None:
    result = apply_chunks("foo\r\r\nbar\r\n", [chunk([], ["BAZ"], eof=True)], "f")
    assert result == "foo\r\r\nbar\r\nBAZ\r\n"
