"""Per-target serialization and atomic visibility (``FileSystem`` rules 1 and 2)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar, cast

import anyio
import anyio.lowlevel
import pytest

from .._errors import FsError, FsErrorCode
from .._types import (
    EditGuard,
    FsEditOutcome,
    FsEditRequest,
    FsWriteOutcome,
    ReplaceIfVersion,
)
from ._base import ContractBase
from ._expect import READ_HOWS, ReadHow, read_via
from ._scratch import Scratch

T = TypeVar("T")


async def race(
    attempts: Sequence[Callable[[], Awaitable[T]]], arrivals: list[int] | None = None
) -> list[T | FsError]:
    """Run ``attempts`` concurrently; each one's result or ``FsError``, in index order.

    The event loop picks the order in which the tasks start (trio shuffles
    it on purpose), so "arrival order" is recorded, not assumed: attempt
    ``i`` is appended to ``arrivals`` just before it calls the backend,
    which runs on without yielding until it waits for its per-target lock.
    """
    pending = object()
    results: list[object] = [pending] * len(attempts)

    async def attempt(i: int) -> None:
        try:
            if arrivals is not None:
                arrivals.append(i)
            results[i] = await attempts[i]()
        except FsError as err:
            results[i] = err

    async with anyio.create_task_group() as tg:
        for i in range(len(attempts)):
            tg.start_soon(attempt, i)
    assert pending not in results
    return cast(list[T | FsError], results)


class SerializationContract(ContractBase):
    """Mutations of one target run one at a time; guarded ones never both win.

    ``contenders`` concurrent mutations race in each test (raise it in a
    subclass for a stress run).
    """

    contenders: int = 20

    def _one_winner(
        self,
        results: Sequence[FsWriteOutcome | FsEditOutcome | FsError],
        stale_message: str,
    ) -> int:
        winners = [i for i, r in enumerate(results) if not isinstance(r, FsError)]
        assert len(winners) == 1, f"{len(winners)} guarded mutations from one version succeeded"
        for r in results:
            if isinstance(r, FsError):
                assert (str(r), r.code) == (stale_message, FsErrorCode.FS_STALE_VERSION)
        return winners[0]

    @pytest.mark.anyio
    async def test_concurrent_guarded_writes_from_one_version_let_exactly_one_win(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"start\n")
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        info = await fs.stat(target)
        assert info is not None
        guard = ReplaceIfVersion(info.version)

        def writer(i: int) -> Callable[[], Awaitable[FsWriteOutcome]]:
            return lambda: fs.write_text(target, f"writer {i}\n" * (i + 1), guard)

        results = await race([writer(i) for i in range(self.contenders)])
        won = self._one_winner(
            results, f'cannot write "{target.display_path}": file changed since it was read'
        )
        assert scratch.get("f.txt") == f"writer {won}\n".encode() * (won + 1)
        final = await fs.stat(target)
        winner = results[won]
        assert not isinstance(winner, FsError)
        assert final is not None and final.version == winner.version
        assert scratch.names() == ["f.txt"]

    @pytest.mark.anyio
    async def test_concurrent_guarded_edits_from_one_version_let_exactly_one_win(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"value = 0\n")
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        info = await fs.stat(target)
        assert info is not None
        guard = EditGuard(info.version)

        def editor(i: int) -> Callable[[], Awaitable[FsEditOutcome]]:
            # Every edit still matches after any other: only the guard can refuse it.
            return lambda: fs.edit_text(target, FsEditRequest("value = ", f"value = {i}+"), guard)

        results = await race([editor(i) for i in range(self.contenders)])
        won = self._one_winner(
            results, f'cannot edit "{target.display_path}": file changed since it was read'
        )
        assert scratch.get("f.txt") == f"value = {won}+0\n".encode()
        assert scratch.names() == ["f.txt"]

    @pytest.mark.anyio
    async def test_concurrent_guarded_writes_and_edits_from_one_version_let_exactly_one_win(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"base\n")
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        info = await fs.stat(target)
        assert info is not None
        version = info.version
        attempts: list[Callable[[], Awaitable[FsWriteOutcome | FsEditOutcome]]] = []
        for i in range(self.contenders):
            if i % 2:
                attempts.append(
                    lambda i=i: fs.write_text(target, f"w{i}\n", ReplaceIfVersion(version))  # type: ignore[misc]
                )
            else:
                attempts.append(
                    lambda i=i: fs.edit_text(  # type: ignore[misc]
                        target, FsEditRequest("base", f"e{i}"), EditGuard(version)
                    )
                )
        results = await race(attempts)
        winners = [r for r in results if not isinstance(r, FsError)]
        assert len(winners) == 1
        losers = [r for r in results if isinstance(r, FsError)]
        assert {r.code for r in losers} == {FsErrorCode.FS_STALE_VERSION}

    @pytest.mark.anyio
    async def test_concurrent_unguarded_edits_lose_no_update_and_run_in_arrival_order(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"items:\r\nEND\r\n")
        fs = scratch.fs
        target = await fs.resolve("f.txt")

        def appender(i: int) -> Callable[[], Awaitable[FsEditOutcome]]:
            return lambda: fs.edit_text(target, FsEditRequest("END\n", f"item {i}\nEND\n"))

        arrivals: list[int] = []
        results = await race([appender(i) for i in range(self.contenders)], arrivals)
        assert not [r for r in results if isinstance(r, FsError)]
        lines = "".join(f"item {i}\r\n" for i in arrivals)
        assert scratch.get("f.txt") == f"items:\r\n{lines}END\r\n".encode()

    @pytest.mark.anyio
    async def test_concurrent_unguarded_writes_apply_whole_and_in_arrival_order(
        self, scratch: Scratch
    ) -> None:
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        contents = [f"{i}".encode() * (1000 * (i + 1)) for i in range(10)]

        def writer(i: int) -> Callable[[], Awaitable[FsWriteOutcome]]:
            return lambda: fs.write_text(target, contents[i].decode())

        arrivals: list[int] = []
        results = await race([writer(i) for i in range(len(contents))], arrivals)
        assert not [r for r in results if isinstance(r, FsError)]
        in_arrival_order = [results[i] for i in arrivals]
        operations = [r.operation for r in in_arrival_order if isinstance(r, FsWriteOutcome)]
        assert operations == ["create"] + ["update"] * (len(contents) - 1)
        assert scratch.get("f.txt") == contents[arrivals[-1]]
        assert scratch.names() == ["f.txt"]

    @pytest.mark.anyio
    async def test_readers_never_see_a_partly_written_file(self, scratch: Scratch) -> None:
        small, large = "s" * 1000 + "\n", "L€" * 300_000 + "\n"
        scratch.put("f.txt", small.encode())
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        seen: list[bool] = []  # one entry per read: was it one of the two whole contents?
        done = anyio.Event()

        async def writer() -> None:
            for i in range(10):
                await fs.write_text(target, large if i % 2 == 0 else small)
            done.set()

        async def reader(how: ReadHow) -> None:
            while not done.is_set():
                seen.append(await read_via(fs, target, how) in (small, large))
                await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as tg:
            tg.start_soon(writer)
            for how in READ_HOWS:
                tg.start_soon(reader, how)
        assert seen
        assert all(seen), f"{seen.count(False)} of {len(seen)} reads saw a partly written file"
