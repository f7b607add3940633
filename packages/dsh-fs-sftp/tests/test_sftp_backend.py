"""What SftpFileSystem promises beyond the kit: the connection, its errors, the cross-client
lock, kept permissions, and the server's missing extensions — against a real sshd."""

from __future__ import annotations

import os
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from dsh_fs import EditGuard, FsEditRequest, FsError, FsErrorCode, ReplaceIfVersion
from dsh_fs_sftp import SftpFileSystem, parse_url
from dsh_fs_sftp.testing import SftpScratch, SshServer

pytestmark = pytest.mark.anyio


def leftovers(directory: Path) -> list[str]:
    """Hidden files our writes could leave: temporaries and locks."""
    return sorted(name for name in os.listdir(directory) if name.startswith("."))


# -- URLs ---------------------------------------------------------------------------------------


def test_a_url_gives_the_server_and_the_cwd() -> None:
    assert parse_url("sftp://agent@box.example:2222/home/agent/app") == (
        "box.example",
        2222,
        "agent",
        "/home/agent/app",
    )
    assert parse_url("sftp://box/srv") == ("box", 22, None, "/srv")


@pytest.mark.parametrize(
    "url",
    ["ftp://box/srv", "sftp:///srv", "sftp://box:notaport/srv", "sftp://u:secret@box/srv", "/srv"],
)
def test_a_bad_url_is_a_value_error_naming_it(url: str) -> None:
    with pytest.raises(ValueError, match="is not an sftp:// URL") as caught:
        SftpFileSystem.from_url(url)
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize("url", ["sftp://agent@box", "sftp://agent@box:2222"])
def test_a_url_without_a_path_is_refused_never_the_remote_root(url: str) -> None:
    with pytest.raises(ValueError) as caught:
        SftpFileSystem.from_url(url)
    assert str(caught.value) == (
        f'"{url}" has no path: name the remote directory of the workspace '
        "(sftp://[user@]host[:port]/absolute/path)"
    )


def test_nothing_is_reached_at_construction() -> None:
    fs = SftpFileSystem.from_url("sftp://nobody@127.0.0.1:1/nowhere")
    assert fs.url == "sftp://nobody@127.0.0.1:1/nowhere"


# -- connection errors: one line each, no key material ------------------------------------------


async def expect_connect_error(fs: SftpFileSystem, reason: str) -> str:
    with pytest.raises(FsError) as caught:
        await fs.connect()
    message = str(caught.value)
    assert caught.value.code == FsErrorCode.FS_IO_ERROR
    assert message.endswith(reason), message
    assert "\n" not in message
    assert "PRIVATE" not in message and "ssh-ed25519" not in message
    # A primitive says the same, in its own words.
    with pytest.raises(FsError) as again:
        await fs.resolve("x.txt")
    assert str(again.value).endswith(reason)
    return message


async def test_a_refused_connection_says_so(sshd: SshServer) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fs = SftpFileSystem("127.0.0.1", port=port, cwd="/tmp", known_hosts=None)
    message = await expect_connect_error(fs, "connection refused")
    assert message == f"cannot connect to sftp://127.0.0.1:{port}: connection refused"


async def test_a_failed_authentication_says_so(sshd: SshServer, tmp_path: Path) -> None:
    import asyncssh

    stranger = tmp_path / "stranger_ed25519"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(stranger))
    options = sshd.connect_options() | {"client_keys": str(stranger)}
    fs = SftpFileSystem("127.0.0.1", cwd=str(tmp_path), **options)
    await expect_connect_error(fs, f'authentication as "{sshd.username}" failed')


