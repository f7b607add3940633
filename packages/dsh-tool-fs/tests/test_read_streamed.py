"""A streamed read gives exactly the whole-text read, also when the stream skips lines.

The read tool streams every file and, when the backend's stream offers
``skip_lines`` (``dsh_fs.streaming.SupportsSkipLines``), passes over the lines it
only counts. These tests run the same read both ways on ``MemoryFileSystem`` —
its own stream with tiny chunks, and the whole text as one chunk without
``skip_lines`` — so every boundary (a window start, an over-long line or a
``\\r\\n`` split across chunks) is crossed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from unittest.mock import patch

import anyio
import pytest
from dsh_fs import FsTarget
from dsh_fs import streaming as streaming_module
from dsh_fs import text as text_module
from dsh_fs.streaming import SkippedLines, SupportsSkipLines, TextStream
from dsh_fs.testing import ForwardingFileSystem
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_memory import _memory as memory_module
from dsh_tool_fs import ToolFs, ToolResult
from hypothesis import given, settings
from hypothesis import strategies as st

pieces = st.sampled_from(["a", "bc", "é", "語", "\U0001d11e", "\n", "\n", "\r\n", "\r", "x" * 9])
texts = st.lists(pieces, max_size=40).map("".join)


class WholeText(ForwardingFileSystem[MemoryFileSystem]):
    """The same files, each streamed as one chunk: its whole text, without ``skip_lines``."""

    async def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        yield await self.inner.read_text(target)


async def read_both_ways(
    text: str, args: dict[str, Any], config: dict[str, int]
) -> tuple[ToolResult, ToolResult]:
    fs = MemoryFileSystem(cwd="/w", files={"f.txt": text.encode()})
    whole = ToolFs(WholeText(fs), config=config)
    streamed = ToolFs(fs, config=config)
    return (
        await whole.execute("read", {"file_path": "f.txt", **args}),
        await streamed.execute("read", {"file_path": "f.txt", **args}),
    )


@settings(max_examples=300, deadline=None)
@given(
    text=texts,
    offset=st.integers(1, 12),
    limit=st.integers(1, 6),
    max_line_length=st.integers(1, 6),
    max_bytes=st.integers(1, 40),
    chunk=st.integers(1, 9),
    few_lines=st.sampled_from([0, 1, 8]),
)
def test_a_streamed_read_equals_the_whole_text_read(
    text: str,
    offset: int,
    limit: int,
    max_line_length: int,
    max_bytes: int,
    chunk: int,
    few_lines: int,
) -> None:
    config = {"read_max_line_length": max_line_length, "read_max_bytes": max_bytes}
    args = {"offset": offset, "limit": limit}
    with (
        patch.object(memory_module, "STREAM_CHUNK_BYTES", chunk),
        patch.object(streaming_module, "_FEW_LINES", few_lines),
        patch.object(text_module, "CHECK_BLOCK_BYTES", 3),
    ):
        whole, streamed = anyio.run(read_both_ways, text, args, config)
    assert (streamed.is_error, streamed.text, streamed.value) == (
        whole.is_error,
        whole.text,
        whole.value,
    )


class CountingMemory(MemoryFileSystem):
    """The memory backend, counting what the read tool takes from its streams."""

    def __init__(self, files: dict[str, bytes]) -> None:
        super().__init__(cwd="/w", files=files)
        self.chunks = 0
        self.skips: list[tuple[int | None, SkippedLines]] = []

    def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        inner = super().stream_text(target)
        assert isinstance(inner, TextStream)
        return CountingStream(inner, self)


class CountingStream(SupportsSkipLines):
    def __init__(self, inner: TextStream, owner: CountingMemory) -> None:
        self.inner = inner
        self.owner = owner

    def __aiter__(self) -> CountingStream:
        return self

    async def __anext__(self) -> str:
        chunk = await self.inner.__anext__()
        self.owner.chunks += 1
        return chunk

    async def skip_lines(self, count: int | None = None) -> SkippedLines:
        skipped = await self.inner.skip_lines(count)
        self.owner.skips.append((count, skipped))
        return skipped

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("args", "counts"), [({}, [None]), ({"offset": 90_001, "limit": 10}, [90_000, None])]
)
async def test_the_read_tool_skips_the_lines_it_only_counts(
    args: dict[str, int], counts: list[int | None]
) -> None:
    fs = CountingMemory({"big.txt": b"".join(b"line %d\n" % n for n in range(1, 100_001))})
    tool = ToolFs(fs)
    result = await tool.execute("read", {"file_path": "big.txt", **args})
    assert result.value is not None and result.value["totalLines"] == 100_000
    assert [count for count, _ in fs.skips] == counts
    assert all(not skipped.partial for _, skipped in fs.skips)
    assert fs.chunks == 1  # one 64 KiB chunk of text holds the whole window


@pytest.mark.anyio
async def test_the_rest_of_an_over_long_line_is_skipped_not_decoded() -> None:
    fs = CountingMemory({"long.txt": b"x" * 1_000_000 + b"\nshort\n"})
    tool = ToolFs(fs)
    result = await tool.execute("read", {"file_path": "long.txt"})
    assert result.value is not None and result.value["totalLines"] == 2
    assert result.value["lines"][1] == {"number": 2, "text": "short"}
    assert [count for count, _ in fs.skips] == [1]
    assert fs.chunks == 2  # the head of the long line, then the text after it
