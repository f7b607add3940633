"""``apply_edit`` edits UTF-8 bytes; the result is what editing the text gives.

The result must be exactly what the straightforward algorithm gives — the
one below, ``reference_apply_edit``, which is ``apply_edit`` as it was before
it worked on bytes: decode, normalize the whole text to LF, match, replace,
write the dominant line ending back, encode. Every field of the outcome
(``before``, ``after``, ``data``, ``replacements``) and every error (message
and code) is compared over random files: consistent CRLF, consistent LF, mixed
endings, lone ``\\r``, ``\\r\\r\\n``, BOM or not, multi-byte characters,
invalid UTF-8, NUL, long first lines around the 4096-character sniff. The
growth an edit reports is checked against the bytes it stores on the same files.
"""

from __future__ import annotations

import pytest
from dsh_fs import FsEditRequest, FsError, FsErrorCode
from dsh_fs import text as text_module
from dsh_fs.text import (
    BOM,
    AppliedEdit,
    apply_edit,
    decode_text,
    encode_text,
    normalize_newlines,
    uses_crlf,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

P = "/w/f.txt"


def reference_apply_edit(raw: bytes, edit: FsEditRequest, display_path: str) -> AppliedEdit:
    """``apply_edit`` before the byte-level path, kept verbatim as the oracle."""
    had_bom = raw.startswith(BOM)
    original = decode_text(raw, "edit", display_path, nul_anywhere=True)
    before = normalize_newlines(original)
    old = normalize_newlines(edit.old_string)
    if not old:
        raise FsError("old_string must be a non-empty string", FsErrorCode.FS_EDIT_NOT_FOUND)
    count = before.count(old)
    if count == 0:
        raise FsError(
            f'old_string was not found in "{display_path}"', FsErrorCode.FS_EDIT_NOT_FOUND
        )
    if count > 1 and not edit.replace_all:
        raise FsError(
            f'old_string matched {count} times in "{display_path}"; '
            "provide a more specific old_string or set replace_all to true",
            FsErrorCode.FS_AMBIGUOUS_EDIT,
        )
    new = normalize_newlines(edit.new_string)
    after = before.replace(old, new) if edit.replace_all else before.replace(old, new, 1)
    stored = after.replace("\n", "\r\n") if uses_crlf(original) else after
    data = encode_text(stored, "edit", display_path)
    return AppliedEdit(
        before=before,
        after=after,
        chunks=(BOM + data if had_bom else data,),
        replacements=count if edit.replace_all else 1,
    )


Outcome = tuple[str, str, bytes, int] | tuple[str, FsErrorCode, str]


def outcome(function: object, raw: bytes, edit: FsEditRequest, display_path: str = P) -> Outcome:
    """``(before, after, data, replacements)``, or the error as ``(type name, code, message)``."""
    assert callable(function)
    try:
        result = function(raw, edit, display_path)
    except FsError as exc:
        return (type(exc).__name__, exc.code, exc.message)
    assert isinstance(result, AppliedEdit)
    assert type(result.data) is bytes
    return (result.before, result.after, result.data, result.replacements)


def assert_same(raw: bytes, edit: FsEditRequest) -> None:
    assert outcome(apply_edit, raw, edit) == outcome(reference_apply_edit, raw, edit)


# --- strategies --------------------------------------------------------------

LINE_PIECES = ["a", "b", "ab", " ", "é", "日", "😀", "\ufeff", "\r"]
"""Line content; ``\\r`` here makes a lone CR (or a ``\\r\\r\\n`` before a CRLF)."""
FREE_PIECES = ["a", "b", "\n", "\r\n", "\r", "é", "日", "ab\n", "\r\r\n", "\ufeff", "\n\r"]
EOLS = ["\r\n", "\n"]


@st.composite
def file_texts(draw: st.DrawFn) -> str:
    """Mostly one consistent line ending; sometimes anything; sometimes a long first line."""
    kind = draw(st.sampled_from(["consistent", "consistent", "consistent", "free"]))
    if kind == "consistent":
        piece = st.sampled_from(LINE_PIECES[:-1] if draw(st.booleans()) else LINE_PIECES)
        lines = draw(st.lists(st.lists(piece, max_size=6).map("".join), max_size=8))
        eol = draw(st.sampled_from(EOLS))
        text = eol.join(lines) + (eol if draw(st.booleans()) else "")
    else:
        text = "".join(draw(st.lists(st.sampled_from(FREE_PIECES), max_size=30)))
    if draw(st.integers(0, 4)) == 0:
        # A first line ending right around the 4096-character sniff, in one-
        # or multi-byte characters, decides the written line ending.
        filler = draw(st.sampled_from(["x", "é", "日"]))
        text = filler * draw(st.integers(4088, 4100)) + text
    return text


@st.composite
def raw_files(draw: st.DrawFn) -> tuple[bytes, str]:
    """``(raw bytes, the text they were made from)``; sometimes BOM, NUL or bad UTF-8."""
    text = draw(file_texts())
    raw = text.encode("utf-8")
    damage = draw(st.integers(0, 9))
    if damage == 0 and raw:
        at = draw(st.integers(0, len(raw)))
        bad = draw(st.sampled_from([b"\xff", b"\xc3", b"\xe6\x97", b"\xc3\r\n\xa9", b"\0"]))
        raw = raw[:at] + bad + raw[at:]
    if draw(st.booleans()):
        raw = BOM + raw
    return raw, text


@st.composite
def edits(draw: st.DrawFn, text: str) -> FsEditRequest:
    """Often a piece of the file (as is, LF-normalized or CRLF-converted), else anything."""
    source = draw(st.sampled_from(["piece", "piece", "piece", "free", "special"]))
    if source == "piece" and text:
        start = draw(st.integers(0, len(text) - 1))
        old = text[start : start + draw(st.integers(1, 12))]
        conversion = draw(st.sampled_from(["as is", "lf", "crlf"]))
        if conversion == "lf":
            old = normalize_newlines(old)
        elif conversion == "crlf":
            old = normalize_newlines(old).replace("\n", "\r\n")
    elif source == "special":
        old = draw(
            st.sampled_from(["", "\r\n", "\n", "\r", "\ud800", "a\ud800", "\ufeff", "\ufeffa"])
        )
    else:
        old = "".join(draw(st.lists(st.sampled_from(FREE_PIECES), max_size=4)))
    new_pieces = [*FREE_PIECES, "\ud800", "xyz", ""]
    new = "".join(draw(st.lists(st.sampled_from(new_pieces), max_size=4)))
    return FsEditRequest(old, new, draw(st.booleans()))


@st.composite
def cases(draw: st.DrawFn) -> tuple[bytes, FsEditRequest]:
    raw, text = draw(raw_files())
    return raw, draw(edits(text))


# --- the property ------------------------------------------------------------


@settings(max_examples=600, deadline=None)
@given(case=cases())
@example(case=(b"a\r\nb\r\n", FsEditRequest("a\nb", "c\nd")))
@example(case=(b"a\r\r\nb", FsEditRequest("\r", "", replace_all=True)))
@example(case=(b"a\r\nb\nc", FsEditRequest("b", "x\ny")))
@example(case=(b"a\r\nb\r\n", FsEditRequest("a\r", "x")))
@example(case=(b"\xc3\r\n\xa9", FsEditRequest("a", "b")))
@example(case=(BOM + b"abc", FsEditRequest("\ufeffabc", "x")))
@example(case=(b"a\nb", FsEditRequest("a", "\ud800")))
@example(case=(b"a\nb", FsEditRequest("\ud800", "x")))
@example(case=(b"a\rb", FsEditRequest("b", "\nc")))
@example(case=(b"x\r\nx\rZ\r\n", FsEditRequest("x\r", "y")))
@example(case=(b"x\r\nx\rZ\r\nx\r\r\n", FsEditRequest("x\r", "y", replace_all=True)))
def test_apply_edit_equals_the_reference(case: tuple[bytes, FsEditRequest]) -> None:
    assert_same(*case)


@pytest.mark.long
@settings(max_examples=30_000, deadline=None)
@given(case=cases())
def test_apply_edit_equals_the_reference_long(case: tuple[bytes, FsEditRequest]) -> None:
    assert_same(*case)


# --- the cases the byte-level rule must get right, one by one ---------------


@pytest.mark.parametrize("first_line", [4093, 4094, 4095, 4096])
@pytest.mark.parametrize("filler", ["x", "é"])
def test_a_crlf_file_with_a_long_first_line_is_written_back_as_the_sniff_says(
    first_line: int, filler: str
) -> None:
    """The pair counts only when both its characters are within the first 4096."""
    raw = (filler * first_line + "\r\nold\r\n").encode("utf-8")
    result = apply_edit(raw, FsEditRequest("old", "new\nline"), P)
    crlf = first_line <= 4094
    eol = "\r\n" if crlf else "\n"
    assert result.data == (filler * first_line + eol + "new" + eol + "line" + eol).encode()
    assert_same(raw, FsEditRequest("old", "new\nline"))


def test_a_multi_line_old_string_matches_a_crlf_file_in_either_spelling() -> None:
    raw = b"one\r\ntwo\r\nthree\r\n"
    for old in ("one\ntwo", "one\r\ntwo"):
        result = apply_edit(raw, FsEditRequest(old, "1\n2"), P)
        assert result.data == b"1\r\n2\r\nthree\r\n"
        assert (result.before, result.after) == ("one\ntwo\nthree\n", "1\n2\nthree\n")


def test_a_lone_cr_in_old_string_does_not_match_the_cr_of_a_crlf_pair() -> None:
    raw = b"a\r\nb\r\n"
    assert outcome(apply_edit, raw, FsEditRequest("a\r", "x")) == (
        "FsError",
        FsErrorCode.FS_EDIT_NOT_FOUND,
        f'old_string was not found in "{P}"',
    )


def test_a_lone_surrogate_in_new_string_is_not_text_after_the_match_checks() -> None:
    for raw in (b"a\nb", b"a\r\nb", b"a\r\nb\nc"):
        assert outcome(apply_edit, raw, FsEditRequest("a", "\ud800")) == (
            "FsError",
            FsErrorCode.FS_NOT_TEXT,
            f'cannot edit "{P}": invalid UTF-8 text',
        )
        assert outcome(apply_edit, raw, FsEditRequest("zz", "\ud800")) == (
            "FsError",
            FsErrorCode.FS_EDIT_NOT_FOUND,
            f'old_string was not found in "{P}"',
        )


def test_invalid_utf8_next_to_a_crlf_pair_stays_invalid() -> None:
    """Dropping the ``\\r`` of a pair must not join a split character."""
    assert outcome(apply_edit, b"\xc3\r\n\xa9", FsEditRequest("a", "b")) == (
        "FsError",
        FsErrorCode.FS_NOT_TEXT,
        f'cannot edit "{P}": invalid UTF-8 text',
    )


def test_one_replacement_in_a_file_s_own_bytes_is_stored_without_a_copy_of_them() -> None:
    """A CRLF file stored as CRLF (or LF as LF) gives views of its bytes around the new
    string; a backend writes the pieces one after the other."""
    for raw in (b"a\r\nb\r\nc\r\n", b"a\nb\nc\n"):
        result = apply_edit(raw, FsEditRequest("b", "x\ny"), P)
        views = [piece for piece in result.chunks if isinstance(piece, memoryview)]
        assert len(views) == 2 and all(view.obj is raw for view in views)
        assert result.data == raw.replace(b"b", b"x\ny" if b"\r" not in raw else b"x\r\ny")


def test_the_bom_is_kept_and_never_matched() -> None:
    raw = BOM + b"\xef\xbb\xbfx\r\n"  # a BOM, then U+FEFF as the first character
    result = apply_edit(raw, FsEditRequest("\ufeffx", "y"), P)
    assert result.data == BOM + b"y\r\n"
    assert result.before == "\ufeffx\n"
    assert_same(raw, FsEditRequest("\ufeffx", "y"))


@pytest.mark.parametrize(
    ("body", "lf", "paired"),
    [
        (b"a\r\nb\r\nc", b"a\nb\nc", True),
        (b"a\nb\nc", b"a\nb\nc", False),
        (b"a\rb\nc", b"a\rb\nc", False),
        (b"", b"", False),
        (b"a\r\nb\nc", b"a\nb\nc", False),
        (b"a\r\r\nb", b"a\r\nb", False),
        (b"a\r\nb\rc", b"a\nb\rc", False),
        (b"\n\r\n", b"\n\n", False),
    ],
)
def test_the_lf_bytes_and_whether_every_cr_and_lf_is_paired(
    body: bytes, lf: bytes, paired: bool
) -> None:
    """Only a file whose every ``\\r`` and ``\\n`` is in a pair is edited in its own CRLF
    bytes; a file without any pair is its own LF bytes (the same object, no copy)."""
    assert text_module._lf_bytes(body) == (lf, paired)
    if b"\r\n" not in body:
        assert text_module._lf_bytes(body)[0] is body
