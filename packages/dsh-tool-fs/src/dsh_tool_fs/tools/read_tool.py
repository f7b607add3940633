"""The ``read`` tool: a window of numbered lines of one UTF-8 text file.

Seam calls, and nothing more: ``resolve``, one ``stat``, then ``stream_text``
— for every file, whatever its size — and ``fs_observed`` with the ``stat``
version once the window is built; a ``stat`` that finds nothing emits
``fs_observed`` with ``None`` (the model has seen the file absent) before
failing ``not found``.

Why always a stream: the size ``stat`` saw says nothing about the size the
read will meet, since another process may grow the file in between. A stream
holds one chunk at a time whatever the file has become, so no read allocates
more than a chunk plus the window; a file smaller than one chunk still costs
one read. ``read_text`` stays on the seam for direct callers.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, cast

from dsh_fs import FsError, FsErrorCode
from dsh_fs.streaming import SupportsSkipLines, close_stream
from pydantic import Field

from ..arguments import FilePath, Integer, Setting, ToolArguments
from ..config import ToolFsConfig
from ..definitions import PromptSection, ToolAnnotations
from ..execution import Execution
from ..paging import check_offset
from ..read_render import read_value, render_read
from ..read_window import ReadWindow, WindowBuilder
from ..spec import ToolOutput, ToolSpec


class ReadArgs(ToolArguments):
    """The arguments of ``read``."""

    file_path: FilePath = Field(
        description="File to read, absolute or relative to the session workspace.",
    )
    offset: Integer = Field(
        default=1,
        ge=1,
        description="1-based number of the first line to return. Defaults to 1.",
    )
    limit: Annotated[
        Integer, Setting("read_limit", "Most lines to return (at most {read_limit}).")
    ] = Field(default=ToolFsConfig().read_limit, ge=1)


@dataclass(frozen=True, slots=True)
class WindowRead:
    display_path: str
    window: ReadWindow


async def run_read(ex: Execution, args: ReadArgs) -> WindowRead:
    target = await ex.resolve(args.file_path)
    p = target.display_path
    ex.step("stat")
    info = await ex.fs.stat(target)
    if info is None:
        ex.observed(target, None)  # the model has now seen that the file does not exist
        raise FsError.cannot("read", p, "not found", FsErrorCode.FS_NOT_FOUND)
    if info.type != "file":
        raise FsError.cannot("read", p, "not a regular file", FsErrorCode.FS_NOT_REGULAR_FILE)
    cfg = ex.config
    builder = WindowBuilder(
        offset=args.offset,
        limit=args.limit,
        max_line_length=cfg.read_max_line_length,
        max_bytes=cfg.read_max_bytes,
    )
    ex.step("read")
    chunks = ex.fs.stream_text(target)
    try:
        await _feed(builder, chunks)
    except BaseException:
        await close_stream(chunks)  # shielded: the file is released even when cancelled
        raise
    await close_stream(chunks, shield=False)  # read to its end: nothing left to wait for
    window = builder.finish()
    check_offset(window.offset, window.total_lines, p, f"{window.total_lines} lines")
    ex.observed(target, info.version)
    return WindowRead(p, window)


async def _feed(builder: WindowBuilder, chunks: AsyncIterator[str]) -> None:
    """Feed the file to the window, letting the stream pass over counted-only lines.

    When the stream can skip lines (:class:`dsh_fs.streaming.SupportsSkipLines`),
    the lines the window only counts — before ``offset``, the rest of an
    over-long line, everything after the window — are passed over by the
    backend without being decoded into text: a 100 MB file costs a newline
    count, not a decode. The window is the same either way.
    """
    skipper = cast(SupportsSkipLines, chunks) if _skips_lines(type(chunks)) else None
    while True:
        if skipper is not None:
            wanted = builder.countable_lines()
            if wanted != 0:
                newlines, partial = await skipper.skip_lines(wanted)
                builder.skipped(newlines, partial)
                if wanted is None or newlines < wanted:
                    return  # the end of the text
                continue
        chunk = await anext(chunks, None)
        if chunk is None:
            return
        builder.feed(chunk)


@functools.cache
def _skips_lines(stream_type: type) -> bool:
    """``isinstance(stream, SupportsSkipLines)``, asked once per stream type: Python 3.11
    lists a protocol's members on every such check, a cost the read of a small file felt."""
    return issubclass(stream_type, SupportsSkipLines)


def render(args: ReadArgs, read: WindowRead) -> ToolOutput:
    return ToolOutput(
        render_read(read.display_path, read.window), read_value(read.display_path, read.window)
    )


READ = ToolSpec(
    name="read",
    title="Read file",
    arguments=ReadArgs,
    description=(
        "Read a UTF-8 text file. Returns its lines with line numbers and a footer that "
        "says whether the file continues. offset is the 1-based first line; limit is the "
        "most lines returned (default and maximum {read_limit}). Very long lines are "
        "truncated and large outputs are capped; continue with the offset the footer names."
    ),
    prompt=PromptSection(
        "tool:read",
        100,
        "Use the read tool — not shell commands like cat — to inspect text files. Results "
        "include line numbers. Use offset and limit to continue reading large files.",
    ),
    annotations=ToolAnnotations(read_only=True),
    concurrency_safe=True,
    body=run_read,
    render=render,
)
