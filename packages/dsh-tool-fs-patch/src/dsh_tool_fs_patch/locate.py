"""Locating an update's chunks in a file's text and applying them, bytes kept (pure).

The file's lines are its text split on ``\\n`` with one trailing ``\\r`` taken
off each (the line ending is not part of a line), and no empty line after a
final newline: the lines Codex matches against. Chunks are located in order,
each at or after the end of the previous one (forward only): its ``@@
<anchor>`` line first, then its old lines, by Codex's four passes — exactly,
ignoring trailing whitespace, ignoring surrounding whitespace, then with
typographic dashes, quotes and odd spaces read as their ASCII forms; the
first position that matches wins. ``*** End of File`` makes a chunk match the
file's last lines; a chunk with no old lines appends at the end (after a
final empty line too, as Codex). When the old lines end with an empty line that
is not there, they are sought again without it (the empty line stood for the
file's final newline).

Applying keeps every byte outside the removed and added lines: unchanged
lines keep their own endings, context lines are the file's own (as they are
in the file, however leniently they matched), new lines get the file's dominant ending (CRLF when
``\\r\\n`` pairs outnumber bare ``\\n`` in the first 4096 characters), and a
file that ended without a newline still does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from dsh_fs.text import uses_crlf

from .grammar import WHITESPACE, Chunk, trim

__all__ = ["LocateError", "Replacement", "apply_chunks", "file_lines", "locate", "seek"]


class LocateError(LookupError):
    """A chunk that is not in the file; ``str()`` is Codex's message."""


@dataclass(frozen=True, slots=True)
class Replacement:
    """The file's lines matched by ``old`` (from ``start``) become ``new``."""

    start: int
    old: tuple[str, ...]
    new: tuple[str, ...]
    context: tuple[tuple[int, int], ...] | None = None
    """``(i, j)``: the file's line ``start + i`` stays, as ``new[j]`` (``None``: not known)."""

    @property
    def old_count(self) -> int:
        return len(self.old)


_TYPOGRAPHIC = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


def _rstrip(line: str) -> str:
    return line.rstrip(WHITESPACE)


def _ascii(line: str) -> str:
    return trim(line).translate(_TYPOGRAPHIC)


_PASSES: tuple[Callable[[str], str] | None, ...] = (None, _rstrip, trim, _ascii)
"""Codex's passes, strictest first: exact, trailing whitespace, surrounding whitespace,
typographic punctuation."""


def seek(lines: Sequence[str], pattern: Sequence[str], start: int, eof: bool) -> int | None:
    """The first index ``i >= start`` where ``pattern`` matches ``lines[i:]`` in the
    strictest pass that matches anywhere; with ``eof``, only at the end of ``lines``."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    last = len(lines) - len(pattern)
    first = max(start, last) if eof else start
    size = len(pattern)
    for form in _PASSES:
        if form is None:
            wanted = list(pattern)
            for i in range(first, last + 1):
                if lines[i : i + size] == wanted:
                    return i
            continue
        wanted = [form(p) for p in pattern]
        formed = [form(line) for line in lines[first : last + size]]
        for i in range(last + 1 - first):
            if formed[i : i + size] == wanted:
                return first + i
    return None


def locate(lines: Sequence[str], chunks: Sequence[Chunk], path: str) -> list[Replacement]:
    """Where each chunk applies, in order of position; :class:`LocateError` for the first
    chunk that is not found (``path`` is named in the message as given)."""
    replacements: list[Replacement] = []
    at = 0
    for chunk in chunks:
        if chunk.anchor is not None:
            found = seek(lines, [chunk.anchor], at, False)
            if found is None:
                raise LocateError(f"Failed to find context '{chunk.anchor}' in {path}")
            at = found + 1
        if not chunk.old:
            replacements.append(Replacement(len(lines), (), chunk.new))
            continue
        old, new, context = chunk.old, chunk.new, chunk.context
        found = seek(lines, old, at, chunk.end_of_file)
        if found is None and old[-1] == "":
            old = old[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            if context is not None:
                context = tuple((i, j) for i, j in context if i < len(old) and j < len(new))
            found = seek(lines, old, at, chunk.end_of_file)
        if found is None:
            raise LocateError(_not_found(path, chunk))
        replacements.append(Replacement(found, old, new, context))
        at = found + len(old)
    ordered = sorted(replacements, key=lambda r: r.start)
    end = 0
    for replacement in ordered:
        if replacement.start < end:  # an end-of-file chunk behind an earlier one
            chunk = chunks[replacements.index(replacement)]
            raise LocateError(_not_found(path, chunk))
        end = replacement.start + replacement.old_count
    return ordered


def _context(replacement: Replacement) -> list[tuple[int, int]]:
    """The context lines of ``replacement``: as the parser placed them, else the lines
    old and new have in common."""
    if replacement.context is not None:
        return list(replacement.context)
    matcher = SequenceMatcher(None, replacement.old, replacement.new, autojunk=False)
    return [(a + k, b + k) for a, b, size in matcher.get_matching_blocks() for k in range(size)]


def _not_found(path: str, chunk: Chunk) -> str:
    return f"Failed to find expected lines in {path}:\n" + "\n".join(chunk.old)


def file_lines(text: str) -> tuple[list[str], list[str]]:
    """The lines of ``text`` (what chunks match) and each one's ending
    (``\\n``, ``\\r\\n``, or for a last line without a newline ``""`` or ``\\r``)."""
    parts = text.split("\n")
    last = parts.pop()
    lines: list[str] = []
    endings: list[str] = []
    for part in parts:
        crlf = part.endswith("\r")
        lines.append(part[:-1] if crlf else part)
        endings.append("\r\n" if crlf else "\n")
    if last:
        crlf = last.endswith("\r")
        lines.append(last[:-1] if crlf else last)
        endings.append("\r" if crlf else "")
    return lines, endings


def apply_chunks(text: str, chunks: Sequence[Chunk], path: str) -> str:
    """``text`` with ``chunks`` applied, every byte outside the replaced lines kept."""
    lines, endings = file_lines(text)
    newline = "\r\n" if uses_crlf(text) else "\n"
    out_lines: list[str] = []
    out_endings: list[str] = []
    cursor = 0
    for replacement in locate(lines, chunks, path):
        start = replacement.start
        out_lines += lines[cursor:start]
        out_endings += endings[cursor:start]
        new_lines = list(replacement.new)
        new_endings = [newline] * len(new_lines)
        # A context line (in old and new alike) is the file's own line, as it is: matched
        # leniently, it keeps its whitespace and punctuation, and always its ending.
        for a, b in _context(replacement):
            new_lines[b] = lines[start + a]
            new_endings[b] = endings[start + a]
        out_lines += new_lines
        out_endings += new_endings
        cursor = start + replacement.old_count
    out_lines += lines[cursor:]
    out_endings += endings[cursor:]
    if out_endings:
        for i in range(len(out_endings) - 1):
            if not out_endings[i].endswith("\n"):  # the old last line, now followed by more
                out_endings[i] = newline
        if text and not text.endswith("\n"):
            out_endings[-1] = endings[-1]  # it ended without a newline: it still does
        elif not out_endings[-1].endswith("\n"):
            out_endings[-1] = newline
    return "".join(line + ending for line, ending in zip(out_lines, out_endings, strict=True))
