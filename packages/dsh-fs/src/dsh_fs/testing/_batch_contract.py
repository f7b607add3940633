"""Contract of ``apply_changes``: several writes and removals, all or nothing.

A guard that fails anywhere in the batch changes nothing at all — not the
changes before it either — and raises that change's own ``FsError`` (never
an ``FsBatchError``: nothing was published). A batch that succeeds returns
one outcome per change, in order.
"""

from __future__ import annotations

import pytest

from .._errors import FsBatchError, FsErrorCode
from .._types import (
    AtVersion,
    CreateIfAbsent,
    DeleteChange,
    FsChange,
    FsDeleteOutcome,
    FsWriteOutcome,
    NotAFile,
    ReplaceIfVersion,
    WriteChange,
)
from ._base import ContractBase
from ._expect import expect_fs_error, version_of
from ._scratch import Scratch


class BatchContract(ContractBase):
    """``apply_changes``: outcomes in order, all or nothing on a failed guard, no leftovers."""

    def seed(self, scratch: Scratch) -> None:
        """``a.txt``, ``b.txt`` and ``d/c.txt``, each with its name as content."""
        scratch.put("a.txt", b"a\n")
        scratch.put("b.txt", b"b\n")
        scratch.put("d/c.txt", b"c\n")

    def untouched(self, scratch: Scratch) -> None:
        assert (scratch.names(), scratch.names("d")) == (["a.txt", "b.txt", "d"], ["c.txt"])
        assert [scratch.get(p) for p in ("a.txt", "b.txt", "d/c.txt")] == [b"a\n", b"b\n", b"c\n"]

    @pytest.mark.anyio
    async def test_a_batch_applies_every_change_and_returns_their_outcomes_in_order(
        self, scratch: Scratch
    ) -> None:
        self.seed(scratch)
        fs = scratch.fs
        a_version = await version_of(fs, "a.txt")
        changes: list[FsChange] = [
            WriteChange(await fs.resolve("a.txt"), "A\n", ReplaceIfVersion(a_version)),
            DeleteChange(await fs.resolve("b.txt"), AtVersion(await version_of(fs, "b.txt"))),
            WriteChange(await fs.resolve("new/n.txt"), "n\n", CreateIfAbsent()),
            DeleteChange(await fs.resolve("d"), recursive=True),
        ]
        outcomes = await fs.apply_changes(changes)
        assert [type(o) for o in outcomes] == [
            FsWriteOutcome,
            FsDeleteOutcome,
            FsWriteOutcome,
            FsDeleteOutcome,
        ]
        first, second, third, fourth = outcomes
        assert isinstance(first, FsWriteOutcome) and isinstance(third, FsWriteOutcome)
        assert (first.operation, first.before, first.after) == ("update", "a\n", "A\n")
        assert first.version == await version_of(fs, "a.txt")
        assert (third.operation, third.after) == ("create", "n\n")
        assert (second, fourth) == (FsDeleteOutcome("file"), FsDeleteOutcome("directory"))
        assert scratch.names() == ["a.txt", "new"]
        assert (scratch.get("a.txt"), scratch.get("new/n.txt")) == (b"A\n", b"n\n")

    @pytest.mark.anyio
    async def test_an_empty_batch_changes_nothing(self, scratch: Scratch) -> None:
        self.seed(scratch)
        assert await scratch.fs.apply_changes([]) == []
        self.untouched(scratch)

    @pytest.mark.anyio
    @pytest.mark.parametrize("failing", ["stale write", "unread delete", "gone delete"])
    async def test_a_failed_guard_anywhere_changes_nothing_at_all(
        self, scratch: Scratch, failing: str
    ) -> None:
        self.seed(scratch)
        fs = scratch.fs
        a, b, c = [await fs.resolve(p) for p in ("a.txt", "b.txt", "d/c.txt")]
        a_version = await version_of(fs, "a.txt")
        b_version = await version_of(fs, "b.txt")
        last: FsChange
        if failing == "stale write":
            last = WriteChange(c, "C\n", ReplaceIfVersion("not-its-version"))
            code, message = FsErrorCode.FS_STALE_VERSION, "file changed since it was read"
            message = f'cannot write "{c.display_path}": {message}'
        elif failing == "unread delete":
            last = DeleteChange(c, NotAFile())
            code = FsErrorCode.FS_NOT_OBSERVED
            message = f'cannot delete "{c.display_path}" without reading it first'
        else:
            last = DeleteChange(await fs.resolve("d/gone.txt"), AtVersion(b_version))
            code = FsErrorCode.FS_STALE_VERSION
            message = f'cannot delete "{last.target.display_path}": file no longer exists'
        changes: list[FsChange] = [
            WriteChange(a, "A\n", ReplaceIfVersion(a_version)),
            DeleteChange(b, AtVersion(b_version)),
            WriteChange(await fs.resolve("new.txt"), "new\n", CreateIfAbsent()),
            last,
        ]
        error = await expect_fs_error(fs.apply_changes(changes), code, message)
        assert not isinstance(error, FsBatchError), "nothing was published: a plain FsError"
        self.untouched(scratch)

    @pytest.mark.anyio
    async def test_a_change_refused_by_its_target_changes_nothing(self, scratch: Scratch) -> None:
        self.seed(scratch)
        fs = scratch.fs
        d = await fs.resolve("d")
        changes: list[FsChange] = [
            WriteChange(await fs.resolve("a.txt"), "A\n"),
            DeleteChange(d),
        ]
        await expect_fs_error(
            fs.apply_changes(changes),
            FsErrorCode.FS_NOT_EMPTY,
            f'cannot delete "{d.display_path}": directory not empty',
        )
        self.untouched(scratch)

    @pytest.mark.anyio
    async def test_two_changes_of_one_target_are_a_value_error(self, scratch: Scratch) -> None:
        self.seed(scratch)
        fs = scratch.fs
        a = await fs.resolve("a.txt")
        with pytest.raises(ValueError, match="two changes of one target"):
            await fs.apply_changes([WriteChange(a, "A\n"), DeleteChange(a)])
        self.untouched(scratch)
