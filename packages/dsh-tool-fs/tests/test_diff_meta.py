"""Diff metadata of write/edit (SPEC 5.10)."""

from __future__ import annotations

from difflib import SequenceMatcher
from unittest.mock import patch

from dsh_tool_fs import diff_meta as diff_meta_module
from dsh_tool_fs.diff_meta import diff_meta, hunk_ranges, split_lines
from hypothesis import given, settings
from hypothesis import strategies as st


def numbered(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def test_a_create_has_no_diffs() -> None:
    assert diff_meta("a.txt", None, "new\n") == {"diffs": []}


def test_an_identical_overwrite_has_no_diffs() -> None:
    assert diff_meta("a.txt", "same\n", "same\n") == {"diffs": []}


def test_a_change_carries_three_lines_of_context_each_side() -> None:
    before = numbered(10)
    after = before.replace("line 5\n", "line five\n")
    assert diff_meta("a.txt", before, after) == {
        "diffs": [
            {
                "path": "a.txt",
                "old_text": "line 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8",
                "new_text": "line 2\nline 3\nline 4\nline five\nline 6\nline 7\nline 8",
            }
        ]
    }


def test_distant_changes_are_separate_hunks() -> None:
    before = numbered(20)
    after = before.replace("line 2\n", "line two\n").replace("line 18\n", "line eighteen\n")
    diffs = diff_meta("a.txt", before, after)["diffs"]
    assert diffs == [
        {
            "path": "a.txt",
            "old_text": "line 1\nline 2\nline 3\nline 4\nline 5",
            "new_text": "line 1\nline two\nline 3\nline 4\nline 5",
        },
        {
            "path": "a.txt",
            "old_text": "line 15\nline 16\nline 17\nline 18\nline 19\nline 20",
            "new_text": "line 15\nline 16\nline 17\nline eighteen\nline 19\nline 20",
        },
    ]


def test_changes_whose_context_touches_are_one_hunk() -> None:
    before = numbered(12)
    after = before.replace("line 3\n", "x\n").replace("line 9\n", "y\n")
    assert len(diff_meta("a.txt", before, after)["diffs"]) == 1  # type: ignore[arg-type]


def test_insertion_into_a_non_empty_file_keeps_the_context_as_old_text() -> None:
    before = numbered(3)
    after = before + "line 4\n"
    assert diff_meta("a.txt", before, after)["diffs"] == [
        {"path": "a.txt", "old_text": "line 1\nline 2\nline 3", "new_text": after[:-1]}
    ]


def test_a_pure_insertion_into_an_empty_file_has_no_old_text() -> None:
    assert diff_meta("a.txt", "", "hello\nworld\n") == {
        "diffs": [{"path": "a.txt", "old_text": None, "new_text": "hello\nworld"}]
    }


def test_emptying_a_file_has_empty_new_text() -> None:
    assert diff_meta("a.txt", "gone\n", "") == {
        "diffs": [{"path": "a.txt", "old_text": "gone", "new_text": ""}]
    }


def test_a_missing_final_newline_is_a_hunk_without_any_marker() -> None:
    diffs = diff_meta("a.txt", "a\nb\n", "a\nb")["diffs"]
    assert diffs == [{"path": "a.txt", "old_text": "a\nb", "new_text": "a\nb"}]
    assert "No newline" not in repr(diffs)


def test_a_hunk_of_seven_lines_reads_as_seven_lines() -> None:
    before = numbered(10)
    diffs = diff_meta("a.txt", before, before.replace("line 5\n", "five\n"))["diffs"]
    assert isinstance(diffs, list) and len(diffs) == 1
    assert diffs[0]["old_text"].split("\n") == [f"line {i}" for i in range(2, 9)]
    assert diffs[0]["new_text"].split("\n") == ["line 2", "line 3", "line 4", "five"] + [
        f"line {i}" for i in range(6, 9)
    ]


def test_an_overwrite_reads_without_a_trailing_newline() -> None:
    assert diff_meta("a.txt", "old\n", "brand new\n")["diffs"] == [
        {"path": "a.txt", "old_text": "old", "new_text": "brand new"}
    ]


def test_blank_lines_of_a_hunk_are_kept() -> None:
    assert diff_meta("a.txt", "a\n\n", "b\n\n\n")["diffs"] == [
        {"path": "a.txt", "old_text": "a\n", "new_text": "b\n\n"}
    ]


def test_the_path_is_the_argument_as_given() -> None:
    diffs = diff_meta("./rel/a.txt", "a\n", "b\n")["diffs"]
    assert diffs == [{"path": "./rel/a.txt", "old_text": "a", "new_text": "b"}]


def test_a_lone_carriage_return_is_part_of_a_line() -> None:
    assert split_lines("a\rb\nc") == ["a\rb\n", "c"]
    assert split_lines("") == []
    assert split_lines("\n") == ["\n"]


def test_a_small_edit_of_a_large_file_is_one_small_hunk() -> None:
    before = numbered(200_000)
    after = before.replace("line 100000\n", "changed\n")
    assert diff_meta("big.txt", before, after)["diffs"] == [
        {
            "path": "big.txt",
            "old_text": "\n".join(f"line {i}" for i in range(99_997, 100_004)),
            "new_text": "\n".join(
                "changed" if i == 100_000 else f"line {i}" for i in range(99_997, 100_004)
            ),
        }
    ]


def test_scattered_changes_in_a_huge_span_are_compared_line_by_line() -> None:
    before = numbered(30_000)
    after = before.replace("line 10\n", "ten\n").replace("line 29990\n", "end\n")
    diffs = diff_meta("big.txt", before, after)["diffs"]
    assert diffs == [
        {
            "path": "big.txt",
            "old_text": "\n".join(f"line {i}" for i in range(7, 14)),
            "new_text": "\n".join("ten" if i == 10 else f"line {i}" for i in range(7, 14)),
        },
        {
            "path": "big.txt",
            "old_text": "\n".join(f"line {i}" for i in range(29_987, 29_994)),
            "new_text": "\n".join(
                "end" if i == 29_990 else f"line {i}" for i in range(29_987, 29_994)
            ),
        },
    ]


def test_a_huge_span_of_different_length_is_one_block() -> None:
    before = numbered(30_000)
    after = before.replace("line 10\n", "").replace("line 29990\n", "a\nb\n")
    diffs = diff_meta("big.txt", before, after)["diffs"]
    assert isinstance(diffs, list) and len(diffs) == 1
    assert diffs[0]["old_text"] == "\n".join(f"line {i}" for i in range(7, 29_994))


# --- properties -------------------------------------------------------------------------

texts = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "d", "a\r\n"]), max_size=40).map(
    "".join
)


