"""``dsh_fs.text``: decoding, the edit rules and line endings, as properties."""

from __future__ import annotations

import itertools
import re
from unittest import mock

import pytest
from dsh_fs import FsEditRequest, FsError, FsErrorCode
from dsh_fs import text as text_rules
from dsh_fs.text import (
    BINARY_SNIFF_BYTES,
    BOM,
    EDIT_GROWTH_MAX_BYTES,
    StreamDecoder,
    apply_edit,
    decode_previous,
    decode_text,
    normalize_newlines,
    uses_crlf,
)
from hypothesis import example, given
from hypothesis import strategies as st

P = "/w/f.txt"
utf8_text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"))
edit_text = st.text(alphabet="ab\r\n", max_size=40)
NEVER_VALID = [0xC0, 0xC1, 0xF5, 0xF8, 0xFE, 0xFF]


def naive_count(text: str, old: str) -> int:
    """Occurrences of ``old`` counted left to right without overlap, by hand."""
    count, i = 0, 0
    while i <= len(text) - len(old):
        if text[i : i + len(old)] == old:
            count, i = count + 1, i + len(old)
        else:
            i += 1
    return count


def naive_replace(text: str, old: str, new: str, limit: int) -> str:
    out, i, done = [], 0, 0
    while i < len(text):
        if done < limit and text[i : i + len(old)] == old:
            out.append(new)
            i, done = i + len(old), done + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def naive_uses_crlf(text: str) -> bool:
    head = text[:4096]
    crlf = sum(1 for i, c in enumerate(head) if c == "\n" and i > 0 and head[i - 1] == "\r")
    return crlf > head.count("\n") - crlf


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


def stream_decode(data: bytes, cuts: list[int]) -> str:
    decoder = StreamDecoder(P)
    parts = [decoder.feed(chunk) for chunk in chunked(data, cuts)]
    parts.append(decoder.feed(b"", final=True))
    return "".join(parts)


# --- apply_edit --------------------------------------------------------------


@given(text=edit_text, old=edit_text.filter(bool), new=edit_text, replace_all=st.booleans())
@example(text="aaaa", old="aa", new="b", replace_all=False)
@example(text="a\r\r\nb", old="\r\n", new="x", replace_all=True)
def test_apply_edit_counts_literal_occurrences_without_overlap(
    text: str, old: str, new: str, replace_all: bool
) -> None:
    before, needle = normalize_newlines(text), normalize_newlines(old)
    count = naive_count(before, needle)
    edit = FsEditRequest(old, new, replace_all)
    if count == 0:
        with pytest.raises(FsError) as caught:
            apply_edit(text.encode(), edit, P)
        assert caught.value.code is FsErrorCode.FS_EDIT_NOT_FOUND
        assert str(caught.value) == f'old_string was not found in "{P}"'
    elif count > 1 and not replace_all:
        with pytest.raises(FsError) as caught:
            apply_edit(text.encode(), edit, P)
        assert caught.value.code is FsErrorCode.FS_AMBIGUOUS_EDIT
        assert str(caught.value) == (
            f'old_string matched {count} times in "{P}"; '
            "provide a more specific old_string or set replace_all to true"
        )
    else:
        applied = apply_edit(text.encode(), edit, P)
        limit = count if replace_all else 1
        assert applied.before == before
        assert applied.after == naive_replace(before, needle, normalize_newlines(new), limit)
        assert applied.replacements == limit


# The lines never hold the edit's "MARK" (no "M": the edit stays unambiguous)
# nor a U+FEFF (at the start it would read as a BOM).
_NO_MARK = "\r\n\x00\ufeffM"


@given(
    lines=st.lists(st.text(st.characters(codec="utf-8", exclude_characters=_NO_MARK)), min_size=1),
    new=st.text(st.characters(codec="utf-8", exclude_characters="\x00")),
    bom=st.booleans(),
)
def test_crlf_file_stays_crlf_after_any_edit(lines: list[str], new: str, bom: bool) -> None:
    text = "\r\n".join(lines) + "\r\nMARK"
    raw = (BOM if bom else b"") + text.encode()
    applied = apply_edit(raw, FsEditRequest("MARK", new), P)
    assert applied.data.startswith(BOM) == bom
    body = applied.data[len(BOM) :] if bom else applied.data
    assert body.count(b"\n") == body.count(b"\r\n"), "a bare LF was written into a CRLF file"
    assert normalize_newlines(body.decode()) == applied.after


@given(
    lines=st.lists(st.text(st.characters(codec="utf-8", exclude_characters=_NO_MARK))),
    new=st.text(st.characters(codec="utf-8", exclude_characters="\r\x00")),
)
def test_lf_file_stays_lf_after_any_edit(lines: list[str], new: str) -> None:
    raw = ("\n".join(lines) + "\nMARK").encode()
    applied = apply_edit(raw, FsEditRequest("MARK", new + "\r\n"), P)
    assert b"\r" not in applied.data
    assert applied.data.decode() == applied.after


