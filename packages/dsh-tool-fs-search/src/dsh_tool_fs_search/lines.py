"""Matching lines with RE2: the regular expression of ``grep`` and the line scan.

The pattern is RE2 syntax, compiled with ``never_nl`` (no match spans a
newline: every match lies inside one line) in multi-line mode (``^`` and
``$`` are the start and end of a line; ``\\A`` and ``\\z`` of the file). RE2
matches in time linear in the input, so no pattern can hang a search —
``(a+)+$`` on a long line is as fast as ``a``.

A text is scanned as UTF-8 bytes in one ``finditer`` over the pattern
wrapped as ``((?:P))[^\\n]*``: each match runs from the first match on a
line (group 1) to that line's end, so RE2 jumps from one *matching* line to
the next and no Python code runs for a line that does not match. Counting
uses ``(?:P)[^\\n]*``, which spares RE2 finding the group.
A line is ``\\n``-terminated; the ``\\r`` of a ``\\r\\n`` is not part of the
line (it is neither matched nor shown), nor is a ``\\r`` that ends the text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import re2
from dsh_tool_fs import ToolArgumentError

__all__ = ["MAX_MATCHED_LINE", "LineMatcher", "LineScanner", "MatchedLine"]

MAX_MATCHED_LINE = 8 << 20
"""Bytes of one line a streamed scan holds at most: a longer line is matched on its start."""


class _Found(Protocol):
    """What the scan reads of one of RE2's matches (``span``: one call for both ends, where
    ``start`` and ``end`` would each check the group number)."""

    def span(self, group: int = 0) -> tuple[int, int]: ...


_Finditer = Callable[[bytes], Iterator[_Found]]
"""A line finder's ``finditer`` over UTF-8 bytes: each match from a line's first match of
the pattern to the line's end."""


class MatchedLine(NamedTuple):
    """One matching line: its 1-based number, its bytes (no ``\\n``, no final ``\\r``), and
    the byte span of its first match within ``line``."""

    number: int
    line: bytes
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class LineMatcher:
    """A compiled ``grep`` pattern."""

    pattern: str
    ignore_case: bool
    _finditer: _Finditer  # ((?:P))[^\n]*: group 1 is the first match
    _count_finditer: _Finditer  # (?:P)[^\n]*

    @classmethod
    def compile(cls, pattern: str, *, ignore_case: bool = False) -> LineMatcher:
        """Compile ``pattern``; a pattern RE2 refuses raises :class:`ToolArgumentError`
        ``pattern is not a valid regular expression: <reason>`` (the engine's reason)."""
        options = re2.Options()
        options.log_errors = False
        options.never_nl = True
        options.case_sensitive = not ignore_case
        try:
            re2.compile(pattern, options)  # the engine's reason names the pattern as given
            body = _closed(pattern)
            finder = re2.compile(f"(?m)((?:{body}))[^\\n]*", options)
            counter = re2.compile(f"(?m)(?:{body})[^\\n]*", options)
        except re2.error as exc:
            reason = exc.args[0] if exc.args else exc
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            raise ToolArgumentError(f"pattern is not a valid regular expression: {reason}") from exc
        return cls(pattern, ignore_case, finder.finditer, counter.finditer)

    def scanner(self) -> LineScanner:
        """A scan of one text fed in chunks."""
        return LineScanner(self._finditer)

    def lines(self, text: str) -> Iterator[MatchedLine]:
        """The matching lines of a whole text."""
        scanner = self.scanner()
        yield from scanner.feed(text, final=True)
        yield from scanner.finish()

    def count_lines(self, text: str) -> int:
        """How many lines of a whole text match: ``len(list(self.lines(text)))``, without
        cutting out, numbering or building any of them (what a page that is full needs)."""
        data = text.encode("utf-8", "surrogatepass")
        end = data.rfind(b"\n") + 1
        count = _count_matching(self._count_finditer, data[:end], crlf=True)
        last = data[end : end + MAX_MATCHED_LINE]  # as a scan holds it
        if last:
            if last.endswith(b"\r"):
                last = last[:-1]
            count += _count_matching(self._count_finditer, last + b"\n", crlf=False)
        return count


def _closed(pattern: str) -> str:
    """``pattern`` with a ``\\E`` after it when it ends inside RE2's ``\\Q…`` quote (which
    would otherwise quote what the line finder adds after it)."""
    quoted = False
    i = 0
    while i < len(pattern):
        if pattern.startswith("\\E" if quoted else "\\Q", i):
            quoted = not quoted
            i += 2
        elif pattern[i] == "\\" and not quoted:
            i += 2
        else:
            i += 1
    return pattern + "\\E" if quoted else pattern


