"""The glob syntax of ``glob``'s ``pattern`` and ``grep``'s ``include``.

Gitignore-style: ``*`` and ``?`` within one path segment, ``[...]`` a
character class (``[!...]`` or ``[^...]`` negated; never ``/``), ``**`` as a
whole segment across any number of segments, ``{a,b}`` alternatives (nested
alike), ``\\`` escapes the next character. A pattern without ``/`` matches
the file's name at any depth (``*.py``); one with ``/`` matches the whole path
relative to the searched directory (``src/*.py`` is the direct children of
``src`` only, ``src/**/*.py`` any depth); a leading ``/`` is only an anchor and
a trailing ``/`` means everything beneath (``src/`` is ``src/**``).

Why not :mod:`pathspec` here: a gitignore pattern matches a directory *and
everything beneath it* (``src/*`` ignores ``src/a/b.py``), which is right for
ignore rules (:mod:`dsh_tool_fs_search.ignore` uses pathspec) but not for
naming files. A glob names the file's own path, as ripgrep's ``--glob`` and
``fd`` do. The translation is one RE2 regular expression, so matching is
linear whatever the pattern.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import re2

__all__ = ["PathGlob"]


class _Found(Protocol):
    def start(self, group: int = 0) -> int: ...


_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.dot_nl = True  # a file name may hold a newline
_LINES = re2.Options()  # many paths at once, one a line (none of them holding a newline)
_LINES.log_errors = False
_LINES.never_nl = True


def _split_alternatives(body: str) -> list[str] | None:
    """The top-level ``,``-separated parts of a brace body, or ``None`` when not one."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
        i += 1
    parts.append(body[start:])
    return parts if len(parts) > 1 else None


def _closing(pattern: str, start: int, opening: str, closing: str) -> int:
    """Index of the ``closing`` that ends the group opened at ``start``, or -1."""
    depth, i = 0, start
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _class_end(pattern: str, start: int) -> int:
    """Index of the ``]`` closing the class opened at ``start``, or -1 (then ``[`` is literal)."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1  # a leading "]" is a member
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i
        i += 1
    return -1


def _class(body: str) -> str:
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    members = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            char = body[i + 1]
            i += 1
        if char != "/":  # a class never matches the separator
            members.append(char if char == "-" else re2.escape(char))
        i += 1
    inner = "".join(members)
    if negated:
        return f"[^/{inner}]"
    return f"[{inner}]" if inner else "[^\\x00-\\x{10FFFF}]"  # nothing: "[/]" matches no name


def _translate(pattern: str) -> str:
    """The regular expression of a (brace-free at this level or not) glob fragment."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            if i + 1 < n:
                out.append(re2.escape(pattern[i + 1]))
            i += 2
        elif char == "*":
            if pattern.startswith("**", i):
                before = i == 0 or pattern[i - 1] == "/"
                after = i + 2 == n or pattern[i + 2] == "/"
                if before and after:
                    if i + 2 == n:  # a trailing "**": everything beneath
                        out.append(".*")
                        i += 2
                    else:  # "**/": any number of leading segments
                        out.append("(?:[^/]*/)*")
                        i += 3
                    continue
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = _class_end(pattern, i)
            if end < 0:
                out.append(re2.escape(char))
                i += 1
            else:
                out.append(_class(pattern[i + 1 : end]))
                i = end + 1
        elif char == "{":
            end = _closing(pattern, i, "{", "}")
            parts = _split_alternatives(pattern[i + 1 : end]) if end > 0 else None
            if parts is None:
                out.append(re2.escape(char))
                i += 1
            else:
                out.append("(?:" + "|".join(_translate(part) for part in parts) + ")")
                i = end + 1
        else:
            out.append(re2.escape(char))
            i += 1
    return "".join(out)


def _has_separator(pattern: str) -> bool:
    """Whether ``pattern`` holds an unescaped ``/`` (then it names whole paths)."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "/":
            return True
        i += 1
    return False


@dataclass(frozen=True, slots=True)
class PathGlob:
    """One compiled glob; :meth:`matches` takes a ``/``-joined path relative to the search."""

    pattern: str
    _fullmatch: Callable[[bytes], object | None]
    _whole_lines: Callable[[bytes], Iterator[_Found]]

    @classmethod
    def compile(cls, pattern: str) -> PathGlob:
        """Translate ``pattern`` (never fails: what is not syntax is a literal)."""
        glob = pattern
        if glob.endswith("/") and not glob.endswith("\\/"):
            glob += "**"
        anchored = _has_separator(glob)
        glob = glob.lstrip("/") if anchored else glob
        body = _translate(glob)
        regex = body if anchored else f"(?:.*/)?{body}"
        lines = re2.compile(f"(?m)^(?:{regex})$", _LINES)
        return cls(pattern, re2.compile(regex, _OPTIONS).fullmatch, lines.finditer)

    def matches(self, path: str) -> bool:
        """Whether the file at ``path`` (relative, ``/``-joined) is named by the glob."""
        try:
            data = path.encode()  # bytes: the wrapper maps no character offsets
        except UnicodeEncodeError:
            data = matchable(path).encode()
        return self._fullmatch(data) is not None

    def named(self, paths: Sequence[str]) -> list[bool]:
        """``[self.matches(path) for path in paths]``, in one pass of RE2 over the paths
        joined by newlines: Python runs only for the paths named (why:
        docs/maintaining/benchmarks.md, G1)."""
        joined = "\n".join(paths)
        if not paths or joined.count("\n") != len(paths) - 1:  # a name holds a newline
            return [self.matches(path) for path in paths]
        try:
            data = joined.encode()
        except UnicodeEncodeError:
            data = matchable(joined).encode()
        named = [False] * len(paths)
        index = last = 0
        for found in self._whole_lines(data):
            start = found.start()
            index += data.count(b"\n", last, start)
            last = start
            named[index] = True
        return named


_UNDECODABLE = re.compile("[\ud800-\udfff]")


def matchable(path: str) -> str:
    """``path`` as RE2 takes it: each undecodable byte of a file name (a lone surrogate,
    which RE2 cannot encode) becomes U+FFFD, still one character, as the byte is to git."""
    return _UNDECODABLE.sub("\ufffd", path)
