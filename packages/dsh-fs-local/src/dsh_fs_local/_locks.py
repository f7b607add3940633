"""Per-target in-process serialization: one FIFO ``anyio.Lock`` per target key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        # fast_acquire: an uncontended acquire does not yield to the event loop
        # (one loop iteration less per write or edit); waiters still get the
        # lock handed over in arrival order, and the worker-thread call that
        # follows is the cancellation point.
        self.lock = anyio.Lock(fast_acquire=True)
        self.users = 0


class TargetLocks:
    """Locks created on demand and dropped as soon as nobody holds or waits for them.

    ``anyio.Lock`` hands the lock to waiters in arrival order, which gives the
    FIFO serialization the seam promises for ``write_text``/``edit_text``.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry()
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._entries[key]
