"""The ``grep`` page: matches in file order, paging, the byte cap, counts, projection.

:class:`GrepPageBuilder` is fed the files of a search in order (the seam
path and a native fast path alike); it keeps only the matches of the page
and counts the rest, so a search of a large tree holds the page plus two
integers, never the whole match list. A file may be withdrawn after its
matches were fed (:meth:`GrepPageBuilder.discard_file`: the file turned out
to be one ``read`` refuses), which restores the counts and the page as they
were before it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dsh_tool_fs.envelope import render_envelope
from dsh_tool_fs.names import quote_name
from dsh_tool_fs.paging import check_offset

from .glob_page import plural, stopped_footer
from .lines import MatchedLine

__all__ = [
    "CUT_BEFORE",
    "GrepMatch",
    "GrepPage",
    "GrepPageBuilder",
    "cut_suffix",
    "grep_footer",
    "grep_value",
    "render_grep",
]

CUT_BEFORE = "..."
"""Starts the shown text of a long line cut around its first match (text before is left out)."""


def cut_suffix(max_line_length: int) -> str:
    """Ends the shown text of a long line cut around its first match: ``...`` when text
    after it is left out, then this."""
    return f" (line truncated to {max_line_length} chars around the first match)"


@dataclass(frozen=True, slots=True)
class GrepMatch:
    """One shown match: the file's path (relative to the search), line number, shown text."""

    path: str
    number: int
    text: str


@dataclass(frozen=True, slots=True)
class GrepPage:
    """One page of matches and the counts of the whole search (or of what it searched)."""

    display_path: str
    offset: int
    matches: tuple[GrepMatch, ...]
    total_matches: int
    total_files: int
    capped: bool
    stopped: bool
    time_limit: int

    @property
    def end(self) -> int:
        """Number of the last match on the page, or ``offset - 1`` when empty."""
        return self.offset + len(self.matches) - 1


