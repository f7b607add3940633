"""Workspace containment of the local backend, in both resolution modes: what the kit cannot say.

Kept as one file: every case works on the one tree drawn below, in both modes.

The kit's ``ContainmentContract`` runs on this backend in both modes too
(test_local_conformance.py); these cases need the host: locks, the sweep,
``/proc``, the root's descriptors, the walk's own limits.

Every test runs twice: with ``openat2`` (where the kernel has it) and with the
component walk alone (what an older kernel gets). The tree::

    <base>/
        ws/                 the workspace root (the backend's cwd)
            f.txt           "inside\\n"
            d/g.txt         "in d\\n"
        ws-old/             a sibling sharing the root's string prefix
            f.txt           "sibling\\n"
        outside/            never to be read, created, changed, locked or swept
            secret.txt      "SECRET\\n"
            dir/inner.txt   "INNER\\n"
            pipe            a FIFO
            bin.dat         binary bytes

Each test ends by checking that ``outside/`` and ``ws-old/`` hold exactly the
names and bytes they started with.
"""

from __future__ import annotations

import errno
import fcntl
import gc
import os
import stat
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

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
from dsh_fs.testing._expect import expect_fs_error
from dsh_fs_local import LocalFileSystem, _beneath
from dsh_fs_local._openat2 import ResolutionMode, kernel_has_openat2
from dsh_fs_local._reach import MAX_SYMLINKS, Refused

pytestmark = pytest.mark.anyio

MODES: list[ResolutionMode] = ["openat2", "walk"]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> ResolutionMode:
    """The resolution mode every backend built during the test uses."""
    chosen: ResolutionMode = request.param
    if chosen == "openat2" and not kernel_has_openat2():
        pytest.skip("this kernel has no openat2")
    monkeypatch.setattr(_beneath, "default_mode", lambda: chosen)
    return chosen


