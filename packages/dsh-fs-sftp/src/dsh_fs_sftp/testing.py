"""A real OpenSSH server for tests, and the conformance kit's scratch over it.

:class:`SshServer` starts OpenSSH's ``sshd`` on ``127.0.0.1`` on a free port,
with a throwaway host key and client key in a temporary directory, the
``internal-sftp`` subsystem and public-key authentication only, in the
foreground (``-D -e``: no daemon, logs on stderr), and stops it by its pid.
It serves this machine's files as the user the tests run as: a
:class:`SftpScratch` therefore changes the tree behind the backend's back
with plain local calls — exactly what another process on the server would do.

The pytest fixtures (import them into a ``conftest.py`` or a test module)::

    from dsh_fs_sftp.testing import sshd, sftp_scratch  # noqa: F401

``sshd`` is one server per test session. Without ``sshd`` installed the
tests that use it are skipped, naming the install command — except under
``CI`` (the environment variable set), where a missing server is a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any

import asyncssh
import pytest
from dsh_fs.testing import DiskTree
from dsh_fs.workspace import CWD_ROOT, RootsOption

from ._sftp import SftpFileSystem

SSHD_CANDIDATES = ("/usr/sbin/sshd", "/usr/local/sbin/sshd")
INSTALL_HINT = "apt-get install -y openssh-server"

__all__ = ["SftpScratch", "SshServer", "find_sshd", "sftp_scratch", "sshd"]


def find_sshd() -> str | None:
    """The ``sshd`` binary (it must be started by its absolute path), or ``None``."""
    found = shutil.which("sshd")
    if found:
        return found
    return next((c for c in SSHD_CANDIDATES if os.access(c, os.X_OK)), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SshServer:
    """One OpenSSH server on ``127.0.0.1``, configured in its own temporary directory.

    ``subsystem`` is the ``Subsystem sftp`` command (``internal-sftp -P
    fsync`` serves a server that refuses an extension).

    A thread accepts the connections and hands each one to its own ``sshd
    -i`` (inetd mode), with ``TCP_NODELAY`` set on the socket first. ``sshd``
    leaves Nagle's algorithm on for a session without a terminal, and it
    sends a debug message ("key options: …") just before it confirms a new
    session; the confirmation then waits for the client's delayed ACK, about
    40 ms on a loopback, for every SFTP session a test opens.
    """

    def __init__(self, directory: Path, *, subsystem: str = "internal-sftp") -> None:
        binary = find_sshd()
        if binary is None:
            raise FileNotFoundError(f"no sshd on this machine: {INSTALL_HINT}")
        self.binary = binary
        self.directory = directory
        self.port = _free_port()
        self.username = _user_name()
        self.host_key_path = directory / "host_ed25519"
        self.client_key_path = directory / "client_ed25519"
        self.known_hosts_path = directory / "known_hosts"
        self.config_path = directory / "sshd_config"
        self.log_path = directory / "sshd.log"
        host_key = asyncssh.generate_private_key("ssh-ed25519")
        host_key.write_private_key(str(self.host_key_path))
        self.host_key_path.chmod(0o600)
        client_key = asyncssh.generate_private_key("ssh-ed25519")
        client_key.write_private_key(str(self.client_key_path))
        self.client_key_path.chmod(0o600)
        (directory / "authorized_keys").write_bytes(client_key.export_public_key())
        public = host_key.export_public_key().decode().split()
        self.known_hosts_path.write_text(f"[127.0.0.1]:{self.port} {public[0]} {public[1]}\n")
        self.config_path.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {self.host_key_path}",
                    f"AuthorizedKeysFile {directory / 'authorized_keys'}",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PermitRootLogin prohibit-password",
                    "UsePAM no",
                    "StrictModes no",
                    "PidFile none",
                    "LogLevel ERROR",
                    f"Subsystem sftp {subsystem}",
                    "",
                ]
            )
        )
        self._listener: socket.socket | None = None
        self._accepting: threading.Thread | None = None
        self._served: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        return f"sftp://{self.username}@127.0.0.1:{self.port}"

    def connect_options(self) -> dict[str, Any]:
        """The constructor keywords of an ``SftpFileSystem`` that reaches this server."""
        return {
            "port": self.port,
            "username": self.username,
            "client_keys": str(self.client_key_path),
            "known_hosts": str(self.known_hosts_path),
        }

    def backend(self, cwd: str, **options: Any) -> SftpFileSystem:
        return SftpFileSystem("127.0.0.1", cwd=cwd, **self.connect_options(), **options)

    def start(self) -> None:
        """Check the configuration, then accept connections (each one served by its own
        ``sshd -i``) until :meth:`stop`."""
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # its privilege separation dir
        checked = subprocess.run(
            [self.binary, "-t", "-f", str(self.config_path)], capture_output=True, text=True
        )
        if checked.returncode != 0:
            raise RuntimeError(f"sshd refuses its configuration: {checked.stderr}")
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        self._accepting = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        self._accepting.start()

    def _accept(self, listener: socket.socket) -> None:
        # Until the listener closes (OSError); each session's `sshd -i` logs to the one file.
        with self.log_path.open("ab") as log, contextlib.suppress(OSError):
            while True:
                connection, _ = listener.accept()
                with connection:
                    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    # The sessions that ended are reaped here, not kept until stop().
                    served = [process for process in self._served if process.poll() is None]
                    served.append(
                        subprocess.Popen(
                            [self.binary, "-i", "-e", "-f", str(self.config_path)],
                            stdin=connection.fileno(),
                            stdout=connection.fileno(),
                            stderr=log,
                        )
                    )
                    self._served = served

    def sessions(self) -> list[int]:
        """The pids of the processes serving this server's open connections (each ``sshd
        -i`` and what it started)."""
        live = [served.pid for served in self._served if served.poll() is None]
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
        found: list[int] = []
        todo = list(live)
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def stop(self) -> None:
        """Stop accepting, kill every session (by pid) and reap them."""
        if self._listener is None:
            return
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._listener = None
        if self._accepting is not None:
            self._accepting.join(timeout=10)
        for pid in self.sessions():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for served in self._served:
            served.wait(timeout=10)
        self._served = []

    def restart(self) -> None:
        """Kill every session (every connection drops), then accept again on the same port."""
        self.stop()
        self.start()


def _user_name() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    """One real ``sshd`` for the test session (skipped locally without one, never in CI)."""
    if find_sshd() is None:
        message = f"no sshd on this machine: {INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    server = SshServer(tmp_path_factory.mktemp("sshd"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


class SftpScratch(DiskTree):
    """The conformance kit's ``Scratch``: a temporary directory served by :class:`SshServer`.

    The backend reaches it over SFTP; the out-of-band helpers
    (:class:`dsh_fs.testing.DiskTree`'s) change it with local calls, as a
    process on the server would. Every backend it builds is closed by
    :meth:`aclose`.
    """

    def __init__(self, server: SshServer, root: Path) -> None:
        super().__init__(root)
        self._server = server
        self._backends: list[SftpFileSystem] = []
        self._fs = self.backend(self.root)

    @property
    def fs(self) -> SftpFileSystem:
        return self._fs

    def backend(
        self,
        cwd: str,
        *,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str] = (),
        read_only: bool = False,
    ) -> SftpFileSystem:
        fs = self._server.backend(
            cwd, roots=roots, read_only_roots=read_only_roots, read_only=read_only
        )
        self._backends.append(fs)
        return fs

    def rewrite_within_the_second(self, path: str, data: bytes) -> None:
        """Replace ``path`` behind the backend with ``data`` and give it back its
        modification time: to SFTP's whole seconds (and to its size, when ``data`` is as
        long), only the content changed — what a writer in the second of a read does."""
        before = os.stat(self.path(path))
        self.put(path, data)
        os.utime(self.path(path), ns=(before.st_atime_ns, before.st_mtime_ns))

    async def aclose(self) -> None:
        for fs in self._backends:
            await fs.aclose()


@pytest.fixture
async def sftp_scratch(sshd: SshServer, tmp_path: Path) -> AsyncIterator[SftpScratch]:
    """A fresh :class:`SftpScratch` under ``tmp_path`` (an anyio test's fixture)."""
    scratch = SftpScratch(sshd, tmp_path)
    try:
        yield scratch
    finally:
        await scratch.aclose()
