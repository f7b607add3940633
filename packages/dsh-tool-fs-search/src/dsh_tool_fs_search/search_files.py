"""Searching the candidate files' contents through the seam (the second half of ``grep``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from dsh_fs import FsError, FsErrorCode
from dsh_fs.streaming import close_stream
from dsh_tool_fs import Execution

from .grep_page import GrepPageBuilder
from .lines import LineMatcher
from .walk import Candidate, Deadline

__all__ = ["BYTES_AT_ONCE", "FILES_AT_ONCE", "search_files"]

FILES_AT_ONCE = 64
"""The most whole files one ``read_texts`` reads (why 64: docs/maintaining/benchmarks.md,
G2)."""
BYTES_AT_ONCE = 8 << 20
"""The most bytes of text one ``read_texts`` holds; a file listed larger is streamed."""


async def search_files(
    ex: Execution,
    files: list[Candidate],
    matcher: LineMatcher,
    page: GrepPageBuilder,
    deadline: Deadline,
) -> bool:
    """Feed ``page`` the matching lines of ``files``, in order; False when the deadline stopped it.

    Files listed smaller than ``read_stream_min_size`` (and than
    :data:`BYTES_AT_ONCE`) are read whole, up to :data:`FILES_AT_ONCE` of them
    with one ``read_texts`` that holds at most :data:`BYTES_AT_ONCE` bytes; a
    larger one, one of unknown size, or one that has grown past what the
    ``read_texts`` could hold since it was listed, is streamed
    (``stream_text``) in bounded memory. A file ``read`` refuses
    (binary, invalid UTF-8, gone, not permitted) is withdrawn from the page
    and the counts, even when the refusal comes after some of its matches.
    """
    limit = min(ex.config.read_stream_min_size, BYTES_AT_ONCE + 1)

    def streamed(candidate: Candidate) -> bool:
        return candidate.size is None or candidate.size >= limit

    at = 0
    while at < len(files):
        if deadline.expired:
            return False
        ex.step("grep")
        await ex.advance(
            0, remaining=len(files) - at, message=f"{at} of {len(files)} files searched"
        )
        first = files[at]
        if streamed(first):
            at += 1
            if not await _search_streamed(ex, first, matcher, page, deadline):
                return False
            await ex.advance(1)
            continue
        batch = _batch(files, at, streamed)
        at += len(batch)
        targets = [candidate.target for candidate in batch]
        texts = await ex.fs.read_texts(targets, max_bytes=BYTES_AT_ONCE)
        for candidate, text in zip(batch, texts, strict=True):
            if isinstance(text, FsError) and text.code is FsErrorCode.FS_TOO_LARGE:
                # Grown since it was listed: streamed, in its place.
                if not await _search_streamed(ex, candidate, matcher, page, deadline):
                    return False
                continue
            if isinstance(text, FsError):  # refused before any match: nothing to withdraw
                if text.code is FsErrorCode.FS_ABORTED:
                    raise text
                continue
            page.begin_file(candidate.path)
            if page.full:  # the lines are only counted from here on
                page.add_counted(matcher.count_lines(text))
            else:
                for matched in matcher.lines(text):
                    page.add(matched)
            page.end_file()
        await ex.advance(len(batch))
    return True


def _batch(
    files: list[Candidate], at: int, streamed: Callable[[Candidate], bool]
) -> list[Candidate]:
    """The files one ``read_texts`` reads from ``at``: up to :data:`FILES_AT_ONCE`, listed at
    most :data:`BYTES_AT_ONCE` together, none streamed."""
    batch = [files[at]]
    size = files[at].size or 0
    for candidate in files[at + 1 : at + FILES_AT_ONCE]:
        if streamed(candidate) or size + (candidate.size or 0) > BYTES_AT_ONCE:
            break
        batch.append(candidate)
        size += candidate.size or 0
    return batch


async def _search_streamed(
    ex: Execution,
    candidate: Candidate,
    matcher: LineMatcher,
    page: GrepPageBuilder,
    deadline: Deadline,
) -> bool:
    """Search one file streamed, as a group of the page (withdrawn if ``read`` refuses it);
    False when the deadline passed before its end (then nothing of it is kept)."""
    page.begin_file(candidate.path)
    chunks: AsyncIterator[str] = ex.fs.stream_text(candidate.target)
    scanner = matcher.scanner()
    try:
        async for chunk in chunks:
            for matched in scanner.feed(chunk):
                page.add(matched)
            if deadline.expired:
                page.discard_file()
                return False
        for matched in scanner.finish():
            page.add(matched)
    except FsError as exc:
        if exc.code is FsErrorCode.FS_ABORTED:
            raise
        page.discard_file()
        return True
    finally:
        await close_stream(chunks)
    page.end_file()
    return True
