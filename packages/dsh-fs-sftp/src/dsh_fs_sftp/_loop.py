"""The asyncio loop asyncssh runs on, and the bridge to it from any anyio loop.

asyncssh is asyncio-only, and its connections belong to the loop that opened
them. Every :class:`~dsh_fs_sftp.SftpFileSystem` of the process therefore
runs its SSH work on one asyncio event loop in a daemon thread, whatever
loop the caller runs (asyncio or trio, one ``anyio.run`` or many): a backend
built in one ``anyio.run`` keeps its connection into the next.

One primitive is one coroutine on that loop. The caller waits for it in a
worker thread (``anyio.to_thread``), so the bridge is the same under asyncio
and trio. When the caller is cancelled, the coroutine is cancelled too, and
the caller waits (shielded) for it to end: a coroutine that was cancelled
before its commit has undone its work and the caller raises its
cancellation; one that had reached its commit finishes, and the caller
returns its result (the cancellation is then delivered at the caller's next
checkpoint). So a cancelled mutation is all or nothing, as the contract asks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

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

    async def run(
        self, coro: Coroutine[Any, Any, T], then: Callable[[T], R] = _same
    ) -> R:
        """Run ``coro`` on the SSH loop; return ``then(result)`` to the calling anyio task.

        ``then`` runs in the worker thread that waited (decoding a large text
        there keeps it off both event loops).
        """
        try:
            await anyio.lowlevel.checkpoint_if_cancelled()
        except BaseException:
            coro.close()
            raise
        call = _Call(self.loop, coro)

        def wait() -> R:
            return then(call.outcome.result())

        try:
            return await to_thread.run_sync(wait, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            call.cancel()
            # Wait (shielded) for the undo or the commit to land; bounded, so that a
            # server that stopped answering cannot hold a cancelled caller forever.
            with anyio.move_on_after(UNDO_WAIT, shield=True):
                await to_thread.run_sync(_wait, call.outcome)
            done = call.outcome
            if not done.done():
                logger.warning("an SFTP call did not end %s s after its cancellation", UNDO_WAIT)
                raise
            if done.cancelled() or done.exception() is not None:
                raise  # undone: the caller's cancellation stands
            # Committed before the cancellation reached it: the work is done.
            return then(done.result())

    def run_blocking(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the SSH loop from a worker thread and wait for its result."""
        try:
            result: T = _Call(self.loop, coro).outcome.result()
            return result
        except _Cancelled:
            raise RuntimeError("the SSH loop cancelled the call") from None


def _wait(future: concurrent.futures.Future[T]) -> None:
    concurrent.futures.wait([future], timeout=UNDO_WAIT)


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
