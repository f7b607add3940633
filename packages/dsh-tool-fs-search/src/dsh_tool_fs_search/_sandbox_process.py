"""The sandbox process: confines itself with Landlock, then starts every ``rg`` it is asked for.

Run as a script by :class:`dsh_tool_fs_search._sandbox.Sandbox` (``python -I -S
_sandbox_process.py``: standard library only, no site, single threaded — so it
imports nothing of this package and is one file).

Landlock (Linux ≥ 5.13) lets a process give up filesystem rights for itself
and every process it starts; the standard library has no binding, so the
three system calls (``landlock_create_ruleset``, ``landlock_add_rule``,
``landlock_restrict_self``: 444–446 on every architecture of the unified
syscall table) are made through ``ctypes``. The ruleset handles every
filesystem right the running kernel knows, and allows back only
``READ_FILE | READ_DIR`` beneath each workspace root (read-only roots
included) and ``EXECUTE | READ_FILE`` on the ``rg`` binary. Rules are bound
to descriptors the backend opened beneath the workspace, not to path strings;
where the ABI has them, TCP binds and connects and signals or abstract
sockets out of the domain are refused too.

The process restricts *itself*, then serves requests over a socket: each
request carries ``rg``'s arguments and, as passed descriptors, the directory
to run in, its stdout and stderr, and a status socket. Its children inherit
the domain across ``fork`` and ``exec``: it forks ``rg`` (``fchdir`` to the
passed directory, so no path of the searched directory is ever looked up
again), hands the host a ``pidfd`` of it (so a cancelled search kills exactly
that process) and, once it has reaped it, its exit status. It exits when the
host closes its socket or dies, and ``rg`` when it dies (``PR_SET_PDEATHSIG``
both).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import selectors
import signal
import socket
import struct
import sys
from collections.abc import Callable
from typing import Final

__all__ = [
    "EXECUTE",
    "MESSAGE_BYTES",
    "READ_DIR",
    "READ_FILE",
    "Landlock",
    "SandboxUnavailable",
    "landlock_abi",
]

_SYS_CREATE_RULESET: Final = 444
_SYS_ADD_RULE: Final = 445
_SYS_RESTRICT_SELF: Final = 446
_CREATE_RULESET_VERSION: Final = 1
_RULE_PATH_BENEATH: Final = 1
_PR_SET_NO_NEW_PRIVS: Final = 38
_PR_SET_PDEATHSIG: Final = 1

# Filesystem rights, by the ABI that introduced them (linux/landlock.h).
EXECUTE: Final = 1 << 0
WRITE_FILE: Final = 1 << 1
READ_FILE: Final = 1 << 2
READ_DIR: Final = 1 << 3
_FS_RIGHTS_BY_ABI: Final = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_BIND_TCP: Final = 1 << 0
_NET_CONNECT_TCP: Final = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET: Final = 1 << 0
_SCOPE_SIGNAL: Final = 1 << 1

MESSAGE_BYTES: Final = 1 << 16
_FDS_PER_REQUEST: Final = 4


class SandboxUnavailable(Exception):
    """Landlock (or something the sandbox needs) is missing: the caller takes the seam path."""


def _syscall() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_long
    return function


def landlock_abi() -> int:
    """The Landlock ABI version of the running kernel, 0 when it has none (or it is off)."""
    syscall = _syscall()
    if syscall is None:
        return 0
    version = syscall(
        ctypes.c_long(_SYS_CREATE_RULESET),
        ctypes.c_void_p(None),
        ctypes.c_size_t(0),
        ctypes.c_uint32(_CREATE_RULESET_VERSION),
    )
    return int(version) if version > 0 else 0


class _RulesetAttr(ctypes.Structure):
    """``struct landlock_ruleset_attr``; the size passed grows with the ABI."""

    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    """``struct landlock_path_beneath_attr`` (packed: 12 bytes)."""

    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class Landlock:
    """One ruleset being built, then applied to the calling process (and its future children)."""

    def __init__(self) -> None:
        syscall = _syscall()
        abi = landlock_abi()
        if syscall is None or abi < 1:
            raise SandboxUnavailable("this kernel has no Landlock")
        self._syscall = syscall
        self.abi = abi
        self.fs_rights = _FS_RIGHTS_BY_ABI[max(a for a in _FS_RIGHTS_BY_ABI if a <= abi)]
        attr = _RulesetAttr(self.fs_rights, 0, 0)
        size = 8
        if abi >= 4:
            attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
            size = 16
        if abi >= 6:
            attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
            size = 24
        fd = syscall(
            ctypes.c_long(_SYS_CREATE_RULESET),
            ctypes.byref(attr),
            ctypes.c_size_t(size),
            ctypes.c_uint32(0),
        )
        if fd < 0:
            raise SandboxUnavailable(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
        self._fd = int(fd)

    def allow(self, parent_fd: int, rights: int) -> None:
        """Allow ``rights`` on the file or beneath the directory that ``parent_fd`` refers to."""
        rule = _PathBeneathAttr(rights & self.fs_rights, parent_fd)
        result = self._syscall(
            ctypes.c_long(_SYS_ADD_RULE),
            ctypes.c_int(self._fd),
            ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(rule),
            ctypes.c_uint32(0),
        )
        if result != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"landlock_add_rule: {os.strerror(code)}")

    def restrict_self(self) -> None:
        """Apply the ruleset to this process, for good (``no_new_privs`` first, as required)."""
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(code)}")
        result = self._syscall(
            ctypes.c_long(_SYS_RESTRICT_SELF), ctypes.c_int(self._fd), ctypes.c_uint32(0)
        )
        if result != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"landlock_restrict_self: {os.strerror(code)}")
        os.close(self._fd)


# ---------------------------------------------------------------------------
# Serving


def _serve(channel: socket.socket, executable: str) -> None:
    """Answer requests until the host closes the channel; every ``rg`` starts confined.

    One loop over the channel and the ``pidfd`` of every running ``rg``: a
    request forks ``rg`` (this process is single-threaded, so ``fork`` is
    safe here) and hands the host its ``pidfd``; a ``pidfd`` that becomes
    readable is reaped (``waitid(P_PIDFD)``) and its exit status sent.
    """
    events = selectors.DefaultSelector()
    events.register(channel, selectors.EVENT_READ)
    running: dict[int, socket.socket] = {}
    while True:
        for key, _ in events.select():
            if key.fileobj is not channel:
                pidfd = key.fd
                events.unregister(pidfd)
                _report_exit(pidfd, running.pop(pidfd))
                continue
            try:
                message, fds, _, _ = socket.recv_fds(channel, MESSAGE_BYTES, _FDS_PER_REQUEST)
            except OSError:
                return
            if not message:
                return
            if len(fds) != _FDS_PER_REQUEST:
                for fd in fds:
                    os.close(fd)
                continue
            started = _start_rg(executable, message.split(b"\0"), fds)
            if started is not None:
                events.register(started[0], selectors.EVENT_READ)
                running[started[0]] = started[1]


def _start_rg(
    executable: str, arguments: list[bytes], fds: list[int]
) -> tuple[int, socket.socket] | None:
    """Fork ``rg`` in the passed directory with the passed stdout and stderr; send the host
    its pid and ``pidfd``. Returns ``(pidfd, status socket)``, or ``None`` when it failed."""
    directory, stdout, stderr, status_fd = fds
    status = socket.socket(fileno=status_fd)
    try:
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGPIPE, signal.SIG_DFL)
                ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                os.fchdir(directory)
                os.dup2(stdout, 1)
                os.dup2(stderr, 2)
                os.closerange(3, 1 << 16)
                os.execve(executable, [os.fsencode(executable), *arguments], {})
            finally:
                os._exit(127)
        pidfd = os.pidfd_open(pid)
        socket.send_fds(status, [struct.pack("=q", pid)], [pidfd])
        return pidfd, status
    except OSError:
        status.close()
        return None
    finally:
        for fd in (directory, stdout, stderr):
            os.close(fd)


def _report_exit(pidfd: int, status: socket.socket) -> None:
    """Reap the ``rg`` behind ``pidfd`` and send its exit code (negative: its signal)."""
    try:
        result = os.waitid(os.P_PIDFD, pidfd, os.WEXITED)
        if result is None:
            code = 127
        elif result.si_code == os.CLD_EXITED:
            code = result.si_status
        else:
            code = -result.si_status
        with contextlib.suppress(OSError):
            status.sendall(struct.pack("=q", code))
    finally:
        os.close(pidfd)
        status.close()


def _main() -> None:
    """``_sandbox.py <channel fd> <rg binary> <rights-on-each-root-fd...>``: confine, then serve."""
    channel_fd, executable, *root_fds = sys.argv[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    channel = socket.socket(fileno=int(channel_fd))
    try:
        landlock = Landlock()
        for fd in root_fds:
            landlock.allow(int(fd), READ_FILE | READ_DIR)
            os.close(int(fd))
        binary = os.open(executable, os.O_PATH | os.O_CLOEXEC)
        landlock.allow(binary, EXECUTE | READ_FILE)
        os.close(binary)
        landlock.restrict_self()
    except (OSError, SandboxUnavailable) as exc:
        channel.sendall(f"error {exc}".encode())
        return
    channel.sendall(f"ready {landlock.abi}".encode())
    _serve(channel, executable)


if __name__ == "__main__":
    _main()
