"""Per-target in-process serialization: one FIFO ``anyio.Lock`` per target key."""

from __future__ import annotations

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

    def hold(self, key: str) -> _Hold:
        """``async with locks.hold(key):`` — the lock of ``key``, in arrival order."""
        return _Hold(self._entries, key)


class _Hold:
    """One ``hold``: a small class, not a generator-based context manager (a few
    microseconds less per write, where the rest of a write's host work is tens)."""

    __slots__ = ("_entries", "_entry", "_key")

    def __init__(self, entries: dict[str, _Entry], key: str) -> None:
        self._entries = entries
        self._key = key

    async def __aenter__(self) -> None:
        entry = self._entries.get(self._key)
        if entry is None:
            entry = self._entries[self._key] = _Entry()
        entry.users += 1
        self._entry = entry
        try:
            await self._entry.lock.acquire()
        except BaseException:
            self._leave()
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        self._entry.lock.release()
        self._leave()

    def _leave(self) -> None:
        entry = self._entry
        entry.users -= 1
        if entry.users == 0:
            del self._entries[self._key]
