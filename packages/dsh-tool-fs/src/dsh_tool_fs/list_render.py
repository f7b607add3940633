"""The list page: its order, its canonical value and its model projection.

Entries are ordered directories, then files, then other; within a group by
``(name.casefold(), name)`` — deterministic on every machine and locale. The
page is a slice of that order; the counts always describe the whole
directory.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter

from dsh_fs import FsDirEntry

from .envelope import render_envelope
from .names import quote_name
from .paging import check_offset

__all__ = [
    "ListPage",
    "build_list_page",
    "list_footer",
    "list_value",
    "order_entries",
    "render_list",
]

_GROUP_RANK = {"directory": 0, "file": 1, "other": 2}
_TYPE_MARK = {"directory": "/", "file": "", "other": "@"}
# The group order happens to be the alphabetical order of the type names, so
# the group sort can use the C-level ``attrgetter("type")`` as its key.
assert sorted(_GROUP_RANK) == list(_GROUP_RANK)

_by_name = attrgetter("name")
_by_type = attrgetter("type")


def _by_folded_name(entry: FsDirEntry) -> str:
    return entry.name.casefold()


def order_entries(entries: Iterable[FsDirEntry]) -> list[FsDirEntry]:
    """Directories, then files, then other; each group by ``(casefold, name)``.

    Three stable sorts with simple keys (name, then folded name, then group)
    give the order of the key ``(group, name.casefold(), name)`` at about half
    the cost of sorting on tuples — it matters for directories of tens of
    thousands of entries.
    """
    ordered = sorted(entries, key=_by_name)
    ordered.sort(key=_by_folded_name)
    ordered.sort(key=_by_type)
    return ordered


@dataclass(frozen=True, slots=True)
class ListPage:
    """One page of an ordered directory listing and the whole directory's counts."""

    display_path: str
    offset: int
    entries: tuple[FsDirEntry, ...]
    total: int
    directories: int
    files: int
    other: int

    @property
    def end(self) -> int:
        """Number of the last entry on the page, or ``offset - 1`` when empty."""
        return self.offset + len(self.entries) - 1


def _leading(entries: list[FsDirEntry], count: int) -> list[FsDirEntry]:
    """The first ``count`` entries in the order of :func:`order_entries`, without sorting all.

    ``heapq.nsmallest`` over keys built by C-level ``map``/``zip``; the
    position breaks ties exactly as the stable sorts do. For the first page
    of a directory of 21,000 entries the whole page costs ≈ 8 ms instead of ≈ 12 ms.
    """
    names = list(map(_by_name, entries))
    folded = map(str.casefold, names)
    keys = zip(map(_by_type, entries), folded, names, range(len(entries)), strict=True)
    return [entries[key[3]] for key in heapq.nsmallest(count, keys)]


def build_list_page(
    entries: Iterable[FsDirEntry], *, display_path: str, offset: int, max_entries: int
) -> ListPage:
    """Order the directory, count it, and cut the page starting at ``offset`` (1-based).

    ``offset`` past the last entry raises ``FS_NOT_FOUND``
    ``offset <offset> is out of range for "<p>" (<total> entries)``
    (:func:`~dsh_tool_fs.paging.check_offset`); ``offset`` 1 on an empty
    directory is an empty page.
    """
    if offset < 1 or max_entries < 1:
        raise ValueError("offset and max_entries must be positive integers")
    listed = list(entries)
    total = len(listed)
    check_offset(offset, total, display_path, f"{total} entries")
    end = offset - 1 + max_entries
    if end * 4 < total:  # a page near the start of a large directory
        page = _leading(listed, end)[offset - 1 :]
    else:
        page = order_entries(listed)[offset - 1 : end]
    counts = Counter(map(_by_type, listed))
    directories, files = counts["directory"], counts["file"]
    return ListPage(
        display_path=display_path,
        offset=offset,
        entries=tuple(page),
        total=total,
        directories=directories,
        files=files,
        other=total - directories - files,
    )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _composition(page: ListPage) -> str:
    text = (
        f"{_count(page.directories, 'directory', 'directories')}, "
        f"{_count(page.files, 'file', 'files')}"
    )
    if page.other > 0:
        text += f", {page.other} other"
    return text


def list_footer(page: ListPage) -> str:
    """The footer line of a list page (each case in docs/reference/results.md)."""
    if page.total == 0:
        return "(Empty directory)"
    composition = _composition(page)
    end = page.end
    if page.offset == 1 and end >= page.total:
        return f"({_count(page.total, 'entry', 'entries')}: {composition})"
    head = f"(Showing entries {page.offset}-{end} of {page.total}: {composition}."
    if end < page.total:
        return f"{head} Use offset={end + 1} to continue.)"
    return f"{head})"


def render_list(page: ListPage) -> str:
    """The model projection of a list page: the ``<path>``/``<type>``/``<content>`` envelope."""
    names = [quote_name(e.name) + _TYPE_MARK[e.type] for e in page.entries]
    return render_envelope(page.display_path, "directory", names, list_footer(page))


def list_value(page: ListPage) -> dict[str, object]:
    """The canonical value of a list page; counts describe the whole directory."""
    return {
        "path": page.display_path,
        "offset": page.offset,
        "entries": [{"name": e.name, "type": e.type} for e in page.entries],
        "totalEntries": page.total,
        "counts": {
            "directories": page.directories,
            "files": page.files,
            "other": page.other,
        },
    }