def put_file(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def file_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def is_link(path: str) -> bool:
    return stat.S_ISLNK(os.lstat(path).st_mode)


def exists(path: str) -> bool:
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    return True


def snapshot(top: str) -> dict[str, object]:
    """Every name under ``top`` with its bytes (files), link text (links) or kind."""
    found: dict[str, object] = {}
    for directory, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            rel = os.path.relpath(path, top)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as f:
                    found[rel] = (f.read(), info.st_ino, info.st_mtime_ns)
            else:
                found[rel] = stat.S_IFMT(info.st_mode)
    return found


@dataclass
class Tree:
    base: str

    @property
    def ws(self) -> str:
        return os.path.join(self.base, "ws")

    @property
    def out(self) -> str:
        return os.path.join(self.base, "outside")

    def at(self, rel: str) -> str:
        return os.path.join(self.ws, rel)

    def outside(self, rel: str) -> str:
        return os.path.join(self.out, rel)

    def fs(self, **options: object) -> LocalFileSystem:
        return LocalFileSystem(self.ws, **options)  # type: ignore[arg-type]

    def put(self, rel: str, data: bytes) -> None:
        path = self.at(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def get(self, rel: str) -> bytes:
        with open(self.at(rel), "rb") as f:
            return f.read()

    def link(self, rel: str, target: str) -> None:
        path = self.at(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target, path)

    def names(self, rel: str = ".") -> list[str]:
        return sorted(os.listdir(self.at(rel)))


@pytest.fixture
def tree(tmp_path: Path, mode: ResolutionMode) -> Iterator[Tree]:
    t = Tree(os.path.realpath(tmp_path))
    os.makedirs(t.at("d"))
    t.put("f.txt", b"inside\n")
    t.put("d/g.txt", b"in d\n")
    os.makedirs(os.path.join(t.base, "ws-old"))
    with open(os.path.join(t.base, "ws-old", "f.txt"), "wb") as f:
        f.write(b"sibling\n")
    os.makedirs(t.outside("dir"))
    with open(t.outside("secret.txt"), "wb") as f:
        f.write(b"SECRET\n")
    with open(t.outside("dir/inner.txt"), "wb") as f:
        f.write(b"INNER\n")
    with open(t.outside("bin.dat"), "wb") as f:
        f.write(b"\x00\x01binary")
    os.mkfifo(t.outside("pipe"))
    before = (snapshot(t.out), snapshot(os.path.join(t.base, "ws-old")))
    yield t
    after = (snapshot(t.out), snapshot(os.path.join(t.base, "ws-old")))
    assert after == before, "something outside the workspace was created or changed"


def outside_message(verb: str, path: str) -> str:
    return f'cannot {verb} "{path}": outside the workspace'


async def refused(call: Awaitable[object], verb: str, path: str) -> None:
    with anyio.fail_after(5):  # no refusal may block (an outside FIFO, an outside lock)
        await expect_fs_error(call, FsErrorCode.FS_OUTSIDE_WORKSPACE, outside_message(verb, path))


async def read_only(call: Awaitable[object], verb: str, path: str) -> None:
    await expect_fs_error(
        call, FsErrorCode.FS_READ_ONLY, f'cannot {verb} "{path}": read-only workspace'
    )


Use = Callable[[LocalFileSystem, FsTarget], Awaitable[object]]


async def _stream(fs: LocalFileSystem, t: FsTarget) -> object:
    return [chunk async for chunk in fs.stream_text(t)]


USES: dict[str, tuple[str, Use]] = {
    "stat": ("read", lambda fs, t: fs.stat(t)),
    "read_text": ("read", lambda fs, t: fs.read_text(t)),
    "stream_text": ("read", _stream),
    "list_dir": ("list", lambda fs, t: fs.list_dir(t)),
    "write_text": ("write", lambda fs, t: fs.write_text(t, "PWNED\n")),
    "edit_text": ("edit", lambda fs, t: fs.edit_text(t, FsEditRequest("SECRET", "PWNED"))),
}
"""Each primitive that takes a target, and the verb its refusal speaks with."""


# ---------------------------------------------------------------------------
# Inside links keep working


async def test_writing_through_an_inside_link_keeps_the_link(tree: Tree) -> None:
    tree.link("abs-link", tree.at("d/g.txt"))
    tree.link("dangling", "d/later.txt")
    fs = tree.fs()
    await fs.write_text(await fs.resolve("abs-link"), "new\n")
    outcome = await fs.write_text(await fs.resolve("dangling"), "later\n")
    assert outcome.operation == "create"
    assert os.readlink(tree.at("abs-link")) == tree.at("d/g.txt")
    assert tree.get("d/g.txt") == b"new\n"
    assert tree.get("d/later.txt") == b"later\n"
    assert is_link(tree.at("dangling"))


async def test_a_final_link_placed_after_resolve_is_written_through_inside_only(
    tree: Tree,
) -> None:
    fs = tree.fs()
    inside = await fs.resolve("f.txt")
    os.unlink(tree.at("f.txt"))
    os.symlink("d/g.txt", tree.at("f.txt"))
    await fs.write_text(inside, "through\n")
    assert os.readlink(tree.at("f.txt")) == "d/g.txt"
    assert tree.get("d/g.txt") == b"through\n"
    os.unlink(tree.at("f.txt"))
    os.symlink(tree.outside("secret.txt"), tree.at("f.txt"))
    await refused(fs.write_text(inside, "PWNED\n"), "write", tree.at("f.txt"))
    await refused(fs.edit_text(inside, FsEditRequest("SECRET", "X")), "edit", tree.at("f.txt"))
    await refused(fs.read_text(inside), "read", tree.at("f.txt"))


# ---------------------------------------------------------------------------
# Every primitive enforces again, with its own verb


async def test_a_target_key_outside_every_root_is_refused_by_each_primitive(tree: Tree) -> None:
    forged = FsTarget(tree.outside("secret.txt"), tree.at("f.txt"))
    fs = tree.fs()
    for verb, call in USES.values():
        await refused(call(fs, forged), verb, tree.at("f.txt"))


async def test_lstat_refuses_outside_and_reports_an_inside_link_to_outside_as_a_symlink(
    tree: Tree,
) -> None:
    tree.link("to-secret", tree.outside("secret.txt"))
    fs = tree.fs()
    await refused(fs.lstat(tree.outside("secret.txt")), "stat", tree.outside("secret.txt"))
    info = await fs.lstat("to-secret")
    assert info is not None and info.type == "symlink"


# ---------------------------------------------------------------------------
# The refusal comes before every other answer


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("missing.txt", "not found"),
        ("pipe", "not a regular file (and a FIFO must not block)"),
        ("bin.dat", "binary file"),
        ("dir", "not a regular file"),
        ("secret.txt/below", "a parent path segment is not a directory"),
    ],
)
async def test_the_refusal_comes_before_not_found_type_and_binary_checks(
    tree: Tree, name: str, why: str
) -> None:
    tree.link("out", tree.out)
    fs = tree.fs()
    rel = f"out/{name}"
    await refused(fs.resolve(rel), "resolve", tree.at(rel))
    # Past the early check: a key that is lexically inside, reached through the link.
    through_link = FsTarget(tree.at(rel), tree.at(rel))
    forged = FsTarget(tree.outside(name), tree.at(rel))
    for target in (through_link, forged):
        for verb, call in USES.values():
            await refused(call(fs, target), verb, tree.at(rel))


