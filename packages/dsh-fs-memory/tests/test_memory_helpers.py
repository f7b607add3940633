"""Construction, seeding, the out-of-band helpers, MemoryScratch and the entry point."""

from __future__ import annotations

import contextlib
import errno
import re
import string
from collections.abc import Awaitable, Callable

import anyio
import pytest
from dsh_fs import FileSystem, FsEditRequest, FsError, load_backend
from dsh_fs.testing import Scratch
from dsh_fs.testing._expect import read_via
from dsh_fs_memory import MemoryFileSystem, MemoryScratch
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.anyio


# ------------------------------------------------------------ construction


def test_default_cwd_is_root() -> None:
    assert MemoryFileSystem().cwd == "/"
    assert MemoryFileSystem(cwd=None).cwd == "/"


def test_cwd_is_normalized_and_created() -> None:
    fs = MemoryFileSystem(cwd="/w//project/./src/..")
    assert fs.cwd == "/w/project"
    assert fs.names("/w") == ["project"]


def test_seeding_stores_text_as_utf8_and_bytes_as_given() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"rel/a.txt": "é\r\n", "/abs/b.bin": b"\0\xff", "c": ""})
    assert fs.files() == {"/abs/b.bin": b"\0\xff", "/w/c": b"", "/w/rel/a.txt": "é\r\n".encode()}
    assert fs.names("/") == ["abs", "w"]


async def test_seeded_parents_are_directories() -> None:
    fs = MemoryFileSystem(files={"/a/b/c.txt": "x"})
    info = await fs.stat(await fs.resolve("/a/b"))
    assert info is not None and info.type == "directory"


def test_seeding_a_path_under_a_file_fails() -> None:
    with pytest.raises(NotADirectoryError):
        MemoryFileSystem(files={"/a": "file", "/a/b": "under a file"})


def test_entry_point_builds_a_memory_backend() -> None:
    fs = load_backend("memory", cwd="/w")
    assert isinstance(fs, MemoryFileSystem) and fs.cwd == "/w"
    assert isinstance(load_backend("memory", cwd=None), MemoryFileSystem)


# ----------------------------------------------------------------- helpers


def test_put_and_get_bytes_round_trip_and_follow_symlinks() -> None:
    fs = MemoryFileSystem(cwd="/w")
    fs.put_bytes("a/b.bin", b"\0data")
    fs.add_symlink("link", "a/b.bin")
    assert fs.get_bytes("link") == b"\0data"
    fs.put_text("link", "via link")
    assert fs.get_bytes("/w/a/b.bin") == b"via link"
    assert fs.get_bytes("missing") is None
    assert fs.get_bytes("a") is None
    assert fs.get_bytes("a/b.bin/under") is None


async def test_out_of_band_put_changes_the_version() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"f": "same"})
    target = await fs.resolve("f")
    before = await fs.stat(target)
    fs.put_bytes("f", b"same")
    after = await fs.stat(target)
    assert before is not None and after is not None and before.version != after.version


def test_put_bytes_refuses_directories_and_other_entries() -> None:
    fs = MemoryFileSystem(cwd="/w")
    fs.mkdir("d")
    fs.add_other("fifo")
    with pytest.raises(IsADirectoryError):
        fs.put_bytes("d", b"")
    with pytest.raises(IsADirectoryError):
        fs.put_bytes("/", b"")
    with pytest.raises(FileExistsError):
        fs.put_bytes("fifo", b"")


def test_mkdir_is_idempotent_and_refuses_files() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"f": ""})
    fs.mkdir("x/y")
    fs.mkdir("x/y")
    assert fs.names("x") == ["y"]
    with pytest.raises(FileExistsError):
        fs.mkdir("f")
    with pytest.raises(NotADirectoryError):
        fs.mkdir("f/sub")


def test_remove_entries_and_directories() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"d/x": "", "f": "keep"})
    fs.add_symlink("link", "f")
    fs.add_other("fifo")
    fs.remove("link")
    assert fs.get_bytes("f") == b"keep"
    fs.remove("fifo")
    with pytest.raises(OSError) as info:
        fs.remove("d")
    assert info.value.errno == errno.ENOTEMPTY
    fs.remove("d", recursive=True)
    assert fs.names() == ["f"]
    assert fs.files() == {"/w/f": b"keep"}
    with pytest.raises(FileNotFoundError):
        fs.remove("d")
    with pytest.raises(OSError):
        fs.remove("/")


def test_add_symlink_and_add_other_refuse_existing_names() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"f": ""})
    with pytest.raises(FileExistsError):
        fs.add_symlink("f", "elsewhere")
    with pytest.raises(FileExistsError):
        fs.add_other("f")


def test_add_entries_create_parents() -> None:
    fs = MemoryFileSystem(cwd="/w")
    fs.add_symlink("deep/link", "../target")
    fs.add_other("deeper/still/fifo")
    assert fs.names("deep") == ["link"]
    assert fs.names("deeper/still") == ["fifo"]


def test_names_errors() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"f": ""})
    with pytest.raises(FileNotFoundError):
        fs.names("missing")
    with pytest.raises(NotADirectoryError):
        fs.names("f")


