"""Shared pieces of the reliability suite (importable from tests and child processes).

The suite's conftest puts this directory on ``sys.path``; the fork server
(``dsh_reliability_forkserver.py``) runs as a script from here, so it finds
this module the same way.

* :func:`snapshot_tree` — everything an error must not change.
* :func:`leftovers` — temporary/backup companions the local backend may leave.
* :func:`crash_content` / :func:`crash_generation` — self-describing file
  versions for the SIGKILL trials.
* :class:`ForkServer` — a pre-imported Python process that forks one child per
  request (cheap crash trials, privilege-dropped children, cases that could
  block), with a hard deadline on every child.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import stat
import subprocess
import sys
import time
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FORKSERVER_SCRIPT = HERE / "dsh_reliability_forkserver.py"

COMPANION_RE = re.compile(r"\..*\.dsh-[0-9]+-[0-9a-f]{8}\.(tmp|bak)", re.DOTALL)
"""SPEC 3.1: ``.<basename>.dsh-<pid>-<8 hex>.tmp`` (``.bak`` for hard-link backups)."""

Snapshot = dict[str, tuple[Any, ...]]


def snapshot_tree(root: str | os.PathLike[str]) -> Snapshot:
    """Names, types, modes, owners, bytes, inodes and symlink targets under ``root``.

    Directory mtimes are left out on purpose: a failed mutation may create and
    remove its temporary file, which touches the directory but changes nothing
    a user can see. File mtimes and inodes are in: an error must not rewrite.
    The walk is descriptor-relative, so trees deeper than ``PATH_MAX`` work;
    FIFOs, sockets and devices are never opened.
    """
    out: Snapshot = {}

    def visit(dir_fd: int | None, name: str, rel: str) -> None:
        info = os.lstat(name, dir_fd=dir_fd)
        mode = info.st_mode
        common = (stat.S_IFMT(mode), stat.S_IMODE(mode), info.st_uid, info.st_gid)
        if stat.S_ISLNK(mode):
            out[rel] = (*common, os.readlink(name, dir_fd=dir_fd))
        elif stat.S_ISREG(mode):
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dir_fd)
            with open(fd, "rb") as fh:
                data = fh.read()
            out[rel] = (*common, info.st_ino, info.st_nlink, info.st_mtime_ns, data)
        elif stat.S_ISDIR(mode):
            out[rel] = common
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            try:
                for child in sorted(os.listdir(fd)):
                    visit(fd, child, f"{rel}/{child}" if rel else child)
            finally:
                os.close(fd)
        else:
            out[rel] = (*common, info.st_ino)

    visit(None, os.fspath(root), "")
    return out


def leftovers(root: str | os.PathLike[str]) -> list[str]:
    """Every companion file (``.tmp``/``.bak``) anywhere under ``root`` (relative names)."""
    return sorted(
        name for name in snapshot_tree(root) if COMPANION_RE.fullmatch(name.rpartition("/")[2])
    )


def public_directory(prefix: str = "dsh-rel-") -> str:
    """A fresh directory under ``/tmp`` that ``nobody`` can traverse (0755).

    pytest's ``tmp_path`` lives under a 0700 directory owned by root, which a
    privilege-dropped child could not even reach.
    """
    import tempfile

    path = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    os.chmod(path, 0o755)
    return path


# -- crash trials -------------------------------------------------------------

LINE_WIDTH = 64
_TAG = b"g??????"


def generation_tag(gen: int) -> str:
    """The token every line of generation ``gen`` carries (unique per generation)."""
    return f" g{gen:06d} "


@lru_cache(maxsize=8)
def _template(size: int) -> bytes:
    lines = max(1, size // LINE_WIDTH)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    filler_width = LINE_WIDTH - 8 - len(generation_tag(0)) - 1
    parts = []
    for i in range(lines):
        shift = i % len(alphabet)
        filler = (alphabet[shift:] + alphabet[:shift])[:filler_width]
        parts.append(f"{i:08d} g?????? {filler}\n")
    return "".join(parts).encode()


def crash_content(gen: int, size: int) -> bytes:
    """Generation ``gen`` of a file of about ``size`` bytes: every line names ``gen``.

    An edit with ``replace_all`` of ``generation_tag(g)`` by ``generation_tag(g+1)``
    turns generation ``g`` into exactly ``crash_content(g + 1, size)``, so writes
    and edits produce the same sequence of complete versions, and any mix of
    two versions (a torn write) is detectable.
    """
    return _template(size).replace(_TAG, f"g{gen:06d}".encode())


def crash_generation(data: bytes) -> int | None:
    """The generation ``data`` claims to be (from its first line), or ``None``."""
    match = re.match(rb"[0-9]{8} g([0-9]{6}) ", data)
    return None if match is None else int(match[1])


# -- the fork server ----------------------------------------------------------


class ForkServerError(RuntimeError):
    pass


class ForkServer:
    """Client of ``dsh_reliability_forkserver.py``: one JSON request, one JSON reply.

    The server imports the whole stack once (and exercises it, so lazy imports
    are done), then forks a child per request. Children are killed by the
    server at their deadline; the client adds its own deadline on top, so a
    test can never hang on it.
    """

    def __init__(self) -> None:
        self._start()

    def _start(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, str(FORKSERVER_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=str(HERE),
        )
        self._buffer = b""
        hello = self._reply(deadline=60.0)
        if hello.get("status") != "ready":
            raise ForkServerError(f"fork server did not start: {hello!r}")

    def _restart(self) -> None:
        """After a failed exchange the stream may be out of step: start afresh."""
        self._proc.kill()
        self.close()
        self._start()

    def _reply(self, deadline: float) -> dict[str, Any]:
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        end = time.monotonic() + deadline
        while b"\n" not in self._buffer:
            left = end - time.monotonic()
            if left <= 0:
                raise ForkServerError("fork server did not answer in time")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise ForkServerError(f"fork server exited ({self._proc.poll()})")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def run(
        self,
        case: str,
        params: Mapping[str, Any],
        *,
        timeout: float = 10.0,
        copies: int = 1,
        user: str | None = None,
        kill_after_start: float | None = None,
        kill_on_companion: Mapping[str, Any] | None = None,
        blocking_stdin: bool = False,
        fsize_limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Fork ``copies`` children running ``case``; one report per child.

        A report has ``status``: ``exited``, ``timeout`` or ``killed`` —
        ``kill_after_start`` seconds after the child's first ``{"start": ...}``
        message, or ``kill_on_companion["extra"]`` seconds after a file of the
        child's pid appeared in ``kill_on_companion["directory"]``; ``rc``; and
        ``messages``, what the child sent in order (a finished child's last
        message is ``{"result": ...}`` or ``{"exception": ...}``).
        """
        request = {
            "case": case,
            "params": dict(params),
            "timeout": timeout,
            "copies": copies,
            "user": user,
            "kill_after_start": kill_after_start,
            "kill_on_companion": None if kill_on_companion is None else dict(kill_on_companion),
            "blocking_stdin": blocking_stdin,
            "fsize_limit": fsize_limit,
        }
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps(request).encode() + b"\n")
            self._proc.stdin.flush()
            reply = self._reply(deadline=timeout + 30.0)
        except (OSError, ForkServerError):
            self._restart()
            raise
        if reply.get("status") != "ok":
            raise ForkServerError(f"fork server failed: {reply!r}")
        children: list[dict[str, Any]] = reply["children"]
        return children

    def result(self, case: str, params: Mapping[str, Any], **kwargs: Any) -> Any:
        """Run one child and return its result, failing loudly on anything else."""
        (report,) = self.run(case, params, **kwargs)
        messages = report["messages"]
        if report["status"] != "exited" or not messages or "result" not in messages[-1]:
            raise ForkServerError(f"child did not finish: {report!r}")
        return messages[-1]["result"]

    def close(self) -> None:
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            with contextlib.suppress(OSError):  # a killed server's pipe may be broken
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
