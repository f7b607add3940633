"""Searching the candidate files' contents through the seam (the second half of ``grep``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import anyio
from dsh_fs import FsError, FsErrorCode
from dsh_tool_fs import Execution

from .grep_page import GrepPageBuilder
from .lines import LineMatcher
from .walk import Candidate, Deadline

__all__ = ["BYTES_AT_ONCE", "FILES_AT_ONCE", "search_files"]

FILES_AT_ONCE = 64
"""The most whole files one ``read_texts`` reads (why 64: docs/maintaining/benchmarks.md,
G2)."""
BYTES_AT_ONCE = 8 << 20
"""The most bytes of text one ``read_texts`` holds (a file below ``read_stream_min_size``
may exceed it alone)."""


async def search_files(
    ex: Execution,
    files: list[Candidate],
    matcher: LineMatcher,
    page: GrepPageBuilder,
    deadline: Deadline,
) -> bool:
    """Feed ``page`` the matching lines of ``files``, in order; False when the deadline stopped it.

    Files smaller than ``read_stream_min_size`` are read whole, up to
    :data:`FILES_AT_ONCE` of them with one ``read_texts``; a larger one, or one
    of unknown size, is streamed
    (``stream_text``) in bounded memory. A file ``read`` refuses
    (binary, invalid UTF-8, gone, not permitted) is withdrawn from the page
    and the counts, even when the refusal comes after some of its matches.
    """
    stream_min = ex.config.read_stream_min_size

    def streamed(candidate: Candidate) -> bool:
        return candidate.size is None or candidate.size >= stream_min

    at = 0
    while at < len(files):
        if deadline.expired:
            return False
        ex.step("grep")
        first = files[at]
        if streamed(first):
            at += 1
            page.begin_file(first.path)
            try:
                complete = await _search_stream(ex, first, matcher, page, deadline)
            except FsError as exc:
                if exc.code is FsErrorCode.FS_ABORTED:
                    raise
                page.discard_file()
                continue
            if not complete:
                page.discard_file()
                return False
            page.end_file()
            continue
        batch = _batch(files, at, streamed)
        at += len(batch)
        texts = await ex.fs.read_texts([candidate.target for candidate in batch])
        for candidate, text in zip(batch, texts, strict=True):
            page.begin_file(candidate.path)
            if isinstance(text, FsError):
                if text.code is FsErrorCode.FS_ABORTED:
                    raise text
                page.discard_file()
                continue
            for number, line in matcher.lines(text):
                page.add(number, line)
            page.end_file()
    return True


def _batch(
    files: list[Candidate], at: int, streamed: Callable[[Candidate], bool]
) -> list[Candidate]:
    """The files one ``read_texts`` reads from ``at``: up to :data:`FILES_AT_ONCE`, at most
    :data:`BYTES_AT_ONCE` together (the first one whatever its size), none streamed."""
    batch = [files[at]]
    size = files[at].size or 0
    for candidate in files[at + 1 : at + FILES_AT_ONCE]:
        if streamed(candidate) or size + (candidate.size or 0) > BYTES_AT_ONCE:
            break
        batch.append(candidate)
        size += candidate.size or 0
    return batch


async def _search_stream(
    ex: Execution,
    candidate: Candidate,
    matcher: LineMatcher,
    page: GrepPageBuilder,
    deadline: Deadline,
) -> bool:
    """Scan one streamed file; False when the deadline passed before its end."""
    chunks: AsyncIterator[str] = ex.fs.stream_text(candidate.target)
    scanner = matcher.scanner()
    try:
        async for chunk in chunks:
            for number, line in scanner.feed(chunk):
                page.add(number, line)
            if deadline.expired:
                return False
        for number, line in scanner.finish():
            page.add(number, line)
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            with anyio.CancelScope(shield=True):  # release the file even when cancelled
                await aclose()
    return True
