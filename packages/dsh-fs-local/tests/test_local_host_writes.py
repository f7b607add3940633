"""What the host filesystem adds to writes and edits (SPEC 3.1 write_text / edit_text):
symlinks, permission bits, owners, hard links, special files, leftovers.

Kept as one file: each case is a property of the host's files that a write must keep.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from subprocess import CompletedProcess
from typing import Any

import anyio
import pytest
from dsh_fs import (
    EditGuard,
    FsEditRequest,
    FsError,
    FsErrorCode,
    ReplaceIfVersion,
)
from dsh_fs.testing import Scratch
from dsh_fs.testing._expect import expect_fs_error
from dsh_fs_local import LocalFileSystem, new_file_mode, process_umask

pytestmark = pytest.mark.anyio


def at(scratch: Scratch, rel: str) -> str:
    return os.path.join(scratch.root, rel)


def mode_of(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def is_link(path: str) -> bool:
    return stat.S_ISLNK(os.lstat(path).st_mode)


def is_dir(path: str) -> bool:
    return stat.S_ISDIR(os.lstat(path).st_mode)


def touch(path: str) -> None:
    with open(path, "w"):
        pass


async def test_write_through_a_symlink_keeps_the_link_and_updates_its_file(
    scratch: Scratch,
) -> None:
    scratch.put("real/f.txt", b"old\n")
    scratch.symlink("link.txt", "real/f.txt")
    target = await scratch.fs.resolve("link.txt")
    outcome = await scratch.fs.write_text(target, "new\n")
    assert is_link(at(scratch, "link.txt"))
    assert os.readlink(at(scratch, "link.txt")) == "real/f.txt"
    assert scratch.get("real/f.txt") == b"new\n"
    assert outcome.before == "old\n"
    info = await scratch.fs.stat(await scratch.fs.resolve("real/f.txt"))
    assert info is not None and info.version == outcome.version


async def test_edit_through_a_symlinked_directory_keeps_the_link(scratch: Scratch) -> None:
    scratch.put("real/f.txt", b"alpha beta\n")
    scratch.symlink("alias", "real")
    target = await scratch.fs.resolve("alias/f.txt")
    await scratch.fs.edit_text(target, FsEditRequest("beta", "gamma"))
    assert is_link(at(scratch, "alias"))
    assert scratch.get("real/f.txt") == b"alpha gamma\n"


async def test_write_through_a_dangling_symlink_creates_the_file_it_points_to(
    scratch: Scratch,
) -> None:
    scratch.mkdir("d")
    scratch.symlink("link.txt", "d/later.txt")
    outcome = await scratch.fs.write_text(await scratch.fs.resolve("link.txt"), "hi\n")
    assert outcome.operation == "create"
    assert is_link(at(scratch, "link.txt"))
    assert scratch.get("d/later.txt") == b"hi\n"


@pytest.mark.parametrize("mode", [0o755, 0o600, 0o640, 0o4755])
async def test_an_existing_file_keeps_its_permission_bits(scratch: Scratch, mode: int) -> None:
    scratch.put("tool.sh", b"#!/bin/sh\necho old\n")
    os.chmod(at(scratch, "tool.sh"), mode)
    target = await scratch.fs.resolve("tool.sh")
    await scratch.fs.write_text(target, "#!/bin/sh\necho new\n")
    assert mode_of(at(scratch, "tool.sh")) == mode
    await scratch.fs.edit_text(target, FsEditRequest("new", "newer"))
    assert mode_of(at(scratch, "tool.sh")) == mode


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
async def test_a_new_file_gets_0666_minus_the_umask_in_force_at_the_write(
    scratch: Scratch, mask: int
) -> None:
    """The umask is read at each write, not once at import: a host that tightens
    it later (to 077) gets 0600 files from then on (issue 19: 0644 before)."""
    previous = os.umask(mask)
    try:
        assert process_umask() == mask == _current_umask()  # read, and left as it was
        assert new_file_mode() == 0o666 & ~mask
        await scratch.fs.write_text(await scratch.fs.resolve("new.txt"), "x")
        assert _current_umask() == mask
        touch(at(scratch, "plain.txt"))
    finally:
        os.umask(previous)
    assert mode_of(at(scratch, "new.txt")) == 0o666 & ~mask == mode_of(at(scratch, "plain.txt"))


def test_without_proc_the_umask_is_still_read_and_left_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_open = os.open

    def no_proc(path: str, *args: Any, **kwargs: Any) -> int:
        if path == "/proc/self/status":
            raise FileNotFoundError(2, "No such file or directory")
        return real_open(path, *args, **kwargs)

    previous = os.umask(0o027)
    try:
        monkeypatch.setattr(os, "open", no_proc)
        assert process_umask() == 0o027
        assert new_file_mode() == 0o640
        monkeypatch.undo()
        assert _current_umask() == 0o027
    finally:
        os.umask(previous)


def _current_umask() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    raise AssertionError("no Umask line")


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
async def test_an_existing_file_keeps_its_owner_and_group(scratch: Scratch) -> None:
    scratch.put("owned.txt", b"x\n")
    os.chown(at(scratch, "owned.txt"), 65534, 65534)
    target = await scratch.fs.resolve("owned.txt")
    await scratch.fs.write_text(target, "y\n")
    info = os.stat(at(scratch, "owned.txt"))
    assert (info.st_uid, info.st_gid) == (65534, 65534)


def uncontained(scratch: Scratch) -> LocalFileSystem:
    """The same tree without containment (``roots=None``): where the in-place rule lives."""
    return LocalFileSystem(scratch.root, roots=None)


async def test_without_roots_a_hard_linked_file_keeps_its_inode_and_every_name_sees_the_change(
    scratch: Scratch,
) -> None:
    scratch.put("a/one.txt", b"shared old\n")
    os.makedirs(at(scratch, "b"))
    os.link(at(scratch, "a/one.txt"), at(scratch, "b/two.txt"))
    inode = os.stat(at(scratch, "a/one.txt")).st_ino
    fs = uncontained(scratch)
    target = await fs.resolve("a/one.txt")
    outcome = await fs.write_text(target, "shared new, longer than before\n")
    assert outcome.before == "shared old\n"
    assert scratch.get("b/two.txt") == b"shared new, longer than before\n"
    await fs.edit_text(target, FsEditRequest("longer than before", "short"))
    assert scratch.get("b/two.txt") == b"shared new, short\n"
    assert (
        os.stat(at(scratch, "a/one.txt")).st_ino
        == inode
        == os.stat(at(scratch, "b/two.txt")).st_ino
    )
    assert os.stat(at(scratch, "a/one.txt")).st_nlink == 2
    assert scratch.names("a") == ["one.txt"]  # the backup is gone
    info = await fs.stat(target)
    assert info is not None and info.size == len(b"shared new, short\n")


@pytest.mark.parametrize("contained", [True, False], ids=["contained", "roots=None"])
async def test_hard_linked_rewrite_moves_the_version_each_time(
    scratch: Scratch, contained: bool
) -> None:
    scratch.put("one.txt", b"v0")
    os.link(at(scratch, "one.txt"), at(scratch, "two.txt"))
    fs = scratch.fs if contained else uncontained(scratch)
    target = await fs.resolve("one.txt")
    seen = set()
    for text in ("v1", "v2", "v3"):
        outcome = await fs.write_text(target, text)
        info = await fs.stat(target)
        assert info is not None and info.version == outcome.version
        seen.add(outcome.version)
    assert len(seen) == 3


FIFO_CHILD = r"""
import json, os, sys, anyio
from dsh_fs import FsEditRequest, FsError
from dsh_fs_local import LocalFileSystem

