"""The glob syntax of ``glob`` and ``include``: a glob names a file's own path."""

from __future__ import annotations

import pytest
from dsh_tool_fs_search.globs import PathGlob

CASES = [
    ("*.py", "a.py", True),
    ("*.py", "src/deep/a.py", True),  # no "/": the name at any depth
    ("*.py", "a.pyc", False),
    ("*.py", "a.py/b.txt", False),  # a directory named a.py does not name its files
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/x/a.py", False),  # "*" stays within one segment
    ("src/*.py", "lib/src/a.py", False),  # a "/" anchors at the searched directory
    ("src/**/*.py", "src/a.py", True),
    ("src/**/*.py", "src/x/y/a.py", True),
    ("**/test_*.py", "test_a.py", True),
    ("**/test_*.py", "a/b/test_a.py", True),
    ("src/**", "src/x/y", True),
    ("src/", "src/x/y", True),  # a trailing "/" is everything beneath
    ("src", "src/x", False),
    ("src", "lib/src", True),
    ("/a.txt", "a.txt", True),
    ("/a.txt", "x/a.txt", False),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("foo**", "foobar", True),  # "**" inside a segment is "*"
    ("foo**", "foo/bar", False),
    ("a?c", "abc", True),
    ("a?c", "a/c", False),
    ("[ab].txt", "b.txt", True),
    ("[!ab].txt", "b.txt", False),
    ("[^ab].txt", "c.txt", True),
    ("[a-c]", "b", True),
    ("[a-c]", "-", False),
    ("[]a]", "]", True),
    ("x[/]y", "x/y", False),  # a class never matches "/"
    ("*.{py,pyi}", "pkg/a.pyi", True),
    ("{src,lib}/*.py", "lib/a.py", True),
    ("{src,lib}/*.py", "x/lib/a.py", False),
    ("{a,{b,c}}.txt", "c.txt", True),  # nested alternatives
    ("\\*", "*", True),
    ("\\*", "a", False),
    ("[", "[", True),  # unbalanced: literal
    ("{a", "{a", True),
    ("{a}", "{a}", True),  # one alternative is no alternative
    ("*", "odd\nname", True),  # a name may hold a newline
    ("(x)|y", "(x)|y", True),  # regular-expression characters are literal
    ("(x)|y", "y", False),
]


@pytest.mark.parametrize(("pattern", "path", "matches"), CASES)
def test_glob_syntax(pattern: str, path: str, matches: bool) -> None:
    assert PathGlob.compile(pattern).matches(path) is matches


PATHS = sorted({path for _, path, _ in CASES} | {"odd\udcffname.py", "src/\udcff/a.py"})


@pytest.mark.parametrize("pattern", sorted({pattern for pattern, _, _ in CASES}))
def test_many_paths_at_once_are_named_as_one_at_a_time(pattern: str) -> None:
    """``named`` joins the paths by newlines for one pass of RE2; a batch holding a name
    with a newline, one with an undecodable byte, or nothing answers the same."""
    glob = PathGlob.compile(pattern)
    without_newlines = [path for path in PATHS if "\n" not in path]
    for paths in (PATHS, without_newlines, without_newlines[::-1], []):
        assert glob.named(paths) == [glob.matches(path) for path in paths]
