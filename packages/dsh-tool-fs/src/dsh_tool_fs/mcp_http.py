"""``dsh-fs mcp --http``: the MCP server over Streamable HTTP, with a bearer token.

Built from the official SDK's pieces, none of the transport written here:
its ``StreamableHTTPSessionManager`` (sessions, the ``Mcp-Session-Id``
header, SSE, the idle timeout) behind Starlette, its ``BearerAuthBackend`` /
``RequireAuthMiddleware`` (401 without the token) and its
``TransportSecuritySettings`` (DNS-rebinding protection: a request whose
``Host`` is not the server's or whose ``Origin`` is another site's is
refused, 421 / 403), served by uvicorn (which the SDK depends on).

Per MCP session (one client conversation) the server keeps one
:class:`~dsh_tool_fs.Session` (:class:`~dsh_tool_fs.mcp_clients.Clients`,
keyed by the session id): dropped when the client ends the session
(``DELETE``), when the SDK answers that the session is gone (404), or when
no request of it has been in flight for the idle timeout — the SDK's own
rule, counted here from the requests this module sees pass.

SIGINT and SIGTERM stop the server: it stops accepting connections, ends
every session — a call in flight is cancelled as ``ToolFs.execute``'s
cancel event does it (``<verb> aborted``, files as they were) — and returns
``128 + signal``. A second signal stops at once.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import logging
import signal
import socket
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import uvicorn
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .cli.http_options import is_loopback
from .host import ToolFs
from .mcp_clients import Clients, RootsStack
from .mcp_server import build_server

__all__ = ["DEFAULT_IDLE_TIMEOUT", "MCP_PATH", "StaticToken", "build_http_app", "serve_http"]

logger = logging.getLogger("dsh_tool_fs.mcp")

MCP_PATH = "/mcp"
DEFAULT_IDLE_TIMEOUT = 30 * 60.0
"""Seconds an MCP session lives with no request in flight (the SDK's default)."""
IDLE_GRACE = 5.0
"""Seconds a session's state outlives the SDK's own idle timeout: never dropped first."""
_HEADER = MCP_SESSION_ID_HEADER.lower().encode("latin-1")


class StaticToken:
    """The SDK's ``TokenVerifier`` for one shared secret, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token="", client_id="dsh-fs", scopes=[])
        return None


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def transport_security(host: str, port: int) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding protection for a server at ``host:port``: the ``Host`` a
    client may use, and the only ``Origin`` a browser page may send (the server's own).

    A loopback server answers to every loopback name; a server on all interfaces
    (``0.0.0.0``, ``::``) to this machine's name and addresses.
    """
    names = {host}
    if is_loopback(host) or _is_unspecified(host):
        names |= {"127.0.0.1", "localhost", "::1"}
    if _is_unspecified(host):
        names |= _own_names()
    authorities = sorted(_authority(name, port) for name in names)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=authorities,
        allowed_origins=[f"http://{authority}" for authority in authorities],
    )


def _is_unspecified(host: str) -> bool:
    """``0.0.0.0`` or ``::``: every interface."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _own_names() -> set[str]:
    """This machine's host name, its fully qualified name and their addresses."""
    names = {socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        with contextlib.suppress(OSError):
            names |= {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
    return {name for name in names if name}


class _SessionActivity:
    """ASGI middleware: tells :class:`Clients` which MCP session each request belongs to, so
    a session's state lives exactly as long as the SDK keeps the session."""

    def __init__(self, app: ASGIApp, clients: Clients) -> None:
        self._app = app
        self._clients = clients

    stopping = False
    """Set when the server stops: the sessions are ending, a new request is answered 503."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.stopping and scope["type"] == "http":
            await Response("the server is stopping", status_code=503)(scope, receive, send)
            return
        key = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == _HEADER), None)
        if scope["type"] != "http" or key is None:
            await self._app(scope, receive, send)
            return
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        self._clients.begin(key)
        try:
            await self._app(scope, receive, watch)
        finally:
            self._clients.end(key)
            ended = scope.get("method") == "DELETE" and 200 <= status < 300
            if ended or status == 404:  # ended by the client, or unknown to the SDK
                self._clients.drop(key)


def build_http_app(
    toolfs: ToolFs,
    *,
    host: str,
    port: int,
    token: str | None,
    cwd: str | None = None,
    client_roots: RootsStack | None = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
) -> tuple[Starlette, StreamableHTTPSessionManager, Clients]:
    """The ASGI app serving ``toolfs`` at :data:`MCP_PATH`, its session manager (run it:
    ``async with manager.run()``) and the per-session state (``token=None``: no auth)."""
    clients = Clients(cwd=cwd, idle_timeout=idle_timeout + IDLE_GRACE)
    server = build_server(toolfs, cwd=cwd, client_roots=client_roots, clients=clients)
    manager = StreamableHTTPSessionManager(
        app=server,
        security_settings=transport_security(host, port),
        session_idle_timeout=idle_timeout,
    )
    activity = _SessionActivity(StreamableHTTPASGIApp(manager), clients)
    endpoint: ASGIApp = activity
    middleware: list[Middleware] = []
    if token is not None:
        endpoint = RequireAuthMiddleware(endpoint, required_scopes=[])
        backend = BearerAuthBackend(StaticToken(token))
        middleware.append(Middleware(AuthenticationMiddleware, backend=backend))
    app = Starlette(routes=[Route(MCP_PATH, endpoint=endpoint)], middleware=middleware)
    app.state.activity = activity
    return app, manager, clients


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handlers: :func:`serve_http` handles the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_http(
    toolfs: ToolFs,
    listener: socket.socket,
    *,
    token: str | None,
    cwd: str | None = None,
    client_roots: RootsStack | None = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    serving: Callable[[str], Any] = lambda url: None,
) -> int:
    """Serve on ``listener`` (a bound, listening socket) until SIGINT or SIGTERM; returns
    ``128 +`` the signal. ``serving`` is called with the endpoint's URL."""
    host, port = listener.getsockname()[:2]
    app, manager, clients = build_http_app(
        toolfs,
        host=host,
        port=port,
        token=token,
        cwd=cwd,
        client_roots=client_roots,
        idle_timeout=idle_timeout,
    )
    config = uvicorn.Config(app, lifespan="off", log_config=None, access_log=False)
    web = _Uvicorn(config)
    stopped_by = 0
    web_done = anyio.Event()
    async with anyio.create_task_group() as tg:

        async def run_web() -> None:
            try:
                await web.serve([listener])
            finally:
                web_done.set()
                sessions.cancel()  # uvicorn stopped by itself (it could not start, say)

        async def forget_idle_sessions() -> None:
            while True:
                await anyio.sleep(min(60.0, idle_timeout / 2))
                clients.expire()

        async def stop_on_signal(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            nonlocal stopped_by
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                task_status.started()
                async for signum in signals:
                    if stopped_by:  # the second one: at once
                        web.force_exit = True
                        tg.cancel_scope.cancel()
                        return
                    stopped_by = signum
                    app.state.activity.stopping = True
                    web.should_exit = True
                    sessions.cancel()

        with anyio.CancelScope() as sessions:
            await tg.start(stop_on_signal)
            tg.start_soon(forget_idle_sessions)
            async with manager.run():
                tg.start_soon(run_web)
                # The socket listens already: a client connecting now waits in its backlog.
                serving(f"http://{_authority(host, port)}{MCP_PATH}")
                await anyio.sleep_forever()
        # Every session ended (their streams closed): uvicorn finishes what it is writing.
        await web_done.wait()
        tg.cancel_scope.cancel()
    return 128 + stopped_by if stopped_by else 0
