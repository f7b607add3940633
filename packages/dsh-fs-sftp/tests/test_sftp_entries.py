"""Removing and moving entries over SFTP, and batches of changes — against a real sshd.

Until the kit's remove/move contract covers them on every backend, these pin what
SftpFileSystem.delete, move and apply_changes do: the messages, the guards (with the
digest of a file changed in the same second), the root, containment, trees renamed
aside, both locks of a move, and all-or-nothing batches.
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
    NotAFile,
    ReplaceIfVersion,
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


async def test_delete_removes_a_file(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("f.txt", b"x\n")
    fs = sftp_scratch.fs
    assert await fs.delete(await fs.resolve("f.txt")) == FsDeleteOutcome("file")
    assert everything(sftp_scratch) == []


async def test_delete_removes_a_link_not_what_it_points_at(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("f.txt", b"x\n")
    sftp_scratch.symlink("link", "f.txt")
    fs = sftp_scratch.fs
    assert await fs.delete(await fs.resolve("link")) == FsDeleteOutcome("symlink")
    assert everything(sftp_scratch) == ["f.txt"]


async def test_delete_of_a_link_leading_outside_removes_only_the_link(
    sftp_scratch: SftpScratch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "keep.txt"
    outside.write_text("keep\n")
    sftp_scratch.symlink("away", str(outside))
    fs = sftp_scratch.fs
    # resolve refuses a link leading outside; delete reaches the link itself
    assert await fs.delete(fs_target(sftp_scratch, "away")) == FsDeleteOutcome("symlink")
    assert outside.read_text() == "keep\n"
    assert everything(sftp_scratch) == []


async def test_delete_removes_an_empty_directory(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.mkdir("d")
    fs = sftp_scratch.fs
    assert await fs.delete(await fs.resolve("d")) == FsDeleteOutcome("directory")
    assert everything(sftp_scratch) == []


async def test_delete_refuses_a_directory_that_is_not_empty(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("d/f.txt", b"x\n")
    fs = sftp_scratch.fs
    target = await fs.resolve("d")
    message = await refused(fs.delete(target), FsErrorCode.FS_NOT_EMPTY)
    assert message == f'cannot delete "{target.display_path}": directory not empty'
    assert everything(sftp_scratch) == ["d", "d/f.txt"]


async def test_a_recursive_delete_removes_the_tree_and_never_follows_a_link(
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


async def test_delete_of_nothing_is_not_found(sftp_scratch: SftpScratch) -> None:
    fs = sftp_scratch.fs
    target = await fs.resolve("nope.txt")
    message = await refused(fs.delete(target), FsErrorCode.FS_NOT_FOUND)
    assert message == f'cannot delete "{target.display_path}": not found'


async def test_delete_at_a_stale_version_changes_nothing(sftp_scratch: SftpScratch) -> None:
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


async def test_delete_at_the_version_read_removes_the_file(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("f.txt", b"AAAA\n")
    fs = sftp_scratch.fs
    target = await fs.resolve("f.txt")
    info = await fs.stat(target)
    assert info is not None
    await fs.delete(target, expected=AtVersion(info.version))
    assert everything(sftp_scratch) == []


async def test_delete_at_a_version_of_a_file_gone_says_so(sftp_scratch: SftpScratch) -> None:
    fs = sftp_scratch.fs
    target = await fs.resolve("f.txt")
    message = await refused(
        fs.delete(target, expected=AtVersion("1:2:3:4:5")), FsErrorCode.FS_STALE_VERSION
    )
    assert message == f'cannot delete "{target.display_path}": file no longer exists'


async def test_delete_of_an_unread_file_is_refused(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("f.txt", b"x\n")
    sftp_scratch.mkdir("d")
    fs = sftp_scratch.fs
    target = await fs.resolve("f.txt")
    message = await refused(fs.delete(target, expected=NotAFile()), FsErrorCode.FS_NOT_OBSERVED)
    assert message == f'cannot delete "{target.display_path}" without reading it first'
    await fs.delete(await fs.resolve("d"), expected=NotAFile())  # a directory needs no read
    assert everything(sftp_scratch) == ["f.txt"]


async def test_delete_never_removes_a_workspace_root(sftp_scratch: SftpScratch) -> None:
    fs = sftp_scratch.fs
    target = await fs.resolve(".")
    message = await refused(fs.delete(target, recursive=True), FsErrorCode.FS_PERMISSION_DENIED)
    assert message == f'cannot delete "{sftp_scratch.root}": it is a workspace root'


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


async def test_delete_outside_or_read_only_is_refused(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("w/f.txt", b"x\n")
    sftp_scratch.put("ro/f.txt", b"x\n")
    fs = sftp_scratch.backend(sftp_scratch.path("w"), read_only_roots=[sftp_scratch.path("ro")])
    outside = await refused(
        fs.delete(fs_target(sftp_scratch, "f.txt")), FsErrorCode.FS_OUTSIDE_WORKSPACE
    )
    assert outside == f'cannot delete "{sftp_scratch.path("f.txt")}": outside the workspace'
    ro = await fs.resolve(sftp_scratch.path("ro/f.txt"))
    message = await refused(fs.delete(ro), FsErrorCode.FS_READ_ONLY)
    assert message == f'cannot delete "{ro.display_path}": read-only workspace'
    assert everything(sftp_scratch) == ["ro", "ro/f.txt", "w", "w/f.txt"]


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


async def test_move_renames_a_file_and_creates_the_parents(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("a.txt", b"moved\n")
    fs = sftp_scratch.fs
    source, destination = await fs.resolve("a.txt"), await fs.resolve("x/y/b.txt")
    outcome = await fs.move(source, destination)
    info = await fs.stat(destination)
    assert info is not None
    assert (outcome.type, outcome.version, outcome.replaced) == ("file", info.version, False)
    assert everything(sftp_scratch) == ["x", "x/y", "x/y/b.txt"]
    assert sftp_scratch.get("x/y/b.txt") == b"moved\n"


async def test_move_onto_an_existing_entry_without_replace_is_refused(
    sftp_scratch: SftpScratch,
) -> None:
    sftp_scratch.put("a.txt", b"a\n")
    sftp_scratch.put("b.txt", b"b\n")
    fs = sftp_scratch.fs
    destination = await fs.resolve("b.txt")
    message = await refused(
        fs.move(await fs.resolve("a.txt"), destination), FsErrorCode.FS_ALREADY_EXISTS
    )
    assert message == f'cannot move to "{destination.display_path}": already exists'
    assert (sftp_scratch.get("a.txt"), sftp_scratch.get("b.txt")) == (b"a\n", b"b\n")


async def test_move_with_replace_replaces_a_file_read_at_its_version(
    sftp_scratch: SftpScratch,
) -> None:
    sftp_scratch.put("a.txt", b"a\n")
    sftp_scratch.put("b.txt", b"b\n")
    fs = sftp_scratch.fs
    source, destination = await fs.resolve("a.txt"), await fs.resolve("b.txt")
    read = await fs.stat(destination)
    assert read is not None
    guard = MoveGuard(NotAFile(), AtVersion(read.version))
    with pytest.raises(FsError, match="without reading it first"):
        await fs.move(source, destination, replace=True, expected=guard)
    outcome = await fs.move(
        source, destination, replace=True, expected=MoveGuard(None, AtVersion(read.version))
    )
    assert outcome.replaced
    assert everything(sftp_scratch) == ["b.txt"]
    assert sftp_scratch.get("b.txt") == b"a\n"


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


async def test_move_of_an_unread_destination_file_is_refused(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("a.txt", b"a\n")
    sftp_scratch.put("b.txt", b"b\n")
    fs = sftp_scratch.fs
    destination = await fs.resolve("b.txt")
    message = await refused(
        fs.move(
            await fs.resolve("a.txt"),
            destination,
            replace=True,
            expected=MoveGuard(None, NotAFile()),
        ),
        FsErrorCode.FS_NOT_OBSERVED,
    )
    assert (
        message
        == f'cannot overwrite existing "{destination.display_path}" without reading it first'
    )


async def test_a_directory_moves_with_its_contents(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("d/a.txt", b"a\n")
    sftp_scratch.symlink("d/link", "a.txt")
    fs = sftp_scratch.fs
    outcome = await fs.move(await fs.resolve("d"), await fs.resolve("e"))
    assert outcome.type == "directory"
    assert everything(sftp_scratch) == ["e", "e/a.txt", "e/link"]
    assert os.readlink(sftp_scratch.path("e/link")) == "a.txt"


async def test_a_link_moves_as_a_link(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("f.txt", b"x\n")
    sftp_scratch.symlink("link", "f.txt")
    sftp_scratch.mkdir("sub")
    fs = sftp_scratch.fs
    source = fs_target(sftp_scratch, "link")
    outcome = await fs.move(source, await fs.resolve("link2"))
    assert outcome.type == "symlink"
    assert os.readlink(sftp_scratch.path("link2")) == "f.txt"
    assert everything(sftp_scratch) == ["f.txt", "link2", "sub"]


async def test_a_directory_cannot_move_into_itself(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("d/a.txt", b"a\n")
    fs = sftp_scratch.fs
    source = await fs.resolve("d")
    message = await refused(fs.move(source, await fs.resolve("d/inner/d")), FsErrorCode.FS_IO_ERROR)
    assert message == f'cannot move "{source.display_path}": a directory cannot move into itself'
    assert everything(sftp_scratch) == ["d", "d/a.txt"]


@pytest.mark.parametrize(
    ("source", "destination", "reason", "code"),
    [
        ("d", "f.txt", "not a directory", FsErrorCode.FS_NOT_DIRECTORY),
        ("f.txt", "empty", "not a regular file", FsErrorCode.FS_NOT_REGULAR_FILE),
        ("d", "full", "directory not empty", FsErrorCode.FS_NOT_EMPTY),
    ],
)
async def test_a_move_refuses_to_clash_kinds(
    sftp_scratch: SftpScratch, source: str, destination: str, reason: str, code: FsErrorCode
) -> None:
    sftp_scratch.put("d/a.txt", b"a\n")
    sftp_scratch.put("f.txt", b"f\n")
    sftp_scratch.mkdir("empty")
    sftp_scratch.put("full/b.txt", b"b\n")
    before = everything(sftp_scratch)
    fs = sftp_scratch.fs
    to = await fs.resolve(destination)
    message = await refused(fs.move(await fs.resolve(source), to, replace=True), code)
    assert message == f'cannot move to "{to.display_path}": {reason}'
    assert everything(sftp_scratch) == before


async def test_a_directory_replaces_an_empty_directory(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("d/a.txt", b"a\n")
    sftp_scratch.mkdir("empty")
    fs = sftp_scratch.fs
    outcome = await fs.move(await fs.resolve("d"), await fs.resolve("empty"), replace=True)
    assert outcome.replaced
    assert everything(sftp_scratch) == ["empty", "empty/a.txt"]


async def test_a_move_outside_or_of_a_root_is_refused(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("w/a.txt", b"a\n")
    fs = sftp_scratch.backend(sftp_scratch.path("w"))
    source = await fs.resolve("a.txt")
    message = await refused(
        fs.move(source, fs_target(sftp_scratch, "b.txt")),
        FsErrorCode.FS_OUTSIDE_WORKSPACE,
    )
    assert message == f'cannot move to "{sftp_scratch.path("b.txt")}": outside the workspace'
    root = await fs.resolve(".")
    message = await refused(
        fs.move(root, await fs.resolve("sub")), FsErrorCode.FS_PERMISSION_DENIED
    )
    assert message == f'cannot move "{root.display_path}": it is a workspace root'
    assert everything(sftp_scratch) == ["w", "w/a.txt"]


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


async def test_a_batch_applies_every_change(sftp_scratch: SftpScratch) -> None:
    sftp_scratch.put("old.txt", b"old\n")
    sftp_scratch.put("keep.txt", b"v1\n")
    fs = sftp_scratch.fs
    keep = await fs.resolve("keep.txt")
    read = await fs.stat(keep)
    assert read is not None
    outcomes = await fs.apply_changes(
        [
            WriteChange(await fs.resolve("new/a.txt"), "a\n"),
            WriteChange(keep, "v2\n", ReplaceIfVersion(read.version)),
            DeleteChange(await fs.resolve("old.txt")),
        ]
    )
    assert [type(o).__name__ for o in outcomes] == [
        "FsWriteOutcome",
        "FsWriteOutcome",
        "FsDeleteOutcome",
    ]
    info = await fs.stat(keep)
    assert info is not None and outcomes[1].version == info.version  # type: ignore[union-attr]
    assert everything(sftp_scratch) == ["keep.txt", "new", "new/a.txt"]
    assert sftp_scratch.get("keep.txt") == b"v2\n"


async def test_a_batch_with_one_stale_guard_changes_nothing(sftp_scratch: SftpScratch) -> None:
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


async def test_a_batch_of_two_changes_of_one_target_is_a_value_error(
    sftp_scratch: SftpScratch,
) -> None:
    fs = sftp_scratch.fs
    a = await fs.resolve("a.txt")
    with pytest.raises(ValueError, match="two changes of one target"):
        await fs.apply_changes([WriteChange(a, "1\n"), DeleteChange(a)])


async def test_a_cancelled_recursive_delete_leaves_the_tree_whole_or_gone(
    sftp_scratch: SftpScratch,
) -> None:
    for i in range(300):
        sftp_scratch.put(f"tree/{i // 30}/{i}.txt", b"x\n")
    fs = sftp_scratch.fs
    target = await fs.resolve("tree")
    with anyio.move_on_after(0.05):
        await fs.delete(target, recursive=True)
    left = everything(sftp_scratch)
    assert left == [] or (len(left) == 310 and left[0] == "tree")


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
