"""The read window: which lines one ``read`` selects, and the file's line count."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from unittest.mock import patch

import pytest
from dsh_fs import text as dsh_text
from dsh_tool_fs.read_window import ReadWindow, WindowBuilder, build_window
from hypothesis import given, settings
from hypothesis import strategies as st


def window(
    text: str,
    *,
    offset: int = 1,
    limit: int = 2000,
    max_line_length: int = 2000,
    max_bytes: int = 51200,
) -> ReadWindow:
    return build_window(
        text, offset=offset, limit=limit, max_line_length=max_line_length, max_bytes=max_bytes
    )


def texts(w: ReadWindow) -> list[str]:
    return [text for _, text in w.lines]


# --- reference implementation, written plainly --------------------------------------


def reference_window(
    text: str, *, offset: int, limit: int, max_line_length: int, max_bytes: int
) -> ReadWindow:
    raw_lines = text.split("\n")
    if raw_lines[-1] == "":
        raw_lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in raw_lines]
    selected: list[tuple[int, str]] = []
    used = 0
    capped = False
    for number, line in enumerate(lines, start=1):
        if number < offset:
            continue
        if len(selected) == limit:
            break
        if len(line) > max_line_length:
            line = line[:max_line_length] + f"... (line truncated to {max_line_length} chars)"
        cost = len(line.encode("utf-8", "surrogatepass"))
        if selected:
            cost += 1
            if used + cost > max_bytes:
                capped = True
                break
        used += cost
        selected.append((number, line))
    return ReadWindow(offset=offset, lines=tuple(selected), total_lines=len(lines), capped=capped)


def feed_in_chunks(
    text: str, cuts: list[int], *, offset: int, limit: int, max_line_length: int, max_bytes: int
) -> ReadWindow:
    builder = WindowBuilder(
        offset=offset, limit=limit, max_line_length=max_line_length, max_bytes=max_bytes
    )
    start = 0
    for cut in sorted(cuts):
        builder.feed(text[start:cut])
        start = cut
    builder.feed(text[start:])
    return builder.finish()


# --- line splitting -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "total"),
    [("", 0), ("a", 1), ("a\n", 1), ("a\n\n", 2), ("\n", 1), ("a\nb", 2), ("\r\n", 1)],
)
def test_total_lines_follow_the_trailing_newline_rule(text: str, total: int) -> None:
    assert window(text).total_lines == total


def test_one_trailing_carriage_return_is_removed_from_each_line() -> None:
    assert texts(window("a\r\nb\r\r\nc\r")) == ["a", "b\r", "c"]


def test_a_lone_carriage_return_inside_a_line_stays() -> None:
    assert texts(window("a\rb\n")) == ["a\rb"]


def test_lines_are_numbered_from_offset() -> None:
    w = window("one\ntwo\nthree\nfour\n", offset=2, limit=2)
    assert w.lines == ((2, "two"), (3, "three"))
    assert w.end == 3
    assert w.total_lines == 4
    assert not w.capped


# --- truncation and the byte cap ---------------------------------------------------------


def test_a_long_line_is_truncated_with_the_suffix() -> None:
    w = window("abcdefgh\nabc\n", max_line_length=3)
    assert texts(w) == ["abc... (line truncated to 3 chars)", "abc"]


def test_a_line_of_exactly_the_maximum_is_not_truncated() -> None:
    assert texts(window("abc\r\n", max_line_length=3)) == ["abc"]


def test_truncation_counts_characters_not_bytes() -> None:
    assert texts(window("ééé", max_line_length=3)) == ["ééé"]
    assert texts(window("éééé", max_line_length=3)) == ["ééé... (line truncated to 3 chars)"]


def test_byte_cap_counts_utf8_bytes_plus_one_per_following_line() -> None:
    # "é" is 2 bytes: costs are 2, 1 + 2, 1 + 2 -> 3 lines need 8 bytes.
    assert len(window("é\né\né\n", max_bytes=8).lines) == 3
    w = window("é\né\né\n", max_bytes=7)
    assert w.lines == ((1, "é"), (2, "é"))
    assert w.capped


def test_byte_cap_counts_the_truncation_suffix() -> None:
    suffix = "... (line truncated to 1 chars)"
    w = window("aa\naa\n", max_line_length=1, max_bytes=len("a" + suffix) * 2)
    assert w.lines == ((1, "a" + suffix),)
    assert w.capped


def test_the_first_selected_line_is_selected_whatever_its_cost() -> None:
    w = window("a very long first line\nb\n", offset=1, max_bytes=1)
    assert w.lines == ((1, "a very long first line"),)
    assert w.capped


def test_stopping_at_the_limit_is_not_capped() -> None:
    w = window("a\nb\nc\n", limit=2)
    assert w.lines == ((1, "a"), (2, "b"))
    assert not w.capped


# --- streaming -----------------------------------------------------------------------------


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    builder = WindowBuilder(offset=1, limit=10, max_line_length=10, max_bytes=100)
    for piece in ["ab\r", "\ncd\r", "", "\n", "\r"]:
        builder.feed(piece)
    w = builder.finish()
    assert w.lines == ((1, "ab"), (2, "cd"), (3, ""))
    assert w.total_lines == 3


def test_a_line_spanning_many_chunks_keeps_only_its_head() -> None:
    builder = WindowBuilder(offset=1, limit=10, max_line_length=5, max_bytes=100)
    for _ in range(1000):
        builder.feed("x" * 1000)
    builder.feed("\r\nnext")
    w = builder.finish()
    assert w.lines == ((1, "xxxxx... (line truncated to 5 chars)"), (2, "next"))


def test_lines_after_the_window_are_counted_exactly() -> None:
    builder = WindowBuilder(offset=3, limit=2, max_line_length=10, max_bytes=100)
    builder.feed("1\n2\n3\n4\n5\n")
    builder.feed("6\n7")
    w = builder.finish()
    assert w.lines == ((3, "3"), (4, "4"))
    assert w.total_lines == 7


@pytest.mark.parametrize("offset", [1, 2, 37, 38, 500, 1999, 2998, 2999, 3000, 3001])
@pytest.mark.parametrize("chunk_size", [1 << 16, 4093, 1000, 7])
def test_offsets_inside_large_chunks_land_on_the_right_line(offset: int, chunk_size: int) -> None:
    lines = [
        "" if n % 37 == 0 else f"{n}" + "é" * (n % 5) + "\r" * (n % 3 == 0) for n in range(3001)
    ]
    text = "\n".join(lines)
    params = {"offset": offset, "limit": 3, "max_line_length": 6, "max_bytes": 100}
    cuts = list(range(chunk_size, len(text), chunk_size))
    assert feed_in_chunks(text, cuts, **params) == reference_window(text, **params)


def test_feed_after_finish_is_refused() -> None:
    builder = WindowBuilder(offset=1, limit=1, max_line_length=1, max_bytes=1)
    builder.finish()
    with pytest.raises(RuntimeError):
        builder.feed("a")


@pytest.mark.parametrize("name", ["offset", "limit", "max_line_length", "max_bytes"])
def test_window_parameters_must_be_positive(name: str) -> None:
    params = {"offset": 1, "limit": 1, "max_line_length": 1, "max_bytes": 1, name: 0}
    with pytest.raises(ValueError, match=f"{name} must be a positive integer"):
        WindowBuilder(**params)


# --- property: the builder equals the plain reference -------------------------------------

line_text = st.lists(
    st.sampled_from(["a", "b", "é", "€", "𝄞", "\r", "\n", "\r\n", " ", "\t"]), max_size=60
).map("".join)
long_lines = st.lists(
    st.one_of(line_text, st.builds(lambda n, c: c * n, st.integers(0, 300), st.sampled_from("x€"))),
    max_size=8,
).map("".join)


@contextmanager
def find_span(span: int) -> Iterator[None]:
    """``nth_newline`` (which finds the start of the window) bisecting down to ``span``."""
    with patch.object(dsh_text, "_FIND_SPAN", span):
        yield


@settings(max_examples=400, deadline=None)
@given(
    text=st.one_of(line_text, long_lines),
    data=st.data(),
    offset=st.integers(1, 12),
    limit=st.integers(1, 12),
    max_line_length=st.integers(1, 40),
    max_bytes=st.integers(1, 200),
)
def test_window_builder_matches_the_reference_for_any_chunking(
    text: str,
    data: st.DataObject,
    offset: int,
    limit: int,
    max_line_length: int,
    max_bytes: int,
) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    if data.draw(st.booleans()):  # split every "\r\n" pair between two chunks
        cuts += [i + 1 for i in range(len(text) - 1) if text[i : i + 2] == "\r\n"]
    params = {
        "offset": offset,
        "limit": limit,
        "max_line_length": max_line_length,
        "max_bytes": max_bytes,
    }
    expected = reference_window(text, **params)
    # A small span pushes short texts through the bisection to the offset.
    with find_span(data.draw(st.sampled_from([1024, 1, 4, 16]))):
        assert feed_in_chunks(text, cuts, **params) == expected
        assert build_window(text, **params) == expected


@pytest.mark.long
@settings(max_examples=20_000, deadline=None)
@given(
    lines=st.lists(st.one_of(line_text, long_lines), max_size=30),
    data=st.data(),
    offset=st.integers(1, 40),
    limit=st.integers(1, 40),
    max_line_length=st.integers(1, 80),
    max_bytes=st.integers(1, 2000),
)
def test_long_profile_window_builder_matches_the_reference(
    lines: list[str],
    data: st.DataObject,
    offset: int,
    limit: int,
    max_line_length: int,
    max_bytes: int,
) -> None:
    text = "\n".join(lines)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=30))
    params = {
        "offset": offset,
        "limit": limit,
        "max_line_length": max_line_length,
        "max_bytes": max_bytes,
    }
    with find_span(data.draw(st.sampled_from([1024, 5]))):
        got = feed_in_chunks(text, cuts, **params)
    assert got == reference_window(text, **params)


@settings(max_examples=100, deadline=None)
@given(text=line_text, offset=st.integers(1, 12))
def test_single_character_chunks_match_the_reference(text: str, offset: int) -> None:
    params = {"offset": offset, "limit": 3, "max_line_length": 4, "max_bytes": 20}
    assert feed_in_chunks(text, list(range(len(text))), **params) == reference_window(
        text, **params
    )


# --- memory ------------------------------------------------------------------------------------

_MEMORY_PROBE = """
import resource, sys
from dsh_tool_fs.read_window import WindowBuilder

chunk = "x" * (1 << 20) + "\\r"  # one 1 MiB piece, fed again and again
builder = WindowBuilder(offset=int(sys.argv[1]), limit=5, max_line_length=2000, max_bytes=51200)
builder.feed("first\\n")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(100):
    builder.feed(chunk)
builder.feed("\\nlast")
window = builder.finish()
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(window.total_lines, len(window.lines), grown)
"""


@pytest.mark.parametrize("offset", [1, 2, 3])
def test_a_100_mb_line_is_never_held_in_memory(offset: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, str(offset)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    total, selected, grown_kib = map(int, done.stdout.split())
    assert total == 3
    assert selected == 4 - offset
    assert grown_kib < 16 * 1024  # a held line would be 100 MB