async def test_the_refusal_comes_before_intents_and_guards(tree: Tree) -> None:
    tree.link("out", tree.out)
    fs = tree.fs()
    forged = FsTarget(tree.at("out/secret.txt"), tree.at("out/secret.txt"))
    shown = tree.at("out/secret.txt")
    await refused(fs.write_text(forged, "x", CreateIfAbsent()), "write", shown)
    await refused(fs.write_text(forged, "x", ReplaceIfVersion("stale")), "write", shown)
    await refused(fs.edit_text(forged, FsEditRequest("a", "b"), EditGuard("stale")), "edit", shown)


async def test_a_refused_write_does_not_wait_for_a_lock_on_the_outside_directory(
    tree: Tree,
) -> None:
    tree.link("out", tree.out)
    fs = tree.fs()
    target = await fs.resolve("d/new.txt")
    os.rename(tree.at("d"), tree.at("d-moved"))
    os.symlink(tree.out, tree.at("d"))
    holder = os.open(tree.out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with anyio.fail_after(2):
            await refused(fs.write_text(target, "x"), "write", tree.at("d/new.txt"))
    finally:
        os.close(holder)


async def test_stale_temporaries_outside_are_not_swept(tree: Tree) -> None:
    dead = os.path.join(tree.out, ".secret.txt.dsh-999999999-0badc0de.tmp")
    put_file(dead, b"partial")
    try:
        fs = tree.fs()
        target = await fs.resolve("d/secret.txt")
        os.rename(tree.at("d"), tree.at("d-moved"))
        os.symlink(tree.out, tree.at("d"))
        await refused(fs.write_text(target, "x"), "write", tree.at("d/secret.txt"))
        assert exists(dead)
    finally:
        os.unlink(dead)


async def test_nothing_outside_is_created_for_missing_parents(tree: Tree) -> None:
    fs = tree.fs()
    target = await fs.resolve("d/new/deeper/f.txt")
    os.rename(tree.at("d"), tree.at("d-moved"))
    os.symlink(tree.out, tree.at("d"))
    await refused(fs.write_text(target, "x"), "write", tree.at("d/new/deeper/f.txt"))
    target = await fs.resolve("fresh/f.txt")
    os.symlink(tree.outside("dir"), tree.at("fresh"))
    await refused(fs.write_text(target, "x"), "write", tree.at("fresh/f.txt"))
    assert sorted(os.listdir(tree.at("d-moved"))) == ["g.txt"]


async def test_new_parent_directories_are_created_inside(tree: Tree) -> None:
    fs = tree.fs()
    outcome = await fs.write_text(await fs.resolve("a/b/c/new.txt"), "deep\n")
    assert outcome.operation == "create"
    assert tree.get("a/b/c/new.txt") == b"deep\n"
    assert tree.names("a/b/c") == ["new.txt"]


# ---------------------------------------------------------------------------
# /proc magic links


@pytest.mark.parametrize("magic", ["root", "cwd", "fd", "exe"])
async def test_a_magic_link_is_refused_whatever_it_points_at(
    tree: Tree, magic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``/`` as the root every path is inside, so only the magic-link rule refuses.

    Each magic path leads to the workspace's own ``f.txt`` (so an escape would
    only touch the scratch tree); ``/proc/self/exe`` is only read.
    """
    fs = LocalFileSystem(tree.ws, roots=["/"])
    held = os.open(tree.at("f.txt"), os.O_RDONLY)
    monkeypatch.chdir(tree.ws)
    try:
        path = {
            "root": f"/proc/self/root{tree.at('f.txt')}",
            "cwd": "/proc/self/cwd/f.txt",
            "fd": f"/proc/self/fd/{held}",
            "exe": "/proc/self/exe",
        }[magic]
        await refused(fs.resolve(path), "resolve", path)
        forged = FsTarget(path, path)
        for verb, call in USES.values():
            if magic == "exe" and verb in ("write", "edit"):
                continue
            await refused(call(fs, forged), verb, path)
    finally:
        os.close(held)
    assert tree.get("f.txt") == b"inside\n"


async def test_with_root_slash_ordinary_proc_links_still_work(tree: Tree) -> None:
    fs = LocalFileSystem(tree.ws, roots=["/"])
    target = await fs.resolve("/proc/self/status")
    assert (await fs.read_text(target)).startswith("Name:")
    assert (await fs.read_text(await fs.resolve(tree.at("f.txt")))) == "inside\n"


async def test_a_link_inside_the_workspace_to_a_proc_fd_is_refused(tree: Tree) -> None:
    read_end, write_end = os.pipe()
    try:
        tree.link("to-pipe", f"/proc/self/fd/{read_end}")
        fs = LocalFileSystem(tree.ws, roots=[tree.ws, "/proc"])
        await refused(fs.resolve("to-pipe"), "resolve", tree.at("to-pipe"))
    finally:
        os.close(read_end)
        os.close(write_end)


# ---------------------------------------------------------------------------
# Read-only roots and read_only


async def test_an_absolute_link_into_a_read_only_root_reads_but_does_not_write(
    tree: Tree,
) -> None:
    docs = os.path.join(tree.base, "docs")
    os.makedirs(docs)
    put_file(os.path.join(docs, "guide.md"), b"read me\n")
    tree.link("guide", os.path.join(docs, "guide.md"))
    fs = tree.fs(read_only_roots=[docs])
    target = await fs.resolve("guide")
    assert target.target_key == os.path.join(docs, "guide.md")
    assert await fs.read_text(target) == "read me\n"
    await read_only(fs.write_text(target, "x"), "write", tree.at("guide"))
    # A target resolved inside, whose final name later becomes that link:
    inside = await fs.resolve("f.txt")
    os.unlink(tree.at("f.txt"))
    os.symlink(os.path.join(docs, "guide.md"), tree.at("f.txt"))
    await read_only(fs.write_text(inside, "x"), "write", tree.at("f.txt"))
    assert file_bytes(os.path.join(docs, "guide.md")) == b"read me\n"


# ---------------------------------------------------------------------------
# Roots: construction and lifetime


async def test_replacing_the_root_after_construction_cannot_redirect_calls(tree: Tree) -> None:
    fs = tree.fs()
    before = await fs.resolve("f.txt")
    os.rename(tree.ws, tree.ws + "-moved")
    os.symlink(tree.out, tree.ws)
    try:
        os.symlink("secret.txt", tree.outside("f.txt"))
        # The held descriptor still is the original root: the old target reads it.
        assert await fs.read_text(before) == "inside\n"
        await fs.write_text(before, "rewritten\n")
        assert file_bytes(os.path.join(tree.ws + "-moved", "f.txt")) == b"rewritten\n"
        # A fresh resolve goes through the held descriptor too. With openat2 the
        # kernel names the file by its new path, which is no longer under the
        # root's path: refused rather than misnamed. The walk names it by the
        # root's path and reaches the original. Never the outside file.
        try:
            fresh = await fs.resolve("f.txt")
        except FsError as err:
            assert (str(err), err.code) == (
                outside_message("resolve", tree.at("f.txt")),
                FsErrorCode.FS_OUTSIDE_WORKSPACE,
            )
        else:
            assert await fs.read_text(fresh) == "rewritten\n"
    finally:
        os.unlink(tree.outside("f.txt"))
        os.unlink(tree.ws)
        os.rename(tree.ws + "-moved", tree.ws)


def test_a_root_that_is_missing_or_not_a_directory_fails_the_constructor(tree: Tree) -> None:
    missing = os.path.join(tree.base, "nope")
    with pytest.raises(ValueError, match="nope"):
        LocalFileSystem(tree.ws, roots=[missing])
    with pytest.raises(ValueError, match=r"f\.txt"):
        LocalFileSystem(tree.ws, read_only_roots=[tree.at("f.txt")])
    with pytest.raises(ValueError, match="nope"):
        LocalFileSystem(missing)
    LocalFileSystem(missing, roots=[tree.ws])  # a cwd that is not a root need not exist
    LocalFileSystem(missing, roots=None)


def test_a_dropped_backend_releases_its_root_descriptors(tree: Tree) -> None:
    def open_descriptors() -> int:
        return len(os.listdir("/proc/self/fd"))

    # Other objects may release descriptors meanwhile: the counts may only drop.
    gc.collect()
    before = open_descriptors()
    for _ in range(200):
        LocalFileSystem(tree.ws, read_only_roots=[tree.out])
    assert open_descriptors() <= before
    fs = LocalFileSystem(tree.ws)
    opened = open_descriptors()
    fs.close()
    fs.close()  # closing twice is harmless
    assert open_descriptors() <= opened - 1


async def test_roots_are_realpathed_once_so_a_symlinked_root_works(tree: Tree) -> None:
    alias = os.path.join(tree.base, "alias")
    os.symlink(tree.ws, alias)
    fs = LocalFileSystem(alias)
    assert fs.workspace.roots == (tree.ws,)
    target = await fs.resolve("f.txt")
    assert target.display_path == os.path.join(alias, "f.txt")
    assert target.target_key == tree.at("f.txt")
    assert await fs.read_text(target) == "inside\n"


async def test_relative_roots_are_taken_against_cwd(tree: Tree) -> None:
    fs = LocalFileSystem(tree.ws, roots=["d"])
    assert fs.workspace.roots == (tree.at("d"),)
    await refused(fs.resolve("f.txt"), "resolve", tree.at("f.txt"))
    assert await fs.read_text(await fs.resolve("d/g.txt")) == "in d\n"


# ---------------------------------------------------------------------------
# The walk itself (the part openat2 delegates to it)


def test_the_walk_stops_a_real_loop_as_eloop(tree: Tree) -> None:
    tree.link("loop-a", "loop-b")
    tree.link("loop-b", "loop-a")
    fs = tree.fs()
    beneath = _beneath.Beneath(fs.workspace, mode="walk")
    try:
        with pytest.raises(OSError) as caught:
            beneath.open(tree.at("loop-a"), os.O_RDONLY)
        assert caught.value.errno == errno.ELOOP
    finally:
        beneath.close()


def test_the_walk_follows_a_long_chain_of_inside_links_up_to_the_limit(tree: Tree) -> None:
    previous = "f.txt"
    for i in range(MAX_SYMLINKS):
        tree.link(f"hop{i}", previous)
        previous = f"hop{i}"
    fs = tree.fs()
    beneath = _beneath.Beneath(fs.workspace, mode="walk")
    try:
        fd = beneath.open(tree.at(previous), os.O_RDONLY)
        os.close(fd)
        tree.link("one-more", previous)
        with pytest.raises(OSError) as caught:
            beneath.open(tree.at("one-more"), os.O_RDONLY)
        assert caught.value.errno == errno.ELOOP
    finally:
        beneath.close()


def test_dotdot_in_a_link_climbs_only_within_the_root(tree: Tree) -> None:
    tree.link("d/up", "../f.txt")
    tree.link("d/out", "../../outside/secret.txt")
    fs = tree.fs()
    beneath = _beneath.Beneath(fs.workspace, mode="walk")
    try:
        fd = beneath.open(tree.at("d/up"), os.O_RDONLY)
        try:
            assert os.read(fd, 100) == b"inside\n"
        finally:
            os.close(fd)
        with pytest.raises(Refused):
            beneath.open(tree.at("d/out"), os.O_RDONLY)
    finally:
        beneath.close()
