"""Removing and moving entries over SFTP beyond the kit's delete/move contract — against a
real sshd: guards that only a file's digest can decide (a change in the second of the read),
the lock files two clients share, a tree a killed client left renamed aside, nested roots,
a batch that fails while publishing, and moves across filesystems on the server.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from dsh_fs import (
    AtVersion,
    DeleteChange,
    FsBatchError,
    FsDeleteOutcome,
    FsError,
    FsErrorCode,
    FsTarget,
    MoveGuard,
    WriteChange,
)
from dsh_fs_sftp import SftpFileSystem
from dsh_fs_sftp.testing import SftpScratch, SshServer

pytestmark = pytest.mark.anyio


def everything(scratch: SftpScratch) -> list[str]:
    """Every path under the root, hidden ones included (locks, temporaries, aside trees)."""
    found = []
    for parent, dirs, files in os.walk(scratch.root):
        rel = os.path.relpath(parent, scratch.root)
        found += [os.path.normpath(os.path.join(rel, n)) for n in dirs + files]
    return sorted(found)


async def refused(call: object, code: FsErrorCode) -> str:
    with pytest.raises(FsError) as caught:
        await call  # type: ignore[misc]
    assert caught.value.code == code, caught.value
    return str(caught.value)


# -- delete -------------------------------------------------------------------------------------


async def test_a_recursive_delete_of_many_entries_never_follows_a_link(
    sftp_scratch: SftpScratch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "keep.txt").write_text("keep\n")
    for i in range(150):
        sftp_scratch.put(f"tree/a/{i}.txt", b"x\n")
    sftp_scratch.put("tree/b/c/deep.txt", b"x\n")
    sftp_scratch.symlink("tree/out", str(outside))
    sftp_scratch.put("other.txt", b"stay\n")
    fs = sftp_scratch.fs
    outcome = await fs.delete(await fs.resolve("tree"), recursive=True)
    assert outcome == FsDeleteOutcome("directory")
    assert everything(sftp_scratch) == ["other.txt"]
    assert (outside / "keep.txt").read_text() == "keep\n"


async def test_a_delete_guard_sees_a_change_in_the_second_of_the_read(
    sftp_scratch: SftpScratch,
) -> None:
    sftp_scratch.put("f.txt", b"AAAA\n")
    fs = sftp_scratch.fs
    target = await fs.resolve("f.txt")
    info = await fs.stat(target)
    assert info is not None
    sftp_scratch.rewrite_within_the_second("f.txt", b"BBBB\n")  # only the digest can tell
    message = await refused(
        fs.delete(target, expected=AtVersion(info.version)), FsErrorCode.FS_STALE_VERSION
    )
    assert message == f'cannot delete "{target.display_path}": file changed since it was read'
    assert sftp_scratch.get("f.txt") == b"BBBB\n"


async def test_delete_refuses_a_tree_that_holds_a_root(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("w/inner/a.md", b"x\n")
    sftp_scratch.put("w/docs/a.md", b"x\n")
    fs = sftp_scratch.backend(
        sftp_scratch.path("w"),
        roots=[".", "inner"],
        read_only_roots=[sftp_scratch.path("w/docs")],
    )
    inner = await fs.resolve("inner")
    message = await refused(fs.delete(inner, recursive=True), FsErrorCode.FS_PERMISSION_DENIED)
    assert message == f'cannot delete "{inner.display_path}": it is a workspace root'
    docs = await fs.resolve("docs")  # a read-only root inside a writable one
    message = await refused(fs.delete(docs, recursive=True), FsErrorCode.FS_READ_ONLY)
    assert message == f'cannot delete "{docs.display_path}": read-only workspace'
    assert everything(sftp_scratch) == ["w", "w/docs", "w/docs/a.md", "w/inner", "w/inner/a.md"]


def fs_target(scratch: SftpScratch, rel: str) -> FsTarget:
    """The target of ``rel`` as ``resolve`` would name it, without asking ``resolve``."""
    return FsTarget(scratch.path(rel), scratch.path(rel))


async def test_a_tree_renamed_aside_by_a_dead_client_is_swept_with_its_stale_lock(
    sftp_scratch: SftpScratch, sshd: SshServer
) -> None:
    """What a client killed during a recursive delete leaves: its lock and the aside tree."""
    sftp_scratch.put(".tree.dsh.lock", b"elsewhere 4242 0123456789abcdef\n")
    sftp_scratch.put(".tree.dsh-4242-0badf00d.tmp/half/a.txt", b"x\n")
    sftp_scratch.symlink(".tree.dsh-4242-0badf00d.tmp/half/up", "../../..")
    async with sshd.backend(sftp_scratch.root, lock_stale_after=0.3) as fs:
        await fs.write_text(await fs.resolve("tree"), "a file now\n")
    assert everything(sftp_scratch) == ["tree"]


# -- move ---------------------------------------------------------------------------------------


async def test_move_onto_a_file_changed_in_the_same_second_is_refused(
    sftp_scratch: SftpScratch,
) -> None:
    sftp_scratch.put("a.txt", b"a\n")
    sftp_scratch.put("b.txt", b"BBBB\n")
    fs = sftp_scratch.fs
    source, destination = await fs.resolve("a.txt"), await fs.resolve("b.txt")
    read = await fs.stat(destination)
    assert read is not None
    sftp_scratch.rewrite_within_the_second("b.txt", b"CCCC\n")
    message = await refused(
        fs.move(
            source, destination, replace=True, expected=MoveGuard(None, AtVersion(read.version))
        ),
        FsErrorCode.FS_STALE_VERSION,
    )
    assert message == f'cannot move to "{destination.display_path}": file changed since it was read'
    assert sftp_scratch.get("b.txt") == b"CCCC\n"


async def test_two_clients_moving_onto_one_free_name_never_both_land(
    sftp_scratch: SftpScratch,
) -> None:
    """replace=False is decided under both lock files: exactly one move wins each round."""
    backends: list[SftpFileSystem] = [sftp_scratch.fs, sftp_scratch.backend(sftp_scratch.root)]

    async def move(fs: SftpFileSystem, name: str, to: str, results: list[str]) -> None:
        try:
            await fs.move(await fs.resolve(name), await fs.resolve(to))
            results.append("moved")
        except FsError as err:
            assert err.code == FsErrorCode.FS_ALREADY_EXISTS
            results.append("exists")

    for round_ in range(5):
        sftp_scratch.put(f"a{round_}.txt", b"a\n")
        sftp_scratch.put(f"b{round_}.txt", b"b\n")
        results: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(move, backends[0], f"a{round_}.txt", f"to{round_}.txt", results)
            tg.start_soon(move, backends[1], f"b{round_}.txt", f"to{round_}.txt", results)
        assert sorted(results) == ["exists", "moved"]
    assert not [name for name in everything(sftp_scratch) if name.startswith(".")]


# -- apply_changes ------------------------------------------------------------------------------


async def test_a_batch_guard_sees_a_change_in_the_second_of_the_read(
    sftp_scratch: SftpScratch,
) -> None:
    sftp_scratch.put("a.txt", b"AAAA\n")
    sftp_scratch.put("b.txt", b"BBBB\n")
    fs = sftp_scratch.fs
    a, b = await fs.resolve("a.txt"), await fs.resolve("b.txt")
    read = await fs.stat(b)
    assert read is not None
    sftp_scratch.rewrite_within_the_second("b.txt", b"CCCC\n")
    message = await refused(
        fs.apply_changes([DeleteChange(a), DeleteChange(b, AtVersion(read.version))]),
        FsErrorCode.FS_STALE_VERSION,
    )
    assert message == f'cannot delete "{b.display_path}": file changed since it was read'
    assert everything(sftp_scratch) == ["a.txt", "b.txt"]


async def test_a_batch_that_fails_while_publishing_says_how_many_were_applied(
    sftp_scratch: SftpScratch,
) -> None:
    fs = sftp_scratch.fs
    a, b = await fs.resolve("a.txt"), await fs.resolve("b.txt")
    with pytest.raises(FsBatchError) as caught:
        await fs.apply_changes([WriteChange(a, "a\n"), WriteChange(b, "bad \ud800\n")])
    assert caught.value.applied == 1
    assert str(caught.value) == f'cannot write "{b.display_path}": invalid UTF-8 text'
    assert everything(sftp_scratch) == ["a.txt"]


@pytest.fixture
def other_filesystem() -> Iterator[Path]:
    """A directory on another filesystem than the scratch (``/dev/shm``, a tmpfs)."""
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm on this machine")
    directory = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory)


async def test_a_file_moves_across_filesystems_by_copy_then_removal(
    sftp_scratch: SftpScratch, other_filesystem: Path
) -> None:
    if os.stat(sftp_scratch.root).st_dev == os.stat(other_filesystem).st_dev:
        pytest.skip("/dev/shm is on the scratch's filesystem here")
    sftp_scratch.put("a.txt", b"across\n")
    os.chmod(sftp_scratch.path("a.txt"), 0o640)
    sftp_scratch.symlink("link", "a.txt")
    fs = sftp_scratch.backend(sftp_scratch.root, roots=[".", str(other_filesystem)])
    outcome = await fs.move(
        await fs.resolve("a.txt"), await fs.resolve(f"{other_filesystem}/b.txt")
    )
    assert outcome.type == "file"
    assert (other_filesystem / "b.txt").read_bytes() == b"across\n"
    assert os.stat(other_filesystem / "b.txt").st_mode & 0o7777 == 0o640
    moved = await fs.move(
        fs_target(sftp_scratch, "link"), await fs.resolve(f"{other_filesystem}/l")
    )
    assert moved.type == "symlink" and os.readlink(other_filesystem / "l") == "a.txt"
    assert everything(sftp_scratch) == []
    assert sorted(os.listdir(other_filesystem)) == ["b.txt", "l"]


async def test_a_directory_is_refused_across_filesystems(
    sftp_scratch: SftpScratch, other_filesystem: Path
) -> None:
    if os.stat(sftp_scratch.root).st_dev == os.stat(other_filesystem).st_dev:
        pytest.skip("/dev/shm is on the scratch's filesystem here")
    sftp_scratch.put("d/a.txt", b"a\n")
    fs = sftp_scratch.backend(sftp_scratch.root, roots=[".", str(other_filesystem)])
    source = await fs.resolve("d")
    message = await refused(
        fs.move(source, await fs.resolve(f"{other_filesystem}/d")), FsErrorCode.FS_IO_ERROR
    )
    assert (
        message
        == f'cannot move "{source.display_path}": a directory cannot move across filesystems'
    )
    assert everything(sftp_scratch) == ["d", "d/a.txt"]
    assert os.listdir(other_filesystem) == []


DELETER = """
import sys, anyio
from dsh_fs_sftp import SftpFileSystem

