"""Reading standard input so that a cancellation — Ctrl-C — ends the wait at once.

A blocking ``readline`` in a worker thread is interrupted by nothing: on
Ctrl-C the process went on until the next line arrived — on a terminal,
until the user pressed Enter — and a second Ctrl-C aborted Python while the
thread held stdin's buffer (``Fatal Python error: _enter_buffered_busy``,
exit 134). Here the worker waits at most :data:`POLL_SECONDS` for input and
then hands control back to the event loop, where the cancellation lands.
``dsh-fs session`` reads its requests through :class:`InterruptibleLines`,
``dsh-fs mcp`` the client's messages through :class:`InterruptibleStdin`.
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import AsyncIterator

import anyio
import anyio.to_thread

__all__ = ["POLL_SECONDS", "InterruptibleLines", "InterruptibleStdin"]

POLL_SECONDS = 0.1


class InterruptibleLines:
    """The lines of file descriptor ``fd`` (each with its newline; the last one may lack
    it), read without ever blocking a worker thread for longer than :data:`POLL_SECONDS`."""

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._pending = bytearray()
        self._eof = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[bytes]:
        while line := await self.readline():
            yield line

    async def readline(self) -> bytes:
        """The next line, or ``b""`` at the end of the input."""
        newline = self._pending.find(b"\n")
        while newline < 0 and not self._eof:
            chunk = await anyio.to_thread.run_sync(self._read_ready)
            if chunk is None:
                continue  # silence: back to the loop, where a cancellation lands
            self._eof = not chunk
            found = chunk.find(b"\n")  # only the new bytes: a long line is scanned once
            if found == len(chunk) - 1 and not self._pending:
                return chunk  # the usual case: one whole message
            if found >= 0:
                newline = len(self._pending) + found
            self._pending += chunk
        end = newline + 1 if newline >= 0 else len(self._pending)
        line = bytes(self._pending[:end])
        del self._pending[:end]
        return line

    def _read_ready(self) -> bytes | None:
        """``None`` if the descriptor stayed silent for :data:`POLL_SECONDS`; else what it
        holds, read until a newline or until nothing more is waiting (``b""`` at its end),
        so that a long message costs one worker call, not one per pipe buffer."""
        readable, _, _ = select.select([self._fd], [], [], POLL_SECONDS)
        if not readable:
            return None
        chunks = []
        while readable:
            chunk = os.read(self._fd, 1 << 16)
            chunks.append(chunk)
            if not chunk or b"\n" in chunk:
                break
            readable, _, _ = select.select([self._fd], [], [], 0)
        return b"".join(chunks)


class InterruptibleStdin(anyio.AsyncFile[str]):
    """Standard input for the MCP SDK's stdio transport: :class:`InterruptibleLines` decoded
    as UTF-8, undecodable bytes replaced, as the SDK reads it. Only ``readline`` (and so
    iteration, all the transport uses) reads ``fd``; the wrapped ``sys.stdin`` is there
    for the file's attributes."""

    POLL_SECONDS = POLL_SECONDS

    def __init__(self, fd: int = 0) -> None:
        super().__init__(sys.stdin)
        self._lines = InterruptibleLines(fd)

    async def readline(self) -> str:
        return (await self._lines.readline()).decode("utf-8", "replace")
