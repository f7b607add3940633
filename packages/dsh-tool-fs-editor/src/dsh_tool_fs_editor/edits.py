"""The changes both tools make, on the seam's own write and edit — never a second engine.

- **create** — ``fs_write_intent`` is asked (a read-only workspace or a
  plugin may refuse), then ``write_text`` with ``CreateIfAbsent()`` whatever
  the intent: ``create`` never replaces a file, read or not. Atomic, missing
  parents created.
- **replace** — exactly the ``edit`` tool's step: ``fs_edit_intent`` (read
  first, stale refused), ``edit_text`` of one literal match; line endings and
  BOM kept by :func:`dsh_fs.text.apply_edit`.
- **insert** — a guarded edit as well: the edit guard, a ``stat`` and a
  ``read_text`` of that version, then ``edit_text`` replacing the whole text
  (which occurs exactly once in itself) with the text with the new lines,
  under the guard of the version read — so the write-back keeps the line
  ending and BOM and fails stale if the file moved on in between.

Each emits ``fs_observed`` with the new version.
"""

from __future__ import annotations

from dataclasses import dataclass

from dsh_fs import (
    CreateIfAbsent,
    EditGuard,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsTarget,
    ReplaceIfVersion,
)
from dsh_fs.preconditions import check_edit
from dsh_fs.text import normalize_newlines
from dsh_tool_fs import Execution

__all__ = [
    "Changed",
    "InsertOutOfRange",
    "count_lines",
    "create_file",
    "insert_lines",
    "match_lines",
    "match_refusal",
    "out_of_range",
    "replace_once",
]


@dataclass(frozen=True, slots=True)
class Changed:
    """A file after a change: its texts (LF, no BOM) before and after, and its new version."""

    before: str | None
    after: str
    version: str


class InsertOutOfRange(Exception):
    """``insert_line`` is not between 0 and the file's line count (``lines``)."""

    def __init__(self, lines: int) -> None:
        super().__init__(lines)
        self.lines = lines


async def create_file(ex: Execution, target: FsTarget, text: str) -> Changed:
    """Create ``target`` with ``text``; an existing entry fails (``FS_NOT_OBSERVED`` for a
    file, ``FS_NOT_REGULAR_FILE`` for anything else, from the backend's ``check_write``)."""
    ex.step("write")
    await ex.write_intent(target)  # the hooks are asked; create is CreateIfAbsent regardless
    ex.step("write")
    outcome = await ex.fs.write_text(target, text, CreateIfAbsent())
    ex.observed(target, outcome.version)
    return Changed(outcome.before, outcome.after, outcome.version)


async def replace_once(ex: Execution, target: FsTarget, old: str, new: str) -> Changed:
    """The edit tool's step: replace the one literal match of ``old`` with ``new``."""
    ex.step("edit")
    guard = await ex.edit_guard(target)
    ex.step("edit")  # an event set while the guard was decided aborts the edit
    outcome = await ex.fs.edit_text(target, FsEditRequest(old, new), guard)
    ex.observed(target, outcome.version)
    return Changed(outcome.before, outcome.after, outcome.version)


async def match_lines(ex: Execution, target: FsTarget, old: str) -> list[int]:
    """The line numbers where the matches of ``old`` start, counted as ``edit_text`` counts
    them (LF-normalized, left to right, without overlap): for an ambiguous ``old``."""
    ex.step("read")
    text = normalize_newlines(await ex.fs.read_text(target))
    old = normalize_newlines(old)
    lines: list[int] = []
    at = text.find(old)
    line, counted = 1, 0
    while at >= 0 and old:
        line += text.count("\n", counted, at)
        counted = at
        lines.append(line)
        at = text.find(old, at + len(old))
    return lines


async def match_refusal(
    ex: Execution, target: FsTarget, p: str, old: str, exc: FsError, lines: str
) -> FsError | None:
    """A ``str_replace`` that matched nowhere or more than once, in the reference's words;
    ``lines`` formats the match lines (``in lines [1, 3]`` / ``in lines: 1, 3``)."""
    if exc.code == FsErrorCode.FS_EDIT_NOT_FOUND:
        return FsError(
            f"No replacement was performed, old_str `{old}` did not appear verbatim in {p}.",
            exc.code,
        )
    if exc.code == FsErrorCode.FS_AMBIGUOUS_EDIT:
        found = await match_lines(ex, target, old)
        return FsError(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in "
            f"{lines.format(list=found, joined=', '.join(map(str, found)))}. Please ensure it "
            "is unique",
            exc.code,
        )
    return None


def out_of_range(insert_line: int | None, out: InsertOutOfRange) -> FsError:
    """``Invalid `insert_line` parameter: …`` (both tools say it alike)."""
    return FsError(
        f"Invalid `insert_line` parameter: {insert_line}. It should be within the range of "
        f"lines of the file: [0, {out.lines}]",
        FsErrorCode.FS_NOT_FOUND,
    )


def count_lines(text: str) -> int:
    """Lines as the read tool counts them: a trailing newline does not start a line."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


async def insert_lines(ex: Execution, target: FsTarget, after_line: int, text: str) -> Changed:
    """Insert ``text`` as whole lines after line ``after_line`` (0: before the first).

    ``text`` gets a final newline when it has none; inserted after the last
    line of a file that ends without one, it keeps the file ending so.
    Raises :class:`InsertOutOfRange` for a line beyond the file's.
    """
    ex.step("edit")
    guard = await ex.edit_guard(target)
    ex.step("stat")
    info = await ex.fs.stat(target)
    check_edit(target.display_path, None if info is None else (info.type, info.version), guard)
    assert info is not None  # check_edit refuses an absent file
    ex.step("read")
    before = normalize_newlines(await ex.fs.read_text(target))
    total = count_lines(before)
    if not 0 <= after_line <= total:
        raise InsertOutOfRange(total)
    after = _inserted(before, after_line, total, text)
    ex.step("edit")
    if before:
        request = FsEditRequest(before, after)
        outcome = await ex.fs.edit_text(target, request, EditGuard(info.version))
        version = outcome.version
    else:  # nothing to match in an empty file: replace it at the version read
        written = await ex.fs.write_text(target, after, ReplaceIfVersion(info.version))
        version = written.version
    ex.observed(target, version)
    return Changed(before, after, version)


def _inserted(before: str, after_line: int, total: int, text: str) -> str:
    body = text if text.endswith("\n") else text + "\n"
    if after_line == total and before and not before.endswith("\n"):
        return before + "\n" + body[:-1]
    at = 0
    for _ in range(after_line):
        at = before.index("\n", at) + 1
    return before[:at] + body + before[at:]
