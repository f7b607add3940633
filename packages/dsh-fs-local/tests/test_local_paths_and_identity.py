"""Resolution, identity and metadata on the host filesystem (SPEC 3.1 resolve, stat, lstat)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import anyio
import pytest
from dsh_fs import FsError, FsErrorCode, FsTarget
from dsh_fs.testing import Scratch
from dsh_fs.testing._expect import expect_fs_error
from dsh_fs_local import LocalFileSystem

pytestmark = pytest.mark.anyio


def at(scratch: Scratch, rel: str) -> str:
    return os.path.join(scratch.root, rel)


def overwrite_in_place(path: str, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.write(data)


async def test_default_cwd_is_the_process_working_directory_at_construction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fs = LocalFileSystem()
    monkeypatch.chdir("/")
    target = await fs.resolve("a.txt")
    assert target.display_path == os.path.join(str(tmp_path), "a.txt")


async def test_without_roots_cwd_is_only_a_default(scratch: Scratch) -> None:
    fs = LocalFileSystem(scratch.root, roots=None)
    target = await fs.resolve("../outside.txt")
    assert target.display_path == os.path.join(os.path.dirname(scratch.root), "outside.txt")
    assert (await fs.resolve("/etc/hostname")).display_path == "/etc/hostname"


async def test_display_path_is_normalized_but_not_realpathed(scratch: Scratch) -> None:
    scratch.mkdir("real")
    scratch.symlink("alias", "real")
    target = await scratch.fs.resolve("./alias//x/../f.txt")
    assert target.display_path == at(scratch, "alias/f.txt")
    assert target.target_key == at(scratch, "real/f.txt")


async def test_symlink_aliases_share_one_key_and_one_version(scratch: Scratch) -> None:
    scratch.put("dir/real.txt", b"text\n")
    scratch.symlink("abs-link", at(scratch, "dir/real.txt"))
    scratch.symlink("dir/rel-link", "real.txt")
    scratch.symlink("dir-alias", "dir")
    fs = scratch.fs
    targets = [
        await fs.resolve(p)
        for p in ("dir/real.txt", "abs-link", "dir/rel-link", "dir-alias/real.txt")
    ]
    assert {t.target_key for t in targets} == {at(scratch, "dir/real.txt")}
    versions = set()
    for t in targets:
        info = await fs.stat(t)
        assert info is not None
        versions.add(info.version)
    assert len(versions) == 1


async def test_dangling_symlink_resolves_to_the_file_it_points_to(scratch: Scratch) -> None:
    scratch.mkdir("d")
    scratch.symlink("link.txt", "d/later.txt")
    target = await scratch.fs.resolve("link.txt")
    assert target.target_key == at(scratch, "d/later.txt")
    assert await scratch.fs.stat(target) is None


async def test_symlink_loop_fails_resolve_with_an_io_error_naming_the_path(
    scratch: Scratch,
) -> None:
    scratch.symlink("loop-a", "loop-b")
    scratch.symlink("loop-b", "loop-a")
    await expect_fs_error(
        scratch.fs.resolve("loop-a/f.txt"),
        FsErrorCode.FS_IO_ERROR,
        f'cannot resolve "{at(scratch, "loop-a/f.txt")}": Too many levels of symbolic links',
    )


async def test_path_below_a_regular_file_fails_resolve(scratch: Scratch) -> None:
    scratch.put("file.txt", b"x")
    await expect_fs_error(
        scratch.fs.resolve("file.txt/child/deeper"),
        FsErrorCode.FS_NOT_FOUND,
        f'cannot resolve "{at(scratch, "file.txt/child/deeper")}": '
        "a parent path segment is not a directory",
    )


async def test_stat_is_none_when_a_parent_became_a_file_after_resolve(
    scratch: Scratch,
) -> None:
    target = await scratch.fs.resolve("p/x.txt")
    scratch.put("p", b"now a file")
    assert await scratch.fs.stat(target) is None


async def test_lstat_reports_a_symlink_and_stat_follows_it(scratch: Scratch) -> None:
    scratch.put("f.txt", b"12345")
    scratch.symlink("l", "f.txt")
    link = await scratch.fs.lstat("l")
    assert link is not None and link.type == "symlink"
    followed = await scratch.fs.stat(await scratch.fs.resolve("l"))
    assert followed is not None and (followed.type, followed.size) == ("file", 5)


async def test_version_moves_on_a_same_size_rewrite_with_restored_mtime(
    scratch: Scratch,
) -> None:
    scratch.put("f.txt", b"aaaa")
    target = await scratch.fs.resolve("f.txt")
    first = await scratch.fs.stat(target)
    stat_before = os.stat(target.target_key)
    overwrite_in_place(target.target_key, b"bbbb")
    os.utime(target.target_key, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))
    second = await scratch.fs.stat(target)
    assert first is not None and second is not None
    assert first.version != second.version


async def test_fifo_is_other_in_stat_and_lstat(scratch: Scratch) -> None:
    scratch.make_other("pipe")
    info = await scratch.fs.stat(await scratch.fs.resolve("pipe"))
    assert info is not None and (info.type, info.size) == ("other", None)
    path_info = await scratch.fs.lstat("pipe")
    assert path_info is not None and path_info.type == "other"


async def test_listing_follows_symlinks_and_resolves_only_them(scratch: Scratch) -> None:
    scratch.put("d/file.txt", b"abc")
    scratch.mkdir("d/sub")
    scratch.mkdir("elsewhere")
    scratch.symlink("d/to-dir", "../elsewhere")
    scratch.symlink("d/to-file", "file.txt")
    scratch.symlink("d/broken", "missing")
    scratch.make_other("d/pipe")
    listed = await scratch.fs.list_dir(await scratch.fs.resolve("d"))
    by_name = {e.name: e for e in listed}
    assert {n: e.type for n, e in by_name.items()} == {
        "file.txt": "file",
        "sub": "directory",
        "to-dir": "directory",
        "to-file": "file",
        "broken": "other",
        "pipe": "other",
    }
    assert by_name["to-dir"].target.target_key == at(scratch, "elsewhere")
    assert by_name["to-dir"].target.display_path == at(scratch, "d/to-dir")
    assert by_name["to-file"].target.target_key == at(scratch, "d/file.txt")
    assert by_name["sub"].target.target_key == at(scratch, "d/sub")
    assert all(e.version is None and e.size is None for e in listed)


async def test_listing_with_stat_reports_the_versions_stat_reports(scratch: Scratch) -> None:
    scratch.put("d/file.txt", b"abc")
    scratch.symlink("d/to-file", "file.txt")
    scratch.mkdir("d/sub")
    listed = await scratch.fs.list_dir(await scratch.fs.resolve("d"), stat=True)
    for entry in listed:
        info = await scratch.fs.stat(entry.target)
        assert info is not None
        assert entry.version == info.version
        assert entry.size == (3 if entry.type == "file" else None)


async def test_listing_a_path_below_a_file_is_not_found(scratch: Scratch) -> None:
    target = await scratch.fs.resolve("p/d")
    scratch.put("p", b"file")
    await expect_fs_error(
        scratch.fs.list_dir(target),
        FsErrorCode.FS_NOT_FOUND,
        f'cannot list "{at(scratch, "p/d")}": not found',
    )


async def test_the_local_entry_point_builds_a_local_file_system(tmp_path: Path) -> None:
    from dsh_fs import load_backend

    fs = load_backend("local", cwd=str(tmp_path))
    assert isinstance(fs, LocalFileSystem)
    assert (await fs.resolve("x")).display_path == os.path.join(str(tmp_path), "x")


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("a\x00b.txt", "path contains a NUL byte"),
        ("x\ud800.txt", "path contains an unpaired surrogate"),
    ],
)
async def test_a_path_no_file_can_have_fails_resolve_and_lstat(
    scratch: Scratch, path: str, why: str
) -> None:
    for call in (scratch.fs.resolve(path), scratch.fs.lstat(path)):
        await expect_fs_error(
            call,
            FsErrorCode.FS_NOT_FOUND,
            f'cannot resolve "{at(scratch, path)}": {why}',
        )


async def test_an_undecodable_file_name_round_trips(scratch: Scratch) -> None:
    name = os.fsdecode(b"caf\xe9.txt")  # Latin-1 bytes: U+DCE9 under surrogateescape
    target = await scratch.fs.resolve(name)
    await scratch.fs.write_text(target, "x")
    assert os.fsencode(at(scratch, name)) in [
        os.fsencode(os.path.join(scratch.root, n)) for n in scratch.names()
    ]
    listed = await scratch.fs.list_dir(await scratch.fs.resolve("."))
    assert [e.name for e in listed] == [name]
    assert listed[0].target == target


async def test_without_roots_an_object_without_a_path_keeps_a_path_key(scratch: Scratch) -> None:
    read_end, write_end = os.pipe()
    try:
        link = at(scratch, "to-pipe")
        os.symlink(f"/proc/self/fd/{read_end}", link)
        fs = LocalFileSystem(scratch.root, roots=None)
        target = await fs.resolve("to-pipe")
        assert target.target_key.startswith("/")
        info = await fs.stat(target)
        assert info is not None and info.type == "other"
        with anyio.fail_after(2), pytest.raises(FsError) as caught:
            await fs.read_text(target)
        assert caught.value.code == FsErrorCode.FS_NOT_REGULAR_FILE
    finally:
        os.close(read_end)
        os.close(write_end)


def descriptors_of(directory: str) -> int:
    """How many of this process's descriptors are open on ``directory``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile (the listing's own)
            count += os.readlink(f"/proc/self/fd/{fd}") == directory
    return count


async def test_a_write_through_a_link_loop_without_roots_leaks_no_descriptor(
    scratch: Scratch,
) -> None:
    # The directory held to write in is closed when following the final link fails.
    fs = LocalFileSystem(scratch.root, roots=None)
    scratch.symlink("loop", "loop")
    target = FsTarget(at(scratch, "loop"), at(scratch, "loop"))
    before = descriptors_of(scratch.root)
    for _ in range(20):
        await expect_fs_error(
            fs.write_text(target, "x"),
            FsErrorCode.FS_IO_ERROR,
            f'cannot write "{at(scratch, "loop")}": Too many levels of symbolic links',
        )
    assert descriptors_of(scratch.root) == before