async def main(path):
    fs = LocalFileSystem(os.path.dirname(path))
    target = await fs.resolve(path)
    calls = {
        "read": lambda: fs.read_text(target),
        "stream": lambda: anext(aiter(fs.stream_text(target))),
        "write": lambda: fs.write_text(target, "x"),
        "edit": lambda: fs.edit_text(target, FsEditRequest("a", "b")),
    }
    results = {}
    for verb, call in calls.items():
        with anyio.fail_after(1):  # "within a second"
            try:
                await call()
                results[verb] = None
            except FsError as err:
                results[verb] = [str(err), err.code.value]
    print(json.dumps(results))

anyio.run(main, sys.argv[1])
"""


def test_a_fifo_is_refused_within_a_second_without_being_opened(
    scratch: Scratch, run_python: Callable[..., CompletedProcess[str]]
) -> None:
    """A blocking open would hang a worker thread that no cancel scope can stop,
    so the check runs in a child process with a hard timeout."""
    scratch.make_other("pipe")
    path = at(scratch, "pipe")
    done = run_python(FIFO_CHILD, path, timeout=20)
    results = json.loads(done.stdout)
    assert results == {
        verb: [f'cannot {word} "{path}": not a regular file', "FS_NOT_REGULAR_FILE"]
        for verb, word in [
            ("read", "read"),
            ("stream", "read"),
            ("write", "write"),
            ("edit", "edit"),
        ]
    }
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    assert scratch.names() == ["pipe"]


async def test_writing_below_a_regular_file_fails_not_found(scratch: Scratch) -> None:
    target = await scratch.fs.resolve("p/new.txt")
    scratch.put("p", b"file")
    await expect_fs_error(
        scratch.fs.write_text(target, "x"),
        FsErrorCode.FS_NOT_FOUND,
        f'cannot write "{at(scratch, "p/new.txt")}": a parent path segment is not a directory',
    )
    assert scratch.get("p") == b"file"


async def test_reading_below_a_regular_file_is_not_found(scratch: Scratch) -> None:
    target = await scratch.fs.resolve("p/f.txt")
    scratch.put("p", b"file")
    await expect_fs_error(
        scratch.fs.read_text(target),
        FsErrorCode.FS_NOT_FOUND,
        f'cannot read "{at(scratch, "p/f.txt")}": not found',
    )


async def test_writing_onto_a_directory_fails_and_leaves_nothing_behind(scratch: Scratch) -> None:
    scratch.mkdir("d/inner")
    await expect_fs_error(
        scratch.fs.write_text(await scratch.fs.resolve("d/inner"), "x"),
        FsErrorCode.FS_NOT_REGULAR_FILE,
        f'cannot write "{at(scratch, "d/inner")}": not a regular file',
    )
    assert scratch.names("d") == ["inner"]


async def test_a_directory_appearing_before_the_rename_fails_cleanly(
    scratch: Scratch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary file is removed when publishing fails after it was written."""
    target = await scratch.fs.resolve("d/f.txt")
    scratch.mkdir("d")
    real_rename = os.rename

    def rename_onto_new_directory(src: str, dst: str, **dir_fds: int) -> None:
        directory = dir_fds["dst_dir_fd"]
        os.mkdir(dst, dir_fd=directory)
        os.mkdir(os.path.join(f"/proc/self/fd/{directory}", dst, "occupied"))
        real_rename(src, dst, **dir_fds)

    monkeypatch.setattr(os, "rename", rename_onto_new_directory)
    with pytest.raises(FsError) as caught:
        await scratch.fs.write_text(target, "x")
    assert caught.value.code in (FsErrorCode.FS_IO_ERROR, FsErrorCode.FS_NOT_REGULAR_FILE)
    assert isinstance(caught.value.__cause__, OSError)
    assert scratch.names("d") == ["f.txt"]
    assert is_dir(at(scratch, "d/f.txt"))


