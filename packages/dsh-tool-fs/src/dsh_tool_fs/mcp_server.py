"""The tools as an MCP server, built on the official SDK's low-level ``Server``.

The low-level server is used (not the decorator-based one) so that what a
client lists is exactly our definitions: ``inputSchema`` is the same JSON
Schema as ``ToolFs.definitions`` (``dsh-fs tools --format mcp``), with no
schema generated from Python signatures and no second validation layer —
the host validates arguments and answers with its own messages.

* ``tools/list`` returns the tools, each with its ``title`` and
  ``annotations`` (read-only, destructive, idempotent hints) as its
  :class:`~dsh_tool_fs.ToolSpec` declares them; ``initialize`` carries the
  prompt sections (joined by a blank line) as the server ``instructions``.
* ``tools/call`` runs ``ToolFs.execute`` and answers with one text content
  item holding ``ToolResult.text``; ``isError`` is set when the call failed.
  An unknown tool name is such a failed call (``Error: unknown tool "<name>"``).
* One :class:`~dsh_tool_fs.Session` per client connection: it is created
  when the connection's serving loop starts (the server lifespan) and is the
  observation owner of every call on that connection.

Needs the optional dependency: ``pip install "dsh-tool-fs[mcp]"``.
"""

from __future__ import annotations

import fcntl
import os
import select
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from . import formats
from .host import Session, ToolFs
from .names import escape_surrogates

SERVER_NAME = "dsh-fs"


def _server_version() -> str:
    try:
        return version("dsh-tool-fs")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


def mcp_tools(toolfs: ToolFs) -> list[types.Tool]:
    """The tool definitions as MCP ``Tool`` objects: exactly ``dsh-fs tools --format mcp``."""
    return [types.Tool.model_validate(item) for item in formats.to_mcp_tools(toolfs.definitions)]


def build_server(toolfs: ToolFs, *, cwd: str | None = None) -> Server[Session]:
    """An MCP server for ``toolfs``; each connection gets its own ``Session(cwd=cwd)``."""
    tools = mcp_tools(toolfs)

    @asynccontextmanager
    async def one_session_per_connection(_server: Server[Session]) -> AsyncIterator[Session]:
        yield Session(cwd=cwd)

    async def list_tools(
        ctx: ServerRequestContext[Session], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool.model_copy() for tool in tools])

    async def call_tool(
        ctx: ServerRequestContext[Session], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments: Any = params.arguments if params.arguments is not None else {}
        result = await toolfs.execute(params.name, arguments, session=ctx.lifespan_context)
        # A path argument may carry lone surrogates (undecodable bytes of a file name, sent
        # as JSON escapes) and error texts echo the path; JSON-RPC messages must be valid
        # UTF-8, and the SDK drops a response it cannot encode, leaving the client waiting.
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=escape_surrogates(result.text))],
            is_error=result.is_error,
        )

    return Server[Session](
        SERVER_NAME,
        version=_server_version(),
        instructions=toolfs.instructions,
        lifespan=one_session_per_connection,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class InterruptibleStdin(anyio.AsyncFile[str]):
    """Standard input for the SDK's stdio transport, read so that a cancellation ends the wait.

    The SDK's own reader blocks in ``readline`` in a worker thread, which no
    cancellation interrupts: on Ctrl-C the server went on until the next line
    arrived — on a terminal, until the user pressed Enter. Here the worker
    waits at most :attr:`POLL_SECONDS` for input and then hands control back
    to the event loop, so Ctrl-C (which cancels the serving task) ends the
    server within that time. Input is read as UTF-8 lines, undecodable bytes
    replaced, as the SDK reads it. Only ``readline`` (and so iteration, all
    the transport uses) reads ``fd``; the wrapped ``sys.stdin`` is there for
    the file's attributes.
    """

    POLL_SECONDS = 0.1

    def __init__(self, fd: int = 0) -> None:
        super().__init__(sys.stdin)
        self._fd = fd
        self._pending = bytearray()
        self._eof = False

    async def readline(self) -> str:
        newline = self._pending.find(b"\n")
        while newline < 0 and not self._eof:
            chunk = await anyio.to_thread.run_sync(self._read_ready)
            if chunk is None:
                continue  # silence: back to the loop, where a cancellation lands
            self._eof = not chunk
            found = chunk.find(b"\n")  # only the new bytes: a long line is scanned once
            if found == len(chunk) - 1 and not self._pending:
                return chunk.decode("utf-8", "replace")  # the usual case: one whole message
            if found >= 0:
                newline = len(self._pending) + found
            self._pending += chunk
        end = newline + 1 if newline >= 0 else len(self._pending)
        line = bytes(self._pending[:end])
        del self._pending[:end]
        return line.decode("utf-8", "replace")

    def _read_ready(self) -> bytes | None:
        """``None`` if the descriptor stayed silent for :attr:`POLL_SECONDS`; else what it
        holds, read until a newline or until nothing more is waiting (``b""`` at its end),
        so that a long message costs one worker call, not one per pipe buffer."""
        readable, _, _ = select.select([self._fd], [], [], self.POLL_SECONDS)
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


async def serve_stdio(toolfs: ToolFs, *, cwd: str | None = None) -> None:
    """Serve one client over this process's stdin/stdout until it disconnects.

    While serving, the SDK points file descriptor 1 at stderr, so nothing but
    protocol messages can reach stdout, and descriptor 0 points at the null
    device (as the SDK's own stdin claim does), so nothing the server starts
    can read the client's messages: they are read from a private duplicate,
    by :class:`InterruptibleStdin`, so a cancellation — Ctrl-C — stops the
    server at once, even while it waits for the client.
    """
    server = build_server(toolfs, cwd=cwd)
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        async with stdio_server(stdin=InterruptibleStdin(wire)) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:  # no read is in flight any more: the reads are never abandoned
        os.dup2(wire, 0)
        os.close(wire)
