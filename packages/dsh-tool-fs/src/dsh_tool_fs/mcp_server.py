"""The tools as an MCP server, built on the official SDK's low-level ``Server``.

The low-level server is used (not the decorator-based one) so that what a
client lists is exactly our definitions: ``inputSchema`` is the same JSON
Schema as ``ToolFs.definitions`` (``dsh-fs tools --format mcp``), with no
schema generated from Python signatures and no second validation layer —
the host validates arguments and answers with its own messages.

* ``tools/list`` returns the tools, each with its ``title`` and
  ``annotations`` (read-only, destructive, idempotent hints, SPEC 6) as its
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

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

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


async def serve_stdio(toolfs: ToolFs, *, cwd: str | None = None) -> None:
    """Serve one client over this process's stdin/stdout until it disconnects.

    While serving, the SDK points file descriptor 1 at stderr, so nothing but
    protocol messages can reach stdout.
    """
    server = build_server(toolfs, cwd=cwd)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