async def test_a_failing_fsync_removes_the_temporary_and_keeps_the_target(
    scratch: Scratch, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch.put("f.txt", b"old\n")
    target = await scratch.fs.resolve("f.txt")

    def broken_fsync(fd: int) -> None:
        raise OSError(5, os.strerror(5))

    monkeypatch.setattr(os, "fsync", broken_fsync)
    await expect_fs_error(
        scratch.fs.write_text(target, "new\n"),
        FsErrorCode.FS_IO_ERROR,
        f'cannot write "{at(scratch, "f.txt")}": Input/output error',
    )
    assert scratch.names() == ["f.txt"]
    assert scratch.get("f.txt") == b"old\n"


async def test_a_failing_in_place_rewrite_restores_a_hard_linked_file(
    scratch: Scratch, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch.put("one.txt", b"old content\n")
    os.link(at(scratch, "one.txt"), at(scratch, "two.txt"))
    fs = uncontained(scratch)
    target = await fs.resolve("one.txt")
    real_ftruncate = os.ftruncate
    calls = []

    def failing_once(fd: int, length: int) -> None:
        calls.append(length)
        if len(calls) == 1:
            raise OSError(28, os.strerror(28))
        real_ftruncate(fd, length)

    monkeypatch.setattr(os, "ftruncate", failing_once)
    with pytest.raises(FsError) as caught:
        await fs.write_text(target, "new")
    assert caught.value.code == FsErrorCode.FS_IO_ERROR
    assert scratch.get("two.txt") == b"old content\n"
    assert scratch.names() == ["one.txt", "two.txt"]


async def test_stale_temporaries_of_dead_processes_are_removed_by_the_next_write(
    scratch: Scratch,
) -> None:
    dead = _dead_pid()
    live = os.getppid()
    leftovers = {
        f".f.txt.dsh-{dead}-0badc0de.tmp": True,
        f".other.txt.dsh-{dead}-12345678.tmp": True,
        f".f.txt.dsh-{live}-0badc0de.tmp": False,  # its process still runs
        f".f.txt.dsh-{os.getpid()}-abcdef01.tmp": True,  # our pid, but not in flight
        f".f.txt.dsh-{dead}-0badc0de.bak": False,  # a backup is recovery data
        ".f.txt.dsh-notapid-0badc0de.tmp": False,
        "f.txt.dsh-1-0badc0de.tmp": False,  # not hidden: not ours
    }
    for name in leftovers:
        scratch.put(f"d/{name}", b"partial")
    await scratch.fs.write_text(await scratch.fs.resolve("d/f.txt"), "x")
    kept = sorted(name for name, removed in leftovers.items() if not removed)
    assert scratch.names("d") == sorted([*kept, "f.txt"])


async def test_a_temporary_left_after_a_clean_write_is_removed_by_the_next_write(
    scratch: Scratch,
) -> None:
    fs = scratch.fs
    target = await fs.resolve("d/f.txt")
    await fs.write_text(target, "one")  # the directory is left clean, and remembered so
    await anyio.sleep(0.02)  # kernels before 6.13 stamp a directory's ctime coarsely
    scratch.put(f"d/.f.txt.dsh-{_dead_pid()}-0badc0de.tmp", b"partial")
    await fs.write_text(target, "two")
    assert scratch.names("d") == ["f.txt"]


async def test_a_live_writers_temporary_is_looked_at_again_once_its_process_is_gone(
    scratch: Scratch,
) -> None:
    fs = scratch.fs
    target = await fs.resolve("d/f.txt")
    writer = _sleeping_process()
    try:
        scratch.put(f"d/.f.txt.dsh-{writer.pid}-0badc0de.tmp", b"in flight")
        await fs.write_text(target, "one")
        assert scratch.names("d") == [f".f.txt.dsh-{writer.pid}-0badc0de.tmp", "f.txt"]
    finally:
        writer.kill()
        writer.wait()
    # Nothing changed in the directory but our own write: the temporary that
    # write had to keep is still looked at, and now removed.
    await fs.write_text(target, "two")
    assert scratch.names("d") == ["f.txt"]


async def test_a_directory_left_clean_and_unchanged_is_not_listed_again(
    scratch: Scratch, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed: list[object] = []
    real_listdir = os.listdir

    def counting_listdir(path: object = ".") -> list[str]:
        listed.append(path)
        return real_listdir(path)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(os, "listdir", counting_listdir)
    fs = scratch.fs
    target = await fs.resolve("d/f.txt")
    await fs.write_text(target, "one")
    await fs.write_text(target, "two")
    await fs.edit_text(target, FsEditRequest("two", "three"))
    assert len(listed) == 1  # swept once; the next mutations found it unchanged
    await anyio.sleep(0.02)  # kernels before 6.13 stamp a directory's ctime coarsely
    touch(at(scratch, "d/other.txt"))  # a change by someone else: look again
    await fs.write_text(target, "four")
    assert len(listed) == 2


def _sleeping_process() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def test_edit_of_a_missing_parent_fails_stale_without_creating_it(scratch: Scratch) -> None:
    target = await scratch.fs.resolve("no/such/f.txt")
    with pytest.raises(FsError) as caught:
        await scratch.fs.edit_text(target, FsEditRequest("a", "b"), EditGuard("v"))
    assert caught.value.code == FsErrorCode.FS_STALE_VERSION
    with pytest.raises(FsError) as caught:
        await scratch.fs.write_text(target, "x", ReplaceIfVersion("v"))
    assert (
        str(caught.value) == f'cannot write "{at(scratch, "no/such/f.txt")}": file no longer exists'
    )
    assert scratch.names() == []


async def test_symlink_loop_as_a_write_target_is_an_io_error(scratch: Scratch) -> None:
    scratch.put("f.txt", b"x")
    target = await scratch.fs.resolve("f.txt")
    scratch.remove("f.txt")
    scratch.symlink("f.txt", "f.txt")
    for call in (
        scratch.fs.write_text(target, "y"),
        scratch.fs.read_text(target),
        scratch.fs.edit_text(target, FsEditRequest("x", "y")),
        scratch.fs.stat(target),
    ):
        with pytest.raises(FsError) as caught:
            await call
        assert caught.value.code == FsErrorCode.FS_IO_ERROR
        assert str(caught.value).endswith(": Too many levels of symbolic links")
    assert is_link(at(scratch, "f.txt"))


async def test_content_that_is_not_encodable_fails_not_text(scratch: Scratch) -> None:
    target = await scratch.fs.resolve("f.txt")
    await expect_fs_error(
        scratch.fs.write_text(target, "lone \ud800 surrogate"),
        FsErrorCode.FS_NOT_TEXT,
        f'cannot write "{at(scratch, "f.txt")}": invalid UTF-8 text',
    )
    assert scratch.names() == []


async def test_a_file_growing_during_a_stream_is_read_to_its_size_when_opened(
    scratch: Scratch,
) -> None:
    scratch.put("build.log", b"line\n" * 500_000)  # 2.5 MB: three chunks
    target = await scratch.fs.resolve("build.log")
    chunks = 0
    total = 0
    async for chunk in scratch.fs.stream_text(target):
        chunks += 1
        total += len(chunk)
        append_to(at(scratch, "build.log"), b"more\n" * 400_000)
        assert chunks < 10, "the stream is chasing a growing file"
    assert total == len(b"line\n" * 500_000)


async def test_read_text_of_a_growing_file_is_the_file_as_opened(scratch: Scratch) -> None:
    scratch.put("log.txt", b"a\n" * 1000)
    target = await scratch.fs.resolve("log.txt")
    assert await scratch.fs.read_text(target) == "a\n" * 1000


async def test_a_pseudo_file_reporting_size_zero_is_read_to_its_end(scratch: Scratch) -> None:
    fs = LocalFileSystem(scratch.root, read_only_roots=["/proc"])
    target = await fs.resolve("/proc/self/status")
    info = await fs.stat(target)
    assert info is not None and info.size == 0
    text = await fs.read_text(target)
    streamed = "".join([chunk async for chunk in fs.stream_text(target)])
    assert text.startswith("Name:") and streamed.startswith("Name:")


def append_to(path: str, data: bytes) -> None:
    with open(path, "ab") as out:
        out.write(data)


async def test_a_failed_write_removes_the_directories_it_created(
    scratch: Scratch, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch.mkdir("keep")
    target = await scratch.fs.resolve("keep/new/deeper/f.txt")

    def broken_fsync(fd: int) -> None:
        raise OSError(27, os.strerror(27))

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(FsError) as caught:
        await scratch.fs.write_text(target, "x")
    assert str(caught.value) == (
        f'cannot write "{at(scratch, "keep/new/deeper/f.txt")}": File too large'
    )
    assert scratch.names() == ["keep"]
    assert scratch.names("keep") == []


async def test_an_edit_written_in_pieces_survives_short_writes(
    scratch: Scratch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit's bytes go out as pieces (views of the old bytes around the new string);
    a kernel that takes a few bytes per ``writev`` still gets every byte, in order."""
    real_writev = os.writev
    calls = 0

    def short_writev(fd: int, buffers: list[memoryview]) -> int:
        nonlocal calls
        calls += 1
        return real_writev(fd, [buffers[0][:3]])

    scratch.put("f.txt", b"one\r\ntwo\r\nthree\r\n")
    target = await scratch.fs.resolve("f.txt")
    monkeypatch.setattr(os, "writev", short_writev)
    await scratch.fs.edit_text(target, FsEditRequest("two", "2\nand a half"))
    assert scratch.get("f.txt") == b"one\r\n2\r\nand a half\r\nthree\r\n"
    assert calls > 3
