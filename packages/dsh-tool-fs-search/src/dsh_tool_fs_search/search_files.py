"""Searching the candidate files' contents through the seam (the second half of ``grep``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
from dsh_fs import FsError, FsErrorCode
from dsh_tool_fs import Execution

from .grep_page import GrepPageBuilder
from .lines import LineMatcher
from .walk import Candidate, Deadline

__all__ = ["search_files"]


async def search_files(
    ex: Execution,
    files: list[Candidate],
    matcher: LineMatcher,
    page: GrepPageBuilder,
    deadline: Deadline,
) -> bool:
    """Feed ``page`` the matching lines of ``files``, in order; False when the deadline stopped it.

    A file smaller than ``read_stream_min_size`` is one ``read_text`` (one
    thread hop on the local backend); a larger one, or one of unknown size,
    is streamed (``stream_text``) in bounded memory. A file ``read`` refuses
    (binary, invalid UTF-8, gone, not permitted) is withdrawn from the page
    and the counts, even when the refusal comes after some of its matches.
    """
    stream_min = ex.config.read_stream_min_size
    for candidate in files:
        if deadline.expired:
            return False
        ex.step("grep")
        page.begin_file(candidate.path)
        try:
            if candidate.size is None or candidate.size >= stream_min:
                if not await _search_stream(ex, candidate, matcher, page, deadline):
                    page.discard_file()
                    return False
            else:
                for number, line in matcher.lines(await ex.fs.read_text(candidate.target)):
                    page.add(number, line)
        except FsError as exc:
            if exc.code is FsErrorCode.FS_ABORTED:
                raise
            page.discard_file()
            continue
        page.end_file()
    return True


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
