"""``dsh_fs.streaming.TextStream``: iteration and ``skip_lines`` over any chunking, as properties.

The stream is run over an in-memory byte source with tiny buffers (1–13
bytes) and tiny check blocks, so that every boundary case — a character,
a BOM or a ``\\r\\n`` split across reads, a skip that stops inside a read —
comes up in a few hundred examples. A reference model on the decoded text
says what each operation must give.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from unittest.mock import patch

import anyio
import pytest
from dsh_fs import FsError, FsErrorCode
from dsh_fs import streaming as streaming_module
from dsh_fs import text as text_module
from dsh_fs.streaming import SkippedLines, SupportsSkipLines, TextStream
from dsh_fs.text import BOM, StreamDecoder, decode_text
from hypothesis import example, given, settings
from hypothesis import strategies as st

P = "/w/s.txt"
INVALID = 'cannot read "/w/s.txt": invalid UTF-8 text'
BINARY = 'cannot read "/w/s.txt": binary file'

characters = st.sampled_from(["a", "b", " ", "\n", "\n", "\r", "é", "€", "語", "\U0001d11e"])
texts = st.lists(characters, max_size=60).map("".join)
ops = st.lists(st.one_of(st.just("next"), st.none(), st.integers(0, 6)), max_size=12)
"""``"next"`` takes a chunk; an integer or ``None`` is a ``skip_lines`` count."""


class BytesSource:
    """A byte source over ``data`` that records what happened to it."""

    def __init__(self, data: bytes, *, at_end_known: bool = True) -> None:
        self.data = data
        self.position = 0
        self.closed = 0
        self.at_end_known = at_end_known

    @property
    def at_end(self) -> bool:
        return self.at_end_known and self.position >= len(self.data)

    def readinto(self, buffer: memoryview) -> int:
        if self.closed:
            raise AssertionError("read after close")
        chunk = self.data[self.position : self.position + len(buffer)]
        buffer[: len(chunk)] = chunk
        self.position += len(chunk)
        return len(chunk)

    def close(self) -> None:
        self.closed += 1


@contextmanager
def tiny_blocks(check_block: int, few_lines: int) -> Iterator[None]:
    with (
        patch.object(text_module, "CHECK_BLOCK_BYTES", check_block),
        patch.object(streaming_module, "_FEW_LINES", few_lines),
        patch.object(text_module, "_FIND_SPAN", 2),
    ):
        yield


def reference_skip(text: str, position: int, count: int | None) -> tuple[SkippedLines, int]:
    """What ``skip_lines(count)`` gives at ``position`` of ``text``, and the new position."""
    passed = 0
    while count is None or passed < count:
        newline = text.find("\n", position)
        if newline < 0:
            return SkippedLines(passed, position < len(text)), len(text)
        position, passed = newline + 1, passed + 1
    return SkippedLines(passed, False), position


async def run_ops(stream: TextStream, text: str, operations: list[str | int | None]) -> None:
    """Apply ``operations``, checking each against the reference, then read the rest."""
    position = 0
    for op in operations:
        if op == "next":
            chunk = await anext(stream, None)
            if chunk is None:
                assert position == len(text)
                continue
            assert chunk and text.startswith(chunk, position)
            position += len(chunk)
        else:
            assert not isinstance(op, str)
            expected, position = reference_skip(text, position, op)
            assert await stream.skip_lines(op) == expected
    rest = "".join([chunk async for chunk in stream])
    assert rest == text[position:]


@settings(max_examples=400, deadline=None)
@given(
    text=texts,
    bom=st.booleans(),
    operations=ops,
    chunk=st.integers(1, 13),
    check_block=st.integers(1, 9),
    few_lines=st.sampled_from([0, 2, 8]),
    at_end_known=st.booleans(),
)
@example(
    text="a\n", bom=True, operations=[None], chunk=1, check_block=1, few_lines=8, at_end_known=True
)
def test_iteration_and_skips_follow_the_reference_for_any_chunking(
    text: str,
    bom: bool,
    operations: list[str | int | None],
    chunk: int,
    check_block: int,
    few_lines: int,
    at_end_known: bool,
) -> None:
    data = (BOM if bom else b"") + text.encode()
    source = BytesSource(data, at_end_known=at_end_known)
    stream = TextStream(lambda: source, P, chunk_bytes=chunk)
    with tiny_blocks(check_block, few_lines):
        anyio.run(run_ops, stream, text, operations)
    assert source.closed == 1


INVALID_TAILS = [b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe2\x82"]


@settings(max_examples=300, deadline=None)
@given(
    head=texts,
    tail=texts,
    bad=st.sampled_from(INVALID_TAILS),
    bom=st.booleans(),
    operations=ops,
    chunk=st.integers(1, 13),
    check_block=st.integers(1, 9),
)
def test_invalid_utf8_fails_the_same_way_whichever_path_reaches_it(
    head: str,
    tail: str,
    bad: bytes,
    bom: bool,
    operations: list[str | int | None],
    chunk: int,
    check_block: int,
) -> None:
    data = (BOM if bom else b"") + head.encode() + bad + tail.encode()
    source = BytesSource(data)
    stream = TextStream(lambda: source, P, chunk_bytes=chunk)

    async def consume() -> None:
        for op in operations:
            if op == "next":
                await anext(stream, None)
            else:
                assert not isinstance(op, str)
                await stream.skip_lines(op)
        await stream.skip_lines(None)

    with tiny_blocks(check_block, 2), pytest.raises(FsError) as caught:
        anyio.run(consume)
    assert (str(caught.value), caught.value.code) == (INVALID, FsErrorCode.FS_NOT_TEXT)
    assert source.closed == 1


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", (0, False)),
        (BOM, (0, False)),
        (b"a", (0, True)),
        (b"a\n", (1, False)),
        (b"\n", (1, False)),
        (BOM + b"a\nb", (1, True)),
        (b"a\r\n\r\n", (2, False)),
    ],
)
def test_skipping_everything_counts_lines_as_the_read_window_does(
    data: bytes, expected: tuple[int, bool]
) -> None:
    async def skip_all() -> SkippedLines:
        return await TextStream(lambda: BytesSource(data), P, chunk_bytes=2).skip_lines()

    assert tuple(anyio.run(skip_all)) == expected


@pytest.mark.parametrize("how", ["next", "skip"])
@pytest.mark.parametrize(("nul_at", "fails"), [(0, True), (8191, True), (8192, False)])
def test_a_nul_byte_is_binary_only_within_the_first_8192_bytes(
    how: str, nul_at: int, fails: bool
) -> None:
    data = bytearray(b"x\n" * 6000)
    data[nul_at] = 0

    async def consume() -> None:
        stream = TextStream(lambda: BytesSource(bytes(data)), P, chunk_bytes=1000)
        if how == "next":
            async for _ in stream:
                pass
        else:
            await stream.skip_lines()

    if fails:
        with pytest.raises(FsError, match="binary file") as caught:
            anyio.run(consume)
        assert str(caught.value) == BINARY
    else:
        anyio.run(consume)


def test_the_source_is_opened_on_first_use_and_its_errors_come_from_there() -> None:
    opened: list[int] = []

    def open_source() -> BytesSource:
        opened.append(1)
        raise FsError('cannot read "/w/s.txt": not found', FsErrorCode.FS_NOT_FOUND)

    stream = TextStream(open_source, P)
    assert opened == []

    async def first_use() -> None:
        await stream.skip_lines(3)

    with pytest.raises(FsError, match="not found"):
        anyio.run(first_use)
    assert opened == [1]


def test_aclose_closes_the_source_once_and_ends_the_stream() -> None:
    source = BytesSource(b"a\nb\nc\n" * 100)

    async def main() -> None:
        stream = TextStream(lambda: source, P, chunk_bytes=16)
        assert await stream.skip_lines(2) == (2, False)
        await stream.aclose()
        await stream.aclose()
        assert [chunk async for chunk in stream] == []
        assert await stream.skip_lines(5) == (0, False)

    anyio.run(main)
    assert source.closed == 1


def test_a_stream_dropped_unfinished_closes_its_source() -> None:
    source = BytesSource(b"a\n" * 100)

    async def main() -> None:
        stream = TextStream(lambda: source, P, chunk_bytes=4)
        await stream.skip_lines(1)

    anyio.run(main)
    assert source.closed == 1


class BufferRecordingSource(BytesSource):
    """A :class:`BytesSource` that keeps the buffer each read went into."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.buffers: list[object] = []

    def readinto(self, buffer: memoryview) -> int:
        if not any(buffer.obj is seen for seen in self.buffers):
            self.buffers.append(buffer.obj)
        return super().readinto(buffer)


