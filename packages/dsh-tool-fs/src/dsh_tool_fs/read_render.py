"""The read window (SPEC 5.6) and its projections (5.7, 5.8).

One pass over the text, fed in chunks of any size: the lines before
``offset`` and after the window are only *counted*, with ``str.count`` and
``str.find`` on whole chunks (C speed, no Python work per line); only the
selected lines are cut out and measured. Memory stays bounded by the window,
the current chunk and the head of one line (``max_line_length + 1``
characters): a 100 MB line without a newline is never accumulated. When the
text comes from a stream that can skip lines, the builder says which lines
it only counts (:meth:`WindowBuilder.countable_lines`) and the stream passes
over them without decoding them at all (:meth:`WindowBuilder.skipped`).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, islice
from operator import methodcaller

from dsh_fs import FsError, FsErrorCode
from dsh_fs.text import nth_newline

from .names import quote_name

__all__ = [
    "ReadWindow",
    "WindowBuilder",
    "build_window",
    "check_offset",
    "decimal_text",
    "read_footer",
    "read_value",
    "render_read",
]


@dataclass(frozen=True, slots=True)
class ReadWindow:
    """The selected lines of one ``read`` and the exact line count of the file.

    ``lines`` holds ``(number, text)`` pairs; ``text`` is what the model sees
    for that line (``\\r`` stripped, truncation suffix included). ``capped`` is
    true when selection stopped on the byte cap (then fewer than ``limit``
    lines were selected and more lines follow ``end``).
    """

    offset: int
    lines: tuple[tuple[int, str], ...]
    total_lines: int
    capped: bool

    @property
    def end(self) -> int:
        """The last selected line number, or ``offset - 1`` when none is selected."""
        return self.lines[-1][0] if self.lines else self.offset - 1


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


_SKIP, _WINDOW, _COUNT = 0, 1, 2
_ENCODE = methodcaller("encode", "utf-8", "surrogatepass")
_SKIP_BLOCK = 1 << 16
_FIRST_SPAN = 4096
_MAX_SPAN = 1 << 16


class WindowBuilder:
    """Incremental read window: ``feed`` text chunks, then ``finish``.

    Chunk boundaries are arbitrary: a line, or a ``\\r\\n`` pair, may be split
    across chunks, and one line may span any number of chunks.

    Phases: *skip* (before ``offset``: count newlines block by block, then
    locate the start of line ``offset`` by bisection), *window* (cut out lines
    with ``split`` and select them — in bulk where possible — until ``limit``
    lines are selected or the byte cap is hit), *count* (``chunk.count("\\n")``
    for the rest). Whether the stream ends without a
    newline decides if a final partial line counts. Instead of being fed,
    the lines of :meth:`countable_lines` may be reported as :meth:`skipped`.
    """

    __slots__ = (
        "_capped",
        "_completed",
        "_finished",
        "_head",
        "_in_line",
        "_last_cr",
        "_limit",
        "_lines",
        "_max_bytes",
        "_max_line_length",
        "_more",
        "_offset",
        "_phase",
        "_suffix",
        "_tail",
        "_used",
    )

    def __init__(self, *, offset: int, limit: int, max_line_length: int, max_bytes: int) -> None:
        if min(offset, limit, max_line_length, max_bytes) < 1:
            for name, value in (
                ("offset", offset),
                ("limit", limit),
                ("max_line_length", max_line_length),
                ("max_bytes", max_bytes),
            ):
                if value < 1:
                    raise ValueError(f"{name} must be a positive integer")
        self._offset = offset
        self._limit = limit
        self._max_line_length = max_line_length
        self._max_bytes = max_bytes
        self._suffix = f"... (line truncated to {max_line_length} chars)"
        self._completed = 0  # newlines seen so far = lines completed
        self._tail = False  # the text so far ends in a partial line (last char is not "\n")
        self._phase = _WINDOW if offset == 1 else _SKIP
        self._lines: list[tuple[int, str]] = []
        self._used = 0
        self._capped = False
        self._finished = False
        # The line being cut out in the window phase: its first max+1 chars,
        # whether it is longer than that, whether it has started, and whether
        # its last character so far is "\r".
        self._head = ""
        self._more = False
        self._in_line = False
        self._last_cr = False

    def feed(self, chunk: str) -> None:
        """Consume the next piece of text (any size, any boundary)."""
        if self._finished:
            raise RuntimeError("feed() after finish()")
        if not chunk:
            return
        phase = self._phase
        if phase == _COUNT:
            self._completed += chunk.count("\n")
        elif phase == _SKIP:
            self._skip(chunk)
        else:
            self._window(chunk, 0)
        self._tail = chunk[-1] != "\n"

    def countable_lines(self) -> int | None:
        """How many of the next lines the window only counts: 0 when it needs their text.

        Before ``offset``, the newlines up to line ``offset``; inside an over-long
        line whose shown head is complete, 1 (the rest of that line); after the
        window, ``None`` — everything left. A stream with ``skip_lines``
        (:class:`dsh_fs.streaming.LineSkipping`) can pass over these without
        producing text; report what it passed with :meth:`skipped`.
        """
        phase = self._phase
        if phase == _SKIP:
            return self._offset - 1 - self._completed
        if phase == _COUNT:
            return None
        return 1 if self._more else 0

    def skipped(self, newlines: int, partial: bool) -> None:
        """Account for text passed over as :meth:`countable_lines` allowed.

        ``newlines`` is how many ``\\n`` were passed (fewer than asked only at
        the end of the text); ``partial`` whether text followed the last one.
        """
        if self._finished:
            raise RuntimeError("skipped() after finish()")
        if newlines or partial:
            self._tail = partial
        if not newlines:
            return
        phase = self._phase
        if phase == _SKIP:
            need = self._offset - 1 - self._completed
            if newlines > need:
                raise ValueError("skipped past the start of the window")
            self._completed += newlines
            if newlines == need:
                self._phase = _WINDOW
        elif phase == _COUNT:
            self._completed += newlines
        elif self._more:  # the rest of an over-long line, and maybe more after it
            if newlines > 1:
                raise ValueError("only the rest of the current line may be skipped in the window")
            self._completed += 1
            if self._close_line(self._completed, ends_cr=False):
                self._phase = _COUNT
        else:
            raise ValueError("the window needs the text of these lines")

    def finish(self) -> ReadWindow:
        """End of text: close a final line without ``\\n`` and return the window."""
        if not self._finished:
            self._finished = True
            if self._phase == _WINDOW and self._in_line:
                self._close_line(self._completed + 1, self._last_cr)
        total = self._completed + (1 if self._tail else 0)
        return ReadWindow(
            offset=self._offset,
            lines=tuple(self._lines),
            total_lines=total,
            capped=self._capped,
        )

    def _skip(self, chunk: str) -> None:
        """Count the newlines before line ``offset``; start the window where it begins.

        Counting goes block by block, so the block holding the start of the
        window is the only part scanned twice (once to count, once to locate).
        """
        need = self._offset - 1 - self._completed  # newlines still to pass, >= 1
        size = len(chunk)
        start = 0
        while start < size:
            stop = min(size, start + _SKIP_BLOCK)
            seen = chunk.count("\n", start, stop)
            if seen >= need:
                self._completed += need
                self._phase = _WINDOW
                self._window(chunk, nth_newline(chunk, need, start, stop) + 1)
                return
            need -= seen
            self._completed += seen
            start = stop

    def _window(self, chunk: str, pos: int) -> None:
        """Cut out lines from ``chunk[pos:]`` until the window is done or the chunk ends.

        Lines that lie wholly inside the chunk are taken from ``split`` over a
        growing span (a few C calls for the whole window); a line that started
        in an earlier chunk, or is longer than the span, goes through the
        bounded head (:meth:`_extend`), so no line is ever held whole.
        """
        size = len(chunk)
        if self._in_line:  # a line carried over from the previous chunk
            pos = self._finish_long_line(chunk, pos)
            if pos < 0:
                return
        limit = self._max_line_length
        suffix = self._suffix
        lines = self._lines
        span = _FIRST_SPAN
        while pos < size:
            stop = min(size, pos + span)
            region = chunk[pos:stop]
            parts = region.split("\n")
            parts.pop()  # the start of a line that goes on past `stop`
            if not parts:  # no newline within the span: one long line
                pos = self._finish_long_line(chunk, pos)
                if pos < 0:
                    return
                continue
            number = self._completed
            taken, width = self._take_bulk(region, parts, number)
            if taken:
                pos += width
                number += taken
                if len(lines) >= self._limit:
                    self._done(chunk, pos, number)
                    return
            for raw in islice(parts, taken, None):
                number += 1
                pos += len(raw) + 1
                line = raw[:-1] if raw.endswith("\r") else raw
                text = line[:limit] + suffix if len(line) > limit else line
                cost = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
                if lines:
                    cost += 1
                    if self._used + cost > self._max_bytes:
                        self._capped = True
                        self._done(chunk, pos, number)
                        return
                self._used += cost
                lines.append((number, text))
                if len(lines) >= self._limit:
                    self._done(chunk, pos, number)
                    return
            self._completed = number
            span = min(span * 2, _MAX_SPAN)

    def _take_bulk(self, region: str, parts: list[str], number: int) -> tuple[int, int]:
        """Select leading lines of ``parts`` in bulk when they need no per-line decision.

        When no line needs truncation and either every or no line ends with
        ``\\r\\n`` (LF or CRLF text), a line's cost is its UTF-8 length (+1 after
        the first selected), so how many fit is a bisection over running
        sums. Returns how many lines were taken and the characters they span
        in ``region``, line endings included; the per-line loop goes on from
        there (and makes the cap or first-line decision for the line that did
        not fit).
        """
        lines = self._lines
        room = self._limit - len(lines)
        seg = parts if len(parts) <= room else parts[:room]
        ending = 1
        crlf = region.count("\r\n")  # = the complete lines that end with "\r"
        if crlf:
            if crlf != len(parts):  # mixed line endings: decide line by line
                return 0, 0
            seg = [part[:-1] for part in seg]
            ending = 2
        if max(map(len, seg)) > self._max_line_length:
            return 0, 0
        ascii_only = region.isascii()
        sizes = map(len, seg) if ascii_only else map(len, map(_ENCODE, seg))
        sums = list(accumulate(sizes))
        first = 0 if lines else 1  # the first selected line costs no separator
        budget = self._max_bytes - self._used + first
        taken = bisect_right(range(len(seg)), budget, key=lambda i: sums[i] + i + 1)
        if not taken:
            return 0, 0
        self._used += sums[taken - 1] + taken - first
        chars = sums[taken - 1] if ascii_only else sum(map(len, seg[:taken]))
        lines.extend(zip(range(number + 1, number + taken + 1), seg[:taken], strict=True))
        return taken, chars + taken * ending

    def _finish_long_line(self, chunk: str, pos: int) -> int:
        """Feed the current line through the bounded head up to its ``\\n``.

        Returns the position after that ``\\n``, or -1 when this chunk needs no
        more work: it ends inside the line, or the window is done (and the
        rest of the chunk has been counted).
        """
        nl = chunk.find("\n", pos)
        if nl < 0:
            self._extend(chunk, pos, len(chunk))
            self._in_line = True
            self._last_cr = chunk[-1] == "\r"
            return -1
        if nl > pos:
            self._extend(chunk, pos, nl)
            ends_cr = chunk[nl - 1] == "\r"
        else:
            ends_cr = self._in_line and self._last_cr
        self._completed += 1
        if self._close_line(self._completed, ends_cr):
            self._done(chunk, nl + 1, self._completed)
            return -1
        return nl + 1

    def _done(self, chunk: str, pos: int, completed: int) -> None:
        """The window is full or capped: count what is left of the chunk."""
        self._phase = _COUNT
        self._completed = completed + chunk.count("\n", pos)

    def _extend(self, chunk: str, start: int, stop: int) -> None:
        if self._more:
            return
        room = self._max_line_length + 1 - len(self._head)
        if stop - start > room:
            self._head += chunk[start : start + room]
            self._more = True
        else:
            self._head += chunk[start:stop]

    def _close_line(self, number: int, ends_cr: bool) -> bool:
        """Select (or refuse) the line kept in the head; True when the window is done."""
        head, more = self._head, self._more
        self._head, self._more, self._in_line, self._last_cr = "", False, False, False
        limit = self._max_line_length
        if more:
            text = head[:limit] + self._suffix
        else:
            if ends_cr:
                head = head[:-1]
            text = head[:limit] + self._suffix if len(head) > limit else head
        cost = _utf8_len(text)
        if self._lines:
            cost += 1
            if self._used + cost > self._max_bytes:
                self._capped = True
                return True
        self._used += cost
        self._lines.append((number, text))
        return len(self._lines) >= self._limit


def build_window(
    text: str, *, offset: int, limit: int, max_line_length: int, max_bytes: int
) -> ReadWindow:
    """The window of a whole text (one ``feed`` and ``finish``)."""
    builder = WindowBuilder(
        offset=offset, limit=limit, max_line_length=max_line_length, max_bytes=max_bytes
    )
    builder.feed(text)
    return builder.finish()


def check_offset(window: ReadWindow, display_path: str) -> None:
    """Raise ``FS_NOT_FOUND`` when ``offset`` lies past the last line.

    ``offset`` 1 on an empty file is an empty page, not an error. The message
    names the display path as is, like every ``FsError`` message of the stack
    (``cannot read "<p>": …``): the name rule of SPEC 5.9 applies to list
    entries and envelope ``<path>`` lines, and an error message is neither.
    """
    if window.offset > window.total_lines and not (window.offset == 1 and window.total_lines == 0):
        raise FsError(
            f'offset {decimal_text(window.offset)} is out of range for "{display_path}" '
            f"({window.total_lines} lines)",
            FsErrorCode.FS_NOT_FOUND,
        )


_DIGITS_PER_PART = 4000
"""Below CPython's default int -> str limit of 4,300 digits."""


