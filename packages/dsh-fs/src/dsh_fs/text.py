"""Text rules shared by every backend: decoding, edits, line endings, messages.

A backend owns storage; what counts as text, how an edit matches and which
line ending is written back are the same for all of them, so they live here
once. Third-party backends should use these functions too: the conformance
kit pins their messages.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from ._errors import FsError, FsErrorCode
from ._types import FsEditRequest

__all__ = [
    "BINARY_SNIFF_BYTES",
    "BOM",
    "EDIT_GROWTH_MAX_BYTES",
    "LARGE_FILE_BYTES",
    "LINE_ENDING_SNIFF_CHARS",
    "AppliedEdit",
    "Bytes",
    "StreamDecoder",
    "apply_edit",
    "decode_previous",
    "decode_text",
    "encode_text",
    "normalize_newlines",
    "not_text",
    "nth_newline",
    "uses_crlf",
    "written_text",
]

BOM = codecs.BOM_UTF8
T = TypeVar("T", str, bytes, bytearray)
BINARY_SNIFF_BYTES = 8192
"""A NUL byte within this many leading bytes makes a file binary for reads."""
LINE_ENDING_SNIFF_CHARS = 4096
"""The dominant line ending is decided from this many leading characters."""
EDIT_GROWTH_MAX_BYTES = 16 * 1024 * 1024
"""The most bytes one edit may add to a file (16 MiB); more fails ``FS_TOO_LARGE``.

A model alone could otherwise turn a small file into gigabytes with one
``replace_all`` of a long ``new_string``; the growth is known from the count
and the two strings before the new text is built."""
LARGE_FILE_BYTES = 10 * 1024 * 1024
"""A file of more bytes than this (10 MiB) is never read whole for a side purpose.

A write that replaces such a file carries no ``before`` text (so no diff),
and never reads it; the local backend decodes such a file in chunks instead
of reading its bytes in one piece. The same figure as the read tool's
default ``read_stream_min_size``: one constant for every backend, so that
the conformance kit pins it (a backend does not see the host's
configuration)."""
_AMBIGUOUS_HINT = "; provide a more specific old_string or set replace_all to true"
"""What an ambiguous edit's message tells the model to do."""


def normalize_newlines(text: str) -> str:
    """``\\r\\n`` → ``\\n``; a lone ``\\r`` stays."""
    return text.replace("\r\n", "\n")


def uses_crlf(text: str) -> bool:
    """True when ``\\r\\n`` pairs outnumber bare ``\\n`` in the first 4096 characters."""
    head = text[:LINE_ENDING_SNIFF_CHARS]
    crlf = head.count("\r\n")
    return crlf > head.count("\n") - crlf


def not_text(verb: str, display_path: str, why: str) -> FsError:
    """``cannot <verb> "<p>": <why>`` (``FS_NOT_TEXT``); ``why`` is ``binary file`` or
    ``invalid UTF-8 text``."""
    return FsError.cannot(verb, display_path, why, FsErrorCode.FS_NOT_TEXT)


def decode_text(data: bytes, verb: str, display_path: str, *, nul_anywhere: bool = False) -> str:
    """Decode a whole file strictly, without its leading BOM.

    Reads reject a NUL byte within the first 8192 bytes (``nul_anywhere=False``);
    edits reject one anywhere. Messages: ``cannot <verb> "<p>": binary file`` /
    ``invalid UTF-8 text`` (code ``FS_NOT_TEXT``).
    """
    sniff = data if nul_anywhere else data[:BINARY_SNIFF_BYTES]
    if b"\0" in sniff:
        raise not_text(verb, display_path, "binary file")
    start = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[start:].decode("utf-8") if start else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_text(verb, display_path, "invalid UTF-8 text") from exc


