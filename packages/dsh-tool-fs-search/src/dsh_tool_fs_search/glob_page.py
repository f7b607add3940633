"""The ``glob`` page: paging the ordered files, the byte cap, the footers, projection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dsh_tool_fs.envelope import render_envelope
from dsh_tool_fs.names import quote_name
from dsh_tool_fs.paging import check_offset

__all__ = [
    "GlobPage",
    "build_glob_page",
    "glob_footer",
    "glob_value",
    "plural",
    "render_glob",
    "stopped_footer",
]


def plural(n: int, one: str, many: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{n} {one if n == 1 else many}"


def stopped_footer(seconds: int) -> str:
    """The footer of a search the time limit stopped (``glob`` and ``grep`` alike)."""
    return (
        f"(Search stopped after {seconds} s: showing what was found in the files searched "
        "so far. Narrow path or pattern.)"
    )


@dataclass(frozen=True, slots=True)
class GlobPage:
    """One page of the ordered files of a glob and how many there are."""

    display_path: str
    offset: int
    files: tuple[str, ...]
    total: int
    stopped: bool
    time_limit: int

    @property
    def end(self) -> int:
        """Number of the last file on the page, or ``offset - 1`` when empty."""
        return self.offset + len(self.files) - 1


def build_glob_page(
    paths: Sequence[str],
    *,
    display_path: str,
    offset: int,
    max_results: int,
    max_bytes: int,
    stopped: bool,
    time_limit: int,
    total: int | None = None,
) -> GlobPage:
    """The page of ``paths`` (already in order) starting at ``offset`` (1-based).

    ``paths`` may stop after the page when ``total`` counts all the files
    (a search orders only what the page can show). At most ``max_results``
    paths and ``max_bytes`` bytes (each shown path with its newline; the
    first path always). ``offset`` past the last file raises
    ``FS_NOT_FOUND`` ``offset <offset> is out of range for "<p>" (<n>
    files)``; ``offset`` 1 with no file is the page ``(No files found)``.
    """
    if total is None:
        total = len(paths)
    check_offset(offset, total, display_path, plural(total, "file", "files"))
    page: list[str] = []
    used = 0
    for path in paths[offset - 1 : offset - 1 + max_results]:
        cost = len(quote_name(path).encode("utf-8", "surrogatepass")) + 1
        if page and used + cost > max_bytes:
            break
        used += cost
        page.append(path)
    return GlobPage(display_path, offset, tuple(page), total, stopped, time_limit)


def glob_footer(page: GlobPage) -> str:
    """The footer line of a glob page (the time limit's, when it stopped the walk)."""
    if page.stopped:
        return stopped_footer(page.time_limit)
    if page.total == 0:
        return "(No files found)"
    end = page.end
    if page.offset == 1 and end >= page.total:
        return f"({plural(page.total, 'file', 'files')})"
    head = f"(Showing files {page.offset}-{end} of {page.total}."
    if end < page.total:
        return f"{head} Use offset={end + 1} to continue.)"
    return f"{head})"


def render_glob(page: GlobPage) -> str:
    """The model projection: one path per line (the name rule), a blank line, the footer."""
    return render_envelope(
        page.display_path, "glob", list(map(quote_name, page.files)), glob_footer(page)
    )


def glob_value(page: GlobPage) -> dict[str, object]:
    """The canonical value of a glob page."""
    return {
        "path": page.display_path,
        "offset": page.offset,
        "files": list(page.files),
        "totalFiles": page.total,
        "stopped": page.stopped,
    }
