"""The kit can fail: deliberately broken backends, each with one bug, fail the kit tests
that look at that bug — while the healthy memory backend passes the very same tests.

Kept as one file: one table of (bug, kit test), with the broken backends it names.

Each broken backend wraps a ``MemoryFileSystem`` and breaks one rule. The kit's
test methods are called directly (in process) for a table of (bug, kit test);
one end-to-end run also shows ``pytest`` itself reporting the failures of a
``FileSystemContract`` subclass whose backend ignores the version guard.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from dsh_fs import (
    CreateIfAbsent,
    EditGuard,
    FileSystem,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsInfo,
    FsTarget,
    FsWriteOutcome,
    WriteIntent,
)
from dsh_fs.testing import FileSystemContract, ForwardingFileSystem, Scratch
from dsh_fs.testing._cancellation_contract import CANCEL_STEPS
from dsh_fs.workspace import CWD_ROOT, RootsOption
from dsh_fs_memory import MemoryFileSystem, MemoryScratch


class DelegatingFileSystem(ForwardingFileSystem[MemoryFileSystem]):
    """Forwards every primitive to a healthy ``MemoryFileSystem``; subclasses break one."""


class IgnoresGuards(DelegatingFileSystem):
    """Drops every write intent and edit guard: last writer wins."""

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        return await self.inner.write_text(target, content, None)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        return await self.inner.edit_text(target, edit, None)


class MatchesBeforeGuard(DelegatingFileSystem):
    """Looks for ``old_string`` before checking the guard."""

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        if edit.old_string not in await self.inner.read_text(target):
            raise FsError(
                f'old_string was not found in "{target.display_path}"',
                FsErrorCode.FS_EDIT_NOT_FOUND,
            )
        return await self.inner.edit_text(target, edit, expected)


class RewordsErrors(DelegatingFileSystem):
    """Right codes, slightly wrong messages: single quotes around the path."""

    async def read_text(self, target: FsTarget) -> str:
        try:
            return await self.inner.read_text(target)
        except FsError as err:
            raise FsError(str(err).replace('"', "'"), err.code) from err

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        try:
            return await self.inner.list_dir(target, stat=stat)
        except FsError as err:
            raise FsError(str(err).replace('"', "'"), err.code) from err


class WrongCodes(DelegatingFileSystem):
    """Right messages, every edit refusal reported as ``FS_IO_ERROR``."""

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        try:
            return await self.inner.edit_text(target, edit, expected)
        except FsError as err:
            raise FsError(str(err), FsErrorCode.FS_IO_ERROR) from err


class LeaksRawErrors(DelegatingFileSystem):
    """Lets a raw ``FileNotFoundError`` escape from a read of an absent file."""

    async def read_text(self, target: FsTarget) -> str:
        if await self.inner.stat(target) is None:
            raise FileNotFoundError(target.display_path)
        return await self.inner.read_text(target)


class ReadsWithoutLock(DelegatingFileSystem):
    """Edits as read, yield, write: concurrent edits overwrite each other."""

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        info = await self.inner.stat(target)
        if expected is not None and (info is None or info.version != expected.version):
            raise FsError(
                f'cannot edit "{target.display_path}": file changed since it was read',
                FsErrorCode.FS_STALE_VERSION,
            )
        text = await self.inner.read_text(target)
        await anyio.sleep(0.001)
        outcome = await self.inner.write_text(
            target, text.replace(edit.old_string, edit.new_string)
        )
        return FsEditOutcome(outcome.version, text, outcome.after)


class ServesNewestWaiterFirst(DelegatingFileSystem):
    """Runs one mutation at a time but hands the target to the latest arrival (LIFO)."""

    def __init__(self, inner: MemoryFileSystem) -> None:
        super().__init__(inner)
        self._busy = False
        self._waiters: list[anyio.Event] = []

    async def _turn(self) -> None:
        if not self._busy:
            self._busy = True
            return
        handed = anyio.Event()
        self._waiters.append(handed)
        try:
            await handed.wait()  # the finishing holder hands over: _busy stays True
        except BaseException:  # cancelled while waiting: leave, or pass on a turn given
            if handed in self._waiters:
                self._waiters.remove(handed)
            else:
                self._done()
            raise

    def _done(self) -> None:
        if self._waiters:
            self._waiters.pop().set()
        else:
            self._busy = False

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        await self._turn()
        try:
            return await self.inner.write_text(target, content, expected)
        finally:
            self._done()

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        await self._turn()
        try:
            return await self.inner.edit_text(target, edit, expected)
        finally:
            self._done()


class CommitsThenCheckpoints(DelegatingFileSystem):
    """Yields after committing a write, so a cancellation can land after the change."""

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        outcome = await self.inner.write_text(target, content, expected)
        await anyio.sleep(0.01)
        return outcome


class LeavesTemporaryFile(DelegatingFileSystem):
    """Forgets its temporary file next to the target after a successful write."""

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        outcome = await self.inner.write_text(target, content, expected)
        parent, _, name = target.display_path.rpartition("/")
        self.inner.put_bytes(f"{parent}/.{name}.tmp", b"")
        return outcome


class DecodesChunksSeparately(DelegatingFileSystem):
    """Streams by decoding each 1000-byte chunk on its own (splits characters)."""

    async def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        data = (await self.inner.read_text(target)).encode()
        for start in range(0, len(data), 1000):
            await anyio.lowlevel.checkpoint()
            yield data[start : start + 1000].decode("utf-8", errors="replace")


class KeepsTheByteOrderMark(DelegatingFileSystem):
    """Returns the leading BOM as part of the text."""

    async def read_text(self, target: FsTarget) -> str:
        text = await self.inner.read_text(target)
        data = self.inner.get_bytes(target.display_path)
        return "\ufeff" + text if data is not None and data.startswith(b"\xef\xbb\xbf") else text


class StaleOutcomeVersion(DelegatingFileSystem):
    """Returns a version from its write that ``stat`` never reports."""

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        outcome = await self.inner.write_text(target, content, expected)
        return FsWriteOutcome(
            outcome.operation, outcome.version + "-old", outcome.before, outcome.after
        )


class ListsSymlinksAsOther(DelegatingFileSystem):
    """Does not follow symlinks when typing list entries."""

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        entries = await self.inner.list_dir(target, stat=stat)
        out = []
        for entry in entries:
            info = await self.inner.lstat(entry.target.display_path)
            if info is not None and info.type == "symlink":
                entry = FsDirEntry(entry.name, "other", entry.target, entry.version, entry.size)
            out.append(entry)
        return out


class ShieldsStat(DelegatingFileSystem):
    """``stat`` cannot be cancelled."""

    async def stat(self, target: FsTarget) -> FsInfo | None:
        with anyio.CancelScope(shield=True):
            info = await self.inner.stat(target)
        return info


class TurnsCancellationIntoError(DelegatingFileSystem):
    """Catches the cancellation of a write and reports ``FS_ABORTED`` instead."""

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        try:
            return await self.inner.write_text(target, content, expected)
        except anyio.get_cancelled_exc_class():
            raise FsError("write aborted", FsErrorCode.FS_ABORTED) from None


class EncodesWithoutChecking(DelegatingFileSystem):
    """Lets ``UnicodeEncodeError`` escape for content with a lone surrogate."""

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        content.encode("utf-8")
        return await self.inner.write_text(target, content, expected)


class IgnoresSameSizeChanges(DelegatingFileSystem):
    """Derives the version from the size alone."""

    async def stat(self, target: FsTarget) -> FsInfo | None:
        info = await self.inner.stat(target)
        return None if info is None else FsInfo(f"size-{info.size}", info.type, info.size)


class RemembersDeletedFiles(DelegatingFileSystem):
    """Caches what ``stat`` found: a file deleted behind its back still looks present."""

    def __init__(self, inner: MemoryFileSystem) -> None:
        super().__init__(inner)
        self._seen: dict[str, FsInfo] = {}

    async def stat(self, target: FsTarget) -> FsInfo | None:
        info = await self.inner.stat(target)
        if info is None:
            return self._seen.get(target.target_key)
        self._seen[target.target_key] = info
        return info


class TrustsItsOwnAbsence(DelegatingFileSystem):
    """Remembers targets ``stat`` found absent and creates them without looking again."""

    def __init__(self, inner: MemoryFileSystem) -> None:
        super().__init__(inner)
        self._absent: set[str] = set()

    async def stat(self, target: FsTarget) -> FsInfo | None:
        info = await self.inner.stat(target)
        if info is None:
            self._absent.add(target.target_key)
        return info

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        if isinstance(expected, CreateIfAbsent) and target.target_key in self._absent:
            expected = None
        return await self.inner.write_text(target, content, expected)


class EnforcesOnlyInResolve(DelegatingFileSystem):
    """Refuses outside paths in ``resolve`` only; the other primitives reach anything."""

    def __init__(self, inner: MemoryFileSystem) -> None:
        super().__init__(inner)
        self.inner = inner.view(inner.cwd, roots=None)
        self._resolver = inner

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        return await self._resolver.resolve(path, cwd=cwd)


class BrokenScratch:
    """A ``MemoryScratch`` whose ``fs`` is a broken wrapper of the same backend."""

    def __init__(self, broken: Callable[[MemoryFileSystem], DelegatingFileSystem]) -> None:
        self._healthy = MemoryScratch()
        self._broken = broken
        self._fs = broken(self._healthy.fs)

    @property
    def fs(self) -> FileSystem:
        return self._fs

    @property
    def root(self) -> str:
        return self._healthy.root

    def put(self, path: str, data: bytes) -> None:
        self._healthy.put(path, data)

    def get(self, path: str) -> bytes | None:
        return self._healthy.get(path)

    def mkdir(self, path: str) -> None:
        self._healthy.mkdir(path)

    def remove(self, path: str) -> None:
        self._healthy.remove(path)

    def symlink(self, path: str, target: str) -> None:
        self._healthy.symlink(path, target)

    def make_other(self, path: str) -> None:
        self._healthy.make_other(path)

    def hard_link(self, path: str, existing: str) -> None:
        self._healthy.hard_link(path, existing)

    def names(self, path: str = ".") -> list[str]:
        return self._healthy.names(path)

    def backend(
        self,
        cwd: str,
        *,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str] = (),
        read_only: bool = False,
    ) -> FileSystem:
        return self._broken(
            self._healthy.backend(
                cwd, roots=roots, read_only_roots=read_only_roots, read_only=read_only
            )
        )


Case = tuple[type[DelegatingFileSystem], str, dict[str, Any]]

CASES: list[Case] = [
    (IgnoresGuards, "test_create_if_absent_refuses_to_overwrite_an_existing_file", {}),
    (IgnoresGuards, "test_replace_if_version_of_a_changed_file_is_stale", {}),
    (IgnoresGuards, "test_replace_if_version_of_a_vanished_file_says_it_no_longer_exists", {}),
    (IgnoresGuards, "test_edit_of_stale_version_fails_before_matching", {"content": b"old text\n"}),
    (IgnoresGuards, "test_guarded_edit_of_a_vanished_file_says_it_no_longer_exists", {}),
    (IgnoresGuards, "test_concurrent_guarded_writes_from_one_version_let_exactly_one_win", {}),
    (IgnoresGuards, "test_concurrent_guarded_edits_from_one_version_let_exactly_one_win", {}),
    (
        MatchesBeforeGuard,
        "test_edit_of_stale_version_fails_before_matching",
        {"content": b"new text\n"},
    ),
    (RewordsErrors, "test_read_of_an_absent_file_is_not_found", {"how": "read_text"}),
    (RewordsErrors, "test_list_dir_of_an_absent_directory_is_not_found", {"path": "absent"}),
    (RewordsErrors, "test_list_dir_of_something_else_is_not_a_directory", {"path": "f.txt"}),
    (WrongCodes, "test_edit_of_a_missing_old_string_is_not_found", {"old": "absent"}),
    (WrongCodes, "test_edit_of_an_ambiguous_old_string_reports_the_count", {}),
    (LeaksRawErrors, "test_read_of_an_absent_file_is_not_found", {"how": "read_text"}),
    (
        ReadsWithoutLock,
        "test_concurrent_unguarded_edits_lose_no_update_and_run_in_arrival_order",
        {},
    ),
    (ReadsWithoutLock, "test_concurrent_guarded_edits_from_one_version_let_exactly_one_win", {}),
    (
        ServesNewestWaiterFirst,
        "test_concurrent_unguarded_edits_lose_no_update_and_run_in_arrival_order",
        {},
    ),
    (
        ServesNewestWaiterFirst,
        "test_concurrent_unguarded_writes_apply_whole_and_in_arrival_order",
        {},
    ),
    (
        ServesNewestWaiterFirst,
        "test_cancelled_waiting_mutation_does_not_run_after_the_lock_frees",
        {},
    ),
    (LeavesTemporaryFile, "test_write_creates_a_file_with_exactly_the_given_content", {}),
    (LeavesTemporaryFile, "test_write_leaves_no_other_file_behind", {}),
    (
        DecodesChunksSeparately,
        "test_stream_equals_read_for_large_text_with_characters_split_across_chunks",
        {"seed": 0},
    ),
    (
        KeepsTheByteOrderMark,
        "test_read_omits_only_the_leading_byte_order_mark",
        {"how": "read_text"},
    ),
    (StaleOutcomeVersion, "test_write_and_edit_return_the_version_a_fresh_stat_reports", {}),
    (
        ListsSymlinksAsOther,
        "test_list_dir_gives_every_direct_child_with_its_type",
        {"with_stat": False},
    ),
    (
        ShieldsStat,
        "test_primitive_called_in_a_cancelled_scope_raises_cancellation",
        {"primitive": "stat"},
    ),
    (
        TurnsCancellationIntoError,
        "test_cancelled_write_leaves_the_old_content_or_completes",
        {"steps": 0},
    ),
    (
        TurnsCancellationIntoError,
        "test_primitive_called_in_a_cancelled_scope_raises_cancellation",
        {"primitive": "write_text"},
    ),
    (RemembersDeletedFiles, "test_stat_of_a_file_deleted_behind_the_backend_is_none", {}),
    (RemembersDeletedFiles, "test_a_deleted_file_is_recreated_edited_and_deleted_again", {}),
    (
        TrustsItsOwnAbsence,
        "test_create_if_absent_refuses_a_file_that_reappeared_since_it_was_absent",
        {},
    ),
    (
        EnforcesOnlyInResolve,
        "test_reads_of_a_target_whose_parent_now_leads_outside_are_refused",
        {"name": "secret.txt"},
    ),
    (
        EnforcesOnlyInResolve,
        "test_writes_through_a_parent_that_now_leads_outside_are_refused",
        {"name": "new/parents/f.txt", "intent": "none"},
    ),
    (
        EnforcesOnlyInResolve,
        "test_edits_through_a_parent_that_now_leads_outside_are_refused",
        {"name": "secret.txt", "guarded": False},
    ),
    (
        EnforcesOnlyInResolve,
        "test_a_write_through_a_dangling_link_pointing_outside_creates_nothing",
        {"intent": "none"},
    ),
]


def case_id(case: Case) -> str:
    broken, test, params = case
    return f"{broken.__name__}-{test}" + "".join(f"-{v!r}" for v in params.values())


async def run_kit_test(scratch: Scratch, test: str, params: dict[str, Any]) -> None:
    """Run one test method of the kit, the way pytest would, on ``scratch``."""
    method = getattr(FileSystemContract(), test)
    await method(scratch, **params)


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=case_id)
async def test_kit_test_fails_on_the_broken_backend(case: Case) -> None:
    broken, test, params = case
    try:
        await run_kit_test(BrokenScratch(broken), test, params)
    except (Exception, pytest.fail.Exception):
        return
    pytest.fail(f"{test} passed on {broken.__name__}, a backend with exactly that bug")


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=case_id)
async def test_same_kit_test_passes_on_the_healthy_backend(case: Case) -> None:
    _, test, params = case
    await run_kit_test(BrokenScratch(DelegatingFileSystem), test, params)


@pytest.mark.anyio
async def test_the_cancellation_steps_catch_a_backend_that_commits_then_checkpoints() -> None:
    """Where a cancellation lands depends on how many checkpoints the backend and
    the event loop take, so no single step count is sure to hit the window after
    the commit; the kit's parametrization over ``CANCEL_STEPS`` as a whole must."""
    test = "test_cancelled_write_leaves_the_old_content_or_completes"
    caught = []
    for steps in CANCEL_STEPS:
        try:
            await run_kit_test(BrokenScratch(CommitsThenCheckpoints), test, {"steps": steps})
        except (Exception, pytest.fail.Exception):
            caught.append(steps)
        await run_kit_test(BrokenScratch(DelegatingFileSystem), test, {"steps": steps})
    assert caught, f"no step count of {CANCEL_STEPS} caught the commit-then-checkpoint bug"


