"""Contract of ``edit_text`` (guard before match, the edit messages, line endings, BOM).

Kept as one module: one contract class, its cases in the order of the edit rule.
"""

from __future__ import annotations

import pytest

from .._errors import FsError, FsErrorCode
from .._types import EditGuard, FsEditRequest
from ..text import EDIT_GROWTH_MAX_BYTES
from ._base import NON_REGULAR_KINDS, ContractBase, requires
from ._expect import expect_fs_error
from ._scratch import Scratch

STALE = FsErrorCode.FS_STALE_VERSION
BOM = b"\xef\xbb\xbf"


def ambiguous(count: int, display_path: str) -> str:
    return (
        f'old_string matched {count} times in "{display_path}"; '
        "provide a more specific old_string or set replace_all to true"
    )


class EditContract(ContractBase):
    """Literal edits: outcomes, every refusal and its message, line endings, BOM."""

    async def _refused(
        self,
        scratch: Scratch,
        path: str,
        edit: FsEditRequest,
        code: FsErrorCode,
        message: str,
        expected: EditGuard | None = None,
    ) -> None:
        """Require the refusal, and that the file and its directory are untouched."""
        before = scratch.get(path)
        names = scratch.names()
        target = await scratch.fs.resolve(path)
        await expect_fs_error(
            scratch.fs.edit_text(target, edit, expected),
            code,
            message.replace("<p>", target.display_path),
        )
        assert scratch.get(path) == before
        assert scratch.names() == names

    @pytest.mark.anyio
    async def test_edit_replaces_one_occurrence_and_reports_both_texts(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"alpha\nbeta\ngamma\n")
        target = await scratch.fs.resolve("f.txt")
        outcome = await scratch.fs.edit_text(target, FsEditRequest("beta", "BETA"))
        assert (outcome.before, outcome.after) == ("alpha\nbeta\ngamma\n", "alpha\nBETA\ngamma\n")
        assert outcome.replacements == 1
        assert scratch.get("f.txt") == b"alpha\nBETA\ngamma\n"
        assert scratch.names() == ["f.txt"]

    @pytest.mark.anyio
    async def test_edit_with_replace_all_replaces_every_occurrence(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"x = x + x\n")
        target = await scratch.fs.resolve("f.txt")
        outcome = await scratch.fs.edit_text(target, FsEditRequest("x", "y", replace_all=True))
        assert outcome.after == "y = y + y\n"
        assert outcome.replacements == 3
        assert scratch.get("f.txt") == b"y = y + y\n"

    @pytest.mark.anyio
    async def test_edit_counts_occurrences_left_to_right_without_overlap(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"aaaaa")
        target = await scratch.fs.resolve("f.txt")
        await expect_fs_error(
            scratch.fs.edit_text(target, FsEditRequest("aa", "b")),
            FsErrorCode.FS_AMBIGUOUS_EDIT,
            ambiguous(2, target.display_path),
        )
        outcome = await scratch.fs.edit_text(target, FsEditRequest("aa", "b", replace_all=True))
        assert (outcome.after, outcome.replacements) == ("bba", 2)

    @pytest.mark.anyio
    async def test_edit_can_delete_text(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"keep drop keep\n")
        outcome = await scratch.fs.edit_text(
            await scratch.fs.resolve("f.txt"), FsEditRequest(" drop", "")
        )
        assert outcome.after == "keep keep\n"
        assert scratch.get("f.txt") == b"keep keep\n"

    @pytest.mark.anyio
    async def test_guarded_edit_at_the_current_version_succeeds(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"one\n")
        target = await scratch.fs.resolve("f.txt")
        info = await scratch.fs.stat(target)
        assert info is not None
        outcome = await scratch.fs.edit_text(
            target, FsEditRequest("one", "two"), EditGuard(info.version)
        )
        assert outcome.after == "two\n"
        assert outcome.version != info.version

    @pytest.mark.anyio
    async def test_unguarded_edit_of_an_absent_file_is_not_found(self, scratch: Scratch) -> None:
        scratch.mkdir("d")
        for path in ("d/absent.txt", "d/no/such/dir.txt"):
            await self._refused(
                scratch,
                path,
                FsEditRequest("a", "b"),
                FsErrorCode.FS_NOT_FOUND,
                'cannot edit "<p>": not found',
            )
        assert scratch.names("d") == []

    @pytest.mark.anyio
    async def test_guarded_edit_of_a_vanished_file_says_it_no_longer_exists(
        self, scratch: Scratch
    ) -> None:
        scratch.put("d/f.txt", b"was here\n")
        target = await scratch.fs.resolve("d/f.txt")
        seen = await scratch.fs.stat(target)
        assert seen is not None
        scratch.remove("d/f.txt")
        await self._refused(
            scratch,
            "d/f.txt",
            FsEditRequest("was", "is"),
            STALE,
            'cannot edit "<p>": file no longer exists',
            EditGuard(seen.version),
        )
        assert scratch.names("d") == []

    @pytest.mark.anyio
    @pytest.mark.parametrize("kind", NON_REGULAR_KINDS)
    @pytest.mark.parametrize("guarded", [False, True])
    async def test_edit_of_a_non_regular_file_fails(
        self, scratch: Scratch, kind: str, guarded: bool
    ) -> None:
        path = self.make_non_regular(scratch, kind)
        await self._refused(
            scratch,
            path,
            FsEditRequest("a", "b"),
            FsErrorCode.FS_NOT_REGULAR_FILE,
            'cannot edit "<p>": not a regular file',
            EditGuard("stale-version") if guarded else None,
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        "content",
        [b"old text\n", b"new text\n", b"bin\x00ary", b"bad \xff utf-8"],
        ids=["still-matching", "no-longer-matching", "now-binary", "now-invalid-utf8"],
    )
    async def test_edit_of_stale_version_fails_before_matching(
        self, scratch: Scratch, content: bytes
    ) -> None:
        scratch.put("f.txt", b"old text, first version\n")
        target = await scratch.fs.resolve("f.txt")
        seen = await scratch.fs.stat(target)
        assert seen is not None
        scratch.put("f.txt", content)
        await self._refused(
            scratch,
            "f.txt",
            FsEditRequest("old text", "edited"),
            STALE,
            'cannot edit "<p>": file changed since it was read',
            EditGuard(seen.version),
        )

    @pytest.mark.anyio
    async def test_edit_of_stale_version_after_a_backend_write_fails(
        self, scratch: Scratch
    ) -> None:
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        first = await fs.write_text(target, "same size A\n")
        await fs.write_text(target, "same size B\n")
        await self._refused(
            scratch,
            "f.txt",
            FsEditRequest("same", "other"),
            STALE,
            'cannot edit "<p>": file changed since it was read',
            EditGuard(first.version),
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("nul_at", [0, 100, 8192, 20000])
    async def test_edit_of_a_file_with_a_nul_byte_anywhere_is_binary(
        self, scratch: Scratch, nul_at: int
    ) -> None:
        data = bytearray(b"match me " * 3000)
        data[nul_at] = 0
        scratch.put("f.txt", bytes(data))
        await self._refused(
            scratch,
            "f.txt",
            FsEditRequest("match me", "x", replace_all=True),
            FsErrorCode.FS_NOT_TEXT,
            'cannot edit "<p>": binary file',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        "content",
        [b"\xffmatch", b"match \xc3", b"match \xed\xa0\x80", "match €".encode()[:-1]],
        ids=["start", "truncated-2-byte", "surrogate", "truncated-at-eof"],
    )
    async def test_edit_of_invalid_utf8_is_refused(self, scratch: Scratch, content: bytes) -> None:
        scratch.put("f.txt", content)
        await self._refused(
            scratch,
            "f.txt",
            FsEditRequest("match", "x"),
            FsErrorCode.FS_NOT_TEXT,
            'cannot edit "<p>": invalid UTF-8 text',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("replace_all", [False, True])
    async def test_edit_with_an_empty_old_string_is_refused(
        self, scratch: Scratch, replace_all: bool
    ) -> None:
        scratch.put("f.txt", b"text\n")
        await self._refused(
            scratch,
            "f.txt",
            FsEditRequest("", "x", replace_all=replace_all),
            FsErrorCode.FS_EDIT_NOT_FOUND,
            "old_string must be a non-empty string",
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("old", ["absent", "TEXT", "text\r\n\r\n", "\ufefftext"])
    async def test_edit_of_a_missing_old_string_is_not_found(
        self, scratch: Scratch, old: str
    ) -> None:
        scratch.put("f.txt", b"\xef\xbb\xbftext\r\nmore text\n")
        await self._refused(
            scratch,
            "f.txt",
            FsEditRequest(old, "x"),
            FsErrorCode.FS_EDIT_NOT_FOUND,
            'old_string was not found in "<p>"',
        )

    @pytest.mark.anyio
    async def test_edit_of_an_ambiguous_old_string_reports_the_count(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"item\r\nitem\nitem\r\n")
        await self._refused(
            scratch,
            "f.txt",
            FsEditRequest("item\n", "x"),
            FsErrorCode.FS_AMBIGUOUS_EDIT,
            ambiguous(3, "<p>"),
        )

    @pytest.mark.anyio
    async def test_edit_matches_lf_old_string_in_a_crlf_file_and_keeps_crlf(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"one\r\ntwo\r\nthree\r\n")
        target = await scratch.fs.resolve("f.txt")
        outcome = await scratch.fs.edit_text(target, FsEditRequest("one\ntwo\n", "1\n2\n2.5\n"))
        assert outcome.before == "one\ntwo\nthree\n"
        assert outcome.after == "1\n2\n2.5\nthree\n"
        assert scratch.get("f.txt") == b"1\r\n2\r\n2.5\r\nthree\r\n"

    @pytest.mark.anyio
    async def test_edit_of_a_crlf_file_never_writes_a_bare_lf(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"a\r\nb\r\nc")
        outcome = await scratch.fs.edit_text(
            await scratch.fs.resolve("f.txt"), FsEditRequest("b", "x\ny\r\nz\n")
        )
        assert outcome.after == "a\nx\ny\nz\n\nc"
        data = scratch.get("f.txt")
        assert data == b"a\r\nx\r\ny\r\nz\r\n\r\nc"
        assert data.count(b"\n") == data.count(b"\r\n")

    @pytest.mark.anyio
    async def test_edit_of_an_lf_file_normalizes_crlf_in_new_string(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"one\ntwo\n")
        outcome = await scratch.fs.edit_text(
            await scratch.fs.resolve("f.txt"), FsEditRequest("two\r\n", "2\r\n3\r\n")
        )
        assert outcome.after == "one\n2\n3\n"
        assert scratch.get("f.txt") == b"one\n2\n3\n"

    @pytest.mark.anyio
    async def test_edit_keeps_lone_carriage_returns(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"a\rb\nc\r")
        outcome = await scratch.fs.edit_text(
            await scratch.fs.resolve("f.txt"), FsEditRequest("b", "B")
        )
        assert (outcome.before, outcome.after) == ("a\rb\nc\r", "a\rB\nc\r")
        assert scratch.get("f.txt") == b"a\rB\nc\r"

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("head", "crlf_wins"),
        [
            ("x\r\n" * 3 + "x\n" * 2, True),
            ("x\r\n" * 2 + "x\n" * 2, False),
            ("x\r\n" * 2 + "x\n" * 3, False),
            ("no line ending at all", False),
        ],
        ids=["more-crlf", "tie", "more-lf", "none"],
    )
    async def test_edit_writes_back_the_dominant_line_ending(
        self, scratch: Scratch, head: str, crlf_wins: bool
    ) -> None:
        scratch.put("f.txt", (head + "MARK\r\nend\n").encode())
        outcome = await scratch.fs.edit_text(
            await scratch.fs.resolve("f.txt"), FsEditRequest("MARK", "edited")
        )
        after = outcome.after
        assert after == (head + "edited\r\nend\n").replace("\r\n", "\n")
        expected = after.replace("\n", "\r\n") if crlf_wins else after
        assert scratch.get("f.txt") == expected.encode()

    @pytest.mark.anyio
    @pytest.mark.parametrize("crlf_in_head", [True, False])
    async def test_edit_decides_the_line_ending_from_the_first_4096_characters(
        self, scratch: Scratch, crlf_in_head: bool
    ) -> None:
        """409 lines of one ending fill the first 4096 characters; 5000 of the other follow."""
        first, rest = ("\r\n", "\n") if crlf_in_head else ("\n", "\r\n")
        line = "é" * (9 - len(first)) + first
        head = line * (4094 // 10)
        text = head + ("y" + rest) * 5000 + "MARK\n"
        scratch.put("f.txt", text.encode())
        outcome = await scratch.fs.edit_text(
            await scratch.fs.resolve("f.txt"), FsEditRequest("MARK", "done")
        )
        lf = text.replace("\r\n", "\n").replace("MARK", "done")
        assert outcome.after == lf
        assert scratch.get("f.txt") == (lf.replace("\n", "\r\n") if crlf_in_head else lf).encode()

    @pytest.mark.anyio
    async def test_edit_keeps_the_byte_order_mark_out_of_the_texts_and_in_the_file(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", BOM + b"first\r\nsecond\r\n")
        outcome = await scratch.fs.edit_text(
            await scratch.fs.resolve("f.txt"), FsEditRequest("first", "1st")
        )
        assert (outcome.before, outcome.after) == ("first\nsecond\n", "1st\nsecond\n")
        assert scratch.get("f.txt") == BOM + b"1st\r\nsecond\r\n"

    @pytest.mark.anyio
    async def test_edit_does_not_add_a_byte_order_mark(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"plain\n")
        await scratch.fs.edit_text(await scratch.fs.resolve("f.txt"), FsEditRequest("plain", "p"))
        assert scratch.get("f.txt") == b"p\n"

    @pytest.mark.anyio
    async def test_edit_reads_a_nul_free_file_longer_than_the_binary_sniff_window(
        self, scratch: Scratch
    ) -> None:
        text = "z" * 10000 + "MARK\n"
        scratch.put("f.txt", text.encode())
        outcome = await scratch.fs.edit_text(
            await scratch.fs.resolve("f.txt"), FsEditRequest("MARK", "ok")
        )
        assert scratch.get("f.txt") == ("z" * 10000 + "ok\n").encode()
        assert outcome.after == "z" * 10000 + "ok\n"

    @requires("supports_symlinks")
    @pytest.mark.anyio
    async def test_edit_through_a_symlink_keeps_the_link_and_changes_its_file(
        self, scratch: Scratch
    ) -> None:
        """
        root/
        ├── real.txt
        └── link.txt -> real.txt
        """
        scratch.put("real.txt", b"old\n")
        scratch.symlink("link.txt", "real.txt")
        fs = scratch.fs
        await fs.edit_text(await fs.resolve("link.txt"), FsEditRequest("old", "new"))
        link = await fs.lstat("link.txt")
        assert link is not None and link.type == "symlink"
        assert scratch.get("real.txt") == b"new\n"
        assert scratch.names() == ["link.txt", "real.txt"]

    @pytest.mark.anyio
    async def test_failed_edits_leave_bytes_version_and_directory_unchanged(
        self, scratch: Scratch
    ) -> None:
        original = BOM + b"dup\r\ndup\r\n"
        scratch.put("f.txt", original)
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        info = await fs.stat(target)
        assert info is not None
        for edit in (
            FsEditRequest("dup", "x"),
            FsEditRequest("missing", "x"),
            FsEditRequest("", "x"),
        ):
            with pytest.raises(FsError):
                await fs.edit_text(target, edit, EditGuard(info.version))
        after = await fs.stat(target)
        assert after is not None and after.version == info.version
        assert scratch.get("f.txt") == original
        assert scratch.names() == ["f.txt"]

    @pytest.mark.anyio
    async def test_edit_inserting_a_lone_surrogate_is_not_text(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"keep\n")
        await self._refused(
            scratch,
            "f.txt",
            FsEditRequest("keep", "half a pair: \ud800"),
            FsErrorCode.FS_NOT_TEXT,
            'cannot edit "<p>": invalid UTF-8 text',
        )

    @pytest.mark.anyio
    async def test_edit_growing_the_file_by_more_than_16_mib_is_too_large(
        self, scratch: Scratch
    ) -> None:
        """10,000 short lines and a 20 KiB ``new_string`` with ``replace_all`` would make
        a 200 MB file: refused before the new text is built, the file unchanged."""
        scratch.put("f.txt", b"x\n" * 10_000)
        growth = 10_000 * (20 * 1024 - 1)
        await self._refused(
            scratch,
            "f.txt",
            FsEditRequest("x", "y" * (20 * 1024), replace_all=True),
            FsErrorCode.FS_TOO_LARGE,
            f'cannot edit "<p>": the edit would grow the file by {growth} bytes (limit 16777216)',
        )

    @pytest.mark.anyio
    async def test_edit_growth_counts_the_line_endings_written_back(self, scratch: Scratch) -> None:
        """In a CRLF file every ``\\n`` of ``new_string`` is stored as two bytes: 8 MiB
        newlines would grow an LF file by 8 MiB, this one by just over 16 MiB."""
        scratch.put("f.txt", b"a\r\nb\r\n")
        newlines = EDIT_GROWTH_MAX_BYTES // 2 + 1
        await self._refused(
            scratch,
            "f.txt",
            FsEditRequest("a", "\n" * newlines),
            FsErrorCode.FS_TOO_LARGE,
            f'cannot edit "<p>": the edit would grow the file by {2 * newlines - 1} bytes'
            " (limit 16777216)",
        )

    @pytest.mark.anyio
    async def test_edit_growing_the_file_by_exactly_16_mib_is_allowed(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"a\n")
        target = await scratch.fs.resolve("f.txt")
        outcome = await scratch.fs.edit_text(
            target, FsEditRequest("a", "b" * (EDIT_GROWTH_MAX_BYTES + 1))
        )
        assert len(outcome.after) == EDIT_GROWTH_MAX_BYTES + 2
        assert len(scratch.get("f.txt") or b"") == EDIT_GROWTH_MAX_BYTES + 2