def test_apply_edit_checks_binary_then_utf8_then_empty_old_string() -> None:
    with pytest.raises(FsError, match="binary file"):
        apply_edit(b"\xff" + b"x" * 9000 + b"\x00", FsEditRequest("", "y"), P)
    with pytest.raises(FsError, match="invalid UTF-8 text"):
        apply_edit(b"\xff", FsEditRequest("", "y"), P)
    with pytest.raises(FsError) as caught:
        apply_edit(b"x", FsEditRequest("", "y"), P)
    assert (str(caught.value), caught.value.code) == (
        "old_string must be a non-empty string",
        FsErrorCode.FS_EDIT_NOT_FOUND,
    )


# --- line endings --------------------------------------------------------------


@given(
    st.text(alphabet="\r\nab", max_size=300)
    | st.text(alphabet="\r\n", min_size=4000, max_size=4200)
)
@example("\r\n" * 2048 + "\n" * 10)
@example("x" * 4095 + "\r\n" + "\n")
def test_uses_crlf_counts_pairs_against_bare_lf_in_the_first_4096_characters(text: str) -> None:
    assert uses_crlf(text) == naive_uses_crlf(text)


def test_uses_crlf_tie_is_lf() -> None:
    assert uses_crlf("a\r\nb\n") is False
    assert uses_crlf("a\r\nb\r\nc\n") is True
    assert uses_crlf("") is False


@given(st.text(alphabet="\r\nab"))
def test_normalize_newlines_replaces_only_crlf_pairs(text: str) -> None:
    normalized = normalize_newlines(text)
    assert normalized == text.replace("\r\n", "\n")
    assert normalized.count("\r") == text.count("\r") - text.count("\r\n")


# --- decoding ------------------------------------------------------------------


@given(text=utf8_text, bom=st.booleans(), cuts=st.lists(st.integers(0, 200)))
def test_stream_decoder_equals_whole_decode_for_any_chunking(
    text: str, bom: bool, cuts: list[int]
) -> None:
    data = (BOM if bom else b"") + text.encode()
    assert stream_decode(data, cuts) == decode_text(data, "read", P) == text


@given(
    text=utf8_text,
    bad=st.sampled_from(NEVER_VALID),
    where=st.integers(0, 10_000),
    cuts=st.lists(st.integers(0, 200)),
)
def test_invalid_utf8_is_rejected_at_any_position_for_any_chunking(
    text: str, bad: int, where: int, cuts: list[int]
) -> None:
    data = text.encode()
    at = min(where, len(data))
    data = data[:at] + bytes([bad]) + data[at:]
    message = f'cannot read "{P}": invalid UTF-8 text'
    with pytest.raises(FsError) as whole:
        decode_text(data, "read", P)
    with pytest.raises(FsError) as streamed:
        stream_decode(data, cuts)
    for err in (whole.value, streamed.value):
        assert (str(err), err.code) == (message, FsErrorCode.FS_NOT_TEXT)


@given(
    text=st.text(st.characters(codec="utf-8", min_codepoint=0x80), min_size=1),
    drop=st.integers(1, 3),
    cuts=st.lists(st.integers(0, 50)),
)
def test_truncated_character_at_the_end_is_invalid(text: str, drop: int, cuts: list[int]) -> None:
    last = text[-1].encode()
    if drop >= len(last):
        drop = len(last) - 1
    if drop == 0:
        return
    data = text.encode()[:-drop]
    with pytest.raises(FsError, match="invalid UTF-8 text"):
        decode_text(data, "read", P)
    with pytest.raises(FsError, match="invalid UTF-8 text"):
        stream_decode(data, cuts)


@given(nul_at=st.integers(0, BINARY_SNIFF_BYTES - 1), cuts=st.lists(st.integers(0, 9000)))
def test_nul_within_the_first_8192_bytes_is_binary_for_any_chunking(
    nul_at: int, cuts: list[int]
) -> None:
    data = bytearray(b"t" * 9000)
    data[nul_at] = 0
    message = f'cannot read "{P}": binary file'
    with pytest.raises(FsError) as whole:
        decode_text(bytes(data), "read", P)
    with pytest.raises(FsError) as streamed:
        stream_decode(bytes(data), cuts)
    for err in (whole.value, streamed.value):
        assert (str(err), err.code) == (message, FsErrorCode.FS_NOT_TEXT)


@given(nul_at=st.integers(BINARY_SNIFF_BYTES, 9999), cuts=st.lists(st.integers(0, 10_000)))
def test_nul_after_the_first_8192_bytes_is_text_for_reads(nul_at: int, cuts: list[int]) -> None:
    data = bytearray(b"t" * 10_000)
    data[nul_at] = 0
    assert stream_decode(bytes(data), cuts) == decode_text(bytes(data), "read", P) == data.decode()
    with pytest.raises(FsError, match=f'cannot edit "{P}": binary file'):
        decode_text(bytes(data), "edit", P, nul_anywhere=True)


