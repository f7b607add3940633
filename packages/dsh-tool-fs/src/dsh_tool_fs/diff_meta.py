"""Diff metadata of a write or edit (SPEC 5.10): replayable hunks for a diff card.

Each changed region of ``before`` → ``after`` becomes one hunk with up to 3
lines of context on each side (hunks whose context would touch or overlap
are merged, as in a unified diff). A hunk is ``{"path", "old_text",
"new_text"}``:

- ``old_text`` is the exact slice of ``before`` that the hunk covers (its
  context and removed lines), ``new_text`` the exact slice of ``after``
  (context and added lines). Lines keep their ``\\n``; the last line of a
  text without a final newline has none. So ``old_text`` is a substring of
  ``before`` and replacing it by ``new_text`` replays the change, and a change
  of only the final newline is visible without any "\\ No newline at end of
  file" marker.
- ``old_text`` is ``None`` for a pure insertion, i.e. when the hunk covers no
  line of ``before`` at all (``before`` was empty; with 3 lines of context
  any other hunk has some old line). ``new_text`` is ``""`` when the hunk
  covers no line of ``after`` (``after`` is empty).
- A create (``before`` is ``None``) or an identical text gives no hunk.

Lines are split on ``\\n`` only (the texts are LF-normalized; a lone ``\\r``
is an ordinary character). Common leading and trailing lines are stripped
before ``difflib.SequenceMatcher`` runs, so a small edit of a large file
costs a linear comparison, not a full matching.
"""

from __future__ import annotations

from difflib import SequenceMatcher

__all__ = ["CONTEXT_LINES", "diff_meta", "hunk_ranges", "split_lines"]

CONTEXT_LINES = 3

_Opcode = tuple[str, int, int, int, int]


def split_lines(text: str) -> list[str]:
    """Lines with their ``\\n``; a final line without one is kept, nothing after a final ``\\n``."""
    parts = text.split("\n")
    last = parts.pop()
    lines = [part + "\n" for part in parts]
    if last:
        lines.append(last)
    return lines


def _opcodes(a: list[str], b: list[str]) -> list[_Opcode]:
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    codes: list[_Opcode] = []
    if head:
        codes.append(("equal", 0, head, 0, head))
    matcher = SequenceMatcher(None, a[head : len(a) - tail], b[head : len(b) - tail])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        codes.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        codes.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return codes


def _grouped(codes: list[_Opcode], n: int) -> list[list[_Opcode]]:
    """Hunks with ``n`` lines of context, as ``SequenceMatcher.get_grouped_opcodes(n)``."""
    if not codes:
        return []
    codes = list(codes)
    tag, i1, i2, j1, j2 = codes[0]
    if tag == "equal":
        codes[0] = (tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2)
    tag, i1, i2, j1, j2 = codes[-1]
    if tag == "equal":
        codes[-1] = (tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n))
    groups: list[list[_Opcode]] = []
    group: list[_Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return [g for g in groups if any(code[0] != "equal" for code in g)]


def hunk_ranges(a: list[str], b: list[str]) -> list[tuple[int, int, int, int]]:
    """``(i1, i2, j1, j2)`` per hunk: lines ``a[i1:i2]`` became ``b[j1:j2]``, context included."""
    return [
        (group[0][1], group[-1][2], group[0][3], group[-1][4])
        for group in _grouped(_opcodes(a, b), CONTEXT_LINES)
    ]


def diff_meta(path: str, before: str | None, after: str) -> dict[str, object]:
    """``{"diffs": [{"path", "old_text", "new_text"}, …]}`` for ``ToolResult.meta``.

    ``path`` is the ``file_path`` argument as given.
    """
    if before is None or before == after:
        return {"diffs": []}
    a, b = split_lines(before), split_lines(after)
    return {
        "diffs": [
            {
                "path": path,
                "old_text": "".join(a[i1:i2]) if i2 > i1 else None,
                "new_text": "".join(b[j1:j2]),
            }
            for i1, i2, j1, j2 in hunk_ranges(a, b)
        ]
    }
