"""The delete/move contract can fail: a backend with one bug in ``delete``, ``move`` or
``apply_changes`` fails the kit test that looks at it, while the healthy memory backend
passes the very same test."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import anyio.lowlevel
import pytest
from dsh_fs import (
    EntryGuard,
    FileSystem,
    FsChange,
    FsDeleteOutcome,
    FsMoveOutcome,
    FsTarget,
    FsWriteOutcome,
    MoveGuard,
)
from dsh_fs.testing import DeleteMoveContract, ForwardingFileSystem, Scratch
from dsh_fs.testing._entry_races_contract import ENTRY_CANCEL_STEPS
from dsh_fs.workspace import CWD_ROOT, RootsOption
from dsh_fs_memory import MemoryFileSystem, MemoryScratch

Wrapper = Callable[[MemoryFileSystem], FileSystem]


class Healthy(ForwardingFileSystem[MemoryFileSystem]):
    """Forwards everything to a healthy ``MemoryFileSystem``; the others break one rule."""


class FollowsTheLink(Healthy):
    """Removes what a link leads to instead of the link."""

    async def delete(
        self, target: FsTarget, *, recursive: bool = False, expected: EntryGuard | None = None
    ) -> FsDeleteOutcome:
        followed = FsTarget(target.target_key, target.target_key)
        return await self.inner.delete(followed, recursive=recursive, expected=expected)


class IgnoresEntryGuards(Healthy):
    """Drops the guards of ``delete`` and ``move``."""

    async def delete(
        self, target: FsTarget, *, recursive: bool = False, expected: EntryGuard | None = None
    ) -> FsDeleteOutcome:
        return await self.inner.delete(target, recursive=recursive)

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        *,
        replace: bool = False,
        expected: MoveGuard | None = None,
    ) -> FsMoveOutcome:
        return await self.inner.move(source, destination, replace=replace)


class RemovesTreesUnasked(Healthy):
    """Removes a non-empty directory without ``recursive``."""

    async def delete(
        self, target: FsTarget, *, recursive: bool = False, expected: EntryGuard | None = None
    ) -> FsDeleteOutcome:
        return await self.inner.delete(target, recursive=True, expected=expected)


class ReplacesUnasked(Healthy):
    """Replaces an existing destination without ``replace``."""

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        *,
        replace: bool = False,
        expected: MoveGuard | None = None,
    ) -> FsMoveOutcome:
        return await self.inner.move(source, destination, replace=True, expected=expected)


class PublishesOneByOne(Healthy):
    """A batch that publishes each change as it checks it: a late failure keeps the rest."""

    async def apply_changes(
        self, changes: Sequence[FsChange]
    ) -> list[FsWriteOutcome | FsDeleteOutcome]:
        return [(await self.inner.apply_changes([change]))[0] for change in changes]


class CommitsThenCheckpoints(Healthy):
    """Removes, then yields: a cancellation landing there reports a removal not done."""

    async def delete(
        self, target: FsTarget, *, recursive: bool = False, expected: EntryGuard | None = None
    ) -> FsDeleteOutcome:
        outcome = await self.inner.delete(target, recursive=recursive, expected=expected)
        await anyio.lowlevel.checkpoint()
        return outcome


class BrokenScratch(MemoryScratch):
    """A ``MemoryScratch`` whose backends are ``wrapper``s of the healthy ones."""

    def __init__(self, wrapper: Wrapper) -> None:
        super().__init__()
        self._wrapper = wrapper
        self._wrapped = wrapper(super().fs)

    @property
    def fs(self) -> FileSystem:  # type: ignore[override]
        return self._wrapped

    def backend(  # type: ignore[override]
        self,
        cwd: str,
        *,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str] = (),
        read_only: bool = False,
    ) -> FileSystem:
        inner = super().backend(
            cwd, roots=roots, read_only_roots=read_only_roots, read_only=read_only
        )
        return self._wrapper(inner)


def enforces_only_in_resolve(inner: MemoryFileSystem) -> FileSystem:
    """``resolve`` refuses outside paths; ``delete`` and ``move`` reach anything."""

    class Wrapped(Healthy):
        async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
            return await inner.resolve(path, cwd=cwd)

    return Wrapped(inner.view(inner.cwd, roots=None))


Case = tuple[Wrapper, str, dict[str, Any]]

CASES: list[Case] = [
    (
        FollowsTheLink,
        "test_delete_of_a_link_to_a_file_removes_the_link_not_the_file",
        {"recursive": False},
    ),
    (IgnoresEntryGuards, "test_delete_of_a_file_changed_since_it_was_read_is_stale", {}),
    (IgnoresEntryGuards, "test_delete_of_an_unread_file_is_refused_and_keeps_it", {}),
    (IgnoresEntryGuards, "test_an_unread_destination_file_is_never_overwritten", {}),
    (
        IgnoresEntryGuards,
        "test_a_source_changed_since_it_was_read_is_stale",
        {"change": "rewrite", "reason": "file changed since it was read"},
    ),
    (RemovesTreesUnasked, "test_delete_of_a_non_empty_directory_fails_and_leaves_it_whole", {}),
    (
        ReplacesUnasked,
        "test_an_existing_destination_is_not_replaced_unless_allowed",
        {"what": "file"},
    ),
    (ReplacesUnasked, "test_moves_of_many_sources_to_one_free_destination_let_one_win", {}),
    (
        PublishesOneByOne,
        "test_a_failed_guard_anywhere_changes_nothing_at_all",
        {"failing": "stale write"},
    ),
    (
        enforces_only_in_resolve,
        "test_a_parent_swapped_for_a_link_out_is_refused_by_both",
        {"name": "secret.txt"},
    ),
    (
        enforces_only_in_resolve,
        "test_delete_of_a_target_outside_is_refused",
        {"path": "../outside/secret.txt", "guard": "none"},
    ),
]


def case_id(case: Case) -> str:
    wrapper, test, params = case
    return f"{wrapper.__name__}-{test}" + "".join(f"-{v!r}" for v in params.values())


async def run_kit_test(scratch: Scratch, test: str, params: dict[str, Any]) -> None:
    """Run one test method of the kit, the way pytest would, on ``scratch``."""
    await getattr(DeleteMoveContract(), test)(scratch, **params)


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=case_id)
async def test_kit_test_fails_on_the_broken_backend(case: Case) -> None:
    wrapper, test, params = case
    try:
        await run_kit_test(BrokenScratch(wrapper), test, params)
    except (AssertionError, pytest.fail.Exception):
        return
    pytest.fail(f"{test} passed on {wrapper.__name__}, a backend with exactly that bug")


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=case_id)
async def test_same_kit_test_passes_on_the_healthy_backend(case: Case) -> None:
    _, test, params = case
    await run_kit_test(BrokenScratch(Healthy), test, params)


@pytest.mark.anyio
async def test_the_cancellation_steps_catch_a_delete_that_commits_then_checkpoints() -> None:
    """The window after the commit is one checkpoint wide, and trio orders the two tasks of
    a scheduling round at random: each step count is tried a few times."""
    test = "test_a_cancelled_tree_delete_leaves_the_tree_whole_or_gone"
    caught = []
    for steps in ENTRY_CANCEL_STEPS * 4:
        try:
            await run_kit_test(BrokenScratch(CommitsThenCheckpoints), test, {"steps": steps})
        except (AssertionError, pytest.fail.Exception):
            caught.append(steps)
        await run_kit_test(BrokenScratch(Healthy), test, {"steps": steps})
    assert caught, f"no step count of {ENTRY_CANCEL_STEPS} caught the commit-then-checkpoint bug"
