"""Contract of ``write_text`` (the write messages, the BOM rule)."""

from __future__ import annotations

import contextlib

import pytest

from .._errors import FsError, FsErrorCode
from .._types import CreateIfAbsent, ReplaceIfVersion, WriteIntent
from ..text import LARGE_FILE_BYTES
from ._base import NON_REGULAR_KINDS, ContractBase, requires
from ._expect import expect_fs_error
from ._scratch import Scratch

STALE = FsErrorCode.FS_STALE_VERSION


class WriteContract(ContractBase):
    """Creates, updates, intents and their messages, atomicity leftovers, symlinks."""

    @pytest.mark.anyio
    async def test_write_creates_a_file_with_exactly_the_given_content(
        self, scratch: Scratch
    ) -> None:
        target = await scratch.fs.resolve("new.txt")
        outcome = await scratch.fs.write_text(target, "one\r\ntwo\rthree\n€")
        assert (outcome.operation, outcome.before) == ("create", None)
        assert outcome.after == "one\ntwo\rthree\n€"
        assert scratch.get("new.txt") == "one\r\ntwo\rthree\n€".encode()
        assert scratch.names() == ["new.txt"]

    @pytest.mark.anyio
    async def test_write_creates_missing_parent_directories(self, scratch: Scratch) -> None:
        target = await scratch.fs.resolve("a/b/c/new.txt")
        outcome = await scratch.fs.write_text(target, "deep\n")
        assert outcome.operation == "create"
        assert scratch.get("a/b/c/new.txt") == b"deep\n"
        info = await scratch.fs.stat(await scratch.fs.resolve("a/b"))
        assert info is not None and info.type == "directory"

    @pytest.mark.anyio
    async def test_write_of_empty_content_creates_an_empty_file(self, scratch: Scratch) -> None:
        outcome = await scratch.fs.write_text(await scratch.fs.resolve("e.txt"), "")
        assert (outcome.operation, outcome.after) == ("create", "")
        assert scratch.get("e.txt") == b""

    @pytest.mark.anyio
    async def test_write_replaces_a_file_and_reports_both_texts_lf_normalized(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"old\r\ntext\r")
        target = await scratch.fs.resolve("f.txt")
        outcome = await scratch.fs.write_text(target, "new\r\ntext\n")
        assert outcome.operation == "update"
        assert (outcome.before, outcome.after) == ("old\ntext\r", "new\ntext\n")
        assert scratch.get("f.txt") == b"new\r\ntext\n"
        assert scratch.names() == ["f.txt"]

    @pytest.mark.anyio
    async def test_write_reports_previous_content_without_its_byte_order_mark(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"\xef\xbb\xbfold\n")
        outcome = await scratch.fs.write_text(await scratch.fs.resolve("f.txt"), "new\n")
        assert outcome.before == "old\n"
        assert scratch.get("f.txt") == b"new\n"

    @pytest.mark.anyio
    async def test_write_stores_a_byte_order_mark_when_the_content_has_one(
        self, scratch: Scratch
    ) -> None:
        target = await scratch.fs.resolve("bom.txt")
        await scratch.fs.write_text(target, "\ufeffwith bom\n")
        assert scratch.get("bom.txt") == b"\xef\xbb\xbfwith bom\n"
        assert await scratch.fs.read_text(target) == "with bom\n"

    @pytest.mark.anyio
    async def test_write_outcome_texts_leave_the_byte_order_mark_out(
        self, scratch: Scratch
    ) -> None:
        scratch.put("bom.txt", b"\xef\xbb\xbfold\r\n")
        target = await scratch.fs.resolve("bom.txt")
        outcome = await scratch.fs.write_text(target, "\ufeffnew\r\n")
        assert (outcome.before, outcome.after) == ("old\n", "new\n")

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        "previous",
        [b"\x00\x01\x02binary", b"text then \xff invalid", "€".encode()[:2]],
        ids=["binary", "invalid-utf8", "truncated-utf8"],
    )
    async def test_write_over_non_text_succeeds_with_before_none(
        self, scratch: Scratch, previous: bytes
    ) -> None:
        scratch.put("f.dat", previous)
        outcome = await scratch.fs.write_text(await scratch.fs.resolve("f.dat"), "text now\n")
        assert (outcome.operation, outcome.before, outcome.after) == ("update", None, "text now\n")
        assert scratch.get("f.dat") == b"text now\n"

    @pytest.mark.anyio
    async def test_create_if_absent_creates_a_missing_file(self, scratch: Scratch) -> None:
        outcome = await scratch.fs.write_text(
            await scratch.fs.resolve("n.txt"), "n\n", CreateIfAbsent()
        )
        assert outcome.operation == "create"
        assert scratch.get("n.txt") == b"n\n"

    @pytest.mark.anyio
    async def test_create_if_absent_refuses_to_overwrite_an_existing_file(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"keep me\n")
        target = await scratch.fs.resolve("f.txt")
        await expect_fs_error(
            scratch.fs.write_text(target, "clobber\n", CreateIfAbsent()),
            FsErrorCode.FS_NOT_OBSERVED,
            f'cannot overwrite existing "{target.display_path}" without reading it first',
        )
        assert scratch.get("f.txt") == b"keep me\n"
        assert scratch.names() == ["f.txt"]

    @pytest.mark.anyio
    async def test_replace_if_version_replaces_a_file_still_at_that_version(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"v1\n")
        target = await scratch.fs.resolve("f.txt")
        info = await scratch.fs.stat(target)
        assert info is not None
        outcome = await scratch.fs.write_text(target, "v2\n", ReplaceIfVersion(info.version))
        assert (outcome.operation, outcome.before, outcome.after) == ("update", "v1\n", "v2\n")
        assert scratch.get("f.txt") == b"v2\n"

    @pytest.mark.anyio
    async def test_replace_if_version_of_a_changed_file_is_stale(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"v1\n")
        target = await scratch.fs.resolve("f.txt")
        seen = await scratch.fs.write_text(target, "v2\n")
        await scratch.fs.write_text(target, "v3\n")
        await expect_fs_error(
            scratch.fs.write_text(target, "lost\n", ReplaceIfVersion(seen.version)),
            STALE,
            f'cannot write "{target.display_path}": file changed since it was read',
        )
        assert scratch.get("f.txt") == b"v3\n"
        assert scratch.names() == ["f.txt"]

    @pytest.mark.anyio
    async def test_replace_if_version_of_a_file_changed_behind_the_backend_is_stale(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"v1\n")
        target = await scratch.fs.resolve("f.txt")
        info = await scratch.fs.stat(target)
        assert info is not None
        scratch.put("f.txt", b"changed by someone else\n")
        await expect_fs_error(
            scratch.fs.write_text(target, "lost\n", ReplaceIfVersion(info.version)),
            STALE,
            f'cannot write "{target.display_path}": file changed since it was read',
        )
        assert scratch.get("f.txt") == b"changed by someone else\n"

    @pytest.mark.anyio
    async def test_replace_if_version_of_a_vanished_file_says_it_no_longer_exists(
        self, scratch: Scratch
    ) -> None:
        scratch.put("d/f.txt", b"v1\n")
        target = await scratch.fs.resolve("d/f.txt")
        info = await scratch.fs.stat(target)
        assert info is not None
        scratch.remove("d/f.txt")
        await expect_fs_error(
            scratch.fs.write_text(target, "resurrect\n", ReplaceIfVersion(info.version)),
            STALE,
            f'cannot write "{target.display_path}": file no longer exists',
        )
        assert scratch.get("d/f.txt") is None
        assert scratch.names("d") == []

    @pytest.mark.anyio
    @pytest.mark.parametrize("kind", NON_REGULAR_KINDS)
    @pytest.mark.parametrize("intent", ["none", "create", "stale", "current"])
    async def test_write_onto_a_non_regular_file_fails_before_the_intent_is_checked(
        self, scratch: Scratch, kind: str, intent: str
    ) -> None:
        path = self.make_non_regular(scratch, kind)
        target = await scratch.fs.resolve(path)
        info = await scratch.fs.stat(target)
        assert info is not None
        expected: WriteIntent | None = {
            "none": None,
            "create": CreateIfAbsent(),
            "stale": ReplaceIfVersion("not-a-version-of-anything"),
            "current": ReplaceIfVersion(info.version),
        }[intent]
        names = scratch.names()
        await expect_fs_error(
            scratch.fs.write_text(target, "text\n", expected),
            FsErrorCode.FS_NOT_REGULAR_FILE,
            f'cannot write "{target.display_path}": not a regular file',
        )
        assert scratch.names() == names
        assert scratch.names("dir") == []

    @requires("supports_symlinks")
    @pytest.mark.anyio
    async def test_write_through_a_symlink_keeps_the_link_and_changes_its_file(
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
        outcome = await fs.write_text(await fs.resolve("link.txt"), "new\n")
        assert (outcome.operation, outcome.before) == ("update", "old\n")
        link = await fs.lstat("link.txt")
        assert link is not None and link.type == "symlink"
        assert scratch.get("real.txt") == b"new\n"
        assert scratch.names() == ["link.txt", "real.txt"]

    @pytest.mark.anyio
    async def test_write_leaves_no_other_file_behind(self, scratch: Scratch) -> None:
        scratch.put("d/keep.txt", b"keep\n")
        fs = scratch.fs
        target = await fs.resolve("d/f.txt")
        created = await fs.write_text(target, "1\n")
        await fs.write_text(target, "2\n", ReplaceIfVersion(created.version))
        await fs.write_text(target, "3\n")
        for intent in (CreateIfAbsent(), ReplaceIfVersion(created.version)):
            with contextlib.suppress(FsError):  # the refusals are checked elsewhere
                await fs.write_text(target, "refused\n", intent)
        assert scratch.names("d") == ["f.txt", "keep.txt"]
        assert scratch.get("d/f.txt") == b"3\n"

    @pytest.mark.anyio
    async def test_write_over_a_nul_after_the_first_8192_bytes_reports_it_as_text(
        self, scratch: Scratch
    ) -> None:
        previous = b"p" * 9000 + b"\x00tail\r\n"
        scratch.put("f.txt", previous)
        outcome = await scratch.fs.write_text(await scratch.fs.resolve("f.txt"), "new\n")
        assert outcome.before == "p" * 9000 + "\x00tail\n"

    @pytest.mark.anyio
    @pytest.mark.parametrize("existing", [False, True])
    async def test_write_of_a_lone_surrogate_is_not_text(
        self, scratch: Scratch, existing: bool
    ) -> None:
        if existing:
            scratch.put("f.txt", b"keep\n")
        target = await scratch.fs.resolve("f.txt")
        await expect_fs_error(
            scratch.fs.write_text(target, "half a pair: \ud800\n"),
            FsErrorCode.FS_NOT_TEXT,
            f'cannot write "{target.display_path}": invalid UTF-8 text',
        )
        assert scratch.get("f.txt") == (b"keep\n" if existing else None)
        assert scratch.names() == (["f.txt"] if existing else [])

    @pytest.mark.anyio
    async def test_refused_writes_leave_bytes_version_and_directory_unchanged(
        self, scratch: Scratch
    ) -> None:
        original = b"\xef\xbb\xbforiginal\r\n"
        scratch.put("d/f.txt", original)
        fs = scratch.fs
        target = await fs.resolve("d/f.txt")
        info = await fs.stat(target)
        assert info is not None
        for intent in (CreateIfAbsent(), ReplaceIfVersion(info.version + "-not")):
            with pytest.raises(FsError):
                await fs.write_text(target, "refused\n", intent)
        after = await fs.stat(target)
        assert after is not None and after.version == info.version
        assert scratch.get("d/f.txt") == original
        assert scratch.names("d") == ["f.txt"]

    @pytest.mark.anyio
    async def test_write_over_a_file_larger_than_10_mib_reports_no_before(
        self, scratch: Scratch
    ) -> None:
        """A huge previous content is not carried (nor diffed): ``before`` is ``None``."""
        scratch.put("big.txt", b"x" * (LARGE_FILE_BYTES + 1))
        target = await scratch.fs.resolve("big.txt")
        outcome = await scratch.fs.write_text(target, "small\n")
        assert (outcome.operation, outcome.before, outcome.after) == ("update", None, "small\n")
        assert scratch.get("big.txt") == b"small\n"

    @pytest.mark.anyio
    async def test_write_over_a_file_of_exactly_10_mib_reports_its_before(
        self, scratch: Scratch
    ) -> None:
        scratch.put("big.txt", b"y" * LARGE_FILE_BYTES)
        outcome = await scratch.fs.write_text(await scratch.fs.resolve("big.txt"), "small\n")
        assert outcome.operation == "update"
        assert outcome.before is not None and len(outcome.before) == LARGE_FILE_BYTES
