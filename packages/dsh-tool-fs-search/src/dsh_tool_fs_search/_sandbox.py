"""A confined spawner: ``rg`` processes that the kernel keeps inside the workspace (Landlock).

The ruleset must be applied in the child only, never in the host. The usual
way — ``subprocess``'s ``preexec_fn`` — is not safe in a process with threads
(anyio's worker threads: a lock held by another thread at ``fork`` stays held
in the child), so the host starts a small process of its own once
(:mod:`._sandbox_process`, which confines itself and forks every ``rg`` it is
asked for) and talks to it over a socket. One sandbox per backend serves
every search of it; a request costs one ``fork`` of a small process (the
``R0`` row of ``scripts/bench.py`` measures it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ._sandbox_process import MESSAGE_BYTES, Landlock, SandboxUnavailable, landlock_abi

__all__ = [
    "Landlock",
    "Sandbox",
    "SandboxUnavailable",
    "SandboxedRun",
    "landlock_abi",
]

_PROCESS_SCRIPT: Final = str(Path(__file__).with_name("_sandbox_process.py"))


class SandboxedRun:
    """One ``rg`` started by the sandbox: read ``stdout`` to its end, then :meth:`wait`.

    ``stdout`` and ``stderr`` are the read ends of pipes this object owns;
    :meth:`kill` stops the process (through its ``pidfd``: never another
    process that reused the number); :meth:`close` releases everything.
    """

    def __init__(self, stdout: int, stderr: int, status: socket.socket) -> None:
        """Take ownership of the pipes and the status socket, then wait for ``rg``'s start;
        when it did not start, everything is closed and :class:`SandboxUnavailable` raised."""
        self.stdout = stdout
        self.stderr = stderr
        self._status = status
        self._pidfd: int | None = None
        self._code: int | None = None
        try:
            message, fds, _, _ = socket.recv_fds(status, 8, 1)
        except OSError:  # the sandbox died with the request (ECONNRESET)
            message, fds = b"", []
        if len(message) != 8 or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            self.close()
            raise SandboxUnavailable("the sandbox could not start rg")
        self._pidfd = fds[0]

    def kill(self) -> None:
        if self._pidfd is not None and self._code is None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def wait(self) -> int:
        """``rg``'s exit code (negative: killed by that signal)."""
        if self._code is None:
            data = b""
            while len(data) < 8:
                try:
                    chunk = self._status.recv(8 - len(data))
                except OSError:
                    chunk = b""
                if not chunk:
                    raise SandboxUnavailable("the sandbox lost track of rg")
                data += chunk
            self._code = struct.unpack("=q", data)[0]
        return self._code

    def read_stderr(self, limit: int = 4096) -> bytes:
        """The start of what ``rg`` wrote to stderr (call after stdout's end)."""
        try:
            return os.read(self.stderr, limit)
        except OSError:
            return b""

    def close(self) -> None:
        self.kill()
        for fd in (self.stdout, self.stderr, self._pidfd):
            if fd is not None and fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.stdout = self.stderr = -1
        self._pidfd = None
        self._status.close()


class Sandbox:
    """The confined spawner process for one set of readable roots and one ``rg`` binary.

    ``root_fds`` are descriptors (``O_PATH`` is enough) of every directory
    beneath which ``rg`` may read; they are passed to the sandbox process,
    not kept. Raises :class:`SandboxUnavailable` when the kernel has no
    Landlock or the sandbox fails to confine itself.
    """

    def __init__(self, executable: str, root_fds: Sequence[int]) -> None:
        if landlock_abi() < 1:
            raise SandboxUnavailable("this kernel has no Landlock")
        host, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._lock = threading.Lock()
        try:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    _PROCESS_SCRIPT,
                    str(child.fileno()),
                    executable,
                    *(str(fd) for fd in root_fds),
                ],
                pass_fds=[child.fileno(), *root_fds],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env={},
                close_fds=True,
            )
        finally:
            child.close()
        answer = host.recv(MESSAGE_BYTES)
        if not answer.startswith(b"ready "):
            host.close()
            self._process.wait()
            reason = answer.decode(errors="replace").removeprefix("error ") or "exited"
            raise SandboxUnavailable(f"the rg sandbox did not start: {reason}")
        self.abi = int(answer.split()[1])
        self._channel = host

    @property
    def pid(self) -> int:
        """The sandbox process's id."""
        return self._process.pid

    def run(self, arguments: Sequence[bytes], directory_fd: int) -> SandboxedRun:
        """Start ``rg arguments…`` confined, with ``directory_fd`` as its working directory."""
        out_read, out_write = os.pipe2(os.O_CLOEXEC)
        err_read, err_write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self._lock:
                socket.send_fds(
                    self._channel,
                    [b"\0".join(arguments)],
                    [directory_fd, out_write, err_write, theirs.fileno()],
                )
        except OSError as exc:
            for fd in (out_read, err_read):
                os.close(fd)
            mine.close()
            raise SandboxUnavailable(f"the rg sandbox is gone: {exc}") from exc
        finally:
            os.close(out_write)
            os.close(err_write)
            theirs.close()
        return SandboxedRun(out_read, err_read, mine)  # owns (and on failure closes) all three

    def close(self) -> None:
        """Stop the sandbox process (``rg`` processes still running finish on their own)."""
        self._channel.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
