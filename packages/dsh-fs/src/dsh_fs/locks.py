"""Per-target serialization (rule 2 of ``FileSystem``): one FIFO lock per target key.

Every backend runs ``write_text`` and ``edit_text`` of one target one at a
time, in arrival order. :class:`TargetLocks` is that rule written once:
``anyio.Lock`` hands itself to waiters in the order they arrived, and a lock
exists only while somebody holds or awaits it, so a long session does not
accumulate one per file it ever touched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

import anyio

__all__ = ["TargetLocks"]


@dataclass
class _Entry:
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    users: int = 0
    """Tasks holding or awaiting ``lock``; the entry is dropped when it falls to zero."""


class TargetLocks:
    """The in-process locks of one backend, keyed by ``FsTarget.target_key``.

    ``async with locks.hold(key):`` waits for the lock of ``key`` (a
    cancellation while waiting leaves the queue and changes nothing) and
    releases it on the way out, whatever the outcome. ``hold_all(keys)``
    holds several at once (a move's two targets, a batch's every target).
    """

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def __len__(self) -> int:
        """How many keys have a lock right now (held or awaited)."""
        return len(self._entries)

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        entry = self._entries.setdefault(key, _Entry())
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._entries[key]

    @asynccontextmanager
    async def hold_all(self, keys: Iterable[str]) -> AsyncIterator[None]:
        """Hold the lock of every key in ``keys`` (a repeated key once).

        They are taken one by one in sorted order, the one fixed order every
        caller shares, so two callers that need overlapping sets cannot
        deadlock (each waits only for a key sorted after all it holds).
        """
        async with AsyncExitStack() as stack:
            for key in sorted(set(keys)):
                await stack.enter_async_context(self.hold(key))
            yield