async def test_an_unknown_host_key_says_so(sshd: SshServer, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    options = sshd.connect_options() | {"known_hosts": str(empty)}
    fs = SftpFileSystem("127.0.0.1", cwd=str(tmp_path), **options)
    await expect_connect_error(fs, "the server's host key is not trusted (known_hosts)")


async def test_known_hosts_none_turns_verification_off(sshd: SshServer, tmp_path: Path) -> None:
    options = sshd.connect_options() | {"known_hosts": None}
    async with SftpFileSystem("127.0.0.1", cwd=str(tmp_path), **options) as fs:
        await fs.connect()
        assert (await fs.list_dir(await fs.resolve("."))) == []


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts TCP connections and never says a word (an SSH timeout)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        listener.close()


async def test_a_timeout_says_so(silent_server: int) -> None:
    fs = SftpFileSystem(
        "127.0.0.1", port=silent_server, cwd="/tmp", known_hosts=None, connect_timeout=0.5
    )
    started = time.monotonic()
    await expect_connect_error(fs, "timed out after 0.5 s")
    assert time.monotonic() - started < 5


async def test_a_root_that_is_not_a_directory_fails_connect(
    sshd: SshServer, tmp_path: Path
) -> None:
    fs = sshd.backend(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="is not an existing directory"):
        await fs.connect()
    with pytest.raises(FsError, match="is not an existing directory") as caught:
        await fs.resolve("a.txt")
    assert caught.value.code == FsErrorCode.FS_IO_ERROR


@pytest.mark.parametrize(
    ("denied", "extension"),
    [("posix-rename", "posix-rename@openssh.com"), ("fsync", "fsync@openssh.com")],
)
async def test_a_server_without_an_extension_writes_need_is_refused_at_connect(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, denied: str, extension: str
) -> None:
    server = SshServer(tmp_path_factory.mktemp("sshd"), subsystem=f"internal-sftp -P {denied}")
    server.start()
    try:
        fs = server.backend(str(tmp_path))
        with pytest.raises(FsError) as caught:
            await fs.connect()
        assert extension in str(caught.value)
        assert leftovers(tmp_path) == []
        # A read-only workspace needs neither: it is served.
        reader = server.backend(str(tmp_path), read_only=True)
        await reader.connect()
        await reader.aclose()
    finally:
        server.stop()


# -- the connection: lazy, shared, reopened once ------------------------------------------------


async def test_a_dropped_connection_is_reopened_by_the_next_call(
    sftp_scratch: SftpScratch, sshd: SshServer
) -> None:
    fs = sftp_scratch.fs
    target = await fs.resolve("f.txt")
    await fs.write_text(target, "before\n")
    sshd.restart()  # every connection drops
    assert await fs.read_text(target) == "before\n"  # a read runs again, on a new one
    await fs.write_text(target, "after\n")
    assert sftp_scratch.get("f.txt") == b"after\n"


async def test_a_mutation_in_flight_when_the_connection_drops_is_not_retried(
    sftp_scratch: SftpScratch, sshd: SshServer
) -> None:
    fs = sftp_scratch.fs
    target = await fs.resolve("big.txt")
    await fs.write_text(target, "old\n")
    outcomes: list[str] = []

    async def writer() -> None:
        try:
            await fs.write_text(target, "n" * (64 << 20))
            outcomes.append("written")
        except FsError as err:
            assert err.code == FsErrorCode.FS_IO_ERROR
            assert str(err) == (
                f'cannot write "{target.display_path}": the connection to {sshd.url} was lost'
            )
            outcomes.append("lost")

    async with anyio.create_task_group() as tg:
        tg.start_soon(writer)
        await anyio.sleep(0.3)
        for pid in sshd.sessions():
            os.kill(pid, 9)
    assert outcomes in (["lost"], ["written"])
    if outcomes == ["lost"]:
        assert sftp_scratch.get("big.txt") == b"old\n"
    # The next call reconnects, and removes the lock and temporary the drop left.
    await fs.write_text(target, "next\n")
    assert sftp_scratch.get("big.txt") == b"next\n"
    assert sftp_scratch.names() == ["big.txt"]


# -- what a write keeps ------------------------------------------------------------------------


async def test_a_write_keeps_the_permission_bits(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("script.sh", b"echo old\n")
    os.chmod(sftp_scratch.path("script.sh"), 0o751)
    fs = sftp_scratch.fs
    target = await fs.resolve("script.sh")
    await fs.write_text(target, "echo new\n")
    await fs.edit_text(target, FsEditRequest("new", "newer"))
    assert stat.S_IMODE(os.stat(sftp_scratch.path("script.sh")).st_mode) == 0o751
    assert sftp_scratch.get("script.sh") == b"echo newer\n"


async def test_a_new_file_gets_what_the_servers_open_gives(sftp_scratch: SftpScratch) -> None:
    fs = sftp_scratch.fs
    await fs.write_text(await fs.resolve("new.txt"), "new\n")
    assert stat.S_IMODE(os.stat(sftp_scratch.path("new.txt")).st_mode) == 0o666 & ~0o022


async def test_versions_move_on_same_size_rewrites_within_one_second(
    sftp_scratch: SftpScratch,
) -> None:
    fs = sftp_scratch.fs
    target = await fs.resolve("f.txt")
    versions = [(await fs.write_text(target, f"{i % 10}\n")).version for i in range(12)]
    assert len(set(versions)) == len(versions)
    info = await fs.stat(target)
    assert info is not None and info.version == versions[-1]
    assert info.modified_ns is not None and info.modified_ns % 1_000_000_000 == 0


# -- versions that move within the second (git's "racily clean" rule) --------------------------


async def test_a_same_size_change_in_the_second_of_the_read_is_refused_as_stale(
    sftp_scratch: SftpScratch,
) -> None:
    sftp_scratch.put("f.txt", b"AAAA\n")
    fs = sftp_scratch.fs
    target = await fs.resolve("f.txt")
    read = await fs.stat(target)
    assert read is not None
    sftp_scratch.rewrite_within_the_second("f.txt", b"BBBB\n")
    with pytest.raises(FsError) as caught:
        await fs.write_text(target, "mine\n", ReplaceIfVersion(read.version))
    assert caught.value.code == FsErrorCode.FS_STALE_VERSION
    assert str(caught.value) == (
        f'cannot write "{target.display_path}": file changed since it was read'
    )
    assert sftp_scratch.get("f.txt") == b"BBBB\n"  # nothing the other writer wrote is lost
    assert sftp_scratch.names() == ["f.txt"]


async def test_a_same_size_change_in_the_second_of_the_read_fails_a_guarded_edit(
    sftp_scratch: SftpScratch,
) -> None:
    sftp_scratch.put("f.txt", b"AAAA\n")
    fs = sftp_scratch.fs
    target = await fs.resolve("f.txt")
    read = await fs.stat(target)
    assert read is not None
    sftp_scratch.rewrite_within_the_second("f.txt", b"BBBB\n")
    with pytest.raises(FsError) as caught:
        await fs.edit_text(target, FsEditRequest("BBBB", "CCCC"), EditGuard(read.version))
    assert str(caught.value) == (
        f'cannot edit "{target.display_path}": file changed since it was read'
    )
    assert sftp_scratch.get("f.txt") == b"BBBB\n"


async def test_stat_list_lstat_and_the_write_agree_on_a_recent_file(
    sftp_scratch: SftpScratch,
) -> None:
    fs = sftp_scratch.fs
    target = await fs.resolve("d/f.txt")
    written = await fs.write_text(target, "same size A\n")
    info = await fs.stat(target)
    path_info = await fs.lstat("d/f.txt")
    [entry] = await fs.list_dir(await fs.resolve("d"), stat=True)
    assert info is not None and path_info is not None
    assert written.version == info.version == path_info.version == entry.version


async def test_a_version_taken_in_the_window_still_guards_the_file_after_it(
    sftp_scratch: SftpScratch,
) -> None:
    """The guard is recomputed the way its version was made: a digest version of an
    unchanged file passes once the file is older than the window, a changed one fails."""
    sftp_scratch.put("same.txt", b"AAAA\n")
    sftp_scratch.put("changed.txt", b"AAAA\n")
    fs = sftp_scratch.fs
    same, changed = await fs.resolve("same.txt"), await fs.resolve("changed.txt")
    recorded = [await fs.stat(same), await fs.stat(changed)]
    sftp_scratch.rewrite_within_the_second("changed.txt", b"BBBB\n")
    fs._remote.clock.observe(int(time.time()) + 60)  # a minute later, on the server
    later = await fs.stat(same)
    assert recorded[0] is not None and recorded[1] is not None and later is not None
    assert later.version != recorded[0].version  # outside the window: no digest
    await fs.write_text(same, "mine\n", ReplaceIfVersion(recorded[0].version))
    assert sftp_scratch.get("same.txt") == b"mine\n"
    with pytest.raises(FsError) as caught:
        await fs.write_text(changed, "mine\n", ReplaceIfVersion(recorded[1].version))
    assert caught.value.code == FsErrorCode.FS_STALE_VERSION
    assert sftp_scratch.get("changed.txt") == b"BBBB\n"


# -- serialization across clients --------------------------------------------------------------


async def test_two_connections_never_lose_an_update(sftp_scratch: SftpScratch) -> None:
    """Two backends (two SSH connections, as two processes would have) append concurrently."""
    sftp_scratch.put("log.txt", b"END\n")
    first, second = sftp_scratch.fs, sftp_scratch.backend(sftp_scratch.root)

    async def append(fs: SftpFileSystem, who: str) -> None:
        target = await fs.resolve("log.txt")
        for i in range(15):
            await fs.edit_text(target, FsEditRequest("END\n", f"{who}{i}\nEND\n"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(append, first, "a")
        tg.start_soon(append, second, "b")
    lines = (sftp_scratch.get("log.txt") or b"").decode().splitlines()
    assert lines[-1] == "END"
    for who in "ab":
        assert [line for line in lines if line.startswith(who)] == [f"{who}{i}" for i in range(15)]
    assert len(lines) == 31
    assert sftp_scratch.names() == ["log.txt"]


async def test_two_connections_with_one_version_let_exactly_one_win(
    sftp_scratch: SftpScratch,
) -> None:
    sftp_scratch.put("f.txt", b"0\n")
    backends = [sftp_scratch.fs, sftp_scratch.backend(sftp_scratch.root)]
    target = await backends[0].resolve("f.txt")
    info = await backends[0].stat(target)
    assert info is not None
    results: list[str] = []

    async def write(fs: SftpFileSystem, text: str) -> None:
        try:
            await fs.write_text(target, text, ReplaceIfVersion(info.version))
            results.append("won")
        except FsError as err:
            assert err.code == FsErrorCode.FS_STALE_VERSION
            results.append("stale")

    async with anyio.create_task_group() as tg:
        tg.start_soon(write, backends[0], "1\n")
        tg.start_soon(write, backends[1], "2\n")
    assert sorted(results) == ["stale", "won"]


async def test_a_stale_lock_of_a_dead_client_is_broken_with_its_temporary(
    sftp_scratch: SftpScratch, sshd: SshServer
) -> None:
    sftp_scratch.put("f.txt", b"old\n")
    sftp_scratch.put(".f.txt.dsh.lock", b"elsewhere 4242 0123456789abcdef\n")
    sftp_scratch.put(".f.txt.dsh-4242-0badf00d.tmp", b"half a wri")
    async with sshd.backend(sftp_scratch.root, lock_stale_after=0.5) as fs:
        target = await fs.resolve("f.txt")
        started = time.monotonic()
        await fs.write_text(target, "new\n")
        assert time.monotonic() - started >= 0.5
    assert sftp_scratch.get("f.txt") == b"new\n"
    assert sftp_scratch.names() == ["f.txt"]


async def test_a_live_lock_is_waited_for(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("f.txt", b"old\n")
    sftp_scratch.put(".f.txt.dsh.lock", b"another 1 live\n")
    fs = sftp_scratch.fs
    target = await fs.resolve("f.txt")
    done: list[float] = []

    async def write() -> None:
        await fs.write_text(target, "new\n")
        done.append(time.monotonic())

    async with anyio.create_task_group() as tg:
        tg.start_soon(write)
        await anyio.sleep(0.4)
        assert not done and sftp_scratch.get("f.txt") == b"old\n"
        released = time.monotonic()
        sftp_scratch.remove(".f.txt.dsh.lock")
    assert done and done[0] >= released
    assert sftp_scratch.get("f.txt") == b"new\n"


def test_the_test_servers_configuration_is_what_sshd_accepts(tmp_path: Path) -> None:
    """``sshd -t`` (OpenSSH 9.2 dropped the privilege-separation-era options)."""
    import subprocess

    server = SshServer(tmp_path)
    checked = subprocess.run(
        [server.binary, "-t", "-f", str(server.config_path)], capture_output=True, text=True
    )
    assert (checked.returncode, checked.stderr) == (0, "")
