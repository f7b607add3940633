"""Diff metadata of a write or edit: the changed hunks, for a diff card.

Each changed region of ``before`` → ``after`` becomes one hunk with up to 3
lines of context on each side (hunks whose context would touch or overlap
are merged, as in a unified diff). A hunk is ``{"path", "old_text",
"new_text"}``:

- ``old_text`` is the hunk's lines of ``before`` (its context and removed
  lines), ``new_text`` its lines of ``after`` (context and added lines),
  each joined by ``\\n`` without a trailing newline: a hunk of 7 lines
  reads as 7 lines, and an overwrite with ``brand new\\n`` gives ``brand
  new``. ``old_text`` is a substring of ``before``. No "\\ No newline at end
  of file" marker ever appears (so a change of only the final newline is a
  hunk whose two texts are equal).
- ``old_text`` is ``None`` for a pure insertion, i.e. when the hunk covers no
  line of ``before`` at all (``before`` was empty; with 3 lines of context
  any other hunk has some old line). ``new_text`` is ``""`` when the hunk
  covers no line of ``after`` (``after`` is empty).
- A create (``before`` is ``None``) or an identical text gives no hunk.

Changed spans of more than about 10,000 × 10,000 lines are not matched line
against line (that could take seconds): they are compared position by
position when both sides have as many lines, else reported as one block.

Lines are split on ``\\n`` only (the texts are LF-normalized; a lone ``\\r``
is an ordinary character). The common head and tail of the two texts are
found with string comparisons and only the lines around the changes (plus
their context) are split and handed to ``difflib.SequenceMatcher``, so a
small edit of a large file costs a few C-level comparisons, not a matching
of every line. Changed spans that share no line (a rewrite with fresh
content) are one block without any matching.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from itertools import groupby
from operator import eq

__all__ = ["CONTEXT_LINES", "diff_meta", "hunk_ranges", "split_lines"]

CONTEXT_LINES = 3
_MATCH_BUDGET = 10**8
"""Line matching (``SequenceMatcher``) can take time proportional to the
product of the changed spans' line counts; beyond this product the span is
compared line by line when both sides have as many lines, else reported as
one replaced block. A correct diff either way, computed in linear time."""

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
    old, new = a[head : len(a) - tail], b[head : len(b) - tail]
    if not old or not new or set(old).isdisjoint(new):
        # Nothing to match (e.g. a rewrite with fresh content): one block,
        # exactly what SequenceMatcher would answer, without building its index.
        if old or new:
            tag = "replace" if old and new else "delete" if old else "insert"
            codes.append((tag, head, len(a) - tail, head, len(b) - tail))
    elif len(old) * len(new) <= _MATCH_BUDGET:
        matcher = SequenceMatcher(None, old, new)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            codes.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    elif len(old) == len(new):  # e.g. a replace_all edit: compare line by line
        i = head
        for same, run in groupby(map(eq, old, new)):
            size = sum(1 for _ in run)
            codes.append(("equal" if same else "replace", i, i + size, i, i + size))
            i += size
    else:
        codes.append(("replace", head, len(a) - tail, head, len(b) - tail))
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


_BLOCK = 1 << 16


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix: equal blocks compared whole, the first unequal one bisected.

    Blocks grow from one character to ``_BLOCK`` (galloping), so texts that
    differ early (a rewrite) cost a few comparisons, not the bisection of a
    whole block.
    """
    n = min(len(a), len(b))
    i = 0
    step = 1
    while i < n:
        j = min(n, i + step)
        step = min(step * 2, _BLOCK)
        if not a.startswith(b[i:j], i):  # one copy (of b's block), not two
            lo, hi = i, j  # a[:lo] == b[:lo] and a[lo:hi] != b[lo:hi]
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a.startswith(b[lo:mid], lo):
                    lo = mid
                else:
                    hi = mid
            return lo
        i = j
    return n


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most ``limit`` (galloping blocks, as the prefix)."""
    la, lb = len(a), len(b)
    i = 0
    step = 1
    while i < limit:
        j = min(limit, i + step)
        step = min(step * 2, _BLOCK)
        if not a.endswith(b[lb - j : lb - i], 0, la - i):
            lo, hi = i, j  # the last lo characters are equal, the last hi are not
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a.endswith(b[lb - mid : lb - lo], 0, la - lo):
                    lo = mid
                else:
                    hi = mid
            return lo
        i = j
    return limit


def _changed_span(before: str, after: str) -> tuple[int, int]:
    """``(start, tail)``: the lines outside ``before[start:len - tail]`` are common and
    farther than ``CONTEXT_LINES`` from any change, in ``after`` as well.

    Found with string comparisons (C speed), so that a small edit of a large
    file splits and matches only the lines around the change.
    """
    prefix = _common_prefix(before, after)
    suffix = _common_suffix(before, after, min(len(before), len(after)) - prefix)
    start = before.rfind("\n", 0, prefix) + 1  # the first line that is not common
    for _ in range(CONTEXT_LINES):
        if start == 0:
            break
        start = before.rfind("\n", 0, start - 1) + 1
    size = len(before)
    newline = before.find("\n", size - suffix)
    end = size if newline < 0 else newline + 1  # lines from here on are common
    for _ in range(CONTEXT_LINES):
        if end >= size:
            break
        newline = before.find("\n", end)
        end = size if newline < 0 else newline + 1
    return start, size - end


def diff_meta(path: str, before: str | None, after: str) -> dict[str, object]:
    """``{"diffs": [{"path", "old_text", "new_text"}, …]}`` for ``ToolResult.meta``.

    ``path`` is the ``file_path`` argument as given.
    """
    if before is None or before == after:
        return {"diffs": []}
    start, tail = _changed_span(before, after)
    a = split_lines(before[start : len(before) - tail])
    b = split_lines(after[start : len(after) - tail])
    return {
        "diffs": [
            {
                "path": path,
                "old_text": _hunk_text(a[i1:i2]) if i2 > i1 else None,
                "new_text": _hunk_text(b[j1:j2]),
            }
            for i1, i2, j1, j2 in hunk_ranges(a, b)
        ]
    }


def _hunk_text(lines: list[str]) -> str:
    """Lines (as :func:`split_lines` gives them) joined by ``\\n``, without a trailing newline."""
    return "".join(lines).removesuffix("\n")
