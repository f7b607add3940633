"""The file order of glob and grep: newest first, ties in path order."""

from __future__ import annotations

from dsh_fs import FsTarget
from dsh_tool_fs_search.walk import Candidate, order_candidates, order_key
from hypothesis import given
from hypothesis import strategies as st

names = st.sampled_from(["a", "B", "b", "a.txt", "Z", "é", "E"])
paths = st.lists(names, min_size=1, max_size=3).map("/".join)
times = st.one_of(st.none(), st.integers(0, 3))


@given(st.lists(st.tuples(paths, times), max_size=30, unique_by=lambda pair: pair[0]))
def test_the_order_is_newest_first_then_path_order(files: list[tuple[str, int | None]]) -> None:
    candidates = [Candidate(p, FsTarget(p, p), None, t) for p, t in files]
    expected = sorted(
        candidates,
        key=lambda c: (c.modified_ns is None, -(c.modified_ns or 0), order_key(c.path)),
    )
    assert order_candidates(candidates) == expected


def test_path_order_compares_segments_not_strings() -> None:
    files = [Candidate(p, FsTarget(p, p), None, 5) for p in ["b/x", "a.txt", "B", "a/b"]]
    assert [c.path for c in order_candidates(files)] == ["a/b", "a.txt", "B", "b/x"]


@given(
    st.lists(st.tuples(paths, times), max_size=30, unique_by=lambda pair: pair[0]),
    st.integers(1, 35),
)
def test_the_first_files_are_the_start_of_the_whole_order(
    files: list[tuple[str, int | None]], first: int
) -> None:
    candidates = [Candidate(p, FsTarget(p, p), None, t) for p, t in files]
    assert order_candidates(candidates, first) == order_candidates(candidates)[:first]
