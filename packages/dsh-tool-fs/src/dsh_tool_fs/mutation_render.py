"""Projections and values of ``write`` and ``edit``, and of every error.

The written content is never echoed back to the model: a write answers with
a five-line envelope, an edit with one sentence.
"""

from __future__ import annotations

from typing import Literal

from .envelope import render_envelope
from .names import escape_controls

__all__ = ["edit_value", "render_edit", "render_error", "render_write", "write_value"]


def render_write(display_path: str, operation: Literal["create", "update"]) -> str:
    """Exactly five lines; ``<path>`` follows the name rule."""
    status = "Created file" if operation == "create" else "Updated file"
    return render_envelope(display_path, "file", [status])


def render_edit(display_path: str, *, replace_all: bool) -> str:
    """The edit confirmation sentence: always one line of valid UTF-8.

    The display path is written as is (the name rule does not apply), except
    that its control characters and lone surrogates are JSON-escaped like those
    of an error message, so a file name cannot break the sentence into several
    lines.
    """
    shown = escape_controls(display_path)
    if replace_all:
        return f"The file {shown} has been updated. All occurrences were successfully replaced."
    return f"The file {shown} has been updated successfully."


def render_error(message: str) -> str:
    """The model projection of any failure: ``Error: <message>``.

    ``message`` is already one line: the host escapes it once with
    :func:`~dsh_tool_fs.names.escape_controls` (it also keeps that message in
    ``ToolError``), so the text and the error never disagree.
    """
    return f"Error: {message}"


def write_value(
    display_path: str,
    operation: Literal["create", "update"],
    before: str | None,
    after: str,
) -> dict[str, object]:
    """``{"path", "operation", "before", "after"}``; texts LF-normalized, ``before`` may be None."""
    return {"path": display_path, "operation": operation, "before": before, "after": after}


def edit_value(display_path: str, before: str, after: str) -> dict[str, object]:
    """``{"path", "before", "after"}`` (both LF-normalized)."""
    return {"path": display_path, "before": before, "after": after}
