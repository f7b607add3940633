"""Matching lines with RE2: the regular expression of ``grep`` and the line scan.

The pattern is RE2 syntax, compiled with ``never_nl`` (no match spans a
newline: every match lies inside one line) in multi-line mode (``^`` and
``$`` are the start and end of a line; ``\\A`` and ``\\z`` of the file). RE2
matches in time linear in the input, so no pattern can hang a search —
``(a+)+$`` on a long line is as fast as ``a``.

A text is scanned as UTF-8 bytes, with one search per *matching* line
rather than one call per line: the search jumps to the next match, the
line around it is cut out, and the next search starts on the line after.
A line is ``\\n``-terminated; the ``\\r`` of a ``\\r\\n`` is not part of the
line (it is neither matched nor shown), nor is a ``\\r`` that ends the text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import re2
from dsh_tool_fs import ToolArgumentError

from ._engine import span_search

__all__ = ["MAX_MATCHED_LINE", "LineMatcher", "LineScanner", "MatchedLine"]

MAX_MATCHED_LINE = 8 << 20
"""Bytes of one line a streamed scan holds at most: a longer line is matched on its start."""


_Search = Callable[[bytes, int], tuple[int, int] | None]
"""A compiled pattern's search from ``pos``: the span of the first match, or ``None``."""


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
    _search: _Search

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
            regex = re2.compile("(?m)" + pattern, options)
        except re2.error as exc:
            reason = exc.args[0] if exc.args else exc
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            raise ToolArgumentError(f"pattern is not a valid regular expression: {reason}") from exc
        return cls(pattern, ignore_case, span_search(regex))

    def scanner(self) -> LineScanner:
        """A scan of one text fed in chunks."""
        return LineScanner(self._search)

    def lines(self, text: str) -> Iterator[MatchedLine]:
        """The matching lines of a whole text."""
        scanner = self.scanner()
        yield from scanner.feed(text)
        yield from scanner.finish()

    def count_lines(self, text: str) -> int:
        """How many lines of a whole text match: ``len(list(self.lines(text)))``, without
        cutting out, numbering or building any of them (what a page that is full needs)."""
        data = text.encode("utf-8", "surrogatepass")
        end = data.rfind(b"\n") + 1
        count = _count_matching(self._search, data[:end], crlf=True)
        last = data[end : end + MAX_MATCHED_LINE]  # as a scan holds it
        if last:
            if last.endswith(b"\r"):
                last = last[:-1]
            count += _count_matching(self._search, last + b"\n", crlf=False)
        return count


def _count_matching(search: _Search, data: bytes, *, crlf: bool) -> int:
    """How many lines of ``data`` (whole lines, each ending in ``\\n``) match: the loop of
    :meth:`LineScanner._scan` without the lines."""
    return sum(1 for _ in _first_matches(search, _lf(data, crlf)))


def _lf(data: bytes, crlf: bool) -> bytes:
    """``data`` with each ``\\r\\n`` a ``\\n`` (``crlf=False``: as it is)."""
    return data.replace(b"\r\n", b"\n") if crlf and b"\r" in data else data


def _first_matches(search: _Search, data: bytes) -> Iterator[tuple[int, int, int]]:
    """The first match of each matching line of ``data`` (whole lines, each ending in
    ``\\n``): its start, its end, and where its line's ``\\n`` is."""
    pos = 0
    size = len(data)
    while pos < size:
        found = search(data, pos)
        if found is None or found[0] == size:  # not the empty line after the last \n
            return
        at, end = found
        stop = data.index(b"\n", at)
        yield at, end, stop
        pos = stop + 1


class LineScanner:
    """The matching lines of a text that arrives in chunks of any size.

    Only complete lines are searched; the incomplete last line of a chunk is
    kept for the next one (at most :data:`MAX_MATCHED_LINE` bytes of it: the
    rest of an over-long line is passed over, and a match there is not seen).
    """

    __slots__ = ("_carry", "_carry_full", "_lines", "_search")

    def __init__(self, search: _Search) -> None:
        self._search = search
        self._lines = 0  # complete lines before the carried one
        self._carry = b""
        self._carry_full = False

    def feed(self, chunk: str) -> Iterator[MatchedLine]:
        """The matching lines that ``chunk`` completes."""
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
        number = self._lines
        counted = 0  # data[:counted] holds `number - self._lines` newlines
        for at, end, stop in _first_matches(self._search, data):
            start = data.rfind(b"\n", 0, at) + 1
            number += data.count(b"\n", counted, start) + 1
            counted = stop + 1
            yield MatchedLine(number, data[start:stop], at - start, min(end, stop) - start)
        self._lines += data.count(b"\n")