class GrepPageBuilder:
    """Collect the page of a search from its matches, fed file by file in order.

    A match's shown text is its line; a line longer than ``max_line_length``
    characters is cut to that many: its start with read's suffix when the
    first match ends within it, else the characters around the first match
    (centred on it; a match longer than the cut starts it), marked as cut
    on both sides — ``...<text>... (line truncated to <n> chars around the
    first match)``, without the second ``...`` when the text reaches the
    line's end. The page holds at most ``max_matches`` matches and at
    most ``max_bytes`` bytes of content (each shown line and file heading
    with its newline, and the blank lines between files); the first match of
    the page is always shown, so every call makes progress.
    """

    def __init__(
        self, *, offset: int, max_matches: int, max_line_length: int, max_bytes: int
    ) -> None:
        self.offset = offset
        self._max_matches = max_matches
        self._max_line_length = max_line_length
        self._max_bytes = max_bytes
        self._suffix = f"... (line truncated to {max_line_length} chars)"
        self._matches: list[GrepMatch] = []
        self._used = 0
        self.capped = False
        self.total_matches = 0
        self.total_files = 0
        self._path = ""
        self._file_matches = 0
        self._saved = (0, 0, 0, False)

    @property
    def full(self) -> bool:
        """Whether no further match can join the page (later ones are only counted)."""
        return self.capped or len(self._matches) >= self._max_matches

    def begin_file(self, path: str) -> None:
        """The next file's matches follow (``path`` relative to the searched directory)."""
        self._path = path
        self._file_matches = 0
        self._saved = (self.total_matches, len(self._matches), self._used, self.capped)

    def add(self, matched: MatchedLine) -> None:
        """A line of the current file matches (its number, UTF-8 text and first match)."""
        self.total_matches += 1
        self._file_matches += 1
        if self.total_matches < self.offset or self.full:
            return
        number = matched.number
        text = self._shown(matched)
        cost = len(f"{number}: ".encode()) + len(text.encode("utf-8", "surrogatepass")) + 1
        if not self._matches or self._matches[-1].path != self._path:  # a new heading
            cost += len(quote_name(self._path).encode("utf-8", "surrogatepass")) + 1
            if self._matches:
                cost += 1  # the blank line between two files
        if self._matches and self._used + cost > self._max_bytes:
            self.capped = True
            return
        self._used += cost
        self._matches.append(GrepMatch(self._path, number, text))

    def add_counted(self, count: int) -> None:
        """``count`` more lines of the current file match, all past a full page (only
        counted: call it only when :attr:`full`)."""
        self.total_matches += count
        self._file_matches += count

    def end_file(self) -> None:
        """The current file is done; it counts when it matched."""
        if self._file_matches:
            self.total_files += 1
        self._file_matches = 0

    def discard_file(self) -> None:
        """Withdraw the current file: the page and counts are as before :meth:`begin_file`."""
        self.total_matches, kept, self._used, self.capped = self._saved
        del self._matches[kept:]
        self._file_matches = 0

    def finish(self, display_path: str, *, stopped: bool, time_limit: int) -> GrepPage:
        """The page; ``offset`` past the last match raises ``FS_NOT_FOUND``.

        ``offset <offset> is out of range for "<p>" (<m> matches)``, as list's
        and read's; ``offset`` 1 with no match is the empty page ``(No matches)``.
        """
        total = self.total_matches
        check_offset(self.offset, total, display_path, plural(total, "match", "matches"))
        return GrepPage(
            display_path=display_path,
            offset=self.offset,
            matches=tuple(self._matches),
            total_matches=total,
            total_files=self.total_files,
            capped=self.capped,
            stopped=stopped,
            time_limit=time_limit,
        )

    def _shown(self, matched: MatchedLine) -> str:
        """The shown text of a matching line (see the class); only a few times
        ``max_line_length`` bytes around the match are decoded, whatever the line's length
        (a streamed line may hold 8 MiB)."""
        line, limit = matched.line, self._max_line_length
        head = line[: 4 * (limit + 1)]
        text = head.decode("utf-8", "ignore")  # only a character cut at the end is dropped
        if len(text) <= limit and len(head) == len(line):
            return text
        # A match ending past the head's bytes ends past `limit` characters (≤ 4 bytes each).
        if matched.end <= len(head) and len(head[: matched.end].decode("utf-8", "ignore")) <= limit:
            return text[:limit] + self._suffix
        span = 4 * (limit + 1)  # bytes that hold `limit` characters, even cut at an edge
        low = max(0, matched.start - span)
        # "ignore": a character cut at a slice's edge (or where a streamed line was bounded)
        before = line[low : matched.start].decode("utf-8", "ignore")
        inside = line[matched.start : min(matched.end, matched.start + span)].decode(
            "utf-8", "ignore"
        )
        if len(inside) >= limit:  # a match longer than the cut starts it
            if matched.start == 0:
                return inside[:limit] + self._suffix
            more = matched.start + len(inside[:limit].encode()) < len(line)
            return CUT_BEFORE + inside[:limit] + ("..." if more else "") + cut_suffix(limit)
        high = min(len(line), matched.end + span)
        after = line[matched.end : high].decode("utf-8", "ignore")
        room = limit - len(inside)
        take_before = max(room // 2, room - len(after))  # centred; more before at the end
        if take_before >= len(before) and low == 0:
            return (before + inside + after)[:limit] + self._suffix  # the line's start
        take_after = room - take_before
        shown = before[len(before) - take_before :] + inside + after[:take_after]
        more = take_after < len(after) or high < len(line)
        return CUT_BEFORE + shown + ("..." if more else "") + cut_suffix(limit)


def grep_footer(page: GrepPage) -> str:
    """The footer line of a grep page (the time limit's, when it stopped the search)."""
    if page.stopped:
        return stopped_footer(page.time_limit)
    m, f = page.total_matches, page.total_files
    if m == 0:
        return "(No matches)"
    counts = f"{plural(m, 'match', 'matches')} in {plural(f, 'file', 'files')}"
    end = page.end
    if page.offset == 1 and end >= m:
        return f"({counts})"
    of = f"matches {page.offset}-{end} of {m} in {plural(f, 'file', 'files')}"
    if page.capped:
        return f"(Output capped. Showing {of}. Use offset={end + 1} to continue.)"
    if end < m:
        return f"(Showing {of}. Use offset={end + 1} to continue.)"
    return f"(Showing {of}.)"


def render_grep(page: GrepPage) -> str:
    """The model projection: file headings, ``<n>: <line>`` lines, a blank line between files."""
    lines: list[str] = []
    current = None
    for match in page.matches:
        if match.path != current:
            if current is not None:
                lines.append("")
            lines.append(quote_name(match.path))
            current = match.path
        lines.append(f"{match.number}: {match.text}")
    return render_envelope(page.display_path, "grep", lines, grep_footer(page))


def grep_value(page: GrepPage) -> dict[str, object]:
    """The canonical value of a grep page."""
    return {
        "path": page.display_path,
        "offset": page.offset,
        "matches": [{"path": m.path, "line": m.number, "text": m.text} for m in page.matches],
        "totalMatches": page.total_matches,
        "totalFiles": page.total_files,
        "capped": page.capped,
        "stopped": page.stopped,
    }