async def main() -> None:
    host, port, user, key, known, root = sys.argv[1:]
    fs = SftpFileSystem(
        host, port=int(port), username=user, client_keys=key, known_hosts=known, cwd=root
    )
    await fs.delete(await fs.resolve("tree"), recursive=True)

anyio.run(main)
"""


async def test_a_client_killed_while_removing_a_tree_leaves_it_gone_and_no_debris_after(
    sftp_scratch: SftpScratch, sshd: SshServer
) -> None:
    """kill -9 once the tree is renamed aside: its name is gone for every observer; the
    next mutation of that name breaks the dead client's lock and sweeps what is left."""
    for i in range(3000):
        sftp_scratch.put(f"tree/{i // 100}/{i}.txt", b"x\n")
    options = sshd.connect_options()
    command = [
        sys.executable, "-c", DELETER, "127.0.0.1", str(options["port"]), options["username"],
        options["client_keys"], options["known_hosts"], sftp_scratch.root,
    ]  # fmt: skip
    async with await anyio.open_process(command, stdout=None, stderr=None) as child:
        deadline = time.monotonic() + 60
        while not any(".tree.dsh-" in name for name in os.listdir(sftp_scratch.root)):
            if child.returncode is not None or time.monotonic() > deadline:
                assert child.returncode in (0, None), "the deleter failed"
                pytest.skip("the tree was removed before it could be caught aside")
            await anyio.sleep(0.001)
        child.kill()
        await child.wait()
    assert "tree" not in os.listdir(sftp_scratch.root)  # gone at once, not half gone
    async with sshd.backend(sftp_scratch.root, lock_stale_after=0.3) as fs:
        await fs.write_text(await fs.resolve("tree"), "a file now\n")
    assert everything(sftp_scratch) == ["tree"]


async def test_a_move_cancelled_while_it_waits_for_a_lock_changes_nothing(
    sftp_scratch: SftpScratch,
) -> None:
    sftp_scratch.put("a.txt", b"a\n")
    sftp_scratch.put(".b.txt.dsh.lock", b"another 1 live\n")  # another client holds b.txt
    fs = sftp_scratch.fs
    source, destination = await fs.resolve("a.txt"), await fs.resolve("b.txt")
    with anyio.move_on_after(0.3) as scope:
        await fs.move(source, destination)
    assert scope.cancelled_caught
    assert everything(sftp_scratch) == [".b.txt.dsh.lock", "a.txt"]