def test_decode_text_omits_only_one_leading_bom() -> None:
    assert decode_text(BOM + BOM + b"x", "read", P) == "\ufeffx"
    assert decode_text(BOM, "read", P) == ""
    assert decode_text(b"x" + BOM, "read", P) == "x\ufeff"


def test_stream_decoder_handles_a_bom_split_across_chunks() -> None:
    assert stream_decode(BOM + b"abc", [1, 2]) == "abc"
    with pytest.raises(FsError, match="invalid UTF-8 text"):
        stream_decode(BOM[:2], [1])


@given(
    data=st.binary(max_size=200)
    | utf8_text.map(str.encode)
    | utf8_text.map(lambda t: BOM + t.encode())
)
def test_decode_previous_is_normalized_text_or_none(data: bytes) -> None:
    try:
        expected: str | None = normalize_newlines(decode_text(data, "write", P))
    except FsError:
        expected = None
    assert decode_previous(data) == expected


@given(
    lines=st.lists(st.sampled_from(["a", "ab", "é", "a\u00e9a", ""]), min_size=1, max_size=12),
    new=st.sampled_from(["", "x", "\n", "é\né", "long replacement text\n\n"]),
    crlf=st.booleans(),
    bom=st.booleans(),
    replace_all=st.booleans(),
)
def test_the_growth_an_edit_reports_is_what_it_would_add(
    lines: list[str], new: str, crlf: bool, bom: bool, replace_all: bool
) -> None:
    """With a limit below any growth, the message names exactly ``len(new) - len(old)``
    of the bytes the edit would store (files with one line ending)."""
    body = ("\r\n" if crlf else "\n").join([*lines, "a"]).encode()
    raw = BOM + body if bom else body
    edit = FsEditRequest("a", new, replace_all=True) if replace_all else FsEditRequest("a", new)
    try:
        data = apply_edit(raw, edit, P).data
    except FsError:
        return  # ambiguous: nothing is built, nothing to compare
    assert reported_growth(raw, edit) == len(data) - len(raw)


@given(
    parts=st.lists(st.sampled_from(["a", "é", "ab", "\r", "\n", "\r\n", "\r\r\n"]), max_size=16),
    new=st.sampled_from(["", "x", "\n", "é\né", "\r", "a\r\n"]),
    bom=st.booleans(),
    replace_all=st.booleans(),
)
def test_the_growth_of_any_file_leaves_out_only_a_bare_lf_given_a_cr(
    parts: list[str], new: str, bom: bool, replace_all: bool
) -> None:
    """Mixed endings and lone ``\\r`` too: the figure is what the edit adds, except the
    ``\\r`` a CRLF file's rewrite gives its bare ``\\n`` (counting those takes a pass)."""
    body = ("".join(parts) + "a").encode()
    raw = BOM + body if bom else body
    edit = FsEditRequest("a", new, replace_all=replace_all)
    try:
        data = apply_edit(raw, edit, P).data
    except FsError:
        return
    bare_lf = body.count(b"\n") - body.count(b"\r\n") if uses_crlf(body.decode()) else 0
    assert reported_growth(raw, edit) == len(data) - len(raw) - bare_lf


def reported_growth(raw: bytes, edit: FsEditRequest) -> int:
    """The growth the refusal names when the limit is below any growth."""
    with (
        mock.patch.object(text_rules, "EDIT_GROWTH_MAX_BYTES", -(10**9)),
        pytest.raises(FsError) as caught,
    ):
        apply_edit(raw, edit, P)
    assert caught.value.code is FsErrorCode.FS_TOO_LARGE
    reported = re.fullmatch(
        r'cannot edit ".*": the edit would grow the file by (-?\d+) bytes.*', str(caught.value)
    )
    assert reported is not None
    return int(reported[1])


def test_an_edit_of_a_mixed_line_ending_file_is_bounded_too() -> None:
    raw = b"a\r\nb\r\nc\n"  # CRLF dominant, one bare LF: the general path
    with pytest.raises(FsError) as caught:
        apply_edit(raw, FsEditRequest("b", "\n" * (EDIT_GROWTH_MAX_BYTES // 2 + 1)), P)
    assert (str(caught.value), caught.value.code) == (
        f'cannot edit "{P}": the edit would grow the file by {EDIT_GROWTH_MAX_BYTES + 1} bytes'
        " (limit 16777216)",
        FsErrorCode.FS_TOO_LARGE,
    )


def test_a_previous_content_over_10_mib_is_not_carried() -> None:
    assert decode_previous(b"x" * (10 * 1024 * 1024 + 1)) is None
    assert decode_previous(b"x" * (10 * 1024 * 1024)) == "x" * (10 * 1024 * 1024)
