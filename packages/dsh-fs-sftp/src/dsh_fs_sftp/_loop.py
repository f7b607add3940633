"""The asyncio loop asyncssh runs on, and the bridge to it from any anyio loop.

asyncssh is asyncio-only, and its connections belong to the loop that opened
them. Every :class:`~dsh_fs_sftp.SftpFileSystem` of the process therefore
runs its SSH work on one asyncio event loop in a daemon thread, whatever
loop the caller runs (asyncio or trio, one ``anyio.run`` or many): a backend
built in one ``anyio.run`` keeps its connection into the next.

One primitive is one coroutine on that loop. The caller waits for it in a
worker thread (``anyio.to_thread``), so the bridge is the same under asyncio
and trio. That wait is never interrupted; when the caller's scope is
cancelled, the cancellation is forwarded to the coroutine instead: one that
was cancelled before its commit has undone its work and the caller raises
its cancellation (anyio delivers it); one that had reached its commit
finishes, and the caller returns its result (the cancellation is delivered
at its next checkpoint). So a cancelled mutation is all or nothing, as the
contract asks, and no cancellation is ever swallowed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar, cast

import anyio
import anyio.lowlevel
from anyio import to_thread

T = TypeVar("T")
R = TypeVar("R")

logger = logging.getLogger("dsh_fs_sftp")

UNDO_WAIT = 60.0
"""Seconds a cancelled caller waits for its call to undo (or finish) its work."""


def _same(value: Any) -> Any:
    return value


__all__ = ["SshLoop", "finish", "run_to_end", "undone_if_cancelled"]


class _Cancelled(Exception):
    """The coroutine on the SSH loop ended cancelled (it undid its work)."""


class _Call:
    """One coroutine submitted to the SSH loop, with its outcome as a thread-safe future."""

    def __init__(self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any]) -> None:
        self.outcome: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._loop = loop
        self._task: asyncio.Task[Any] | None = None
        loop.call_soon_threadsafe(self._start, coro)

    def _start(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._task = self._loop.create_task(coro)
        self._task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            self.outcome.set_exception(_Cancelled())
        elif (exc := task.exception()) is not None:
            self.outcome.set_exception(exc)
        else:
            self.outcome.set_result(task.result())

    def cancel(self) -> None:
        # Scheduled after _start (call_soon_threadsafe keeps the order): the task exists.
        self._loop.call_soon_threadsafe(lambda: self._task is not None and self._task.cancel())


class SshLoop:
    """An asyncio event loop running forever in a daemon thread."""

    _shared: SshLoop | None = None
    _shared_guard = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="dsh-fs-sftp", daemon=True
        )
        self._thread.start()

    @classmethod
    def shared(cls) -> SshLoop:
        """The process's one SSH loop, started on first use."""
        with cls._shared_guard:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    async def run(self, coro: Coroutine[Any, Any, T], then: Callable[[T], R] = _same) -> R:
        """Run ``coro`` on the SSH loop; return ``then(result)`` to the calling anyio task.

        ``then`` runs in the worker thread that waited (decoding a large text
        there keeps it off both event loops). The caller's cancellation never
        interrupts the wait — anyio delivers it at the caller's next
        checkpoint, as for any worker-thread call that is not abandoned —
        but it is forwarded to the coroutine, which undoes its work (the
        caller then raises its cancellation) or, past its commit, finishes
        (the caller returns its result).
        """
        try:
            await anyio.lowlevel.checkpoint_if_cancelled()
        except BaseException:
            coro.close()
            raise
        call = _Call(self.loop, coro)
        give_up = math.inf
        while True:
            with anyio.CancelScope(shield=True):  # to_thread checkpoints first
                done, value = await to_thread.run_sync(_wait_briefly, call.outcome, then)
            if done:
                break
            if give_up == math.inf and _cancel_requested():
                call.cancel()
                give_up = time.monotonic() + UNDO_WAIT
            elif time.monotonic() > give_up:
                logger.warning("an SFTP call did not end %s s after its cancellation", UNDO_WAIT)
                break
        if value is _UNDONE or not done:
            await anyio.lowlevel.checkpoint()  # raises the cancellation that undid it
            raise RuntimeError("the SSH loop cancelled a call nobody cancelled")
        return cast(R, value)

    def run_blocking(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the SSH loop from a worker thread and wait for its result."""
        try:
            result: T = _Call(self.loop, coro).outcome.result()
            return result
        except _Cancelled:
            raise RuntimeError("the SSH loop cancelled the call") from None


_UNDONE = object()
"""What :func:`_wait_briefly` gives for a call that ended cancelled (its work undone)."""
_POLL = 0.05
"""Seconds between two looks at the caller's cancellation while a call runs."""


def _wait_briefly(
    future: concurrent.futures.Future[T], then: Callable[[T], R]
) -> tuple[bool, R | object]:
    """``(True, then(result))`` once ``future`` is done (its exception raised), ``(True,
    _UNDONE)`` when it ended cancelled, ``(False, None)`` if still running after a moment."""
    try:
        result = future.result(timeout=_POLL)
    except concurrent.futures.TimeoutError:
        return False, None
    except _Cancelled:
        return True, _UNDONE
    return True, then(result)


def _cancel_requested() -> bool:
    """Whether the calling task's cancel scope is cancelled (or past its deadline)."""
    deadline = anyio.current_effective_deadline()
    return deadline == -math.inf or deadline <= anyio.current_time()


async def finish(aw: Awaitable[T]) -> T:
    """Run ``aw`` to its end even if the current task is cancelled meanwhile.

    For the steps that undo work (removing a temporary file, releasing a
    lock): they complete, and then a cancellation that arrived meanwhile is
    raised.
    """
    task = asyncio.ensure_future(aw)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done():
                cancelled = True
    if cancelled:
        if not task.cancelled() and task.exception() is not None:
            raise asyncio.CancelledError from task.exception()
        raise asyncio.CancelledError
    result: T = task.result()
    return result


async def run_to_end(aw: Awaitable[T]) -> T:
    """Run ``aw`` to its end and return its result, even if the task is cancelled meanwhile.

    For a commit (the rename that publishes a file): once it has started, the
    mutation has happened, and the caller must get its outcome.
    """
    task = asyncio.ensure_future(aw)
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            continue
    return task.result()


async def undone_if_cancelled(aw: Awaitable[T], undo: Callable[[T], Awaitable[object]]) -> T:
    """Await a request that creates something (a lock file, a temporary file).

    If the task is cancelled while the request is in flight, the server may
    already have created it: wait for the answer, ``undo`` what was created,
    then raise the cancellation. Nothing is left behind either way.
    """
    task = asyncio.ensure_future(aw)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        try:
            created = await run_to_end(task)
        except Exception:
            raise asyncio.CancelledError from None
        await finish(undo(created))
        raise
