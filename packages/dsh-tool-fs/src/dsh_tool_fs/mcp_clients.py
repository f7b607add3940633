"""What the MCP server keeps per client: its :class:`~dsh_tool_fs.Session`, and its workspace
when the workspace follows the client's roots.

Independent of the SDK (the server modules pass in what they read off a
request), so that it is plain to test: :class:`Clients` maps a client key —
the MCP session id over HTTP, ``None`` for the one client of a stdio
connection — to a :class:`Client`, and forgets it when the transport says
the client is gone (:meth:`Clients.drop`) or, over HTTP, when no request of
it has been in flight for the idle timeout (:meth:`Clients.expire`).

Client roots (``dsh-fs mcp --client-roots``): the workspace is the client's
``file://`` roots, each a read-write root, the first the cwd. The backend's
roots are fixed when it is built, so a :class:`Client` holds the host built
for its current roots set, by the same factory the command uses for its own
workspace options (:data:`RootsStack`), and builds another when the set
changes. The policy's observations belong to that host: after a change of
roots the model reads a file again before editing it.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from .host import Session, ToolFs

__all__ = ["NO_ROOTS", "Client", "Clients", "RootsStack", "paths_of_roots"]

logger = logging.getLogger("dsh_tool_fs.mcp")

NO_ROOTS = (
    "no workspace: the MCP client declared no roots — open a folder in the client "
    "(the server follows the client's roots)"
)
"""The message of every call while a client that the workspace follows declares no root."""

RootsStack = Callable[[Sequence[str]], ToolFs]
"""Builds the host for a set of roots (absolute directories; the first is the cwd)."""


def paths_of_roots(uris: Iterable[str]) -> list[str]:
    """The directories of the ``file://`` root URIs a client declared, in order, each once.

    A root that is not a local ``file://`` URI, or not an existing directory
    here, is left out with a warning in the log: the client may list roots
    this machine does not have.
    """
    paths: list[str] = []
    for uri in uris:
        parts = urlsplit(uri)
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            logger.warning("client root %s ignored: not a local file:// URI", uri)
            continue
        path = os.path.normpath(unquote(parts.path, errors="surrogateescape"))
        if not os.path.isdir(path):
            logger.warning("client root %s ignored: %s is not a directory here", uri, path)
            continue
        if path not in paths:
            paths.append(path)
    return paths


@dataclass(eq=False)
class Client:
    """One client: its session (the policy's observation owner) and workspace."""

    session: Session
    roots: tuple[str, ...] | None = None
    """The roots its host was built for (client roots only; ``None``: not read yet)."""
    toolfs: ToolFs | None = None
    """The host of its roots (client roots only)."""
    roots_changed: bool = True
    """The client said its roots changed (or they were never read): read them again."""
    in_flight: int = 0
    idle_since: float = field(default_factory=time.monotonic)

    def use_roots(self, roots: Sequence[str], build: RootsStack) -> ToolFs | None:
        """The host for ``roots`` (built when they differ from the last set), ``None`` when
        there is none; the session's cwd becomes the first root."""
        self.roots_changed = False
        wanted = tuple(roots)
        if wanted != self.roots:
            self.roots = wanted
            self.toolfs = build(wanted) if wanted else None
            self.session.cwd = wanted[0] if wanted else None
        return self.toolfs


class Clients:
    """The clients of one server, by key (the MCP session id over HTTP, ``None`` on stdio)."""

    def __init__(self, *, cwd: str | None, idle_timeout: float | None = None) -> None:
        self._cwd = cwd
        self._clients: dict[str | None, Client] = {}
        self.idle_timeout = idle_timeout

    def __len__(self) -> int:
        return len(self._clients)

    def get(self, key: str | None) -> Client:
        """The client ``key``, created on its first call."""
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = Client(Session(cwd=self._cwd))
        return client

    def fresh(self) -> Client:
        """A client of one request only, never kept."""
        return Client(Session(cwd=self._cwd))

    def known(self, key: str | None) -> Client | None:
        return self._clients.get(key)

    def drop(self, key: str | None) -> None:
        """Forget client ``key`` (its session ended): its observations go with it."""
        if self._clients.pop(key, None) is not None:
            logger.info("MCP session %s ended: its observations are dropped", key)

    def begin(self, key: str) -> None:
        """A request of client ``key`` is in flight (HTTP: it keeps the client alive)."""
        client = self._clients.get(key)
        if client is not None:
            client.in_flight += 1

    def end(self, key: str) -> None:
        client = self._clients.get(key)
        if client is not None:
            client.in_flight = max(0, client.in_flight - 1)
            client.idle_since = time.monotonic()

    def expire(self, now: float | None = None) -> None:
        """Drop every client with nothing in flight for longer than the idle timeout."""
        if self.idle_timeout is None or not math.isfinite(self.idle_timeout):
            return
        now = time.monotonic() if now is None else now
        for key, client in list(self._clients.items()):
            if client.in_flight == 0 and now - client.idle_since > self.idle_timeout:
                self.drop(key)
