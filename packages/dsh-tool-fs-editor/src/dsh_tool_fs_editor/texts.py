"""The words of both tools: pure functions from what a command did to what the model reads.

The texts are Anthropic's — the text editor's from its published reference
implementation (``computer-use-demo``'s ``edit.py``), the memory tool's from
its documentation — with our own words only where theirs say nothing (the
note of a clipped view, the policy's refusals).
"""

from __future__ import annotations

from collections.abc import Sequence

from dsh_tool_fs.names import quote_name

__all__ = [
    "CLIPPED",
    "clipped_note",
    "human_size",
    "lines_of",
    "numbered",
    "shown",
    "snippet",
]

CLIPPED = (
    "<response clipped><NOTE>To save on context only part of this {what} has been shown to you."
)
"""The start of the note of a clipped view, in the reference implementation's words."""


def shown(path: str) -> str:
    """A path as the model wrote it, in the name rule of the other tools (a control
    character, a backslash or ``</`` makes it a JSON string literal)."""
    return quote_name(path)


def numbered(number: int, text: str) -> str:
    """One line as ``cat -n`` shows it: the number right-aligned in 6, a tab, the text."""
    return f"{number:6}\t{text}"


def clipped_note(first_left_out: int, end: int | None) -> str:
    """How to see the rest of a clipped file view."""
    last = -1 if end is None else end
    return (
        CLIPPED.format(what="file")
        + f" To see the rest, view it again with view_range [{first_left_out}, {last}].</NOTE>"
    )


def lines_of(text: str) -> list[str]:
    """The lines of ``text`` as the read tool counts them (a final newline ends a line)."""
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


def snippet(lines: Sequence[str], first: int) -> str:
    """``lines`` numbered from ``first`` (a line's trailing ``\\r`` is not shown)."""
    return "\n".join(
        numbered(first + i, line[:-1] if line.endswith("\r") else line)
        for i, line in enumerate(lines)
    )


def human_size(size: int) -> str:
    """A size as the memory tool's listing shows it: ``0B``, ``512B``, ``5.5K``, ``1.2M``."""
    if size < 1024:
        return f"{size}B"
    value, unit = float(size), "B"
    for unit in ("K", "M", "G"):
        value /= 1024
        if value < 1024 or unit == "G":
            break
    return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"
