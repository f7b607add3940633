"""The SFTP backend over the network, against a real sshd: atomic visibility to another
connection, no lost update between two ``dsh-fs session`` processes, a session that
survives its server's restart, and nothing left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from dsh_fs_sftp.testing import SshServer, sshd

__all__ = ["sshd"]

DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))
FIVE_MB = 5 << 20


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """The remote workspace (this machine's directory, served by ``sshd``)."""
    path = tmp_path / "remote"
    path.mkdir()
    return Path(os.path.realpath(path))


def hidden(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob(".*"))


@pytest.mark.anyio
async def test_a_reader_on_another_connection_never_sees_a_torn_file(
    sshd: SshServer, remote: Path
) -> None:
    first, second = "a" * FIVE_MB, "b€" * (FIVE_MB // 4) + "\n"
    (remote / "big.txt").write_text(first)
    writer, reader = sshd.backend(str(remote)), sshd.backend(str(remote))
    target = await writer.resolve("big.txt")
    seen: list[bool] = []
    done = anyio.Event()

    async def write() -> None:
        for i in range(8):
            await writer.write_text(target, second if i % 2 == 0 else first)
        done.set()

    async def read() -> None:
        theirs = await reader.resolve("big.txt")
        while not done.is_set():
            seen.append(await reader.read_text(theirs) in (first, second))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(write)
            tg.start_soon(read)
    finally:
        await writer.aclose()
        await reader.aclose()
    assert len(seen) >= 3
    assert all(seen), f"{seen.count(False)} of {len(seen)} reads saw a torn file"
    assert hidden(remote) == []


class Session:
    """One ``dsh-fs session`` process on the remote workspace: a request, its answer."""

    def __init__(self, server: SshServer, remote: Path) -> None:
        self.process = subprocess.Popen(
            [
                DSH_FS,
                "session",
                "--backend",
                "sftp",
                "--cwd",
                f"{server.url}{remote}",
                "--ssh-key",
                str(server.client_key_path),
                "--known-hosts",
                str(server.known_hosts_path),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"tool": tool, "args": args}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            error = self.process.stderr.read() if self.process.stderr else ""
            raise AssertionError(f"the session ended: {error}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        assert self.process.returncode == 0


@pytest.fixture
def sessions(sshd: SshServer, remote: Path) -> Iterator[list[Session]]:
    started: list[Session] = []
    yield started
    for session in started:
        if session.process.poll() is None:
            session.process.kill()
            session.process.wait()


def increment(session: Session, times: int, failures: list[str]) -> None:
    """``times`` increments of the counter, each a read then a guarded write (retried when
    another process got there first)."""
    done = 0
    while done < times:
        read = session.call("read", file_path="counter.txt")
        if read["is_error"]:
            failures.append(read["text"])
            return
        value = int(read["value"]["lines"][0]["text"])
        wrote = session.call("write", file_path="counter.txt", content=f"{value + 1}\n")
        if not wrote["is_error"]:
            done += 1
        elif wrote["error"]["code"] != "FS_STALE_VERSION":
            failures.append(wrote["text"])
            return


def test_two_sessions_counting_to_one_hundred_lose_no_update(
    sshd: SshServer, remote: Path, sessions: list[Session]
) -> None:
    (remote / "counter.txt").write_text("0\n")
    sessions.extend([Session(sshd, remote), Session(sshd, remote)])
    failures: list[str] = []
    threads = [threading.Thread(target=increment, args=(s, 50, failures)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert failures == []
    assert (remote / "counter.txt").read_text() == "100\n"
    for session in sessions:
        session.close()
    assert hidden(remote) == []


def test_a_session_survives_its_server_restarting(
    sshd: SshServer, remote: Path, sessions: list[Session]
) -> None:
    (remote / "a.txt").write_text("one\n")
    session = Session(sshd, remote)
    sessions.append(session)
    assert not session.call("read", file_path="a.txt")["is_error"]
    sshd.restart()
    answer = session.call("write", file_path="a.txt", content="two\n")
    # The connection dropped while the session was idle: the write reconnects (or, had
    # it been in flight, it would fail FS_IO_ERROR) — the session lives on either way.
    assert not answer["is_error"] or answer["error"]["code"] == "FS_IO_ERROR", answer
    answer = session.call("read", file_path="a.txt")
    assert not answer["is_error"], answer
    session.call("write", file_path="a.txt", content="three\n")
    assert (remote / "a.txt").read_text() == "three\n"
    session.close()
    assert hidden(remote) == []


def dsh_fs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH_FS, *args], capture_output=True, text=True, timeout=120)


def test_the_command_runs_a_tool_on_the_remote_workspace(sshd: SshServer, remote: Path) -> None:
    (remote / "a.txt").write_text("remote\n")
    done = dsh_fs(
        "call",
        "read",
        '{"file_path": "a.txt"}',
        "--backend",
        "sftp",
        "--cwd",
        f"{sshd.url}{remote}",
        "--ssh-key",
        str(sshd.client_key_path),
        "--backend-option",
        f"known_hosts={json.dumps(str(sshd.known_hosts_path))}",
        "--backend-option",
        "connect_timeout=5",
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert f"<path>{remote}/a.txt</path>" in done.stdout and "1: remote" in done.stdout


@pytest.mark.parametrize(
    ("cwd", "line"),
    [
        (
            "sftp://nobody@127.0.0.1:1/srv",
            'dsh-fs: --cwd "sftp://nobody@127.0.0.1:1/srv": cannot connect to '
            "sftp://nobody@127.0.0.1:1: connection refused",
        ),
        (
            "ftp://host/srv",
            'dsh-fs: --backend "sftp": "ftp://host/srv" is not an sftp:// URL '
            "(sftp://[user@]host[:port]/absolute/path)",
        ),
        (
            "sftp://agent@127.0.0.1",
            'dsh-fs: --backend "sftp": "sftp://agent@127.0.0.1" has no path: name the remote '
            "directory of the workspace (sftp://[user@]host[:port]/absolute/path)",
        ),
    ],
)
def test_an_unreachable_server_or_a_bad_url_is_a_start_up_error(cwd: str, line: str) -> None:
    done = dsh_fs("session", "--backend", "sftp", "--cwd", cwd)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", line + "\n")


def test_an_option_the_backend_does_not_take_is_bad_usage(sshd: SshServer, remote: Path) -> None:
    done = dsh_fs(
        "call", "list", "{}", "--backend", "sftp", "--cwd", f"{sshd.url}{remote}",
        "--backend-option", "colour=blue",
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith('dsh-fs: --backend "sftp": ')
    assert "colour" in done.stderr and done.stderr.count("\n") == 1


def test_mcp_help_shows_an_sftp_example() -> None:
    done = dsh_fs("mcp", "--help")
    assert done.returncode == 0
    assert "--backend sftp --cwd sftp://" in done.stdout
