"""The SSH connection: its address, opening it, and what a lost or failed request means."""

from __future__ import annotations

import asyncio
import posixpath
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import asyncssh
from dsh_fs import FsError, FsErrorCode
from dsh_fs.preconditions import not_found

from ._loop import finish, undone_if_cancelled
from ._requests import close_and_remove
from ._walk import io_error, kind_of

LOST = (
    asyncssh.SFTPConnectionLost,
    asyncssh.SFTPNoConnection,
    asyncssh.DisconnectError,
    asyncssh.ChannelOpenError,
    ConnectionError,
)
"""What asyncssh raises for a request whose connection went away."""


class ConnectFailure(Exception):
    """Why the connection could not be opened, in one line without secrets."""


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    port: int
    username: str | None

    def __str__(self) -> str:
        user = f"{self.username}@" if self.username else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"sftp://{user}{host}:{self.port}"


async def open_connection(
    address: Address, connect_options: Mapping[str, Any], seconds: float
) -> asyncssh.SSHClientConnection:
    """The SSH connection to ``address``; every failure is one :class:`ConnectFailure` line."""
    options = dict(connect_options)
    if address.username is not None:
        options["username"] = address.username
    try:
        return await asyncio.wait_for(
            asyncssh.connect(
                address.host,
                address.port,
                connect_timeout=seconds,
                **options,
            ),
            seconds,
        )
    except asyncssh.HostKeyNotVerifiable as exc:
        raise ConnectFailure("the server's host key is not trusted (known_hosts)") from exc
    except asyncssh.PermissionDenied as exc:
        who = f'"{address.username}"' if address.username else "the local user"
        raise ConnectFailure(f"authentication as {who} failed") from exc
    except ConnectionRefusedError as exc:
        raise ConnectFailure("connection refused") from exc
    except TimeoutError as exc:
        raise ConnectFailure(f"timed out after {seconds:g} s") from exc
    except socket.gaierror as exc:
        raise ConnectFailure("unknown host") from exc
    except OSError as exc:
        raise ConnectFailure(exc.strerror or type(exc).__name__) from exc
    except asyncssh.Error as exc:
        raise ConnectFailure(f"SSH error: {exc.reason}") from exc
    except ValueError as exc:  # asyncssh: a key file it cannot read or parse
        raise ConnectFailure(f"bad SSH option: {exc}") from exc


async def probe_extensions(sftp: asyncssh.SFTPClient, directory: str) -> None:
    """Refuse a server without the two extensions that atomic, durable writes need."""
    probe = posixpath.join(directory, f".dsh-probe-{secrets.token_hex(8)}")
    try:
        await sftp.posix_rename(probe, probe + "-")
    except asyncssh.SFTPNoSuchFile:
        pass
    except asyncssh.SFTPOpUnsupported as exc:
        raise ConnectFailure(missing("posix-rename@openssh.com")) from exc
    try:
        async with sftp.open(directory, "rb") as handle:
            await handle.fsync()
    except asyncssh.SFTPOpUnsupported as exc:
        raise ConnectFailure(missing("fsync@openssh.com")) from exc


async def server_clock(sftp: asyncssh.SFTPClient, directory: str) -> int | None:
    """The server's clock (whole seconds): the mtime of a probe file created in ``directory``
    and removed at once; ``None`` when it cannot be created there."""
    probe = posixpath.join(directory, f".dsh-clock-{secrets.token_hex(8)}")
    try:
        handle = await undone_if_cancelled(
            sftp.open(probe, "xb", asyncssh.SFTPAttrs(permissions=0o600)),
            lambda handle: close_and_remove(sftp, handle, probe),
        )
    except asyncssh.SFTPError:
        return None
    try:
        attrs = await handle.stat()
    finally:
        await finish(close_and_remove(sftp, handle, probe))
    return None if attrs.mtime is None else int(attrs.mtime)


async def canonical_root(sftp: asyncssh.SFTPClient, root: str) -> str:
    problem = ValueError(f"workspace root {root!r} is not an existing directory")
    try:
        real = await sftp.realpath(root)
        attrs = await sftp.stat(real)
    except asyncssh.SFTPNoSuchFile:
        raise problem from None
    if kind_of(attrs) != "directory":
        raise problem
    return str(real)


def missing(extension: str) -> str:
    return (
        f"the server lacks the {extension} extension, which atomic, durable writes need "
        "(OpenSSH's sftp-server has it)"
    )


def lost(verb: str, display_path: str, address: Address) -> FsError:
    return io_error(verb, display_path, f"the connection to {address} was lost")


def sftp_failure(verb: str, display_path: str, exc: asyncssh.SFTPError) -> FsError:
    if isinstance(exc, asyncssh.SFTPNoSuchFile):
        return not_found(verb, display_path)
    if isinstance(exc, asyncssh.SFTPPermissionDenied):
        return FsError.cannot(
            verb, display_path, "permission denied", FsErrorCode.FS_PERMISSION_DENIED
        )
    return io_error(verb, display_path, exc.reason or type(exc).__name__)
