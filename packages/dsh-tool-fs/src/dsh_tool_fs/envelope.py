"""The ``<path>``/``<type>``/``<content>`` envelope every path-shaped projection shares.

``list``, ``read``, ``write`` and the search tools answer in it; the path
follows the name rule (:func:`~dsh_tool_fs.names.quote_name`), so no file name
can forge a line of it. The ``<type>`` lines are a closed set, written out.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from .names import quote_name

__all__ = ["EnvelopeType", "render_envelope"]

EnvelopeType: TypeAlias = Literal["directory", "file", "glob", "grep"]

_TYPE_LINES: dict[EnvelopeType, str] = {
    "directory": "<type>directory</type>",
    "file": "<type>file</type>",
    "glob": "<type>glob</type>",
    "grep": "<type>grep</type>",
}


def render_envelope(
    display_path: str, kind: EnvelopeType, lines: list[str], footer: str | None = None
) -> str:
    """``lines``, then a blank line and ``footer`` (the footer alone when there is no line;
    no footer: the lines alone), inside the envelope of ``display_path``."""
    if footer is None:
        content = "\n".join(lines)
    else:
        content = "\n".join(lines) + "\n\n" + footer if lines else footer
    return (
        f"<path>{quote_name(display_path)}</path>\n"
        f"{_TYPE_LINES[kind]}\n"
        f"<content>\n{content}\n</content>"
    )