GUARDLESS_FAILURES = sorted(
    [
        "test_concurrent_guarded_writes_from_one_version_let_exactly_one_win",
        "test_concurrent_guarded_edits_from_one_version_let_exactly_one_win",
        "test_concurrent_guarded_writes_and_edits_from_one_version_let_exactly_one_win",
        "test_edit_of_stale_version_fails_before_matching[still-matching]",
        "test_edit_of_stale_version_fails_before_matching[no-longer-matching]",
        "test_edit_of_stale_version_fails_before_matching[now-binary]",
        "test_edit_of_stale_version_fails_before_matching[now-invalid-utf8]",
        "test_edit_of_stale_version_after_a_backend_write_fails",
        "test_guarded_edit_of_a_vanished_file_says_it_no_longer_exists",
        "test_create_if_absent_refuses_to_overwrite_an_existing_file",
        "test_create_if_absent_refuses_a_file_that_reappeared_since_it_was_absent",
        "test_replace_if_version_of_a_changed_file_is_stale",
        "test_replace_if_version_of_a_file_changed_behind_the_backend_is_stale",
        "test_replace_if_version_of_a_vanished_file_says_it_no_longer_exists",
        "test_write_leaves_no_other_file_behind",
        "test_refused_writes_leave_bytes_version_and_directory_unchanged",
        "test_a_guarded_delete_and_guarded_writes_from_one_version_let_one_win",
        "test_a_guarded_move_and_guarded_edits_from_one_version_let_one_win",
    ]
)
"""Every kit test that looks at write intents or edit guards, and nothing else."""