def decimal_text(number: int) -> str:
    """``str(number)``, also beyond CPython's 4,300-digit conversion limit.

    Arguments arrive as decoded JSON, which bounds no integer: an offset of
    5,000 digits must still be echoed in its out-of-range message instead of
    failing the call. Larger numbers are converted in parts under the limit.
    """
    try:
        return str(number)
    except ValueError:
        sign, rest = ("-", -number) if number < 0 else ("", number)
        base = 10**_DIGITS_PER_PART
        parts: list[int] = []
        while rest:
            rest, part = divmod(rest, base)
            parts.append(part)
        head, *tail = reversed(parts)
        return sign + str(head) + "".join(str(part).zfill(_DIGITS_PER_PART) for part in tail)


def read_footer(window: ReadWindow) -> str:
    """The footer line of a read (SPEC 5.8)."""
    end = window.end
    if window.capped:
        return (
            f"(Output capped. Showing lines {window.offset}-{end}. "
            f"Use offset={end + 1} to continue.)"
        )
    if end < window.total_lines:
        return (
            f"(Showing lines {window.offset}-{end} of {window.total_lines}. "
            f"Use offset={end + 1} to continue.)"
        )
    return f"(End of file - total {window.total_lines} lines)"


def render_read(display_path: str, window: ReadWindow) -> str:
    """The model projection of a read: the ``<path>``/``<type>``/``<content>`` envelope."""
    footer = read_footer(window)
    if window.lines:
        body = "\n".join([f"{number}: {text}" for number, text in window.lines])
        content = f"{body}\n\n{footer}"
    else:
        content = footer
    return (
        f"<path>{quote_name(display_path)}</path>\n"
        "<type>file</type>\n"
        f"<content>\n{content}\n</content>"
    )


def read_value(display_path: str, window: ReadWindow) -> dict[str, object]:
    """The canonical value of a read (SPEC 5.7)."""
    return {
        "path": display_path,
        "offset": window.offset,
        "lines": [{"number": number, "text": text} for number, text in window.lines],
        "totalLines": window.total_lines,
    }