def joined(lines: list[str]) -> str:
    """The hunk's lines, each without its newline, joined by one: SPEC 5.10's shape."""
    return "\n".join(line.removesuffix("\n") for line in lines)


def reference_diffs(path: str, before: str, after: str) -> list[dict[str, object]]:
    """Every line split and matched: what diff_meta must equal, however it gets there."""
    a, b = split_lines(before), split_lines(after)
    return [
        {
            "path": path,
            "old_text": joined(a[i1:i2]) if i2 > i1 else None,
            "new_text": joined(b[j1:j2]),
        }
        for i1, i2, j1, j2 in hunk_ranges(a, b)
    ]


@settings(max_examples=500)
@given(
    before=texts,
    edits=st.lists(
        st.tuples(st.integers(0, 400), st.integers(0, 3), st.sampled_from(["", "x", "\n", "b\n"])),
        max_size=3,
    ),
    block=st.sampled_from([1 << 16, 1, 2, 5]),
)
def test_diff_meta_equals_the_every_line_reference(
    before: str, edits: list[tuple[int, int, str]], block: int
) -> None:
    after = before
    for at, cut, insert in edits:  # a few local edits, like a real edit or rewrite
        at = min(at, len(after))
        after = after[:at] + insert + after[at + cut :]
    with patch.object(diff_meta_module, "_BLOCK", block):
        got = diff_meta("p", before, after)
    assert got == {"diffs": [] if before == after else reference_diffs("p", before, after)}


@settings(max_examples=300)
@given(before=texts, after=texts, budget=st.sampled_from([10**8, 0]))
def test_hunks_replay_before_into_after(before: str, after: str, budget: int) -> None:
    a, b = split_lines(before), split_lines(after)
    assert "".join(a) == before and "".join(b) == after
    with patch.object(diff_meta_module, "_MATCH_BUDGET", budget):
        ranges = hunk_ranges(a, b)
    assert (ranges == []) == (before == after)
    rebuilt: list[str] = []
    i = j = 0
    for i1, i2, j1, j2 in ranges:
        assert i <= i1 <= i2 and j <= j1 <= j2
        assert a[i:i1] == b[j:j1]  # untouched lines between hunks
        rebuilt += a[i:i1] + b[j1:j2]
        i, j = i2, j2
    assert a[i:] == b[j:]
    assert "".join(rebuilt + a[i:]) == after
    with patch.object(diff_meta_module, "_MATCH_BUDGET", budget):
        diffs = diff_meta("p", before, after)["diffs"]
    assert isinstance(diffs, list)
    assert len(diffs) == len(ranges)
    for item, (i1, i2, j1, j2) in zip(diffs, ranges, strict=True):
        assert item["old_text"] == (joined(a[i1:i2]) if i2 > i1 else None)
        assert item["new_text"] == joined(b[j1:j2])
        assert item["old_text"] is not None or before == ""
        assert item["old_text"] is None or item["old_text"] in before


def reference_opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """The opcodes before the no-shared-line shortcut: SequenceMatcher on every changed span."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    codes: list[tuple[str, int, int, int, int]] = []
    if head:
        codes.append(("equal", 0, head, 0, head))
    old, new = a[head : len(a) - tail], b[head : len(b) - tail]
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new).get_opcodes():
        codes.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        codes.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return codes


def line_runs(alphabet: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(alphabet), max_size=12).map("".join)


@settings(max_examples=500)
@given(
    head=line_runs(["a\n", "b\n", "\n"]),
    old=line_runs(["c\n", "d\n", "e", "a\n"]),
    new=line_runs(["x\n", "y\n", "z", "\n"]),
    tail=line_runs(["a\n", "b\n", "f"]),
)
def test_spans_sharing_no_line_diff_as_sequence_matcher_would(
    head: str, old: str, new: str, tail: str
) -> None:
    before, after = head + old + tail, head + new + tail
    a, b = split_lines(before), split_lines(after)
    expected = reference_opcodes(a, b)
    assert diff_meta_module._opcodes(a, b) == expected
    ranges = [
        (group[0][1], group[-1][2], group[0][3], group[-1][4])
        for group in diff_meta_module._grouped(expected, 3)
    ]
    assert hunk_ranges(a, b) == ranges
    assert diff_meta("p", before, after) == {
        "diffs": [] if before == after else reference_diffs("p", before, after)
    }
