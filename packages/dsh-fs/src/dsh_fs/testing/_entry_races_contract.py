"""``delete`` and ``move`` against concurrent mutations and cancellation.

They are serialized with ``write_text`` and ``edit_text`` of the same target
(two guarded mutations from one version: exactly one wins), and a cancelled
call leaves both paths as they were — or, when it had already finished, as
after — and its targets free.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from .._errors import FsError, FsErrorCode
from .._types import (
    AtVersion,
    EditGuard,
    FsEditRequest,
    FsTarget,
    MoveGuard,
    ReplaceIfVersion,
)
from ._base import ContractBase
from ._cancellation_contract import LOCK_RELEASE_TIMEOUT
from ._concurrency_contract import race
from ._delete_contract import build_tree, tree_is_whole
from ._expect import run_then_cancel, version_of
from ._scratch import Scratch

Attempt = Callable[[], Awaitable[object]]
ENTRY_CANCEL_STEPS = (*range(9), 13, 21)
"""Checkpoints before a ``delete`` or ``move`` is cancelled: every count up to 8, where a
backend that commits and then yields has its window on one event loop or the other."""


class EntryRacesContract(ContractBase):
    """Serialization with writes and edits, and cancellation, of ``delete`` and ``move``."""

    contenders: int = 20

    # -- serialization ------------------------------------------------------------

    async def _one_wins(self, many: list[Attempt], one: Attempt) -> int | None:
        """Race ``one`` against ``many`` (half of them start before it, half after) and
        require exactly one winner, the others ``FS_STALE_VERSION``; return the index in
        ``many`` of the winner, or ``None`` when ``one`` won."""
        middle = len(many) // 2
        results = await race([*many[:middle], one, *many[middle:]])
        winners = [i for i, r in enumerate(results) if not isinstance(r, FsError)]
        assert len(winners) == 1, f"{len(winners)} guarded mutations from one version succeeded"
        losers = [r for r in results if isinstance(r, FsError)]
        assert {r.code for r in losers} == {FsErrorCode.FS_STALE_VERSION}
        won = winners[0]
        return None if won == middle else won - (won > middle)

    @pytest.mark.anyio
    async def test_a_guarded_delete_and_guarded_writes_from_one_version_let_one_win(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"start\n")
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        version = await version_of(fs, "f.txt")

        def writer(i: int) -> Attempt:
            return lambda: fs.write_text(target, f"w{i}\n", ReplaceIfVersion(version))

        won = await self._one_wins(
            [writer(i) for i in range(self.contenders)],
            lambda: fs.delete(target, expected=AtVersion(version)),
        )
        if won is None:
            assert scratch.names() == []
        else:
            assert (scratch.names(), scratch.get("f.txt")) == (["f.txt"], f"w{won}\n".encode())

    @pytest.mark.anyio
    async def test_a_guarded_move_and_guarded_edits_from_one_version_let_one_win(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"value = 0\n")
        fs = scratch.fs
        source, destination = await fs.resolve("f.txt"), await fs.resolve("g.txt")
        version = await version_of(fs, "f.txt")

        def editor(i: int) -> Attempt:
            edit = FsEditRequest("value = ", f"value = {i}+")
            return lambda: fs.edit_text(source, edit, EditGuard(version))

        guard = MoveGuard(AtVersion(version))
        won = await self._one_wins(
            [editor(i) for i in range(self.contenders)],
            lambda: fs.move(source, destination, expected=guard),
        )
        if won is None:
            assert (scratch.names(), scratch.get("g.txt")) == (["g.txt"], b"value = 0\n")
        else:
            assert scratch.names() == ["f.txt"]
            assert scratch.get("f.txt") == f"value = {won}+0\n".encode()

    @pytest.mark.anyio
    async def test_moves_of_many_sources_to_one_free_destination_let_one_win(
        self, scratch: Scratch
    ) -> None:
        fs = scratch.fs
        for i in range(self.contenders):
            scratch.put(f"s{i}.txt", f"{i}\n".encode())
        destination = await fs.resolve("d/dest.txt")
        sources = [await fs.resolve(f"s{i}.txt") for i in range(self.contenders)]

        def mover(source: FsTarget) -> Attempt:
            return lambda: fs.move(source, destination)

        results = await race([mover(source) for source in sources])
        winners = [i for i, r in enumerate(results) if not isinstance(r, FsError)]
        assert len(winners) == 1
        message = f'cannot move to "{destination.display_path}": already exists'
        for r in results:
            if isinstance(r, FsError):
                assert (str(r), r.code) == (message, FsErrorCode.FS_ALREADY_EXISTS)
        assert scratch.get("d/dest.txt") == f"{winners[0]}\n".encode()
        assert len(scratch.names()) == self.contenders  # d/ and every source but one

    @pytest.mark.anyio
    async def test_concurrent_deletes_of_one_file_remove_it_once(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"x\n")
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        results = await race([lambda: fs.delete(target) for _ in range(self.contenders)])
        assert len([r for r in results if not isinstance(r, FsError)]) == 1
        message = f'cannot delete "{target.display_path}": not found'
        for r in results:
            if isinstance(r, FsError):
                assert (str(r), r.code) == (message, FsErrorCode.FS_NOT_FOUND)
        assert scratch.names() == []

    # -- cancellation ---------------------------------------------------------------

    async def _targets_are_free(self, again: Attempt) -> None:
        """A cancelled call must not leave its targets locked: ``again``, a call that takes
        the same locks and must succeed, does not wait for them."""
        with anyio.fail_after(LOCK_RELEASE_TIMEOUT):
            await again()

    @pytest.mark.anyio
    @pytest.mark.parametrize("steps", ENTRY_CANCEL_STEPS)
    async def test_a_cancelled_tree_delete_leaves_the_tree_whole_or_gone(
        self, scratch: Scratch, steps: int
    ) -> None:
        build_tree(scratch)
        target = await scratch.fs.resolve("t")
        completed = await run_then_cancel(
            lambda: scratch.fs.delete(target, recursive=True), steps=steps
        )
        if completed:
            assert scratch.names() == []
        else:
            tree_is_whole(scratch)
            assert scratch.names() == ["t"], "a cancelled delete left a temporary behind"
        if completed:
            await self._targets_are_free(lambda: scratch.fs.write_text(target, "free\n"))
        else:
            await self._targets_are_free(lambda: scratch.fs.delete(target, recursive=True))

    @pytest.mark.anyio
    @pytest.mark.parametrize("steps", ENTRY_CANCEL_STEPS)
    async def test_a_cancelled_move_of_a_file_leaves_both_paths_as_before_or_as_after(
        self, scratch: Scratch, steps: int
    ) -> None:
        old = b"old content\n" * 1000
        scratch.put("src.txt", old)
        scratch.put("dst/replaced.txt", b"replaced\n")
        fs = scratch.fs
        source, destination = await fs.resolve("src.txt"), await fs.resolve("dst/replaced.txt")
        completed = await run_then_cancel(
            lambda: fs.move(source, destination, replace=True), steps=steps
        )
        if completed:
            assert (scratch.names(), scratch.get("dst/replaced.txt")) == (["dst"], old)
        else:
            assert (scratch.names(), scratch.get("src.txt")) == (["dst", "src.txt"], old)
            assert scratch.get("dst/replaced.txt") == b"replaced\n"
        assert scratch.names("dst") == ["replaced.txt"], "a cancelled move left a temporary"
        ends = (destination, source) if completed else (source, destination)
        await self._targets_are_free(lambda: fs.move(*ends, replace=True))

    @pytest.mark.anyio
    @pytest.mark.parametrize("steps", ENTRY_CANCEL_STEPS)
    async def test_a_cancelled_move_of_a_directory_leaves_it_where_it_was_or_moved_whole(
        self, scratch: Scratch, steps: int
    ) -> None:
        build_tree(scratch)
        scratch.put("dst/keep.txt", b"keep\n")
        fs = scratch.fs
        source, destination = await fs.resolve("t"), await fs.resolve("dst/t")
        completed = await run_then_cancel(lambda: fs.move(source, destination), steps=steps)
        if completed:
            assert (scratch.names(), scratch.names("dst")) == (["dst"], ["keep.txt", "t"])
            assert scratch.names("dst/t") == ["a.txt", "empty", "sub"]
        else:
            assert (scratch.names(), scratch.names("dst")) == (["dst", "t"], ["keep.txt"])
            tree_is_whole(scratch)
        ends = (destination, source) if completed else (source, destination)
        await self._targets_are_free(lambda: fs.move(*ends))