def _count_matching(finditer: _Finditer, data: bytes, *, crlf: bool) -> int:
    """How many lines of ``data`` (whole lines, each ending in ``\\n``) match: the loop of
    :meth:`LineScanner._scan` without the lines."""
    return sum(1 for _ in _line_matches(finditer, _lf(data, crlf)))


def _lf(data: bytes, crlf: bool) -> bytes:
    """``data`` with each ``\\r\\n`` a ``\\n`` (``crlf=False``: as it is)."""
    return data.replace(b"\r\n", b"\n") if crlf and b"\r" in data else data


def _line_matches(finditer: _Finditer, data: bytes) -> Iterator[_Found]:
    """One match of the line finder for each matching line of ``data`` (whole lines, each
    ending in ``\\n``): from the line's first match to its ``\\n``.

    The next search starts at that ``\\n``; a match found there is on the same line (an
    empty one: no match holds a ``\\n``) and passed over, as is an empty one after the last
    ``\\n`` (no line)."""
    size = len(data)
    line_end = -1
    for found in finditer(data):
        at, end = found.span()
        if at in (line_end, size):
            continue
        line_end = end
        yield found


class LineScanner:
    """The matching lines of a text that arrives in chunks of any size.

    Only complete lines are searched; the incomplete last line of a chunk is
    kept for the next one (at most :data:`MAX_MATCHED_LINE` bytes of it: the
    rest of an over-long line is passed over, and a match there is not seen).
    """

    __slots__ = ("_carry", "_carry_full", "_finditer", "_lines", "_uncounted")

    def __init__(self, finditer: _Finditer) -> None:
        self._finditer = finditer
        self._lines = 0  # complete lines before the carried one, but for _uncounted
        # The newlines of data[start:] of a whole text's scan, counted only if the text
        # ends in a line without "\n" (whose number finish() needs).
        self._uncounted: tuple[bytes, int] | None = None
        self._carry = b""
        self._carry_full = False

    def feed(self, chunk: str, *, final: bool = False) -> Iterator[MatchedLine]:
        """The matching lines that ``chunk`` completes; ``final``: no chunk follows, only
        :meth:`finish` (then the lines after the last match are counted only if the text
        ends in a line without ``\\n``)."""
        data = chunk.encode("utf-8", "surrogatepass")
        end = data.rfind(b"\n")
        if end < 0:
            self._hold(data)
            return
        head = data[: end + 1]
        if self._carry:
            if self._carry_full:  # the rest of an over-long line is passed over
                head = head[head.index(b"\n") :]
            head = self._carry + head
            self._carry, self._carry_full = b"", False
        tail = data[end + 1 :]
        yield from self._scan(head)
        if not final:  # more chunks follow: count now rather than hold this one's bytes
            self._lines_before()
        self._hold(tail)

    def finish(self) -> Iterator[MatchedLine]:
        """The matching line the text ends with when it does not end in ``\\n``."""
        last, self._carry = self._carry, b""
        if last:
            if last.endswith(b"\r"):
                last = last[:-1]
            yield from self._scan(last + b"\n", crlf=False)

    def _hold(self, data: bytes) -> None:
        if not data or self._carry_full:
            return
        room = MAX_MATCHED_LINE - len(self._carry)
        if len(data) > room:
            data = data[:room]
            self._carry_full = True
        self._carry += data

    def _scan(self, data: bytes, *, crlf: bool = True) -> Iterator[MatchedLine]:
        """The matching lines of ``data``: whole lines, each ending in ``\\n``.

        ``crlf=False`` for the last line of a text, whose final ``\\r`` is gone
        already and whose ``\\n`` was added: another ``\\r`` before it is text.
        """
        data = _lf(data, crlf)
        number = self._lines_before()
        counted = 0  # data[:counted] holds the newlines of lines numbered so far
        for found in _line_matches(self._finditer, data):
            (at, stop), end = found.span(), found.span(1)[1]
            start = data.rfind(b"\n", 0, at) + 1
            number += data.count(b"\n", counted, start) + 1
            counted = stop + 1
            yield MatchedLine(number, data[start:stop], at - start, min(end, stop) - start)
        self._lines = number
        self._uncounted = (data, counted)

    def _lines_before(self) -> int:
        """The complete lines scanned so far (the newlines left uncounted counted now)."""
        if self._uncounted is not None:
            data, counted = self._uncounted
            self._lines += data.count(b"\n", counted)
            self._uncounted = None
        return self._lines
