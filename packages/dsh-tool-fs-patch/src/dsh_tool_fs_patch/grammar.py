"""The V4A patch grammar, as Codex's parser accepts it: text in, operations out (pure).

A patch is ``*** Begin Patch`` … ``*** End Patch`` around operations:

- ``*** Add File: <path>`` then ``+`` lines (the content: each line and a newline);
- ``*** Delete File: <path>``;
- ``*** Update File: <path>``, optionally ``*** Move to: <path>``, then chunks:
  a ``@@`` or ``@@ <anchor>`` line (optional for the first chunk), then
  `` `` (context), ``-`` (removed) and ``+`` (added) lines, optionally closed
  by ``*** End of File``.

Codex's leniency is kept, rule for rule: the patch is trimmed of surrounding
whitespace and split into lines (a ``\\r`` before each ``\\n`` dropped); the
envelope and operation markers are compared trimmed (but ``*** Move to:``
must open its line, and its path is read without trailing whitespace); an
``@@`` line is read without trailing whitespace; a heredoc wrapper
(``<<EOF``, ``<<'EOF'`` or ``<<"EOF"`` … ``EOF``) is stripped; blank lines
after an ``*** End of File`` line are skipped; an empty line inside a chunk
is an empty context line (and a line of spaces a context line of the rest).
Failures are :class:`PatchSyntaxError` with Codex's wording
(``invalid patch: …``, ``invalid hunk at line <n>, …``), line numbers
counted from the ``*** Begin Patch`` line as 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

__all__ = [
    "AddFile",
    "Chunk",
    "DeleteFile",
    "Operation",
    "PatchSyntaxError",
    "UpdateFile",
    "parse_add_body",
    "parse_patch",
    "parse_update_body",
    "patch_lines",
    "trim",
]

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
_HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')
_EMPTY_CHUNK = "Update hunk does not contain any lines"

WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Unicode ``White_Space``: what Codex's ``trim`` removes (``str.strip()`` would also
remove ``\\x1c``-``\\x1f``, which Rust keeps)."""


def trim(text: str) -> str:
    """``text`` without surrounding Unicode whitespace (Rust's ``str::trim``)."""
    return text.strip(WHITESPACE)


class PatchSyntaxError(ValueError):
    """A patch that does not parse; ``str()`` is Codex's message."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.detail = message
        self.line = line
        text = f"invalid patch: {message}" if line is None else f"invalid hunk at line {line}, "
        super().__init__(text if line is None else text + message)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One change of an update: ``old`` lines (context and removed) become ``new`` lines.

    ``anchor`` is the text of its ``@@ <anchor>`` line, sought before ``old``;
    ``end_of_file`` asks that ``old`` be the file's last lines.
    """

    anchor: str | None
    old: tuple[str, ...]
    new: tuple[str, ...]
    end_of_file: bool = False
    context: tuple[tuple[int, int], ...] | None = field(default=None, compare=False)
    """Where each context line is: ``(i, j)`` for ``old[i]`` that is ``new[j]`` (the
    parser gives it; ``None``: not known, context is then found by comparing the lines)."""


@dataclass(frozen=True, slots=True)
class AddFile:
    path: str
    content: str


@dataclass(frozen=True, slots=True)
class DeleteFile:
    path: str


@dataclass(frozen=True, slots=True)
class UpdateFile:
    path: str
    chunks: tuple[Chunk, ...]
    move_to: str | None = None


Operation: TypeAlias = AddFile | DeleteFile | UpdateFile
"""One file operation of a patch."""


def patch_lines(text: str) -> list[str]:
    """``text`` split into lines as Rust's ``str::lines``: on ``\\n``, one ``\\r`` before it
    dropped, no empty line after a final ``\\n``."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def parse_patch(text: str) -> list[Operation]:
    """The operations of a whole patch, in order; :class:`PatchSyntaxError` if it does not parse.

    An envelope with no operation parses (to ``[]``): applying it is what fails.
    """
    lines = patch_lines(trim(text))
    body = _body(lines)
    operations: list[Operation] = []
    number = 2
    while body:
        operation, used = _parse_operation(body, number)
        operations.append(operation)
        number += used
        body = body[used:]
    return operations


def _body(lines: list[str]) -> list[str]:
    """The lines between the envelope's markers, a heredoc wrapper stripped when there is one."""
    try:
        return _inside_envelope(lines)
    except PatchSyntaxError:
        if len(lines) >= 4 and lines[0] in _HEREDOC_OPENERS and lines[-1].endswith("EOF"):
            return _inside_envelope(lines[1:-1])
        raise


