"""Streamed text that can pass over whole lines without decoding them.

``FileSystem.stream_text`` returns any async iterator of ``str``. A reader
that needs only the *number* of lines in most of a file — the read tool
shows a window and counts the lines before and after it — saves most of
its work when the backend counts ``\\n`` in the raw bytes instead: no
``str`` is built for those lines, and plain ASCII is only checked, never
decoded. :class:`SupportsSkipLines` is that *optional* capability of a
stream: a backend may offer it, a consumer tests for it with ``isinstance``
and falls back to plain iteration when it is absent. The seam promises
nothing beyond ``AsyncIterator[str]``.

:class:`TextStream` implements both ``stream_text`` and
:class:`SupportsSkipLines` over any blocking :class:`ByteSource` (a file
descriptor, bytes in memory), with the text rules of :mod:`dsh_fs.text`:
a backend supplies the bytes and says how its blocking steps run (in a
worker thread, or inline).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import NamedTuple, Protocol, TypeVar, runtime_checkable

import anyio
from anyio.lowlevel import checkpoint_if_cancelled

from .text import StreamDecoder, nth_newline

__all__ = [
    "CHUNK_BYTES",
    "SKIP_BYTES_PER_STEP",
    "ByteSource",
    "Run",
    "SkippedLines",
    "SupportsSkipLines",
    "TextStream",
    "close_stream",
    "run_inline",
]

CHUNK_BYTES = 1 << 20
"""Bytes read (into one reused buffer) and decoded per step of a :class:`TextStream`."""
SKIP_BYTES_PER_STEP = 256 << 20
"""Bytes one ``skip_lines`` step (one ``run`` call) passes over at most. Within a step,
``check_cancelled`` runs after every chunk, so a cancelled skip stops within one chunk."""

T = TypeVar("T")


class SkippedLines(NamedTuple):
    """What :meth:`SupportsSkipLines.skip_lines` passed over."""

    newlines: int
    """How many ``\\n`` were passed: the count asked for, or fewer at the end of the text."""
    partial: bool
    """Whether text followed the last ``\\n`` passed (a final line without one, at the end)."""


@runtime_checkable
class SupportsSkipLines(Protocol):
    """Optional capability of a text stream: pass over lines without producing their text.

    Nothing requires a backend's ``stream_text`` to offer it; the read tool
    uses it when ``isinstance(stream, SupportsSkipLines)`` and iterates
    otherwise, with the same result.
    """

    async def skip_lines(self, count: int | None = None) -> SkippedLines:
        """Pass over the text up to and including the ``count``-th next ``\\n``.

        ``None`` passes over everything that is left. The text passed over is
        checked exactly as iterating would check it (the same ``FsError`` for
        binary or invalid UTF-8 text, or a file that is not there); iteration
        resumes right after the last character passed over.
        """
        ...


class ByteSource(Protocol):
    """The raw bytes of one file, read by a :class:`TextStream` (blocking calls)."""

    @property
    def at_end(self) -> bool:
        """True when no byte is left, known without reading (else False)."""
        ...

    def readinto(self, buffer: memoryview) -> int:
        """Fill the start of ``buffer``; how many bytes, 0 at the end. Raises ``FsError``."""
        ...

    def close(self) -> None:
        """Release the source (called once, by the stream)."""
        ...


class Run(Protocol):
    """How a backend runs a blocking step of a stream, e.g. in a worker thread."""

    def __call__(self, step: Callable[[], T], /) -> Awaitable[T]: ...


async def run_inline(step: Callable[[], T]) -> T:
    """Run ``step`` in the event loop, for sources that never block.

    A cancellation is raised first, as by the backends' other primitives; the
    step does not yield to other tasks (``checkpoint_if_cancelled``), so a
    file of one chunk costs no event-loop iteration.
    """
    await checkpoint_if_cancelled()
    return step()


_SPARE_BUFFERS: dict[int, list[bytearray]] = {}
"""Buffers of ended streams by size, taken by the next stream. A fresh buffer is
zero-filled first: for a file of one chunk (the read tool streams every file) that was
about half of what a stream cost over ``read_text`` (≈ 3 % of reading a 1 MB file)."""
_SPARES_PER_SIZE = 2
"""At most this many spare buffers of each size are kept (2 MiB for the local backend)."""


def _take_buffer(size: int) -> bytearray:
    try:
        return _SPARE_BUFFERS[size].pop()
    except (KeyError, IndexError):
        return bytearray(size)


def _give_back(buffer: bytearray) -> None:
    spares = _SPARE_BUFFERS.setdefault(len(buffer), [])
    if len(spares) < _SPARES_PER_SIZE:
        spares.append(buffer)


class _Reader:
    """The blocking half of a :class:`TextStream`: one reused buffer over a source."""

    __slots__ = (
        "_base",
        "_buffer",
        "_decoder",
        "_end",
        "_eof",
        "_source",
        "_start",
        "_view",
    )

    def __init__(self, source: ByteSource, decoder: StreamDecoder, chunk_bytes: int) -> None:
        self._source = source
        self._decoder = decoder
        self._buffer = _take_buffer(chunk_bytes)
        self._view = memoryview(self._buffer)
        self._base = 0  # stream offset of buffer[0]
        self._start = 0  # buffer[start:end] is read but not yet consumed
        self._end = 0
        self._eof = False

    def close(self) -> None:
        self._view.release()
        _give_back(self._buffer)
        self._source.close()

    def _fill(self) -> bool:
        """Read the next chunk into the buffer; False at the end of the stream."""
        if self._eof:
            return False
        self._base += self._end
        self._start = self._end = 0
        got = self._source.readinto(self._view)
        if not got:
            self._eof = True
            self._decoder.feed(b"", final=True)  # a character cut short is invalid
            return False
        self._end = got
        return True

    def next_text(self) -> tuple[str, bool]:
        """The next decoded text (possibly empty) and whether the stream ended."""
        if self._start == self._end and not self._fill():
            return "", True
        text = self._decoder.feed(self._view[self._start : self._end])
        self._start = self._end
        if self._source.at_end:
            self._fill()  # no read: ends the stream and checks the last character
            return text, True
        return text, False

    def skip(
        self, count: int | None, budget: int, check_cancelled: Callable[[], None] | None
    ) -> tuple[int, bool, bool]:
        """Pass over newlines (at most ``count``, reading at most ``budget`` bytes).

        ``check_cancelled`` (if any) runs before each read: it raises the
        caller's cancellation, which ends the stream.

        Returns ``(newlines, partial, finished)``: ``partial`` when text was
        passed over after the last of those newlines; ``finished`` when
        ``count`` newlines were passed or the stream ended.
        """
        newlines = 0
        mark = self._base + self._start  # stream offset after the last newline passed
        finished = count == 0
        while not finished:
            if self._start == self._end:
                if budget <= 0:
                    break
                if check_cancelled is not None:
                    check_cancelled()
                if not self._fill():
                    finished = True
                    break
                budget -= self._end
            buffer, lo, hi = self._buffer, self._start, self._end
            left = None if count is None else count - newlines
            if left is not None and left <= _FEW_LINES:
                seen, stop = _find_newlines(buffer, left, lo, hi)
                if seen == left:
                    hi, finished = stop, True
            else:
                seen = buffer.count(b"\n", lo, hi)
                if left is not None and seen >= left:
                    hi = nth_newline(buffer, left, lo, hi) + 1
                    seen, finished = left, True
            self._decoder.check(buffer if hi - lo == len(buffer) else self._view[lo:hi])
            self._start = hi
            newlines += seen
            if seen:
                mark = self._base + buffer.rfind(b"\n", lo, hi) + 1
        # The decoder has seen every byte passed over: a BOM is not text.
        partial = max(mark, self._decoder.text_start) < self._base + self._start
        return newlines, partial, finished


_FEW_LINES = 8
"""Up to this many newlines are looked for with ``find`` (``memchr``, far faster than
``count`` over long lines: the rest of one over-long line is the common case)."""


def _find_newlines(buffer: bytearray, wanted: int, lo: int, hi: int) -> tuple[int, int]:
    """``(found, stop)``: up to ``wanted`` newlines of ``buffer[lo:hi]``, and the index after
    the last one found (``lo`` if none)."""
    found, stop = 0, lo
    while found < wanted:
        newline = buffer.find(b"\n", stop, hi)
        if newline < 0:
            break
        found, stop = found + 1, newline + 1
    return found, stop


class TextStream(SupportsSkipLines):
    """``stream_text`` over a blocking byte source, with :meth:`skip_lines`.

    ``open_source`` is called by the first step (so a missing file fails on
    first use, like an async generator would), ``run`` runs every blocking
    step (``run_inline`` by default); ``check_cancelled``, when given, is
    called from inside a long ``skip_lines`` step before each read and raises
    the caller's cancellation (``anyio.from_thread.check_cancelled`` for a
    worker thread). Text comes in chunks of at most
    ``chunk_bytes`` bytes, read into one reused buffer; memory stays bounded
    by that buffer and one decoded chunk. The source is closed at the end of
    the text, on the first error, and by :meth:`aclose`.
    """

    __slots__ = (
        "_check_cancelled",
        "_chunk_bytes",
        "_closed",
        "_decoder",
        "_display_path",
        "_open_source",
        "_reader",
        "_run",
    )

    def __init__(
        self,
        open_source: Callable[[], ByteSource],
        display_path: str,
        *,
        run: Run = run_inline,
        check_cancelled: Callable[[], None] | None = None,
        chunk_bytes: int = CHUNK_BYTES,
    ) -> None:
        self._open_source = open_source
        self._display_path = display_path
        self._run = run
        self._check_cancelled = check_cancelled
        self._chunk_bytes = chunk_bytes
        self._decoder = StreamDecoder(display_path)
        self._reader: _Reader | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"TextStream({self._display_path!r})"

    def __aiter__(self) -> TextStream:
        return self

    async def __anext__(self) -> str:
        while not self._closed:
            text, done = await self._step(_Reader.next_text)
            if done:
                self._close()
            if text:
                return text
        raise StopAsyncIteration

    async def skip_lines(self, count: int | None = None) -> SkippedLines:
        if count is not None and count < 0:
            raise ValueError("count must be None or a non-negative integer")
        newlines, partial = 0, False
        while not self._closed:
            left = None if count is None else count - newlines
            seen, rest, finished = await self._step(
                functools.partial(
                    _Reader.skip,
                    count=left,
                    budget=SKIP_BYTES_PER_STEP,
                    check_cancelled=self._check_cancelled,
                )
            )
            newlines += seen
            if seen or rest:
                partial = rest
            if finished:
                if count is None or newlines < count:
                    self._close()
                break
        return SkippedLines(newlines, partial)

    async def aclose(self) -> None:
        self._close()

    def __del__(self) -> None:
        if hasattr(self, "_closed"):  # not when __init__ failed
            self._close()

    async def _step(self, action: Callable[[_Reader], T]) -> T:
        def step() -> T:
            reader = self._reader
            if reader is None:
                source = self._open_source()
                reader = self._reader = _Reader(source, self._decoder, self._chunk_bytes)
            return action(reader)

        try:
            return await self._run(step)
        except BaseException:
            self._close()
            raise

    def _close(self) -> None:
        if not self._closed:
            self._closed = True
            if self._reader is not None:
                self._reader.close()


async def close_stream(chunks: AsyncIterator[str], *, shield: bool = True) -> None:
    """Release what a ``stream_text`` iterator holds (its ``aclose``, when it has one).

    Shielded by default, so that a cancelled caller still releases the file;
    a stream read to its end has nothing left to wait for, and its caller may
    pass ``shield=False`` (a shield costs as much as a small file's stream).
    """
    aclose = getattr(chunks, "aclose", None)
    if aclose is None:
        return
    if shield:
        with anyio.CancelScope(shield=True):
            await aclose()
    else:
        await aclose()