def test_pytest_reports_the_kit_failures_of_a_backend_that_ignores_guards(
    tmp_path: Path,
) -> None:
    """A stranger's view: two classes inherit the contract, pytest runs them on the
    two anyio backends with the two-line fixture the kit's documentation shows."""
    suite = tmp_path / "test_stranger_backend.py"
    suite.write_text(
        textwrap.dedent(
            f"""
            import importlib.util
            import sys

            import pytest

            from dsh_fs.testing import FileSystemContract

            spec = importlib.util.spec_from_file_location("broken_kit", {__file__!r})
            broken_kit = importlib.util.module_from_spec(spec)
            sys.modules["broken_kit"] = broken_kit
            spec.loader.exec_module(broken_kit)


            @pytest.fixture(params=["asyncio", "trio"])
            def anyio_backend(request): return request.param


            class TestHealthy(FileSystemContract):
                supports_hard_links = False

                @pytest.fixture
                def scratch(self):
                    return broken_kit.BrokenScratch(broken_kit.DelegatingFileSystem)


            class TestGuardless(FileSystemContract):
                supports_hard_links = False

                @pytest.fixture
                def scratch(self):
                    return broken_kit.BrokenScratch(broken_kit.IgnoresGuards)
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    run = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf"),
            *("-k", "not stream and not large and not test_invalid_utf8", str(suite)),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = run.stdout
    assert run.returncode == 1, out[-3000:]
    failed = sorted(
        line.split("::")[-1].split(" ")[0]
        for line in out.splitlines()
        if line.startswith("FAILED ")
    )
    assert all(
        "::TestGuardless::" in line for line in out.splitlines() if line.startswith("FAILED ")
    )
    assert failed == sorted(
        name.replace("[", f"[{backend}-") if "[" in name else f"{name}[{backend}]"
        for name in GUARDLESS_FAILURES
        for backend in ("asyncio", "trio")
    )
