"""Behaviour of MemoryFileSystem: the primitives, with the exact model-facing messages.

Kept as one file: the memory backend's own cases, in the order of the seam's primitives.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest
from dsh_fs import (
    CreateIfAbsent,
    EditGuard,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsTarget,
    ReplaceIfVersion,
)
from dsh_fs.testing._expect import expect_fs_error, read_via
from dsh_fs_memory import STREAM_CHUNK_BYTES, MemoryFileSystem

pytestmark = pytest.mark.anyio


# ---------------------------------------------------------------- resolve


async def test_resolve_gives_absolute_normalized_display_path() -> None:
    fs = MemoryFileSystem(cwd="/w")
    target = await fs.resolve("./a/../b//c.txt")
    assert target == FsTarget("/w/b/c.txt", "/w/b/c.txt")


async def test_resolve_absolute_path_ignores_cwd() -> None:
    fs = MemoryFileSystem(cwd="/w", roots=None)
    assert (await fs.resolve("/etc/x", cwd="/other")).display_path == "/etc/x"


async def test_resolve_relative_path_uses_given_cwd() -> None:
    fs = MemoryFileSystem(cwd="/w", roots=None)
    assert (await fs.resolve("x", cwd="/p")).display_path == "/p/x"
    assert (await fs.resolve("x", cwd="sub")).display_path == "/w/sub/x"


async def test_resolve_collapses_leading_double_slash() -> None:
    fs = MemoryFileSystem()
    assert (await fs.resolve("//a//b")).display_path == "/a/b"


async def test_resolve_dotdot_above_root_stays_at_root() -> None:
    fs = MemoryFileSystem(cwd="/w", roots=None)
    assert (await fs.resolve("../../..")).display_path == "/"


@pytest.mark.parametrize("path", ["", " ", "\t\n"])
async def test_resolve_of_empty_path_fails(path: str) -> None:
    fs = MemoryFileSystem()
    await expect_fs_error(
        fs.resolve(path), FsErrorCode.FS_NOT_FOUND, "file_path must be a non-empty string"
    )


async def test_resolve_through_a_file_segment_fails() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"f.txt": "x"})
    await expect_fs_error(
        fs.resolve("f.txt/deeper/x"),
        FsErrorCode.FS_NOT_FOUND,
        'cannot resolve "/w/f.txt/deeper/x": a parent path segment is not a directory',
    )


async def test_resolve_through_an_other_entry_fails() -> None:
    fs = MemoryFileSystem(cwd="/w")
    fs.add_other("fifo")
    await expect_fs_error(
        fs.resolve("fifo/x"),
        FsErrorCode.FS_NOT_FOUND,
        'cannot resolve "/w/fifo/x": a parent path segment is not a directory',
    )


async def test_symlink_aliases_share_one_key() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"/data/a.txt": "a"}, roots=None)
    fs.add_symlink("link.txt", "/data/a.txt")
    fs.add_symlink("dir", "../data")
    keys = {(await fs.resolve(p)).target_key for p in ["/data/a.txt", "link.txt", "dir/a.txt"]}
    assert keys == {"/data/a.txt"}


async def test_missing_tail_under_symlinked_directory_keys_through_the_link() -> None:
    fs = MemoryFileSystem(cwd="/w", roots=None)
    fs.mkdir("/real")
    fs.add_symlink("alias", "/real")
    target = await fs.resolve("alias/new/file.txt")
    assert target == FsTarget("/real/new/file.txt", "/w/alias/new/file.txt")
    await fs.write_text(target, "x")
    assert (await fs.resolve("/real/new/file.txt")).target_key == target.target_key


async def test_chained_relative_symlinks_resolve_from_their_own_directory() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"/a/b/t.txt": "t"}, roots=None)
    fs.add_symlink("/a/l1", "b/t.txt")
    fs.add_symlink("/w/l2", "../a/l1")
    assert (await fs.resolve("l2")).target_key == "/a/b/t.txt"


async def test_symlink_loop_fails_io_error_naming_the_path() -> None:
    fs = MemoryFileSystem(cwd="/w")
    fs.add_symlink("a", "b")
    fs.add_symlink("b", "a")
    err = await expect_fs_error(
        fs.resolve("a/x"),
        FsErrorCode.FS_IO_ERROR,
        'cannot resolve "/w/a/x": Too many levels of symbolic links',
    )
    assert isinstance(err.__cause__, OSError)


async def test_self_loop_fails_io_error() -> None:
    fs = MemoryFileSystem(cwd="/w")
    fs.add_symlink("self", "self")
    await expect_fs_error(
        fs.resolve("self"),
        FsErrorCode.FS_IO_ERROR,
        'cannot resolve "/w/self": Too many levels of symbolic links',
    )


async def test_resolving_again_after_the_tree_changed_gives_what_a_fresh_backend_gives() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"d/f.txt": "x", "/e/f.txt": "y"}, roots=None)
    first = await fs.resolve("d/f.txt")
    assert await fs.resolve("d/f.txt") == first == FsTarget("/w/d/f.txt", "/w/d/f.txt")
    assert await fs.resolve("f.txt", cwd="/w/d") == first
    # The parent becomes a file: resolving fails, as on a backend that never saw the path.
    fs.remove("d", recursive=True)
    fs.put_text("d", "now a file")
    await expect_fs_error(
        fs.resolve("d/f.txt"),
        FsErrorCode.FS_NOT_FOUND,
        'cannot resolve "/w/d/f.txt": a parent path segment is not a directory',
    )
    # The parent becomes a symlink: the key goes through it.
    fs.remove("d")
    fs.add_symlink("d", "/e")
    assert await fs.resolve("d/f.txt") == FsTarget("/e/f.txt", "/w/d/f.txt")
    # Without any symlink left, the same path keys to itself again.
    fs.remove("d")
    fs.put_text("d/f.txt", "z")
    assert await fs.resolve("d/f.txt") == first


async def test_a_symlink_added_later_is_followed_by_every_later_resolve() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a.txt": "a", "/data/b.txt": "b"}, roots=None)
    assert (await fs.resolve("a.txt")).target_key == "/w/a.txt"
    fs.remove("a.txt")
    fs.add_symlink("a.txt", "/data/b.txt")
    assert await fs.resolve("a.txt") == FsTarget("/data/b.txt", "/w/a.txt")


# ------------------------------------------------------------ stat, lstat


async def test_stat_reports_type_size_and_none_when_absent() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a.txt": "héllo"})
    fs.add_other("fifo")
    info = await fs.stat(await fs.resolve("a.txt"))
    assert info is not None and (info.type, info.size) == ("file", 6)
    directory = await fs.stat(await fs.resolve("."))
    assert directory is not None and directory.type == "directory"
    other = await fs.stat(await fs.resolve("fifo"))
    assert other is not None and other.type == "other"
    assert await fs.stat(await fs.resolve("missing")) is None


async def test_stat_is_none_when_a_parent_became_a_file() -> None:
    fs = MemoryFileSystem(cwd="/w")
    target = await fs.resolve("d/x.txt")
    fs.put_bytes("d", b"now a file")
    assert await fs.stat(target) is None


async def test_stat_of_dangling_symlink_is_none() -> None:
    fs = MemoryFileSystem(cwd="/w")
    fs.add_symlink("dangling", "nowhere")
    assert await fs.stat(await fs.resolve("dangling")) is None


async def test_stat_follows_a_symlink_created_after_resolve() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"real.txt": "abc"})
    target = await fs.resolve("later")
    fs.add_symlink("later", "real.txt")
    info = await fs.stat(target)
    assert info is not None and info.size == 3


async def test_stat_of_loop_created_after_resolve_fails_io_error() -> None:
    fs = MemoryFileSystem(cwd="/w")
    target = await fs.resolve("a")
    fs.add_symlink("a", "a")
    await expect_fs_error(
        fs.stat(target),
        FsErrorCode.FS_IO_ERROR,
        'cannot read "/w/a": Too many levels of symbolic links',
    )


async def test_lstat_does_not_follow_final_symlink() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a.txt": "abc"})
    fs.add_symlink("link", "a.txt")
    fs.add_symlink("dangling", "nowhere")
    link = await fs.lstat("link")
    assert link is not None and (link.type, link.size) == ("symlink", None)
    dangling = await fs.lstat("dangling")
    assert dangling is not None and dangling.type == "symlink"
    file_info = await fs.lstat("a.txt")
    assert file_info is not None and (file_info.type, file_info.size) == ("file", 3)
    assert await fs.lstat("missing") is None
    assert await fs.lstat("a.txt/x") is None


async def test_lstat_follows_symlinks_in_parent_segments() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"/real/f": "x"}, roots=None)
    fs.add_symlink("alias", "/real")
    info = await fs.lstat("alias/f")
    assert info is not None and info.type == "file"


async def test_version_moves_on_every_mutation() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a.txt": "one"})
    target = await fs.resolve("a.txt")
    seen = set()
    for step in range(3):
        info = await fs.stat(target)
        assert info is not None
        seen.add(info.version)
        if step == 0:
            out = await fs.write_text(target, "one")  # same content
            assert out.version == (await fs.stat(target) or info).version
        elif step == 1:
            fs.put_bytes("a.txt", b"one")  # same bytes, out of band
    edited = await fs.edit_text(target, FsEditRequest("one", "two"))
    final = await fs.stat(target)
    assert final is not None and final.version == edited.version
    seen.add(edited.version)
    assert len(seen) == 4


async def test_directory_version_moves_when_its_entries_change() -> None:
    fs = MemoryFileSystem(cwd="/w")
    here = await fs.resolve(".")
    before = await fs.stat(here)
    fs.put_bytes("new.txt", b"")
    after = await fs.stat(here)
    assert before is not None and after is not None and before.version != after.version


# ------------------------------------------------------------ read, stream


async def test_read_returns_text_byte_for_byte_without_bom() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a.txt": b"\xef\xbb\xbfline\r\nnext\r"})
    assert await fs.read_text(await fs.resolve("a.txt")) == "line\r\nnext\r"


async def test_read_errors_have_exact_messages() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"bin": b"ab\0cd", "bad": b"ok \xff"})
    fs.add_other("fifo")
    cases = [
        ("missing", FsErrorCode.FS_NOT_FOUND, 'cannot read "/w/missing": not found'),
        (".", FsErrorCode.FS_NOT_REGULAR_FILE, 'cannot read "/w": not a regular file'),
        ("fifo", FsErrorCode.FS_NOT_REGULAR_FILE, 'cannot read "/w/fifo": not a regular file'),
        ("bin", FsErrorCode.FS_NOT_TEXT, 'cannot read "/w/bin": binary file'),
        ("bad", FsErrorCode.FS_NOT_TEXT, 'cannot read "/w/bad": invalid UTF-8 text'),
    ]
    for path, code, message in cases:
        target = await fs.resolve(path)
        await expect_fs_error(fs.read_text(target), code, message)
        await expect_fs_error(read_via(fs, target, "stream_text"), code, message)


async def test_invalid_utf8_error_chains_the_decode_error() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"bad": b"\xc3"})
    err = await expect_fs_error(
        fs.read_text(await fs.resolve("bad")),
        FsErrorCode.FS_NOT_TEXT,
        'cannot read "/w/bad": invalid UTF-8 text',
    )
    assert isinstance(err.__cause__, UnicodeDecodeError)


async def test_nul_after_the_sniff_window_is_not_binary_for_reads() -> None:
    data = b"a" * 8192 + b"\0"
    fs = MemoryFileSystem(cwd="/w", files={"late": data})
    assert await fs.read_text(await fs.resolve("late")) == data.decode()


async def test_stream_equals_read_across_chunk_boundaries() -> None:
    text = "é" * (STREAM_CHUNK_BYTES // 2) + "x" + "€𝄞" * 40_000
    fs = MemoryFileSystem(cwd="/w", files={"big.txt": "\ufeff" + text})
    target = await fs.resolve("big.txt")
    chunks = [chunk async for chunk in fs.stream_text(target)]
    assert len(chunks) > 2
    # a chunk may carry the up to 3 bytes of a character split off the previous one
    assert max(len(c.encode()) for c in chunks) <= STREAM_CHUNK_BYTES + 3
    assert "".join(chunks) == text == await fs.read_text(target)


async def test_stream_of_empty_file_yields_nothing() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"e": ""})
    assert await read_via(fs, await fs.resolve("e"), "stream_text") == ""


async def test_stream_reports_invalid_utf8_after_earlier_chunks() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"tail": b"a" * (STREAM_CHUNK_BYTES * 2) + b"\xff"})
    await expect_fs_error(
        read_via(fs, await fs.resolve("tail"), "stream_text"),
        FsErrorCode.FS_NOT_TEXT,
        'cannot read "/w/tail": invalid UTF-8 text',
    )


async def test_stream_is_cancellable_between_chunks() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"big": b"a" * (STREAM_CHUNK_BYTES * 8)})
    target = await fs.resolve("big")
    received = 0
    with anyio.CancelScope() as scope:
        async for _ in fs.stream_text(target):
            received += 1
            scope.cancel()
    assert scope.cancelled_caught and received == 1


async def test_read_follows_symlinks() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"real.txt": "content"})
    fs.add_symlink("link", "real.txt")
    assert await fs.read_text(await fs.resolve("link")) == "content"


# -------------------------------------------------------------------- list


async def test_list_types_targets_and_stats() -> None:
    fs = MemoryFileSystem(
        cwd="/w", files={"a.txt": "abc", "sub/x": "", "/elsewhere/d/f": ""}, roots=None
    )
    fs.add_other("fifo")
    fs.add_symlink("to_dir", "/elsewhere/d")
    fs.add_symlink("to_file", "a.txt")
    fs.add_symlink("broken", "missing")
    entries = {e.name: e for e in await fs.list_dir(await fs.resolve("."))}
    assert {n: e.type for n, e in entries.items()} == {
        "a.txt": "file",
        "sub": "directory",
        "fifo": "other",
        "to_dir": "directory",
        "to_file": "file",
        "broken": "other",
    }
    assert entries["to_dir"].target == FsTarget("/elsewhere/d", "/w/to_dir")
    assert entries["sub"].target == FsTarget("/w/sub", "/w/sub")
    assert all(e.version is None and e.size is None for e in entries.values())

    stat_entries = {e.name: e for e in await fs.list_dir(await fs.resolve("."), stat=True)}
    a_info = await fs.stat(await fs.resolve("a.txt"))
    assert a_info is not None
    assert (stat_entries["a.txt"].version, stat_entries["a.txt"].size) == (a_info.version, 3)
    assert stat_entries["to_file"].size == 3
    assert stat_entries["sub"].version is not None and stat_entries["sub"].size is None
    assert stat_entries["broken"].version is None


async def test_list_of_root_joins_names_without_double_slash() -> None:
    fs = MemoryFileSystem(files={"/top.txt": ""})
    [entry] = await fs.list_dir(await fs.resolve("/"))
    assert entry.target == FsTarget("/top.txt", "/top.txt")


async def test_list_errors_have_exact_messages() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"f": "x"})
    await expect_fs_error(
        fs.list_dir(await fs.resolve("nope")),
        FsErrorCode.FS_NOT_FOUND,
        'cannot list "/w/nope": not found',
    )
    await expect_fs_error(
        fs.list_dir(await fs.resolve("f")),
        FsErrorCode.FS_NOT_DIRECTORY,
        'cannot list "/w/f": not a directory',
    )


# ------------------------------------------------------------------- write


async def test_write_creates_parents_and_reports_create_then_update() -> None:
    fs = MemoryFileSystem(cwd="/w")
    target = await fs.resolve("deep/er/new.txt")
    created = await fs.write_text(target, "a\r\nb")
    assert (created.operation, created.before, created.after) == ("create", None, "a\nb")
    assert fs.get_bytes("deep/er/new.txt") == b"a\r\nb"
    updated = await fs.write_text(target, "c")
    assert (updated.operation, updated.before, updated.after) == ("update", "a\nb", "c")


async def test_write_intent_messages() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a.txt": "x"})
    target = await fs.resolve("a.txt")
    await expect_fs_error(
        fs.write_text(target, "y", CreateIfAbsent()),
        FsErrorCode.FS_NOT_OBSERVED,
        'cannot overwrite existing "/w/a.txt" without reading it first',
    )
    await expect_fs_error(
        fs.write_text(target, "y", ReplaceIfVersion("not-a-version")),
        FsErrorCode.FS_STALE_VERSION,
        'cannot write "/w/a.txt": file changed since it was read',
    )
    gone = await fs.resolve("gone.txt")
    await expect_fs_error(
        fs.write_text(gone, "y", ReplaceIfVersion("1")),
        FsErrorCode.FS_STALE_VERSION,
        'cannot write "/w/gone.txt": file no longer exists',
    )
    assert fs.get_bytes("a.txt") == b"x"
    assert (await fs.write_text(gone, "new", CreateIfAbsent())).operation == "create"


async def test_write_to_non_regular_file_fails_before_the_intent() -> None:
    fs = MemoryFileSystem(cwd="/w")
    fs.add_other("fifo")
    for path in [".", "fifo"]:
        target = await fs.resolve(path)
        await expect_fs_error(
            fs.write_text(target, "x", ReplaceIfVersion("stale")),
            FsErrorCode.FS_NOT_REGULAR_FILE,
            f'cannot write "{target.display_path}": not a regular file',
        )


async def test_write_under_a_parent_that_became_a_file_fails() -> None:
    fs = MemoryFileSystem(cwd="/w")
    target = await fs.resolve("d/x.txt")
    fs.put_bytes("d", b"")
    await expect_fs_error(
        fs.write_text(target, "x"),
        FsErrorCode.FS_NOT_FOUND,
        'cannot write "/w/d/x.txt": a parent path segment is not a directory',
    )


async def test_write_through_symlink_keeps_the_link() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"real.txt": "old"})
    fs.add_symlink("link", "real.txt")
    await fs.write_text(await fs.resolve("link"), "new")
    assert fs.get_bytes("real.txt") == b"new"
    info = await fs.lstat("link")
    assert info is not None and info.type == "symlink"


async def test_write_through_dangling_symlink_creates_its_target() -> None:
    fs = MemoryFileSystem(cwd="/w")
    fs.add_symlink("link", "sub/made.txt")
    out = await fs.write_text(await fs.resolve("link"), "x")
    assert out.operation == "create"
    assert fs.get_bytes("sub/made.txt") == b"x"


async def test_write_of_binary_previous_content_has_no_before() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"b": b"\0\1\2"})
    out = await fs.write_text(await fs.resolve("b"), "text")
    assert (out.operation, out.before) == ("update", None)


async def test_write_stores_exact_content_but_after_omits_bom() -> None:
    fs = MemoryFileSystem(cwd="/w")
    out = await fs.write_text(await fs.resolve("bom.txt"), "\ufeffhi\r\n")
    assert out.after == "hi\n"
    assert fs.get_bytes("bom.txt") == b"\xef\xbb\xbfhi\r\n"


async def test_write_of_unencodable_text_fails_not_text() -> None:
    fs = MemoryFileSystem(cwd="/w")
    err = await expect_fs_error(
        fs.write_text(await fs.resolve("s.txt"), "bad \udc80"),
        FsErrorCode.FS_NOT_TEXT,
        'cannot write "/w/s.txt": invalid UTF-8 text',
    )
    assert isinstance(err.__cause__, UnicodeEncodeError)
    assert fs.get_bytes("s.txt") is None


# -------------------------------------------------------------------- edit


async def test_edit_messages() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a": "x x", "bin": b"a\0b", "bad": b"\xff"})
    fs.add_other("fifo")
    a = await fs.resolve("a")
    cases = [
        (
            "missing",
            "x",
            FsErrorCode.FS_NOT_FOUND,
            'cannot edit "/w/missing": not found',
        ),
        (".", "x", FsErrorCode.FS_NOT_REGULAR_FILE, 'cannot edit "/w": not a regular file'),
        ("fifo", "x", FsErrorCode.FS_NOT_REGULAR_FILE, 'cannot edit "/w/fifo": not a regular file'),
        ("bin", "a", FsErrorCode.FS_NOT_TEXT, 'cannot edit "/w/bin": binary file'),
        ("bad", "a", FsErrorCode.FS_NOT_TEXT, 'cannot edit "/w/bad": invalid UTF-8 text'),
        ("a", "", FsErrorCode.FS_EDIT_NOT_FOUND, "old_string must be a non-empty string"),
        ("a", "zz", FsErrorCode.FS_EDIT_NOT_FOUND, 'old_string was not found in "/w/a"'),
        (
            "a",
            "x",
            FsErrorCode.FS_AMBIGUOUS_EDIT,
            'old_string matched 2 times in "/w/a"; provide a more specific old_string '
            "or set replace_all to true",
        ),
    ]  # fmt: skip
    for path, old, code, message in cases:
        await expect_fs_error(
            fs.edit_text(await fs.resolve(path), FsEditRequest(old, "y")), code, message
        )
    assert fs.get_bytes("a") == b"x x"
    out = await fs.edit_text(a, FsEditRequest("x", "y", replace_all=True))
    assert (out.before, out.after, out.replacements) == ("x x", "y y", 2)


async def test_stale_guard_fails_before_matching() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a": "abc"})
    target = await fs.resolve("a")
    await expect_fs_error(
        fs.edit_text(target, FsEditRequest("not there", "y"), EditGuard("stale")),
        FsErrorCode.FS_STALE_VERSION,
        'cannot edit "/w/a": file changed since it was read',
    )


async def test_edit_restores_crlf_and_bom() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"win": b"\xef\xbb\xbfone\r\ntwo\r\n"})
    out = await fs.edit_text(await fs.resolve("win"), FsEditRequest("one\ntwo", "1\n2"))
    assert (out.before, out.after) == ("one\ntwo\n", "1\n2\n")
    assert fs.get_bytes("win") == b"\xef\xbb\xbf1\r\n2\r\n"


async def test_edit_with_unencodable_new_string_fails_not_text() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a": "abc"})
    await expect_fs_error(
        fs.edit_text(await fs.resolve("a"), FsEditRequest("b", "\ud800")),
        FsErrorCode.FS_NOT_TEXT,
        'cannot edit "/w/a": invalid UTF-8 text',
    )
    assert fs.get_bytes("a") == b"abc"


async def test_edit_through_symlink_changes_the_target_file() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"real": "abc"})
    fs.add_symlink("link", "real")
    await fs.edit_text(await fs.resolve("link"), FsEditRequest("b", "B"))
    assert fs.get_bytes("real") == b"aBc"


# ------------------------------------------------- concurrency, cancellation


async def test_guarded_writes_from_one_version_exactly_one_wins() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a": "0"})
    target = await fs.resolve("a")
    info = await fs.stat(target)
    assert info is not None
    results: list[str] = []

    async def attempt(i: int) -> None:
        try:
            await fs.write_text(target, str(i), ReplaceIfVersion(info.version))
            results.append("ok")
        except FsError as err:
            assert err.code == FsErrorCode.FS_STALE_VERSION
            results.append("stale")

    async with anyio.create_task_group() as tg:
        for i in range(10):
            tg.start_soon(attempt, i)
    assert sorted(results) == ["ok"] + ["stale"] * 9


async def test_concurrent_edits_lose_no_update_and_run_in_arrival_order() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"log": "start\n"})
    target = await fs.resolve("log")
    arrivals: list[int] = []  # the event loop picks the start order (trio shuffles it)

    async def append(i: int) -> None:
        arrivals.append(i)  # edit_text reaches the target's lock before it first yields
        await fs.edit_text(target, FsEditRequest("start\n", f"start\n{i}\n"))

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(append, i)
    lines = (fs.get_bytes("log") or b"").decode().splitlines()
    assert lines[0] == "start" and sorted(map(int, lines[1:])) == list(range(20))
    assert lines[1:] == [str(i) for i in reversed(arrivals)]
    assert len(fs._tree.locks) == 0


async def test_cancelled_write_leaves_the_target_unchanged() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a": "old"})
    target = await fs.resolve("a")
    before = await fs.stat(target)
    with anyio.CancelScope() as scope:
        scope.cancel()
        await fs.write_text(target, "new")
    assert scope.cancelled_caught
    assert fs.get_bytes("a") == b"old" and await fs.stat(target) == before
    assert len(fs._tree.locks) == 0


async def test_write_cancelled_while_waiting_for_the_lock_changes_nothing() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a": "old"})
    target = await fs.resolve("a")
    scope = anyio.CancelScope()

    async def waiter() -> None:
        with scope:
            await fs.write_text(target, "second")

    # Held here as a write in progress holds it.
    async with fs._tree.locks.hold(target.target_key), anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()  # the write waits for the lock
        scope.cancel()
    assert scope.cancelled_caught
    assert fs.get_bytes("a") == b"old"
    assert len(fs._tree.locks) == 0


async def test_cancelled_edit_leaves_the_target_unchanged() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a": "abc"})
    target = await fs.resolve("a")
    with anyio.CancelScope() as scope:
        scope.cancel()
        await fs.edit_text(target, FsEditRequest("b", "B"))
    assert scope.cancelled_caught and fs.get_bytes("a") == b"abc"


@pytest.mark.parametrize("verb", ["resolve", "stat", "lstat", "read", "list"])
async def test_reads_are_cancellable_in_a_cancelled_scope(verb: str) -> None:
    fs = MemoryFileSystem(cwd="/w", files={"a": "abc"})
    target = await fs.resolve("a")
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "resolve": lambda: fs.resolve("a"),
        "stat": lambda: fs.stat(target),
        "lstat": lambda: fs.lstat("a"),
        "read": lambda: fs.read_text(target),
        "list": lambda: fs.list_dir(target),
    }
    reached = False
    with anyio.CancelScope() as scope:
        scope.cancel()
        await calls[verb]()
        reached = True
    assert scope.cancelled_caught and not reached
