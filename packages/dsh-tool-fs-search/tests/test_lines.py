"""Matching lines: RE2 over whole texts, chunk boundaries anywhere, as a per-line reference."""

from __future__ import annotations

import re

import pytest
from dsh_tool_fs import ToolArgumentError
from dsh_tool_fs_search.lines import MAX_MATCHED_LINE, LineMatcher, MatchedLine
from hypothesis import given
from hypothesis import strategies as st


def per_line(pattern: str, text: str, *, ignore_case: bool = False) -> list[MatchedLine]:
    """The reference: split into lines (read's line rule), strip one final ``\\r``, search each
    (the first match's span in UTF-8 bytes)."""
    lines = text.split("\n")
    if text == "" or text.endswith("\n"):
        lines.pop()
    flags = re.IGNORECASE if ignore_case else 0
    found = []
    for number, line in enumerate(lines, 1):
        if line.endswith("\r"):
            line = line[:-1]
        first = re.search(pattern, line, flags)
        if first:
            start = len(line[: first.start()].encode())
            end = len(line[: first.end()].encode())
            found.append(MatchedLine(number, line.encode(), start, end))
    return found


def chunked(matcher: LineMatcher, text: str, size: int) -> list[MatchedLine]:
    scanner = matcher.scanner()
    found: list[MatchedLine] = []
    for start in range(0, len(text), size):
        found += scanner.feed(text[start : start + size])
    return found + list(scanner.finish())


# Patterns whose meaning is the same in Python's re and RE2 (per line).
PATTERNS = ["a", "ab", "^a", "b$", "^$", "a*", "^", "$", "[ab]+c", "a.b", "\\s", "é", "^[a-c]+$"]
texts = st.text(alphabet="abc é\r\n", max_size=40)


@given(pattern=st.sampled_from(PATTERNS), text=texts, size=st.integers(1, 7))
def test_a_scan_matches_line_by_line_whatever_the_chunks(
    pattern: str, text: str, size: int
) -> None:
    matcher = LineMatcher.compile(pattern)
    expected = per_line(pattern, text)
    assert list(matcher.lines(text)) == expected
    assert chunked(matcher, text, size) == expected


@given(pattern=st.sampled_from(PATTERNS), text=texts)
def test_counting_the_matching_lines_agrees_with_the_scan(pattern: str, text: str) -> None:
    matcher = LineMatcher.compile(pattern)
    assert matcher.count_lines(text) == len(per_line(pattern, text))


@given(text=texts)
def test_ignore_case_folds_letters(text: str) -> None:
    matcher = LineMatcher.compile("AB", ignore_case=True)
    assert list(matcher.lines(text)) == per_line("AB", text, ignore_case=True)


def test_a_pattern_never_matches_across_lines() -> None:
    for pattern in ("a\\nb", "a\\sb", "a[^x]b", "(?s)a.b"):
        assert list(LineMatcher.compile(pattern).lines("a\nb\n")) == []


def test_a_pattern_that_ends_inside_a_quote_is_quoted_to_its_end() -> None:
    """RE2's ``\\Q`` quotes to the end of the pattern when no ``\\E`` closes it."""
    for pattern in ("\\Qa.(b", "x\\Qa.(b", "\\Qa.(b\\E"):
        matcher = LineMatcher.compile(pattern)
        assert [m.number for m in matcher.lines("ab\nxa.(b\naxb\n")] == [2], pattern
        assert matcher.count_lines("xa.(b\nab\n") == 1


def test_crlf_and_a_final_cr_are_not_part_of_the_line() -> None:
    matcher = LineMatcher.compile("x$")
    assert list(matcher.lines("x\r\nyx\r")) == [
        MatchedLine(1, b"x", 0, 1),
        MatchedLine(2, b"yx", 1, 2),
    ]


def test_an_invalid_pattern_names_the_engines_reason() -> None:
    with pytest.raises(ToolArgumentError) as caught:
        LineMatcher.compile("a{2,1}")
    assert caught.value.message == (
        "pattern is not a valid regular expression: invalid repetition size: {2,1}"
    )


def test_a_streamed_line_longer_than_the_bound_is_matched_on_its_start() -> None:
    scanner = LineMatcher.compile("^x+$|tail|next").scanner()
    chunk = "x" * (1 << 20)
    found: list[MatchedLine] = []
    for _ in range(MAX_MATCHED_LINE // len(chunk) + 2):
        found += scanner.feed(chunk)
    found += scanner.feed("tail\nnext\n")
    found += scanner.finish()
    assert [(m.number, len(m.line)) for m in found] == [(1, MAX_MATCHED_LINE), (2, 4)]
