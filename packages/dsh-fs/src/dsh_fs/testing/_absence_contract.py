"""Contract of a file that disappears and comes back (``stat``, write intents).

A tool host records a read that finds nothing as "seen absent" and then asks
for ``CreateIfAbsent()``: the model may recreate a file deleted behind its
back, and never overwrite one that has appeared since. That only holds if
the backend sees the deletion (``stat`` is ``None``, nothing cached) and
checks ``CreateIfAbsent`` against the tree as it is at the write.
"""

from __future__ import annotations

import pytest

from .._errors import FsErrorCode
from .._types import CreateIfAbsent, EditGuard, FsEditRequest, FsTarget, ReplaceIfVersion
from ._base import ContractBase
from ._expect import expect_fs_error
from ._scratch import Scratch


class AbsenceContract(ContractBase):
    """Present, deleted behind the backend, recreated, edited, deleted again::

    root/
    └── d/
        └── f.txt   present, then removed and put back out of band
    """

    async def _seen_then_deleted(self, scratch: Scratch) -> FsTarget:
        """``d/f.txt`` put and found by ``stat``, then removed out of band: ``stat`` is ``None``."""
        scratch.put("d/f.txt", b"v1\n")
        target = await scratch.fs.resolve("d/f.txt")
        assert await scratch.fs.stat(target) is not None
        scratch.remove("d/f.txt")
        assert await scratch.fs.stat(target) is None
        return target

    @pytest.mark.anyio
    async def test_stat_of_a_file_deleted_behind_the_backend_is_none(
        self, scratch: Scratch
    ) -> None:
        await self._seen_then_deleted(scratch)
        assert await scratch.fs.lstat("d/f.txt") is None

    @pytest.mark.anyio
    async def test_a_deleted_file_is_recreated_edited_and_deleted_again(
        self, scratch: Scratch
    ) -> None:
        fs = scratch.fs
        scratch.put("d/f.txt", b"v1\n")
        target = await fs.resolve("d/f.txt")
        assert await fs.stat(target) is not None  # 1. present
        scratch.remove("d/f.txt")
        assert await fs.stat(target) is None  # 2. absent
        created = await fs.write_text(target, "again\n", CreateIfAbsent())  # 3. recreated
        assert (created.operation, created.before, created.after) == ("create", None, "again\n")
        assert scratch.get("d/f.txt") == b"again\n"
        info = await fs.stat(target)
        assert info is not None and info.version == created.version
        edited = await fs.edit_text(  # 4. edited after a read of the new file
            target, FsEditRequest("again", "edited"), EditGuard(info.version)
        )
        assert (edited.before, edited.after) == ("again\n", "edited\n")
        rewritten = await fs.write_text(target, "replaced\n", ReplaceIfVersion(edited.version))
        assert (rewritten.operation, rewritten.before) == ("update", "edited\n")
        assert scratch.get("d/f.txt") == b"replaced\n"
        scratch.remove("d/f.txt")
        assert await fs.stat(target) is None  # 5. deleted again
        assert scratch.names("d") == []
        again = await fs.write_text(target, "third\n", CreateIfAbsent())
        assert again.operation == "create"
        assert scratch.names("d") == ["f.txt"]

    @pytest.mark.anyio
    async def test_create_if_absent_refuses_a_file_that_reappeared_since_it_was_absent(
        self, scratch: Scratch
    ) -> None:
        target = await self._seen_then_deleted(scratch)
        scratch.put("d/f.txt", b"someone else's\n")
        await expect_fs_error(
            scratch.fs.write_text(target, "mine\n", CreateIfAbsent()),
            FsErrorCode.FS_NOT_OBSERVED,
            f'cannot overwrite existing "{target.display_path}" without reading it first',
        )
        assert scratch.get("d/f.txt") == b"someone else's\n"
        assert scratch.names("d") == ["f.txt"]
