"""Overlapping a few seam calls: the latency of one call, paid once per batch.

On the local backend every primitive is one hop to a worker thread, and on a
network backend one round trip or more; a search that waits for each call in
turn spends most of its time waiting, not working. Running a small batch of
calls at once overlaps those waits and keeps the results in order, so what the
caller reports is what one call at a time would give. The default
:meth:`dsh_fs.FileSystem.read_texts` reads this way; the search tools list
directories this way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import anyio

from ._errors import FsError

__all__ = ["in_order"]

T = TypeVar("T")


async def in_order(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T | FsError]:
    """Run ``calls`` concurrently; their results, or the ``FsError`` each raised, in order.

    Any other exception (cancellation included) cancels the rest and propagates.
    """
    results: dict[int, T | FsError] = {}

    async def run(index: int, call: Callable[[], Awaitable[T]]) -> None:
        try:
            results[index] = await call()
        except FsError as exc:
            results[index] = exc

    if len(calls) == 1:
        await run(0, calls[0])
    else:
        async with anyio.create_task_group() as tg:
            for index, call in enumerate(calls):
                tg.start_soon(run, index, call)
    return [results[index] for index in range(len(calls))]
