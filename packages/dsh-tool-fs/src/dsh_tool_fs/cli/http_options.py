"""``dsh-fs mcp --http``: the address, the token, and serving (the SDK imported only then).

Checked before anything is built, each a usage error (one line, exit 2):
``--http`` is ``[HOST:]PORT`` (``8765``, ``0.0.0.0:8765``, ``[::1]:8765``;
HOST defaults to ``127.0.0.1``); a token is required — the content of
``--token-file FILE`` or the ``DSH_FS_MCP_TOKEN`` environment variable —
unless ``--no-auth``, which only a loopback HOST may use.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
import socket
import sys
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import anyio

from .parser import TOKEN_VARIABLE
from .usage import UsageError

if TYPE_CHECKING:
    from ..host import ToolFs
    from ..mcp_clients import RootsStack

DEFAULT_HOST = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class HttpOptions:
    host: str
    port: int
    token: str | None
    """``None``: ``--no-auth``."""


def parse_endpoint(text: str) -> tuple[str, int]:
    """``(host, port)`` of ``--http [HOST:]PORT``."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host = DEFAULT_HOST
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f'--http expects [HOST:]PORT, e.g. 8765 or 0.0.0.0:8765, got "{text}"')
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine's loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def http_options(args: argparse.Namespace) -> HttpOptions:
    """The HTTP server's address and token from the options, every rule checked."""
    host, port = parse_endpoint(args.http)
    if not (math.isfinite(args.idle_timeout) and args.idle_timeout > 0):
        raise UsageError(
            f"--idle-timeout must be a positive number of seconds, got {args.idle_timeout}"
        )
    if args.no_auth:
        if args.token_file is not None:
            raise UsageError("--no-auth serves without a token: it takes no --token-file")
        if not is_loopback(host):
            raise UsageError(
                "--no-auth is only allowed on a loopback address "
                f'(127.0.0.1, ::1, localhost), not "{host}"'
            )
        return HttpOptions(host, port, None)
    return HttpOptions(host, port, _token(args.token_file))


def _token(token_file: str | None) -> str:
    if token_file is not None:
        try:
            with open(os.path.expanduser(token_file), encoding="utf-8") as file:
                token = file.read().strip()
        except FileNotFoundError:
            raise UsageError(f'--token-file "{token_file}": does not exist') from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f'--token-file "{token_file}": {exc}') from None
        if not token:
            raise UsageError(f'--token-file "{token_file}": empty')
        return token
    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise UsageError(
            f"--http needs a bearer token: --token-file FILE or the {TOKEN_VARIABLE} environment "
            "variable (or --no-auth on a loopback address)"
        )
    return token


def listen(options: HttpOptions) -> socket.socket:
    """A socket bound to the address and listening (a port in use: a usage error)."""
    try:
        infos = socket.getaddrinfo(options.host, options.port, type=socket.SOCK_STREAM)
        family, kind, proto, _, address = infos[0]
        listener = socket.socket(family, kind, proto)
    except OSError as exc:
        raise UsageError(f'--http "{options.host}:{options.port}": {exc}') from None
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(128)
    except OSError as exc:
        listener.close()
        raise UsageError(f'--http "{options.host}:{options.port}": {exc.strerror}') from None
    return listener


def serve_over_http(
    toolfs: ToolFs,
    options: HttpOptions,
    *,
    cwd: str | None,
    client_roots: RootsStack | None,
    idle_timeout: float,
) -> int:
    """Serve until SIGINT or SIGTERM; the exit status is ``128 +`` the signal."""
    from ..mcp_http import serve_http  # the optional SDK: imported only to serve

    listener = listen(options)

    def serving(url: str) -> None:
        auth = "a bearer token" if options.token is not None else "no auth (--no-auth)"
        print(
            f"dsh-fs mcp: serving MCP over Streamable HTTP at {url} with {auth} (Ctrl-C stops it)",
            file=sys.stderr,
            flush=True,
        )

    with listener:
        run = partial(
            serve_http,
            toolfs,
            listener,
            token=options.token,
            cwd=cwd,
            client_roots=client_roots,
            idle_timeout=idle_timeout,
            serving=serving,
        )
        return anyio.run(run, backend="asyncio")  # uvicorn runs on asyncio
