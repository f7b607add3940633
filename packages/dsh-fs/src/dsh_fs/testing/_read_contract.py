"""Contract of ``read_text``, ``stream_text`` and ``read_texts`` (the read messages, the BOM
rule)."""

from __future__ import annotations

import itertools

import pytest

from .._errors import FsError, FsErrorCode
from ..streaming import SkippedLines
from ._base import NON_REGULAR_KINDS, ContractBase, requires
from ._expect import (
    CHECK_HOWS,
    READ_HOWS,
    ReadHow,
    collect_stream,
    expect_fs_error,
    multibyte_text,
    read_via,
    skipping_stream,
)
from ._scratch import Scratch

NOT_TEXT = FsErrorCode.FS_NOT_TEXT
BOM = b"\xef\xbb\xbf"

INVALID_UTF8 = {
    "lone continuation byte at the start": b"\x80abc\n",
    "invalid byte in the middle": b"abc\xffdef\n",
    "invalid byte at the very end": b"abcdef\n\xff",
    "truncated 3-byte sequence at EOF": "abc€".encode()[:-1],
    "truncated 4-byte sequence at EOF": "abc\U0001d11e".encode()[:-2],
    "overlong encoding": b"ab\xc0\xafcd",
    "encoded surrogate": b"ab\xed\xa0\x80cd",
    "code point above U+10FFFF": b"ab\xf4\x90\x80\x80cd",
    "file of one BOM byte": b"\xef",
    "file of two BOM bytes": b"\xef\xbb",
    "BOM then a truncated character": b"\xef\xbb\xbf\xe2\x82",
}

SKIP_TEXTS = {
    "empty": b"",
    "only a BOM": BOM,
    "BOM and lines": BOM + b"a\nb\n",
    "one line without newline": b"abc",
    "one newline": b"\n",
    "blank lines": b"\n\n\n",
    "CRLF, lone CR, no final newline": b"a\r\nb\rc\r\nd",
    "multi-byte characters": "é\n€€\n\U0001d11e\nµ".encode(),
}


def skip_reference(text: str, count: int | None) -> tuple[SkippedLines, str]:
    """What ``skip_lines(count)`` passes over at the start of ``text``, and the text left."""
    position = passed = 0
    while count is None or passed < count:
        newline = text.find("\n", position)
        if newline < 0:
            return SkippedLines(passed, position < len(text)), ""
        position, passed = newline + 1, passed + 1
    return SkippedLines(passed, False), text[position:]


