"""The read window: which lines of a text one ``read`` shows, and how many the text has.

One pass over the text, fed in chunks of any size. The lines before
``offset`` and after the window are only *counted* (``str.count`` on whole
chunks); each line of the window is cut out with ``str.find`` and goes
through one selection rule, :meth:`WindowBuilder._select`: truncation, cost
and the byte cap are decided there and nowhere else, for a line that lies
inside one chunk and for one spread over many alike — a whole text is just
one chunk. Memory stays bounded by the window, the current chunk and the
head of one line (``max_line_length + 1`` characters): a 100 MB line
without a newline is never accumulated. When the text comes from a stream
that can skip lines, the builder says which lines it only counts
(:meth:`WindowBuilder.countable_lines`) and the stream passes over them
without decoding them at all (:meth:`WindowBuilder.skipped`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dsh_fs.text import nth_newline

__all__ = ["ReadWindow", "WindowBuilder", "build_window"]


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


_SKIP, _WINDOW, _COUNT = "skip", "window", "count"
_SKIP_BLOCK = 1 << 16
"""Characters counted at a time before the window (see :meth:`WindowBuilder._skip`)."""


class WindowBuilder:
    """Incremental read window: ``feed`` text chunks, then ``finish``.

    Chunk boundaries are arbitrary: a line, or a ``\\r\\n`` pair, may be split
    across chunks, and one line may span any number of chunks.

    Three phases: *skip* (before ``offset``: count newlines), *window*
    (select lines until ``limit`` lines are selected or the byte cap is hit)
    and *count* (the rest). Whether the text ends without a newline decides
    whether a final partial line counts. Instead of being fed, the lines of
    :meth:`countable_lines` may be reported as :meth:`skipped`.
    """

    def __init__(self, *, offset: int, limit: int, max_line_length: int, max_bytes: int) -> None:
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
        self._used = 0  # bytes of the selected lines, separators included
        self._capped = False
        self._finished = False
        # The window line being read: its first max_line_length + 1 characters
        # (enough to decide truncation, "\r" included) and whether it is longer.
        self._head = ""
        self._more = False

    def feed(self, chunk: str) -> None:
        """Consume the next piece of text (any size, any boundary)."""
        if self._finished:
            raise RuntimeError("feed() after finish()")
        if not chunk:
            return
        pos = 0
        if self._phase == _SKIP:
            pos = self._skip(chunk)
        if self._phase == _WINDOW:
            pos = self._window(chunk, pos)
        if self._phase == _COUNT:
            self._completed += chunk.count("\n", pos)
        self._tail = chunk[-1] != "\n"

    def countable_lines(self) -> int | None:
        """How many of the next lines the window only counts: 0 when it needs their text.

        Before ``offset``, the newlines up to line ``offset``; inside an over-long
        line whose shown head is complete, 1 (the rest of that line); after the
        window, ``None`` — everything left. A stream with ``skip_lines``
        (:class:`dsh_fs.streaming.SupportsSkipLines`) can pass over these without
        producing text; report what it passed with :meth:`skipped`.
        """
        if self._phase == _SKIP:
            return self._offset - 1 - self._completed
        if self._phase == _COUNT:
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
        if self._phase == _SKIP:
            need = self._offset - 1 - self._completed
            if newlines > need:
                raise ValueError("skipped past the start of the window")
            self._completed += newlines
            if newlines == need:
                self._phase = _WINDOW
        elif self._phase == _COUNT:
            self._completed += newlines
        elif self._more:  # the rest of an over-long line
            if newlines > 1:
                raise ValueError("only the rest of the current line may be skipped in the window")
            self._completed += 1
            self._end_line(self._completed)
        else:
            raise ValueError("the window needs the text of these lines")

    def finish(self) -> ReadWindow:
        """End of text: close a final line without ``\\n`` and return the window."""
        if not self._finished:
            self._finished = True
            if self._phase == _WINDOW and self._head:  # a final line without "\n"
                self._end_line(self._completed + 1)
        total = self._completed + (1 if self._tail else 0)
        return ReadWindow(
            offset=self._offset,
            lines=tuple(self._lines),
            total_lines=total,
            capped=self._capped,
        )

    def _skip(self, chunk: str) -> int:
        """Count the newlines before line ``offset``; the position where it starts, if here.

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
                return nth_newline(chunk, need, start, stop) + 1
            need -= seen
            self._completed += seen
            start = stop
        return size

    def _window(self, chunk: str, pos: int) -> int:
        """Take lines from ``chunk[pos:]`` until the window is done or the chunk ends.

        Returns where the count phase goes on, or the end of the chunk. A line
        that lies inside the chunk is cut out directly; one that started in an
        earlier chunk, or goes on into the next, is collected in the bounded
        head. Either way :meth:`_select` decides.
        """
        size = len(chunk)
        keep = self._max_line_length + 1
        while pos < size:
            newline = chunk.find("\n", pos)
            if newline < 0:
                self._extend(chunk, pos, size)  # the line goes on in the next chunk
                return size
            if self._head:  # the line started in an earlier chunk
                self._extend(chunk, pos, newline)
                head, more = self._head, self._more
                self._head, self._more = "", False
            else:
                more = newline - pos > keep
                head = chunk[pos : pos + keep] if more else chunk[pos:newline]
            self._completed += 1
            pos = newline + 1
            if not self._select(self._completed, head, more):
                self._phase = _COUNT
                return pos
        return size

    def _extend(self, chunk: str, start: int, stop: int) -> None:
        """Add ``chunk[start:stop]`` to the head, keeping at most ``max_line_length + 1``."""
        if self._more:
            return
        room = self._max_line_length + 1 - len(self._head)
        if stop - start > room:
            self._head += chunk[start : start + room]
            self._more = True
        else:
            self._head += chunk[start:stop]

    def _end_line(self, number: int) -> None:
        """Line ``number`` has ended: select it, or end the window."""
        head, more = self._head, self._more
        self._head, self._more = "", False
        if not self._select(number, head, more):
            self._phase = _COUNT

    def _select(self, number: int, head: str, more: bool) -> bool:
        """The selection rule for one line; False when the window is done.

        ``head`` is the line's first ``max_line_length + 1`` characters and
        ``more`` whether the line goes on past them. One trailing ``\\r`` is
        removed; a line still longer than ``max_line_length`` is cut and gets
        the suffix. Its cost is the UTF-8 length of that text, plus 1 for
        every line after the first selected one; the line is refused (capped)
        when the running total would exceed ``max_bytes`` — except the first,
        which is always selected so that every call makes progress.
        """
        if not more and head.endswith("\r"):
            head = head[:-1]
        limit = self._max_line_length
        text = head[:limit] + self._suffix if more or len(head) > limit else head
        cost = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if self._lines:
            cost += 1
            if self._used + cost > self._max_bytes:
                self._capped = True
                return False
        self._used += cost
        self._lines.append((number, text))
        return len(self._lines) < self._limit


def build_window(
    text: str, *, offset: int, limit: int, max_line_length: int, max_bytes: int
) -> ReadWindow:
    """The window of a whole text (one ``feed`` and ``finish``)."""
    builder = WindowBuilder(
        offset=offset, limit=limit, max_line_length=max_line_length, max_bytes=max_bytes
    )
    builder.feed(text)
    return builder.finish()
