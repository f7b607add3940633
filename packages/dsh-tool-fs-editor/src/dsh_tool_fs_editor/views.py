"""What a ``view`` sees, for both tools: a window of a file's lines, or a directory's tree.

Seam calls, and nothing more: ``stat`` (absent: ``fs_observed`` with ``None``,
as the read tool does), then for a file one ``stream_text`` through the read
tool's :class:`~dsh_tool_fs.read_window.WindowBuilder` — memory bounded by the
view, whatever the file's size — and for a directory ``list_dir(stat=True)``
of it and of each non-hidden subdirectory (two levels, as ``find -maxdepth
2``). The caller emits ``fs_observed`` once it has accepted the window: a
view of a file is a read, any ``view_range`` included; a listing is not.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from dsh_fs import FsDirEntry, FsError, FsErrorCode, FsInfo, FsTarget
from dsh_fs.streaming import close_stream
from dsh_tool_fs import Execution
from dsh_tool_fs.read_window import ReadWindow, WindowBuilder

__all__ = ["TreeEntry", "clip_lines", "entry_of", "read_window", "walk_tree"]

_UTF8_MAX = 4
"""Bytes of one character at most: a byte cap of 4 × ``max_characters`` never stops a
window before its characters reach ``max_characters``."""


async def entry_of(ex: Execution, target: FsTarget) -> FsInfo:
    """The ``stat`` of ``target``; absent: observed as absent, then ``FS_NOT_FOUND``."""
    ex.step("stat")
    info = await ex.fs.stat(target)
    if info is None:
        ex.observed(target, None)  # the model has now seen that nothing is there
        raise FsError.cannot("view", target.display_path, "not found", FsErrorCode.FS_NOT_FOUND)
    return info


async def read_window(ex: Execution, target: FsTarget, start: int, end: int | None) -> ReadWindow:
    """Lines ``start``..``end`` (``None``: to the end) of the file, within the view's budget.

    Lines are counted as the read tool counts them (a trailing newline does
    not start a line, one trailing ``\\r`` is not shown); a line longer than
    ``editor_max_characters`` is cut with the read tool's suffix; the window
    stops early (``capped``) when its lines exceed the budget's bytes.
    """
    budget = ex.config.editor_max_characters
    limit = sys.maxsize if end is None else max(1, end - start + 1)
    builder = WindowBuilder(
        offset=start, limit=limit, max_line_length=budget, max_bytes=_UTF8_MAX * budget
    )
    ex.step("read")
    chunks = ex.fs.stream_text(target)
    try:
        async for chunk in chunks:
            builder.feed(chunk)
    except BaseException:
        await close_stream(chunks)  # shielded: the file is released even when cancelled
        raise
    await close_stream(chunks, shield=False)
    return builder.finish()


def clip_lines(
    lines: list[tuple[int, str]], budget: int, render: Callable[[int, str], str]
) -> tuple[list[str], int | None]:
    """The rendered lines that fit in ``budget`` characters, and the first line left out.

    Each line costs its rendered length plus its newline; the first line is
    always shown, so that every view makes progress. ``None``: nothing was
    left out.
    """
    shown: list[str] = []
    used = 0
    for number, text in lines:
        line = render(number, text)
        used += len(line) + 1
        if shown and used > budget:
            return shown, number
        shown.append(line)
    return shown, None


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One entry of a directory view: its path relative to the viewed directory."""

    relative: str
    directory: bool
    size: int
    """A file's size; a directory's is the total of the files listed beneath it."""


async def walk_tree(
    ex: Execution, target: FsTarget, *, skip: Callable[[str], bool], depth: int = 2
) -> list[TreeEntry]:
    """The entries up to ``depth`` levels beneath ``target``, depth first, by name.

    Names for which ``skip`` is true (hidden ones) are left out and not
    descended into; a link to a directory is listed but not descended into
    (``find`` without ``-L``); entries of other types are left out.
    """
    ex.step("list")
    children = await ex.fs.list_dir(target, stat=True)
    out: list[TreeEntry] = []
    for child in sorted(children, key=_order):
        if skip(child.name) or child.type not in ("file", "directory"):
            continue
        if child.type == "file":
            out.append(TreeEntry(child.name, False, child.size or 0))
            continue
        below: list[TreeEntry] = []
        if depth > 1 and not child.symlink:
            below = await walk_tree(ex, child.target, skip=skip, depth=depth - 1)
        size = sum(entry.size for entry in below if not entry.directory)
        out.append(TreeEntry(child.name, True, size))
        out += [TreeEntry(f"{child.name}/{e.relative}", e.directory, e.size) for e in below]
    return out


def _order(entry: FsDirEntry) -> tuple[str, str]:
    return (entry.name.casefold(), entry.name)