class ReadContract(ContractBase):
    """Whole and streamed reads: exact text, BOM, chunking, and the read errors."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", READ_HOWS)
    async def test_read_returns_the_text_byte_for_byte_without_newline_normalization(
        self, scratch: Scratch, how: ReadHow
    ) -> None:
        text = "line one\r\nline two\rline three\n\nµ€𝄞 tab\there\r\n\r"
        scratch.put("f.txt", text.encode())
        assert await read_via(scratch.fs, await scratch.fs.resolve("f.txt"), how) == text

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", READ_HOWS)
    async def test_read_of_an_empty_file_is_empty(self, scratch: Scratch, how: ReadHow) -> None:
        scratch.put("empty.txt", b"")
        assert await read_via(scratch.fs, await scratch.fs.resolve("empty.txt"), how) == ""

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", READ_HOWS)
    async def test_read_omits_only_the_leading_byte_order_mark(
        self, scratch: Scratch, how: ReadHow
    ) -> None:
        scratch.put("bom.txt", BOM + "\ufeffkept\r\n".encode())
        scratch.put("only-bom.txt", BOM)
        fs = scratch.fs
        assert await read_via(fs, await fs.resolve("bom.txt"), how) == "\ufeffkept\r\n"
        assert await read_via(fs, await fs.resolve("only-bom.txt"), how) == ""

    @requires("supports_symlinks")
    @pytest.mark.anyio
    @pytest.mark.parametrize("how", READ_HOWS)
    async def test_read_follows_a_symlink(self, scratch: Scratch, how: ReadHow) -> None:
        scratch.put("real.txt", b"through the link\n")
        scratch.symlink("link.txt", "real.txt")
        target = await scratch.fs.resolve("link.txt")
        assert await read_via(scratch.fs, target, how) == "through the link\n"

    @pytest.mark.anyio
    @pytest.mark.parametrize("seed", [0, 1, 2])
    async def test_stream_equals_read_for_large_text_with_characters_split_across_chunks(
        self, scratch: Scratch, seed: int
    ) -> None:
        text = multibyte_text((1 << 20) + 2 * seed + 1, seed=seed)
        scratch.put("big.txt", text.encode())
        target = await scratch.fs.resolve("big.txt")
        chunks = await collect_stream(scratch.fs.stream_text(target))
        assert all(isinstance(chunk, str) for chunk in chunks)
        assert "".join(chunks) == text
        assert await scratch.fs.read_text(target) == text

    @pytest.mark.anyio
    async def test_stream_of_a_large_file_comes_in_more_than_one_chunk(
        self, scratch: Scratch
    ) -> None:
        text = multibyte_text(4 << 20, seed=7)
        scratch.put("huge.txt", BOM + text.encode())
        chunks = await collect_stream(scratch.fs.stream_text(await scratch.fs.resolve("huge.txt")))
        assert len(chunks) > 1
        assert "".join(chunks) == text

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", CHECK_HOWS)
    async def test_read_of_an_absent_file_is_not_found(
        self, scratch: Scratch, how: ReadHow
    ) -> None:
        target = await scratch.fs.resolve("absent.txt")
        await expect_fs_error(
            read_via(scratch.fs, target, how),
            FsErrorCode.FS_NOT_FOUND,
            f'cannot read "{target.display_path}": not found',
        )

    @requires("supports_symlinks")
    @pytest.mark.anyio
    @pytest.mark.parametrize("how", CHECK_HOWS)
    async def test_read_through_a_broken_symlink_is_not_found(
        self, scratch: Scratch, how: ReadHow
    ) -> None:
        scratch.symlink("broken", "missing.txt")
        target = await scratch.fs.resolve("broken")
        await expect_fs_error(
            read_via(scratch.fs, target, how),
            FsErrorCode.FS_NOT_FOUND,
            f'cannot read "{target.display_path}": not found',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", CHECK_HOWS)
    @pytest.mark.parametrize("kind", NON_REGULAR_KINDS)
    async def test_read_of_a_non_regular_file_fails(
        self, scratch: Scratch, how: ReadHow, kind: str
    ) -> None:
        path = self.make_non_regular(scratch, kind)
        target = await scratch.fs.resolve(path)
        await expect_fs_error(
            read_via(scratch.fs, target, how),
            FsErrorCode.FS_NOT_REGULAR_FILE,
            f'cannot read "{target.display_path}": not a regular file',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", CHECK_HOWS)
    @pytest.mark.parametrize("nul_at", [0, 5, 4096, 8191])
    async def test_nul_byte_within_the_first_8192_bytes_is_a_binary_file(
        self, scratch: Scratch, how: ReadHow, nul_at: int
    ) -> None:
        data = bytearray(b"x" * 20000)
        data[nul_at] = 0
        scratch.put("bin.dat", bytes(data))
        target = await scratch.fs.resolve("bin.dat")
        await expect_fs_error(
            read_via(scratch.fs, target, how),
            NOT_TEXT,
            f'cannot read "{target.display_path}": binary file',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", READ_HOWS)
    @pytest.mark.parametrize("nul_at", [8192, 8193, 15000])
    async def test_nul_byte_after_the_first_8192_bytes_is_read_as_text(
        self, scratch: Scratch, how: ReadHow, nul_at: int
    ) -> None:
        data = bytearray(b"y" * 16384)
        data[nul_at] = 0
        scratch.put("late-nul.txt", bytes(data))
        text = await read_via(scratch.fs, await scratch.fs.resolve("late-nul.txt"), how)
        assert text == data.decode()

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", CHECK_HOWS)
    @pytest.mark.parametrize("case", sorted(INVALID_UTF8))
    async def test_invalid_utf8_is_rejected(
        self, scratch: Scratch, how: ReadHow, case: str
    ) -> None:
        scratch.put("bad.txt", INVALID_UTF8[case])
        target = await scratch.fs.resolve("bad.txt")
        await expect_fs_error(
            read_via(scratch.fs, target, how),
            NOT_TEXT,
            f'cannot read "{target.display_path}": invalid UTF-8 text',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", CHECK_HOWS)
    @pytest.mark.parametrize("tail", [b"\xff", "€".encode()[:2]])
    async def test_invalid_utf8_after_a_megabyte_of_valid_text_is_rejected(
        self, scratch: Scratch, how: ReadHow, tail: bytes
    ) -> None:
        scratch.put("late-bad.txt", multibyte_text(1 << 20, seed=3).encode() + tail)
        target = await scratch.fs.resolve("late-bad.txt")
        await expect_fs_error(
            read_via(scratch.fs, target, how),
            NOT_TEXT,
            f'cannot read "{target.display_path}": invalid UTF-8 text',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", CHECK_HOWS)
    async def test_invalid_utf8_error_chains_the_decoding_error_as_its_cause(
        self, scratch: Scratch, how: ReadHow
    ) -> None:
        scratch.put("bad.txt", b"valid start \xff then more\n")
        target = await scratch.fs.resolve("bad.txt")
        err = await expect_fs_error(
            read_via(scratch.fs, target, how),
            NOT_TEXT,
            f'cannot read "{target.display_path}": invalid UTF-8 text',
        )
        assert isinstance(err.__cause__, UnicodeDecodeError)

    # -- skip_lines (optional: dsh_fs.streaming.SupportsSkipLines) -------------

    @pytest.mark.anyio
    @pytest.mark.parametrize("count", [0, 1, 2, 3, 4, None])
    @pytest.mark.parametrize("case", sorted(SKIP_TEXTS))
    async def test_skip_lines_passes_over_exactly_the_lines_asked(
        self, scratch: Scratch, case: str, count: int | None
    ) -> None:
        data = SKIP_TEXTS[case]
        scratch.put("f.txt", data)
        text = data.decode("utf-8-sig")
        stream = skipping_stream(scratch.fs, await scratch.fs.resolve("f.txt"))
        skipped = await stream.skip_lines(count)
        rest = "".join(await collect_stream(stream))
        assert (skipped, rest) == skip_reference(text, count)

    @pytest.mark.anyio
    @pytest.mark.parametrize("count", [1, 999, "all but one", "all", "more", None])
    async def test_skip_lines_over_many_chunks_then_the_rest_reads_exactly(
        self, scratch: Scratch, count: int | str | None
    ) -> None:
        text = multibyte_text(3 << 20, seed=11)
        newlines = text.count("\n")
        scratch.put("big.txt", BOM + text.encode())
        wanted = {"all but one": newlines - 1, "all": newlines, "more": newlines + 5}.get(
            str(count), count
        )
        assert wanted is None or isinstance(wanted, int)
        stream = skipping_stream(scratch.fs, await scratch.fs.resolve("big.txt"))
        skipped = await stream.skip_lines(wanted)
        rest = "".join(await collect_stream(stream))
        assert (skipped, rest) == skip_reference(text, wanted)

    @pytest.mark.anyio
    async def test_skip_lines_and_iteration_take_turns_on_one_stream(
        self, scratch: Scratch
    ) -> None:
        text = multibyte_text(3 << 20, seed=12)
        scratch.put("big.txt", text.encode())
        stream = skipping_stream(scratch.fs, await scratch.fs.resolve("big.txt"))
        position = turns = 0
        counts = itertools.cycle((0, 1, 7, 5000, 1))
        while (chunk := await anext(stream, None)) is not None:
            assert text.startswith(chunk, position)
            position += len(chunk)
            count = next(counts)
            skipped, rest = skip_reference(text[position:], count)
            assert await stream.skip_lines(count) == skipped
            position, turns = len(text) - len(rest), turns + 1
        assert position == len(text)
        assert turns >= 3

    @pytest.mark.anyio
    async def test_skip_lines_to_the_end_counts_the_last_line_without_newline(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"one\ntwo\nthree")
        stream = skipping_stream(scratch.fs, await scratch.fs.resolve("f.txt"))
        assert tuple(await stream.skip_lines(None)) == (2, True)
        assert await collect_stream(stream) == []

    @pytest.mark.anyio
    async def test_read_texts_answers_each_target_as_read_text_does_in_order(
        self, scratch: Scratch
    ) -> None:
        scratch.put("a.txt", b"alpha\n")
        scratch.put("c.txt", BOM + "\u00e7a\r\n".encode())
        scratch.put("bin.dat", b"x\x00y\n")
        scratch.put("bad.txt", b"ab\xffcd\n")
        scratch.mkdir("dir")
        names = ["c.txt", "absent.txt", "a.txt", "bin.dat", "dir", "bad.txt", "a.txt"]
        targets = [await scratch.fs.resolve(name) for name in names]
        expected: list[str | tuple[FsErrorCode, str]] = []
        for target in targets:
            try:
                expected.append(await scratch.fs.read_text(target))
            except FsError as exc:
                expected.append((exc.code, str(exc)))
        got = await scratch.fs.read_texts(targets)
        assert [(r.code, str(r)) if isinstance(r, FsError) else r for r in got] == expected
        assert [got[0], got[2], got[6]] == ["\u00e7a\r\n", "alpha\n", "alpha\n"]
        codes = [r.code for r in got if isinstance(r, FsError)]
        assert codes[:1] == [FsErrorCode.FS_NOT_FOUND] and codes[1] == NOT_TEXT
        assert codes[3] == NOT_TEXT and len(codes) == 4
        assert await scratch.fs.read_texts([]) == []

    @pytest.mark.anyio
    async def test_read_texts_holds_no_more_than_max_bytes(self, scratch: Scratch) -> None:
        a, b = b"a" * 60 + b"\n", b"b" * 60 + b"\n"
        scratch.put("a.txt", a)
        scratch.put("b.txt", b)
        scratch.put("c.txt", b"c\n")
        scratch.put("big.txt", b"x" * 200)
        targets = [await scratch.fs.resolve(name) for name in ("a.txt", "b.txt", "c.txt")]
        # Together 124 bytes: a call that may hold 124 refuses none.
        texts = [a.decode(), b.decode(), "c\n"]
        assert await scratch.fs.read_texts(targets, max_bytes=124) == texts
        # 100: a.txt and b.txt do not both fit; whichever is read second is refused, unread.
        got = await scratch.fs.read_texts(targets, max_bytes=100)
        refused = [i for i, text in enumerate(got) if isinstance(text, FsError)]
        assert len(refused) == 1 and refused[0] in (0, 1) and got[2] == "c\n"
        error = got[refused[0]]
        assert isinstance(error, FsError) and error.code is FsErrorCode.FS_TOO_LARGE
        assert str(error) == (
            f'cannot read "{targets[refused[0]].display_path}": more text than this read may hold'
        )
        assert got[1 - refused[0]] == texts[1 - refused[0]]
        big = await scratch.fs.resolve("big.txt")
        [alone] = await scratch.fs.read_texts([big], max_bytes=199)
        assert isinstance(alone, FsError) and alone.code is FsErrorCode.FS_TOO_LARGE
        assert await scratch.fs.read_texts([big], max_bytes=200) == ["x" * 200]
