"""Cancellation (``FileSystem`` rule 5): cancelled calls raise anyio's cancellation,
and a cancelled mutation changes nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
import pytest

from .._filesystem import FileSystem
from .._types import DeleteChange, FsEditRequest, FsTarget, WriteChange
from ._base import ContractBase
from ._expect import bytes_difference, collect_stream, run_then_cancel
from ._scratch import Scratch

PRIMITIVES = (
    "resolve",
    "stat",
    "lstat",
    "read_text",
    "stream_text",
    "read_texts",
    "list_dir",
    "list_dirs",
    "write_text",
    "edit_text",
    "delete",
    "move",
    "apply_changes",
)
CANCEL_STEPS = (0, 1, 2, 3, 5, 8, 13, 21)
CANCEL_DELAYS = (0.0001, 0.001, 0.005)
MOVE_ON_DEADLINES = (0.0, 0.0005, 0.002, 0.01)
LOCK_RELEASE_TIMEOUT = 10.0


async def _write_or_edit(fs: FileSystem, kind: str, target: FsTarget, new: bytes) -> object:
    """``write`` ``new`` over ``target``, or ``edit`` its ``MARK`` into ``DONE`` (which turns
    the tests' old content into ``new``)."""
    if kind == "write":
        return await fs.write_text(target, new.decode())
    return await fs.edit_text(target, FsEditRequest("MARK", "DONE"))


class CancellationContract(ContractBase):
    """Cancelled calls raise anyio's cancellation; a cancelled mutation changes nothing."""

    contenders: int = 20

    async def _call(
        self, scratch: Scratch, primitive: str, target: FsTarget, other: FsTarget
    ) -> object:
        """Call ``primitive`` on ``target`` (``f.txt``); ``other`` (``g.txt``, absent) is where
        ``move`` moves it."""
        fs = scratch.fs
        if primitive == "resolve":
            return await fs.resolve("f.txt")
        if primitive == "stat":
            return await fs.stat(target)
        if primitive == "lstat":
            return await fs.lstat("f.txt")
        if primitive == "read_text":
            return await fs.read_text(target)
        if primitive == "stream_text":
            return await collect_stream(fs.stream_text(target))
        if primitive == "read_texts":
            return await fs.read_texts([target] * 8)
        if primitive == "list_dir":
            return await fs.list_dir(await fs.resolve("."))
        if primitive == "list_dirs":
            return await fs.list_dirs([await fs.resolve(".")] * 8)
        if primitive == "write_text":
            return await fs.write_text(target, "written\n")
        if primitive == "delete":
            return await fs.delete(target)
        if primitive == "move":
            return await fs.move(target, other)
        if primitive == "apply_changes":
            return await fs.apply_changes([WriteChange(target, "written\n"), DeleteChange(other)])
        return await fs.edit_text(target, FsEditRequest("old", "edited"))

    @pytest.mark.anyio
    @pytest.mark.parametrize("primitive", PRIMITIVES)
    async def test_primitive_called_in_a_cancelled_scope_raises_cancellation(
        self, scratch: Scratch, primitive: str
    ) -> None:
        scratch.put("f.txt", b"old\n")
        target, other = await scratch.fs.resolve("f.txt"), await scratch.fs.resolve("g.txt")
        reached = False
        with anyio.CancelScope() as scope:
            scope.cancel()
            try:
                await self._call(scratch, primitive, target, other)
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as exc:
                pytest.fail(f"{primitive} raised {type(exc).__name__} instead of cancelling")
            reached = True
        assert scope.cancelled_caught and not reached, f"{primitive} ignored the cancellation"
        assert scratch.get("f.txt") == b"old\n"
        assert scratch.names() == ["f.txt"]

    async def _check_cancelled_mutation(
        self,
        scratch: Scratch,
        mutate: Callable[[FsTarget], Awaitable[object]],
        old: bytes,
        new: bytes,
        *,
        steps: int = 0,
        delay: float = 0.0,
    ) -> bool:
        scratch.put("d/f.txt", old)
        fs = scratch.fs
        target = await fs.resolve("d/f.txt")
        before = await fs.stat(target)
        assert before is not None
        completed = await run_then_cancel(lambda: mutate(target), steps=steps, delay=delay)
        after = await fs.stat(target)
        assert after is not None
        if completed:
            wrong = bytes_difference(scratch.get("d/f.txt"), new)
            assert not wrong, f"a completed mutation left other bytes: {wrong}"
        else:
            wrong = bytes_difference(scratch.get("d/f.txt"), old)
            assert not wrong, f"a cancelled mutation changed the file: {wrong}"
            assert after.version == before.version
        assert scratch.names("d") == ["f.txt"], "a cancelled mutation left a file behind"
        await self._target_is_free(scratch, target)
        return completed

    async def _target_is_free(self, scratch: Scratch, target: FsTarget) -> None:
        """A cancelled call must not leave the target locked."""
        with anyio.fail_after(LOCK_RELEASE_TIMEOUT):
            await scratch.fs.write_text(target, "after the cancellation\n")
        assert await scratch.fs.read_text(target) == "after the cancellation\n"

    @pytest.mark.anyio
    @pytest.mark.parametrize("steps", CANCEL_STEPS)
    async def test_cancelled_write_leaves_the_old_content_or_completes(
        self, scratch: Scratch, steps: int
    ) -> None:
        old, new = b"old content\n" * 1000, "new content\r\n" * 5000

        async def mutate(target: FsTarget) -> object:
            return await scratch.fs.write_text(target, new)

        await self._check_cancelled_mutation(scratch, mutate, old, new.encode(), steps=steps)

    @pytest.mark.anyio
    @pytest.mark.parametrize("steps", CANCEL_STEPS)
    async def test_cancelled_edit_leaves_the_old_content_or_completes(
        self, scratch: Scratch, steps: int
    ) -> None:
        old = b"\xef\xbb\xbf" + b"line\r\n" * 5000 + b"MARK\r\n"
        new = b"\xef\xbb\xbf" + b"line\r\n" * 5000 + b"DONE\r\n"

        async def mutate(target: FsTarget) -> object:
            return await scratch.fs.edit_text(target, FsEditRequest("MARK", "DONE"))

        await self._check_cancelled_mutation(scratch, mutate, old, new, steps=steps)

    @pytest.mark.anyio
    @pytest.mark.parametrize("delay", CANCEL_DELAYS)
    @pytest.mark.parametrize("kind", ["write", "edit"])
    async def test_mutation_cancelled_after_a_delay_leaves_the_old_content_or_completes(
        self, scratch: Scratch, delay: float, kind: str
    ) -> None:
        old = b"x" * 200_000 + b"\nMARK\n"
        new = b"x" * 200_000 + b"\nDONE\n"

        async def mutate(target: FsTarget) -> object:
            return await _write_or_edit(scratch.fs, kind, target, new)

        await self._check_cancelled_mutation(scratch, mutate, old, new, delay=delay)

    @pytest.mark.anyio
    @pytest.mark.parametrize("deadline", MOVE_ON_DEADLINES)
    @pytest.mark.parametrize("kind", ["write", "edit"])
    async def test_mutation_under_move_on_after_is_all_or_nothing(
        self, scratch: Scratch, deadline: float, kind: str
    ) -> None:
        old = b"y" * 300_000 + b"\nMARK\n"
        new = b"y" * 300_000 + b"\nDONE\n"
        scratch.put("d/f.txt", old)
        fs = scratch.fs
        target = await fs.resolve("d/f.txt")
        completed = False
        with anyio.move_on_after(deadline) as scope:
            try:
                await _write_or_edit(fs, kind, target, new)
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as exc:
                pytest.fail(f"a timed-out {kind} raised {type(exc).__name__}: {exc!r}")
            completed = True
        assert completed or scope.cancelled_caught
        assert scratch.get("d/f.txt") == (new if completed else old)
        assert scratch.names("d") == ["f.txt"]
        await self._target_is_free(scratch, target)

    @pytest.mark.anyio
    async def test_cancelled_stream_propagates_and_leaves_the_target_free(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"line\n" * 200_000)
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        stream = fs.stream_text(target)
        chunks = 0
        with anyio.CancelScope() as scope:
            async for _ in stream:
                chunks += 1
                scope.cancel()
            await anyio.lowlevel.checkpoint()  # a one-chunk stream ends without raising
        assert scope.cancelled_caught
        assert chunks == 1, "the stream went on producing chunks after its cancellation"
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
        await self._target_is_free(scratch, target)

    @pytest.mark.anyio
    async def test_cancelled_waiting_mutation_does_not_run_after_the_lock_frees(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"v0\n")
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        scopes = [anyio.CancelScope() for _ in range(self.contenders)]
        completed = [False] * self.contenders
        arrivals: list[int] = []  # the order in which they reach the lock: see race

        async def writer(i: int) -> None:
            with scopes[i]:
                arrivals.append(i)
                await fs.edit_text(target, FsEditRequest("\n", f" {i}\n"))
                completed[i] = True

        async with anyio.create_task_group() as tg:
            for i in range(self.contenders):
                tg.start_soon(writer, i)
            while len(arrivals) < self.contenders:  # all of them wait for the lock now
                await anyio.lowlevel.checkpoint()
            for i in range(1, self.contenders, 2):
                scopes[i].cancel()
        ran = [i for i in arrivals if completed[i]]
        assert all(i in ran for i in range(0, self.contenders, 2))
        assert scratch.get("f.txt") == ("v0" + "".join(f" {i}" for i in ran) + "\n").encode()
        assert scratch.names() == ["f.txt"]