def opener(source: BytesSource) -> Callable[[], BytesSource]:
    return lambda: source


def test_open_streams_never_share_a_buffer_and_an_ended_ones_is_reused() -> None:
    """Five interleaved streams each read into their own buffer, so their texts stay
    apart; once they end, the next stream of that chunk size reads into one of theirs,
    and at most two spare buffers of a size are kept."""
    texts = [f"stream {n}\n" * 40 for n in range(5)]
    sources = [BufferRecordingSource(text.encode()) for text in texts]
    later = BufferRecordingSource(b"later\n")

    async def main() -> None:
        streams = [TextStream(opener(source), P, chunk_bytes=9) for source in sources]
        got: list[list[str]] = [[] for _ in streams]
        open_ = set(range(len(streams)))
        while open_:
            for n in sorted(open_):
                chunk = await anext(streams[n], None)
                if chunk is None:
                    open_.discard(n)
                else:
                    got[n].append(chunk)
        assert ["".join(chunks) for chunks in got] == texts
        assert [c async for c in TextStream(lambda: later, P, chunk_bytes=9)] == ["later\n"]

    anyio.run(main)
    used = [buffer for source in sources for buffer in source.buffers]
    assert len(used) == len(sources)  # one buffer per stream for all its chunks
    assert len({id(buffer) for buffer in used}) == len(sources)  # never shared while open
    assert len(later.buffers) == 1 and any(later.buffers[0] is buffer for buffer in used)
    assert len(streaming_module._SPARE_BUFFERS[9]) <= 2


