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
import logging
import math
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from anyio.abc import TaskStatus
from mcp.server import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata

from . import formats
from .execution import ProgressSink
from .host import Session, ToolFs, ToolResult
from .mcp_clients import NO_ROOTS, Client, Clients, RootsStack, paths_of_roots
from .names import escape_surrogates
from .stdin_lines import InterruptibleStdin

__all__ = [
    "SERVER_NAME",
    "InterruptibleStdin",
    "build_server",
    "client_key",
    "mcp_tools",
    "serve_stdio",
]

SERVER_NAME = "dsh-fs"
logger = logging.getLogger("dsh_tool_fs.mcp")


def _server_version() -> str:
    try:
        return version("dsh-tool-fs")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


def mcp_tools(toolfs: ToolFs) -> list[types.Tool]:
    """The tool definitions as MCP ``Tool`` objects: exactly ``dsh-fs tools --format mcp``."""
    return [types.Tool.model_validate(item) for item in formats.to_mcp_tools(toolfs.definitions)]


def build_server(
    toolfs: ToolFs,
    *,
    cwd: str | None = None,
    client_roots: RootsStack | None = None,
    clients: Clients | None = None,
) -> Server[Clients]:
    """An MCP server for ``toolfs``; each client gets its own ``Session(cwd=cwd)``.

    ``client_roots``: the workspace follows each client's roots, each set
    served by the host this factory builds for it (``toolfs`` then only
    lists the tools). ``clients``: the registry the lifespan hands every
    connection (the HTTP server shares one among its MCP sessions, keyed by
    session id); by default each connection (``server.run``) gets its own.
    """
    tools = mcp_tools(toolfs)

    @asynccontextmanager
    async def clients_of_this_run(_server: Server[Clients]) -> AsyncIterator[Clients]:
        yield clients if clients is not None else Clients(cwd=cwd)

    async def list_tools(
        ctx: ServerRequestContext[Clients], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool.model_copy() for tool in tools])

    async def call_tool(
        ctx: ServerRequestContext[Clients], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        client = _client_of(ctx)
        host: ToolFs | None = toolfs
        if client_roots is not None:
            host = await _host_of_roots(ctx, client, client_roots)
        if host is None:
            result = ToolResult.failure(NO_ROOTS, "NoWorkspaceError", "NO_WORKSPACE")
        else:
            arguments: Any = params.arguments if params.arguments is not None else {}
            result = await _execute(ctx, host, params.name, arguments, client.session)
        # A path argument may carry lone surrogates (undecodable bytes of a file name, sent
        # as JSON escapes) and error texts echo the path; JSON-RPC messages must be valid
        # UTF-8, and the SDK drops a response it cannot encode, leaving the client waiting.
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=escape_surrogates(result.text))],
            is_error=result.is_error,
        )

    async def roots_changed(
        ctx: ServerRequestContext[Clients], params: types.NotificationParams
    ) -> None:
        client = ctx.lifespan_context.known(client_key(ctx))
        if client is not None:
            client.roots_changed = True

    server = Server[Clients](
        SERVER_NAME,
        version=_server_version(),
        instructions=toolfs.instructions,
        lifespan=clients_of_this_run,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    if client_roots is not None:
        server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, roots_changed
        )
    return server


def client_key(ctx: ServerRequestContext[Any]) -> str | None:
    """Which client a request comes from: its MCP session id over HTTP, ``None`` on stdio
    (one client per connection)."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return None
    key = headers.get(MCP_SESSION_ID_HEADER)
    return key if isinstance(key, str) else None


def _client_of(ctx: ServerRequestContext[Clients]) -> Client:
    """The client a ``tools/call`` comes from. A stateless HTTP request (the 2026 protocol,
    no MCP session) is a client of its own: nothing it observes outlives it."""
    clients = ctx.lifespan_context
    key = client_key(ctx)
    if key is None and ctx.request is not None:
        return clients.fresh()
    return clients.get(key)


ROOTS_TIMEOUT = 30.0
"""Seconds the server waits for the client's answer to ``roots/list``."""


async def _host_of_roots(
    ctx: ServerRequestContext[Clients], client: Client, build: RootsStack
) -> ToolFs | None:
    """The host of the client's current roots, asking the client for them when they changed."""
    if not client.roots_changed:
        return client.toolfs
    wants_roots = types.ClientCapabilities(roots=types.RootsCapability())
    uris: list[str] = []
    if ctx.session.check_client_capability(wants_roots):
        try:
            with anyio.fail_after(ROOTS_TIMEOUT):
                listed = await ctx.session.send_request(
                    types.ListRootsRequest(),
                    types.ListRootsResult,
                    metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
                )
        except (TimeoutError, MCPError) as exc:  # asked again on the next call
            logger.warning("the client did not list its roots: %s", exc)
            return None
        uris = [str(root.uri) for root in listed.roots]
    return client.use_roots(paths_of_roots(uris), build)


async def _execute(
    ctx: ServerRequestContext[Clients], host: ToolFs, name: str, arguments: Any, session: Session
) -> ToolResult:
    """``host.execute`` for one ``tools/call``: the client's ``notifications/cancelled`` (which
    cancels this handler's scope) becomes the call's cancel event, so the call ends as a
    cancelled call does (``<verb> aborted``, files as they were) rather than wherever the
    cancellation lands; progress goes to the client when it sent a ``progressToken``."""
    cancel = anyio.Event()
    done = False

    async def cancel_when_this_handler_is(
        *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            task_status.started()
            await anyio.sleep_forever()
        finally:
            if not done:
                cancel.set()

    progress = _progress_sink(ctx)
    async with anyio.create_task_group() as tg:
        await tg.start(cancel_when_this_handler_is)
        with anyio.CancelScope(shield=True):
            result = await host.execute(
                name, arguments, session=session, cancel=cancel, progress=progress
            )
        done = True
        tg.cancel_scope.cancel()
        if cancel.is_set():  # the answer is not sent: say in the log how the call ended
            logger.info("tools/call %s cancelled: %s", name, result.text)
    return result


PROGRESS_INTERVAL = 0.1
"""Seconds between two progress notifications of one call (the first is sent at once)."""


def _progress_sink(ctx: ServerRequestContext[Clients]) -> ProgressSink | None:
    """A sink sending ``notifications/progress`` for this request, or ``None`` when the
    client sent no ``progressToken``."""
    meta = (ctx.params or {}).get("_meta")
    if not isinstance(meta, dict) or meta.get("progressToken") is None:
        return None
    last = -math.inf

    async def notify(done: int, total: int | None, message: str | None) -> None:
        nonlocal last
        now = anyio.current_time()
        if now - last < PROGRESS_INTERVAL:
            return
        last = now
        await ctx.session.report_progress(done, total, message)

    return notify


async def serve_stdio(
    toolfs: ToolFs, *, cwd: str | None = None, client_roots: RootsStack | None = None
) -> None:
    """Serve one client over this process's stdin/stdout until it disconnects.

    While serving, the SDK points file descriptor 1 at stderr, so nothing but
    protocol messages can reach stdout, and descriptor 0 points at the null
    device (as the SDK's own stdin claim does), so nothing the server starts
    can read the client's messages: they are read from a private duplicate,
    by :class:`InterruptibleStdin`, so a cancellation — Ctrl-C — stops the
    server at once, even while it waits for the client.
    """
    server = build_server(toolfs, cwd=cwd, client_roots=client_roots)
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