async def test_removing_a_symlinked_directory_then_recreating_it_as_a_directory() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"/real/f": "r"}, roots=None)
    fs.add_symlink("d", "/real")
    assert (await fs.resolve("d/f")).target_key == "/real/f"
    fs.remove("d")
    fs.put_text("d/f", "own")
    target = await fs.resolve("d/f")
    assert target.target_key == "/w/d/f"
    assert await fs.read_text(target) == "own"
    assert fs.get_bytes("/real/f") == b"r"


# ------------------------------------------------------------------ scratch


def test_memory_scratch_satisfies_the_kit_protocol() -> None:
    scratch: Scratch = MemoryScratch()
    assert isinstance(scratch.fs, FileSystem)
    assert scratch.root == "/scratch" and scratch.names() == []
    scratch.put("a/b", b"x")
    scratch.symlink("l", "a/b")
    scratch.make_other("o")
    assert scratch.get("l") == b"x"
    assert scratch.names() == ["a", "l", "o"]
    scratch.remove("l")
    scratch.mkdir("e/f")
    assert scratch.names() == ["a", "e", "o"]


def test_memory_scratch_root_can_be_chosen() -> None:
    scratch = MemoryScratch("/tmp/s")
    assert scratch.root == "/tmp/s" and scratch.fs.cwd == "/tmp/s"


# -------------------------------------------------- only FsError ever leaves

_SEGMENTS = st.sampled_from(["a", "b", "f", "l", "o", "..", ".", "", "loop", "dang"])
_PATHS = st.lists(_SEGMENTS, max_size=5).map("/".join) | st.text(string.printable, max_size=8)


def _tangled_tree() -> MemoryFileSystem:
    fs = MemoryFileSystem(cwd="/a", files={"/a/f": "text", "/a/b/f": b"\0bin", "/b/f": b"\xff"})
    fs.add_symlink("/a/l", "b")
    fs.add_symlink("/a/b/l", "../..")
    fs.add_symlink("/a/loop", "loop")
    fs.add_symlink("/a/dang", "/nowhere/x")
    fs.add_other("/a/o")
    fs.add_other("/b/o")
    return fs


@settings(max_examples=150, deadline=None)
@given(path=_PATHS)
def test_every_primitive_fails_only_with_fs_error(path: str) -> None:
    async def exercise() -> None:
        fs = _tangled_tree()
        try:
            target = await fs.resolve(path)
        except FsError:
            return
        operations: list[Callable[[], Awaitable[object]]] = [
            lambda: fs.stat(target),
            lambda: fs.lstat(path),
            lambda: fs.read_text(target),
            lambda: read_via(fs, target, "stream_text"),
            lambda: fs.list_dir(target, stat=True),
            lambda: fs.edit_text(target, FsEditRequest("t", "T")),
            lambda: fs.write_text(target, "new"),
        ]
        for operation in operations:
            with contextlib.suppress(FsError):
                await operation()
        assert len(fs._tree.locks) == 0

    anyio.run(exercise)


# ------------------------------------------------------------ containment


def test_missing_roots_are_created_as_empty_directories() -> None:
    fs = MemoryFileSystem(cwd="/w", roots=["/w", "/data"], read_only_roots=["/docs"])
    assert (fs.names("/w"), fs.names("/data"), fs.names("/docs")) == ([], [], [])
    assert fs.workspace.roots == ("/w", "/data")
    assert fs.workspace.read_only_roots == ("/docs",)


@pytest.mark.parametrize("option", ["cwd", "roots", "read_only_roots"])
def test_a_root_that_is_a_file_fails_the_constructor_naming_it(option: str) -> None:
    files = {"/w/f.txt": "x"}
    with pytest.raises(ValueError, match=re.escape("'/w/f.txt' is not a directory")):
        if option == "cwd":
            MemoryFileSystem(cwd="/w/f.txt", files=files)
        elif option == "roots":
            MemoryFileSystem(cwd="/w", files=files, roots=["/w/f.txt"])
        else:
            MemoryFileSystem(cwd="/w", files=files, read_only_roots=["/w/f.txt"])


def test_a_symlinked_root_is_held_as_its_physical_directory() -> None:
    fs = MemoryFileSystem(cwd="/", roots=None)
    fs.mkdir("/real/ws")
    fs.add_symlink("/ws", "/real/ws")
    assert fs.view("/ws").workspace.roots == ("/real/ws",)


async def test_a_view_shares_the_tree_and_the_versions_but_has_its_own_workspace() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"/w/a.txt": "a\n", "/x/b.txt": "b\n"})
    other = fs.view("/x")
    written = await other.write_text(await other.resolve("b.txt"), "from the view\n")
    assert fs.get_bytes("/x/b.txt") == b"from the view\n"
    info = await other.stat(await other.resolve("/x/b.txt"))
    assert info is not None and info.version == written.version
    with pytest.raises(FsError) as refused:
        await fs.resolve("/x/b.txt")
    assert str(refused.value) == 'cannot resolve "/x/b.txt": outside the workspace'
