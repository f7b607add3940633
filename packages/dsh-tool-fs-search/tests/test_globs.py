"""The glob syntax of ``glob`` and ``include``: a glob names a file's own path."""

from __future__ import annotations

import pytest
from dsh_tool_fs_search.globs import PathGlob


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
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
    ],
)
def test_glob_syntax(pattern: str, path: str, matches: bool) -> None:
    assert PathGlob.compile(pattern).matches(path) is matches
