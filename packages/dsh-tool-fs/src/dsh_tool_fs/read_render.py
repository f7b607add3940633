"""The read projections: the canonical value and the model's text of a :class:`ReadWindow`.

The window itself (which lines, the byte cap, the count) is built by
:mod:`dsh_tool_fs.read_window`; these are pure functions over it.
"""

from __future__ import annotations

from .envelope import render_envelope
from .read_window import ReadWindow

__all__ = ["read_footer", "read_value", "render_read"]


def read_footer(window: ReadWindow) -> str:
    """The footer line of a read (each case in docs/reference/results.md)."""
    end = window.end
    if window.capped:
        return (
            f"(Output capped. Showing lines {window.offset}-{end}. "
            f"Use offset={end + 1} to continue.)"
        )
    if end < window.total_lines:
        return (
            f"(Showing lines {window.offset}-{end} of {window.total_lines}. "
            f"Use offset={end + 1} to continue.)"
        )
    return f"(End of file - total {window.total_lines} lines)"


def render_read(display_path: str, window: ReadWindow) -> str:
    """The model projection of a read: the ``<path>``/``<type>``/``<content>`` envelope."""
    numbered = [f"{number}: {text}" for number, text in window.lines]
    return render_envelope(display_path, "file", numbered, read_footer(window))


def read_value(display_path: str, window: ReadWindow) -> dict[str, object]:
    """The canonical value of a read."""
    return {
        "path": display_path,
        "offset": window.offset,
        "lines": [{"number": number, "text": text} for number, text in window.lines],
        "totalLines": window.total_lines,
    }
