"""The paths of the backend: ``sftp://`` URLs and the remote display path of a model's path."""

from __future__ import annotations

import posixpath
from urllib.parse import unquote, urlsplit

from dsh_fs import FsError, FsErrorCode

DEFAULT_PORT = 22

__all__ = ["DEFAULT_PORT", "display_path_of", "parse_url"]


def display_path_of(path: str, cwd: str) -> str:
    """The absolute, normalized remote path of ``path`` relative to ``cwd`` (as 3.1 says)."""
    if not path or not path.strip():
        raise FsError("file_path must be a non-empty string", FsErrorCode.FS_NOT_FOUND)
    display_path = posixpath.normpath(posixpath.join(cwd, path))
    if display_path.startswith("//"):
        display_path = "/" + display_path.lstrip("/")
    if "\0" in path:
        raise FsError.cannot(
            "resolve", display_path, "path contains a NUL byte", FsErrorCode.FS_NOT_FOUND
        )
    return display_path


def parse_url(url: str) -> tuple[str, int, str | None, str]:
    """``(host, port, username, path)`` of ``sftp://[user@]host[:port]/abs/path``."""
    parts = urlsplit(url)
    if parts.password is not None:  # never repeated: the message would print it
        shown = url.replace(f":{parts.password}@", ":***@", 1)
        raise ValueError(f'"{shown}" is not an sftp:// URL: a password does not belong in it')
    problem = f'"{url}" is not an sftp:// URL (sftp://[user@]host[:port]/absolute/path)'
    if parts.scheme != "sftp" or not parts.hostname or parts.query or parts.fragment:
        raise ValueError(problem)
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise ValueError(f"{problem}: bad port") from None
    path = unquote(parts.path)
    if not path:  # a workspace is never implied: not the remote "/", not the home directory
        raise ValueError(
            f'"{url}" has no path: name the remote directory of the workspace '
            "(sftp://[user@]host[:port]/absolute/path)"
        )
    if not path.startswith("/"):
        raise ValueError(problem)
    username = unquote(parts.username) if parts.username else None
    return parts.hostname, port, username, path
