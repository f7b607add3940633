"""``TargetLocks``: one FIFO lock per target key, gone once nobody holds or awaits it."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest
from dsh_fs.locks import TargetLocks

pytestmark = pytest.mark.anyio


async def test_holders_of_one_key_run_one_at_a_time_in_arrival_order() -> None:
    locks = TargetLocks()
    order: list[str] = []

    async def hold(name: str) -> None:
        async with locks.hold("k"):
            order.append(f"{name} in")
            await anyio.sleep(0.001)
            order.append(f"{name} out")

    async with anyio.create_task_group() as tg:
        for name in "abc":
            tg.start_soon(hold, name)
            await anyio.lowlevel.checkpoint()
    assert order == ["a in", "a out", "b in", "b out", "c in", "c out"]


async def test_different_keys_do_not_wait_for_each_other() -> None:
    locks = TargetLocks()
    async with locks.hold("a"):
        with anyio.fail_after(1):
            async with locks.hold("b"):
                assert len(locks) == 2


async def test_the_lock_of_a_key_is_dropped_when_nobody_holds_or_awaits_it() -> None:
    locks = TargetLocks()
    async with locks.hold("k"):
        assert len(locks) == 1
    assert len(locks) == 0
    with pytest.raises(RuntimeError):
        async with locks.hold("k"):
            raise RuntimeError("the body failed")
    assert len(locks) == 0


async def test_a_waiter_cancelled_in_the_queue_never_runs_and_leaves_no_lock() -> None:
    locks = TargetLocks()
    ran: list[str] = []

    async def waiter(scope: anyio.CancelScope) -> None:
        with scope:
            async with locks.hold("k"):
                ran.append("waiter")

    scope = anyio.CancelScope()
    async with anyio.create_task_group() as tg, locks.hold("k"):
        tg.start_soon(waiter, scope)
        await anyio.lowlevel.checkpoint()
        scope.cancel()
        await anyio.lowlevel.checkpoint()
    assert ran == []
    assert len(locks) == 0


async def test_hold_all_takes_a_repeated_key_once() -> None:
    locks = TargetLocks()
    with anyio.fail_after(1):
        async with locks.hold_all(["b", "a", "b"]):
            assert len(locks) == 2
    assert len(locks) == 0


async def test_hold_all_in_opposite_orders_does_not_deadlock() -> None:
    locks = TargetLocks()
    done: list[str] = []

    async def hold(name: str, keys: list[str]) -> None:
        for _ in range(20):
            async with locks.hold_all(keys):
                await anyio.lowlevel.checkpoint()
        done.append(name)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(hold, "forward", ["a", "b", "c"])
            tg.start_soon(hold, "backward", ["c", "b", "a"])
    assert sorted(done) == ["backward", "forward"]


async def test_hold_all_waits_for_each_key_held_elsewhere() -> None:
    locks = TargetLocks()
    entered = anyio.Event()
    async with locks.hold("b"), anyio.create_task_group() as tg:

        async def both() -> None:
            async with locks.hold_all(["a", "b"]):
                entered.set()

        tg.start_soon(both)
        await anyio.sleep(0.01)
        assert not entered.is_set()
        tg.cancel_scope.cancel()
    assert len(locks) == 0