def test_a_negative_count_is_refused() -> None:
    async def main() -> None:
        await TextStream(lambda: BytesSource(b""), P).skip_lines(-1)

    with pytest.raises(ValueError, match="non-negative"):
        anyio.run(main)


@pytest.mark.parametrize("opened_first", [False, True])
def test_a_cancelled_skip_propagates_and_ends_the_stream(opened_first: bool) -> None:
    source = BytesSource(b"a\n" * 1000)
    opened: list[BytesSource] = []

    def open_source() -> BytesSource:
        opened.append(source)
        return source

    async def main() -> None:
        stream = TextStream(open_source, P, chunk_bytes=8)
        if opened_first:
            assert await stream.skip_lines(1) == (1, False)
        with anyio.CancelScope() as scope:
            scope.cancel()
            await stream.skip_lines()
        assert scope.cancelled_caught
        assert [chunk async for chunk in stream] == []

    anyio.run(main)
    assert (len(opened), source.closed) == ((1, 1) if opened_first else (0, 0))


def test_text_stream_is_line_skipping() -> None:
    assert isinstance(TextStream(lambda: BytesSource(b""), P), SupportsSkipLines)


# --- StreamDecoder.check -------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    data=st.one_of(
        texts.map(str.encode),
        st.binary(max_size=40),
        st.tuples(texts, st.sampled_from(INVALID_TAILS), texts).map(
            lambda t: t[0].encode() + t[1] + t[2].encode()
        ),
    ),
    bom=st.booleans(),
    cuts=st.lists(st.integers(0, 60), max_size=6),
    checks=st.lists(st.booleans(), min_size=7, max_size=7),
    check_block=st.integers(1, 9),
)
def test_check_accepts_and_refuses_exactly_what_feeding_the_same_chunks_does(
    data: bytes, bom: bool, cuts: list[int], checks: list[bool], check_block: int
) -> None:
    data = (BOM if bom else b"") + data
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in itertools.pairwise([0, *points, len(data)])]

    def outcome(use_check: list[bool]) -> str | None:
        """The error message (``None``: accepted) and, when every chunk was fed, the text."""
        decoder = StreamDecoder(P)
        fed: list[str] = []
        try:
            for index, (chunk, check) in enumerate(zip(chunks, use_check, strict=False)):
                if check:
                    decoder.check(memoryview(chunk) if index % 2 else chunk)
                else:
                    fed.append(decoder.feed(chunk))
            fed.append(decoder.feed(b"", final=True))
        except FsError as exc:
            return f"error: {exc}"
        return "".join(fed) if not any(use_check) else None

    with patch.object(text_module, "CHECK_BLOCK_BYTES", check_block):
        checked, fed = outcome(checks), outcome([False] * len(checks))
    if checked is None:
        assert fed is not None and not fed.startswith("error: ")
    else:
        assert checked == fed
    if len(chunks) == 1 or chunks[0][:8192] == data[:8192]:
        try:
            whole = decode_text(data, "read", P)
        except FsError as exc:
            assert fed == f"error: {exc}"
        else:
            assert fed == whole