def _inside_envelope(lines: list[str]) -> list[str]:
    first = trim(lines[0]) if lines else None
    last = trim(lines[-1]) if lines else None
    if first == BEGIN and last == END:
        return lines[1:-1]
    if first is not None and first != BEGIN:
        raise PatchSyntaxError("The first line of the patch must be '*** Begin Patch'")
    raise PatchSyntaxError("The last line of the patch must be '*** End Patch'")


def _parse_operation(lines: list[str], number: int) -> tuple[Operation, int]:
    header = trim(lines[0])
    if header.startswith(ADD):
        content, used = parse_add_body(lines[1:])
        return AddFile(header[len(ADD) :], content), used + 1
    if header.startswith(DELETE):
        return DeleteFile(header[len(DELETE) :]), 1
    if header.startswith(UPDATE):
        path = header[len(UPDATE) :]
        rest = lines[1:]
        move_to = None
        if rest and rest[0].startswith(MOVE_TO):  # not padded in front, as Codex reads it
            move_to = rest[0][len(MOVE_TO) :].rstrip(WHITESPACE)
            rest = rest[1:]
        head = len(lines) - len(rest)
        chunks, used = parse_update_body(rest, number + head)
        if not chunks:
            raise PatchSyntaxError(f"Update file hunk for path '{path}' is empty", number)
        return UpdateFile(path, tuple(chunks), move_to), head + used
    raise PatchSyntaxError(
        f"'{header}' is not a valid hunk header. Valid hunk headers: "
        "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
        number,
    )


def parse_add_body(lines: list[str]) -> tuple[str, int]:
    """The content of an added file from its ``+`` lines, and how many lines that took."""
    used = 0
    for line in lines:
        if not line.startswith("+"):
            break
        used += 1
    return "".join(line[1:] + "\n" for line in lines[:used]), used


def parse_update_body(lines: list[str], number: int) -> tuple[list[Chunk], int]:
    """The chunks of an update from the lines after its header (``number`` is the first
    one's line number), and how many lines they took: up to the next ``*`` line."""
    chunks: list[Chunk] = []
    used = 0
    while used < len(lines):
        line = lines[used]
        if chunks and chunks[-1].end_of_file and not trim(line):
            used += 1  # a blank line after an *** End of File line
            continue
        if line.startswith("*"):
            break
        chunk, taken = _parse_chunk(lines[used:], number + used, first=not chunks)
        chunks.append(chunk)
        used += taken
    return chunks, used


def _parse_chunk(lines: list[str], number: int, *, first: bool) -> tuple[Chunk, int]:
    head = lines[0].rstrip(WHITESPACE)  # Codex reads an @@ line without trailing whitespace
    anchor: str | None = None
    start = 1
    if head == "@@":
        pass
    elif head.startswith("@@ "):
        anchor = head[3:]
    elif first:
        start = 0  # the first chunk of an update may omit its @@ line
    else:
        raise PatchSyntaxError(
            f"Expected update hunk to start with a @@ context marker, got: '{lines[0]}'", number
        )
    if start >= len(lines):
        raise PatchSyntaxError(_EMPTY_CHUNK, number + 1)
    old: list[str] = []
    new: list[str] = []
    context: list[tuple[int, int]] = []
    end_of_file = False
    taken = 0
    for line in lines[start:]:
        if line == END_OF_FILE:
            if taken == 0:
                raise PatchSyntaxError(_EMPTY_CHUNK, number + 1)
            end_of_file = True
            taken += 1
            break
        kind, text = line[:1], line[1:]
        if kind in ("", " "):  # an empty line is an empty context line
            context.append((len(old), len(new)))
            old.append(text)
            new.append(text)
        elif kind == "+":
            new.append(text)
        elif kind == "-":
            old.append(text)
        elif taken == 0:
            raise PatchSyntaxError(
                f"Unexpected line found in update hunk: '{line}'. Every line should start "
                "with ' ' (context line), '+' (added line), or '-' (removed line)",
                number + start,
            )
        else:
            break  # the start of the next chunk
        taken += 1
    return Chunk(anchor, tuple(old), tuple(new), end_of_file, tuple(context)), start + taken