def encode_text(text: str, verb: str, display_path: str) -> bytes:
    """UTF-8 bytes of ``text``; a lone surrogate (JSON allows ``"\\ud800"``) is not text.

    Fails ``FS_NOT_TEXT`` ``cannot <verb> "<p>": invalid UTF-8 text`` instead of
    letting ``UnicodeEncodeError`` escape the seam.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise not_text(verb, display_path, "invalid UTF-8 text") from exc


def written_text(content: str) -> str:
    """The ``after`` text of a write: ``content`` LF-normalized, without a leading BOM.

    The bytes written are exactly ``content`` (BOM included); only the texts
    of an outcome leave the BOM out, as reads do.
    """
    return normalize_newlines(content[1:] if content.startswith("\ufeff") else content)


def decode_previous(data: bytes) -> str | None:
    """The LF-normalized previous content of a replaced file, or ``None`` if it is not
    text or larger than :data:`LARGE_FILE_BYTES` (a backend need not read such a file)."""
    if len(data) > LARGE_FILE_BYTES or b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return normalize_newlines(text)


Bytes: TypeAlias = bytes | bytearray | memoryview
"""Raw text as a backend holds it; a ``memoryview`` of a reused read buffer works everywhere."""

CHECK_BLOCK_BYTES = 1 << 16
"""Granularity of :meth:`StreamDecoder.check`: only blocks holding non-ASCII bytes are decoded."""


class StreamDecoder:
    """Incremental strict decoding for ``stream_text``: feed raw chunks, get text.

    Applies the read rules to a stream: NUL within the first 8192 bytes is
    ``binary file``, any invalid or truncated UTF-8 sequence is ``invalid UTF-8
    text``, a leading BOM is dropped, and a character split across chunks
    decodes whole.

    :meth:`check` applies the same rules to bytes whose text is not needed
    (lines a reader only counts): plain ASCII is valid as it stands, so only
    the blocks that hold other bytes are decoded, and their text is dropped.
    Both methods may be mixed freely on one stream.
    """

    __slots__ = ("_carry", "_display_path", "_seen", "_started", "_text_start", "_verb")

    def __init__(self, display_path: str, verb: str = "read") -> None:
        self._display_path = display_path
        self._verb = verb
        self._seen = 0
        """Raw bytes fed so far (the NUL sniff looks at the first 8192)."""
        self._carry = b""
        """The start of a character (or of a BOM) that the next bytes complete."""
        self._started = False
        """Whether the leading BOM question is settled (three bytes or the end seen)."""
        self._text_start = 0
        """Stream offset of the first character once settled: 3 after a BOM, else 0."""

    def feed(self, chunk: Bytes, *, final: bool = False) -> str:
        self._sniff(chunk)
        return self._decode(chunk, final)

    def _decode(self, chunk: Bytes, final: bool) -> str:
        data = self._accept(chunk, final)
        if data is None:
            return ""
        try:
            text, used = codecs.utf_8_decode(data, "strict", final)
        except UnicodeDecodeError as exc:
            raise self._invalid() from exc
        self._carry = bytes(data[used:]) if used < len(data) else b""
        return text

    def check(self, chunk: Bytes) -> None:
        """Validate ``chunk`` exactly as :meth:`feed` would, without building its text.

        Never final: the end of the stream is still announced with
        ``feed(b"", final=True)``.
        """
        self._sniff(chunk)
        if (
            self._started
            and not self._carry
            and not isinstance(chunk, memoryview)  # bytes and bytearray have isascii()
            and chunk.isascii()
        ):
            return
        view = memoryview(chunk)
        for start in range(0, len(view), CHECK_BLOCK_BYTES):
            block = view[start : start + CHECK_BLOCK_BYTES]
            if not (self._started and not self._carry and bytes(block).isascii()):
                self._decode(block, False)

    def _sniff(self, chunk: Bytes) -> None:
        seen = self._seen
        if seen < BINARY_SNIFF_BYTES and b"\0" in bytes(chunk[: BINARY_SNIFF_BYTES - seen]):
            raise not_text(self._verb, self._display_path, "binary file")
        self._seen = seen + len(chunk)

    def _accept(self, chunk: Bytes, final: bool) -> Bytes | None:
        """Put a carried partial character in front of ``chunk``, drop a leading BOM.

        ``None`` while the first bytes may still be the start of a BOM.
        """
        data: Bytes = self._carry + chunk if self._carry else chunk
        if not self._started:
            if len(data) < len(BOM) and not final and BOM.startswith(data):
                self._carry = bytes(data)  # maybe a BOM: wait for more
                return None
            self._started = True
            if bytes(data[: len(BOM)]) == BOM:
                self._text_start = len(BOM)
                data = memoryview(data)[len(BOM) :]
        return data

    @property
    def text_start(self) -> int:
        """Stream offset of the first character: 3 after a BOM, 0 without one.

        While the first bytes fed may still be the start of a BOM, how many
        there are: none of the bytes fed so far is text yet.
        """
        return self._text_start if self._started else len(self._carry)

    def _invalid(self) -> FsError:
        return not_text(self._verb, self._display_path, "invalid UTF-8 text")


def nth_newline(text: T, n: int, lo: int, hi: int) -> int:
    """Index of the ``n``-th ``\\n`` (1-based) of ``text[lo:hi]``, which holds at least ``n``.

    ``text`` is a ``str`` or raw bytes. Halves the span with ``count`` (C
    speed, about one pass over the span in total) until it is short, then
    steps with ``find``: ten thousand short lines cost a few dozen Python
    steps, not ten thousand.
    """
    newline: Any = "\n" if isinstance(text, str) else b"\n"
    while hi - lo > _FIND_SPAN:
        mid = (lo + hi) // 2
        seen = text.count(newline, lo, mid)
        if seen >= n:
            hi = mid
        else:
            n -= seen
            lo = mid
    pos = lo - 1
    for _ in range(n):
        pos = text.find(newline, pos + 1)
    return pos


_FIND_SPAN = 1024


@dataclass(frozen=True, slots=True)
class AppliedEdit:
    """What :func:`apply_edit` computed: the texts and the bytes to write back."""

    before: str
    """Previous content, LF-normalized, without BOM."""
    after: str
    """New content, LF-normalized, without BOM."""
    chunks: tuple[Bytes, ...]
    """What to store, in pieces to be written one after the other: ``after``
    with the dominant line ending and BOM restored. A single replacement in
    the file's own bytes is views of those bytes around the new string, so a
    backend that writes the pieces (``os.writev``) never copies the file."""
    replacements: int

    @property
    def data(self) -> bytes:
        """What to store, in one piece (a copy, unless there is only one piece)."""
        return b"".join(self.chunks)


def apply_edit(raw: bytes, edit: FsEditRequest, display_path: str) -> AppliedEdit:
    """Apply a literal edit to a file's raw bytes, or raise the edit's ``FsError``.

    The caller has already checked existence, type and the guard (guard
    before match). Order of checks: binary (NUL anywhere), invalid UTF-8,
    empty ``old_string`` after normalization, no occurrence, more than one
    occurrence without ``replace_all``, a ``new_string`` that is not text,
    growth over :data:`EDIT_GROWTH_MAX_BYTES`.

    One rule for every file: ``old_string`` is counted in the UTF-8 bytes of
    the LF-normalized text, left to right without overlap (UTF-8 is
    self-synchronizing, so byte matches of a valid encoding are exactly the
    character matches), and the result is stored with the file's dominant
    line ending and its BOM. The replacement is made where its matches are
    the text's: in the file's own bytes when they already are that stored
    form (one line ending, the dominant one, no lone ``\\r``), with
    ``old_string``/``new_string`` given that ending; otherwise in the LF
    bytes, which then get the dominant ending.
    """
    if b"\0" in raw:
        raise not_text("edit", display_path, "binary file")
    bom = BOM if raw.startswith(BOM) else b""
    body = raw[len(bom) :]
    lf, paired = _lf_bytes(body)
    try:  # \r\n -> \n keeps (in)valid UTF-8 as it was: \n still splits what \r split
        before = lf.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_text("edit", display_path, "invalid UTF-8 text") from exc
    old = normalize_newlines(edit.old_string)
    if not old:
        raise FsError("old_string must be a non-empty string", FsErrorCode.FS_EDIT_NOT_FOUND)
    try:
        old_bytes = old.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate occurs nowhere in decoded text
        old_bytes = b""
    count = lf.count(old_bytes) if old_bytes else 0
    _check_count(count, edit, display_path)
    new = normalize_newlines(edit.new_string)
    new_bytes = encode_text(new, "edit", display_path)
    crlf = uses_crlf(codecs.utf_8_decode(body[: 4 * LINE_ENDING_SNIFF_CHARS], "strict", False)[0])
    own_bytes = paired if crlf else lf is body
    replacements = count if edit.replace_all else 1
    # What the rewrite itself changes: the \r it drops when it stores LF. A bare
    # \n given a \r in a mixed CRLF file is not counted (that would take a pass).
    rewrite = 0 if crlf else len(lf) - len(body)
    per_match = len(_stored(new_bytes, crlf)) - len(_stored(old_bytes, crlf))
    _check_growth(rewrite + replacements * per_match, display_path)
    if own_bytes:  # the file's bytes already are the stored form: edit them
        source, old_bytes, new_bytes = body, _stored(old_bytes, crlf), _stored(new_bytes, crlf)
    else:  # edit the LF bytes; they get the dominant ending afterwards
        source = lf
    del lf  # a CRLF file's LF copy is freed: its memory serves ``after``, not fresh pages
    limit = -1 if edit.replace_all else 1
    after = before.replace(old, new, limit)
    pieces = _replaced(source, old_bytes, new_bytes, limit)
    if crlf and not own_bytes:
        pieces = (_stored(b"".join(pieces), crlf),)
    return AppliedEdit(before, after, (bom, *pieces) if bom else pieces, replacements)


def _replaced(data: bytes, old: bytes, new: bytes, limit: int) -> tuple[Bytes, ...]:
    """``data`` with ``old`` replaced by ``new`` (once, or everywhere with ``limit=-1``), in
    pieces: one replacement is views of ``data`` around ``new``, without a copy of it."""
    if limit != 1:
        return (data.replace(old, new, limit),)
    at = data.find(old)
    view = memoryview(data)
    return (view[:at], new, view[at + len(old) :])


def _lf_bytes(body: bytes) -> tuple[bytes, bool]:
    """``body`` with ``\\r\\n`` → ``\\n`` (``body`` itself when there is no pair), and
    whether every ``\\r`` and every ``\\n`` of ``body`` is in such a pair.

    Deleting every ``\\r`` and checking that putting one back before each
    ``\\n`` gives ``body`` (one-byte patterns, found with ``memchr``) is several
    times cheaper in CPython than replacing the two-byte pattern, which only a
    file with a lone ``\\r`` or mixed endings pays.
    """
    if b"\r" not in body:
        return body, False
    lf = body.replace(b"\r", b"")
    if lf.replace(b"\n", b"\r\n") == body:
        return lf, True
    if b"\r\n" not in body:
        return body, False
    return body.replace(b"\r\n", b"\n"), False


def _stored(lf_bytes: bytes, crlf: bool) -> bytes:
    """LF bytes with the stored line ending."""
    return lf_bytes.replace(b"\n", b"\r\n") if crlf else lf_bytes


def _check_growth(growth: int, display_path: str) -> None:
    """Refuse an edit that would add more than :data:`EDIT_GROWTH_MAX_BYTES` to the file."""
    if growth > EDIT_GROWTH_MAX_BYTES:
        raise FsError.cannot(
            "edit",
            display_path,
            f"the edit would grow the file by {growth} bytes (limit {EDIT_GROWTH_MAX_BYTES})",
            FsErrorCode.FS_TOO_LARGE,
        )


def _check_count(count: int, edit: FsEditRequest, display_path: str) -> None:
    if count == 0:
        raise FsError(
            f'old_string was not found in "{display_path}"', FsErrorCode.FS_EDIT_NOT_FOUND
        )
    if count > 1 and not edit.replace_all:
        raise FsError(
            f'old_string matched {count} times in "{display_path}"' + _AMBIGUOUS_HINT,
            FsErrorCode.FS_AMBIGUOUS_EDIT,
        )
