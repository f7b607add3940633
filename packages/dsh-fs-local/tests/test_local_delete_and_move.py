"""``LocalFileSystem.delete``, ``.move`` and ``.apply_changes`` on real files, in both
resolution modes.

One file over 450 lines: the three primitives share one drawn tree, its
helpers and the both-modes fixture, and are read together (a batch is
writes and deletes; a move is a delete of one name and a create of another).

The host-specific half of removing and moving (the kit's contract holds the
rest): links removed and moved as links, containment through symlinked
parents, roots, the ``.del`` aside of a tree and its sweep, hard links,
``EXDEV`` across two real filesystems, the directory lock, and ``roots=None``.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
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
    FsWriteOutcome,
    MoveGuard,
    NotAFile,
    WriteChange,
)
from dsh_fs.testing._expect import run_then_cancel
from dsh_fs_local import LocalFileSystem
from dsh_fs_local._openat2 import ResolutionMode

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def both_modes(mode: ResolutionMode) -> ResolutionMode:
    """Every test here runs in each resolution mode (the ``mode`` fixture of conftest)."""
    return mode


@pytest.fixture
def base(tmp_path: Path) -> str:
    """::

    <base>/ws/          the workspace root
    <base>/outside/     beside it: never touched
        secret.txt "SECRET"
    """
    real = os.path.realpath(tmp_path)
    os.makedirs(os.path.join(real, "ws"))
    os.makedirs(os.path.join(real, "outside"))
    _put(os.path.join(real, "outside", "secret.txt"), "SECRET")
    return real


@pytest.fixture
def ws(base: str) -> str:
    return os.path.join(base, "ws")


@pytest.fixture
def fs(ws: str) -> LocalFileSystem:
    return LocalFileSystem(ws)


def _put(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as out:
        out.write(text)


def _get(path: str) -> str:
    with open(path) as f:
        return f.read()


def _names(path: str) -> list[str]:
    return sorted(os.listdir(path))


def _target(fs: LocalFileSystem, path: str) -> FsTarget:
    """A target made without ``resolve``: the call itself must refuse what ``resolve`` would."""
    full = os.path.join(fs.cwd, path)
    return FsTarget(full, os.path.normpath(full))


async def _error(call: object) -> FsError:
    with pytest.raises(FsError) as caught:
        await call  # type: ignore[misc]
    return caught.value


# -- delete ----------------------------------------------------------------------------------


async def test_delete_removes_a_file(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/f.txt", "x")
    outcome = await fs.delete(await fs.resolve("f.txt"))
    assert outcome.type == "file"
    assert _names(ws) == []


async def test_delete_removes_a_symlink_and_not_what_it_points_to(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/f.txt", "kept")
    os.symlink("f.txt", f"{ws}/link")
    outcome = await fs.delete(await fs.resolve("link"))
    assert outcome.type == "symlink"
    assert _names(ws) == ["f.txt"]
    assert _get(f"{ws}/f.txt") == "kept"


async def test_delete_removes_a_link_that_leads_outside_as_a_link(
    fs: LocalFileSystem, ws: str, base: str
) -> None:
    os.symlink(f"{base}/outside/secret.txt", f"{ws}/out")
    outcome = await fs.delete(_target(fs, "out"))
    assert outcome.type == "symlink"
    assert _names(ws) == []
    assert _get(f"{base}/outside/secret.txt") == "SECRET"


async def test_delete_removes_an_empty_directory(fs: LocalFileSystem, ws: str) -> None:
    os.mkdir(f"{ws}/d")
    assert (await fs.delete(await fs.resolve("d"))).type == "directory"
    assert _names(ws) == []


async def test_delete_of_a_non_empty_directory_without_recursive_changes_nothing(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/d/f.txt", "x")
    err = await _error(fs.delete(await fs.resolve("d")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_NOT_EMPTY,
        f'cannot delete "{ws}/d": directory not empty',
    )
    assert _get(f"{ws}/d/f.txt") == "x"


async def test_recursive_delete_removes_a_tree_and_never_follows_a_link_inside_it(
    fs: LocalFileSystem, ws: str, base: str
) -> None:
    _put(f"{ws}/d/a/b/f.txt", "x")
    os.symlink(f"{base}/outside", f"{ws}/d/a/out")
    os.symlink(f"{base}/outside/secret.txt", f"{ws}/d/secret")
    assert (await fs.delete(await fs.resolve("d"), recursive=True)).type == "directory"
    assert _names(ws) == []
    assert _names(f"{base}/outside") == ["secret.txt"]
    assert _get(f"{base}/outside/secret.txt") == "SECRET"


async def test_delete_of_a_missing_entry_is_not_found(fs: LocalFileSystem, ws: str) -> None:
    err = await _error(fs.delete(await fs.resolve("nope/f.txt")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_NOT_FOUND,
        f'cannot delete "{ws}/nope/f.txt": not found',
    )


async def test_delete_of_a_file_changed_since_it_was_read_is_stale(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/f.txt", "one")
    target = await fs.resolve("f.txt")
    info = await fs.stat(target)
    assert info is not None
    _put(f"{ws}/f.txt", "two, longer")
    err = await _error(fs.delete(target, expected=AtVersion(info.version)))
    assert (err.code, err.message) == (
        FsErrorCode.FS_STALE_VERSION,
        f'cannot delete "{ws}/f.txt": file changed since it was read',
    )
    assert _get(f"{ws}/f.txt") == "two, longer"


async def test_delete_of_an_unread_file_is_not_observed(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/f.txt", "x")
    err = await _error(fs.delete(await fs.resolve("f.txt"), expected=NotAFile()))
    assert (err.code, err.message) == (
        FsErrorCode.FS_NOT_OBSERVED,
        f'cannot delete "{ws}/f.txt" without reading it first',
    )
    assert _names(ws) == ["f.txt"]


async def test_delete_guarded_by_a_links_version_checks_its_target(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/f.txt", "x")
    os.symlink("f.txt", f"{ws}/link")
    info = await fs.stat(await fs.resolve("f.txt"))
    assert info is not None
    await fs.delete(await fs.resolve("link"), expected=AtVersion(info.version))
    assert _names(ws) == ["f.txt"]


async def test_the_workspace_root_is_never_deleted(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/f.txt", "x")
    err = await _error(fs.delete(await fs.resolve("."), recursive=True))
    assert (err.code, err.message) == (
        FsErrorCode.FS_PERMISSION_DENIED,
        f'cannot delete "{ws}": it is a workspace root',
    )
    assert _names(ws) == ["f.txt"]


async def test_a_tree_that_holds_another_root_is_never_deleted(ws: str) -> None:
    _put(f"{ws}/docs/lib/f.txt", "x")
    fs = LocalFileSystem(ws, roots=[ws, f"{ws}/docs/lib"])
    err = await _error(fs.delete(await fs.resolve("docs"), recursive=True))
    assert (err.code, err.message) == (
        FsErrorCode.FS_PERMISSION_DENIED,
        f'cannot delete "{ws}/docs": it is a workspace root',
    )
    assert _get(f"{ws}/docs/lib/f.txt") == "x"


async def test_a_tree_that_holds_a_read_only_root_is_read_only(ws: str) -> None:
    _put(f"{ws}/docs/lib/f.txt", "x")
    fs = LocalFileSystem(ws, read_only_roots=[f"{ws}/docs/lib"])
    err = await _error(fs.delete(await fs.resolve("docs"), recursive=True))
    assert (err.code, err.message) == (
        FsErrorCode.FS_READ_ONLY,
        f'cannot delete "{ws}/docs": read-only workspace',
    )
    assert _get(f"{ws}/docs/lib/f.txt") == "x"


async def test_a_read_only_root_itself_is_read_only(ws: str, base: str) -> None:
    fs = LocalFileSystem(ws, read_only_roots=[f"{base}/outside"])
    err = await _error(fs.delete(await fs.resolve(f"{base}/outside"), recursive=True))
    assert (err.code, err.message) == (
        FsErrorCode.FS_READ_ONLY,
        f'cannot delete "{base}/outside": read-only workspace',
    )


async def test_delete_through_a_symlinked_parent_that_leads_outside_is_refused(
    fs: LocalFileSystem, ws: str, base: str
) -> None:
    os.symlink(f"{base}/outside", f"{ws}/out")
    err = await _error(fs.delete(_target(fs, "out/secret.txt")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_OUTSIDE_WORKSPACE,
        f'cannot delete "{ws}/out/secret.txt": outside the workspace',
    )
    assert _get(f"{base}/outside/secret.txt") == "SECRET"


async def test_delete_in_a_read_only_root_is_refused(ws: str, base: str) -> None:
    fs = LocalFileSystem(ws, read_only_roots=[f"{base}/outside"])
    err = await _error(fs.delete(await fs.resolve(f"{base}/outside/secret.txt")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_READ_ONLY,
        f'cannot delete "{base}/outside/secret.txt": read-only workspace',
    )
    assert _get(f"{base}/outside/secret.txt") == "SECRET"


async def test_delete_without_containment_removes_a_link_as_a_link(base: str) -> None:
    fs = LocalFileSystem(base, roots=None)
    os.symlink(f"{base}/outside/secret.txt", f"{base}/ws/link")
    assert (await fs.delete(await fs.resolve("ws/link"))).type == "symlink"
    assert (await fs.delete(await fs.resolve("outside"), recursive=True)).type == "directory"
    assert _names(base) == ["ws"]


def _dead_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(child.stdout)


async def test_the_next_write_sweeps_a_tree_a_dead_process_left_aside(
    fs: LocalFileSystem, ws: str
) -> None:
    aside = f"{ws}/.d.dsh-{_dead_pid()}-0123abcd.del"
    _put(f"{aside}/sub/f.txt", "x")
    os.symlink("/", f"{aside}/sub/root-link")
    await fs.write_text(await fs.resolve("new.txt"), "n")
    assert _names(ws) == ["new.txt"]


async def test_the_sweep_keeps_a_del_name_that_is_a_file_and_a_tmp_name_that_is_a_directory(
    fs: LocalFileSystem, ws: str
) -> None:
    pid = _dead_pid()
    kept = [f".a.dsh-{pid}-0123abcd.del", f".b.dsh-{pid}-0123abcd.tmp"]
    _put(f"{ws}/{kept[0]}", "a user's file")
    os.mkdir(f"{ws}/{kept[1]}")
    await fs.write_text(await fs.resolve("new.txt"), "n")
    assert _names(ws) == sorted([*kept, "new.txt"])


async def test_the_sweep_keeps_a_del_tree_of_another_user_and_a_del_link(
    fs: LocalFileSystem, ws: str, base: str
) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a directory to another user")
    pid = _dead_pid()
    theirs, link = f".a.dsh-{pid}-0123abcd.del", f".b.dsh-{pid}-0123abcd.del"
    _put(f"{ws}/{theirs}/f.txt", "another user's")
    os.chown(f"{ws}/{theirs}", 12345, 12345)
    os.symlink(f"{base}/outside", f"{ws}/{link}")
    await fs.write_text(await fs.resolve("new.txt"), "n")
    assert _names(ws) == sorted([theirs, link, "new.txt"])
    assert _names(f"{base}/outside") == ["secret.txt"]


async def test_recursive_delete_leaves_no_temporary(fs: LocalFileSystem, ws: str) -> None:
    for i in range(50):
        _put(f"{ws}/d/{i % 5}/f{i}.txt", "x")
    await fs.delete(await fs.resolve("d"), recursive=True)
    assert _names(ws) == []


# -- move ------------------------------------------------------------------------------------


async def test_move_renames_a_file_and_returns_the_version_a_fresh_stat_reports(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/a.txt", "x")
    outcome = await fs.move(await fs.resolve("a.txt"), await fs.resolve("b.txt"))
    info = await fs.stat(await fs.resolve("b.txt"))
    assert info is not None
    assert (outcome.type, outcome.version, outcome.replaced) == ("file", info.version, False)
    assert _names(ws) == ["b.txt"]


async def test_move_keeps_the_inode(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/a.txt", "x")
    inode = os.stat(f"{ws}/a.txt").st_ino
    await fs.move(await fs.resolve("a.txt"), await fs.resolve("b.txt"))
    assert os.stat(f"{ws}/b.txt").st_ino == inode


async def test_move_creates_missing_parents_of_the_destination(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/a.txt", "x")
    await fs.move(await fs.resolve("a.txt"), await fs.resolve("p/q/b.txt"))
    assert _get(f"{ws}/p/q/b.txt") == "x"
    assert _names(ws) == ["p"]


async def test_a_failed_move_removes_the_parents_it_created(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/a.txt", "x")
    err = await _error(
        fs.move(
            await fs.resolve("a.txt"),
            await fs.resolve("p/q/b.txt"),
            expected=MoveGuard(source=AtVersion("0:0:0:0:0")),
        )
    )
    assert err.code == FsErrorCode.FS_STALE_VERSION
    assert _names(ws) == ["a.txt"]


async def test_move_onto_an_existing_entry_without_replace_changes_nothing(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/a.txt", "a")
    _put(f"{ws}/b.txt", "b")
    err = await _error(fs.move(await fs.resolve("a.txt"), await fs.resolve("b.txt")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_ALREADY_EXISTS,
        f'cannot move to "{ws}/b.txt": already exists',
    )
    assert (_get(f"{ws}/a.txt"), _get(f"{ws}/b.txt")) == ("a", "b")


async def test_move_with_replace_replaces_a_file(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/a.txt", "a")
    _put(f"{ws}/b.txt", "b")
    outcome = await fs.move(await fs.resolve("a.txt"), await fs.resolve("b.txt"), replace=True)
    assert outcome.replaced is True
    assert _names(ws) == ["b.txt"]
    assert _get(f"{ws}/b.txt") == "a"


async def test_move_onto_an_unread_file_is_not_observed(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/a.txt", "a")
    _put(f"{ws}/b.txt", "b")
    err = await _error(
        fs.move(
            await fs.resolve("a.txt"),
            await fs.resolve("b.txt"),
            replace=True,
            expected=MoveGuard(destination=NotAFile()),
        )
    )
    assert (err.code, err.message) == (
        FsErrorCode.FS_NOT_OBSERVED,
        f'cannot overwrite existing "{ws}/b.txt" without reading it first',
    )
    assert (_get(f"{ws}/a.txt"), _get(f"{ws}/b.txt")) == ("a", "b")


async def test_move_of_a_symlink_moves_the_link(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/f.txt", "x")
    os.symlink("f.txt", f"{ws}/link")
    outcome = await fs.move(await fs.resolve("link"), await fs.resolve("moved"))
    assert outcome.type == "symlink"
    assert os.readlink(f"{ws}/moved") == "f.txt"
    assert _names(ws) == ["f.txt", "moved"]


async def test_move_of_a_directory_moves_its_tree(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/d/e/f.txt", "x")
    assert (await fs.move(await fs.resolve("d"), await fs.resolve("n/d2"))).type == "directory"
    assert _get(f"{ws}/n/d2/e/f.txt") == "x"
    assert _names(ws) == ["n"]


async def test_a_directory_never_replaces_a_non_empty_directory(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/d/f.txt", "x")
    _put(f"{ws}/e/g.txt", "y")
    err = await _error(fs.move(await fs.resolve("d"), await fs.resolve("e"), replace=True))
    assert (err.code, err.message) == (
        FsErrorCode.FS_NOT_EMPTY,
        f'cannot move to "{ws}/e": directory not empty',
    )
    assert (_names(f"{ws}/d"), _names(f"{ws}/e")) == (["f.txt"], ["g.txt"])


async def test_a_directory_does_not_replace_a_file(fs: LocalFileSystem, ws: str) -> None:
    os.mkdir(f"{ws}/d")
    _put(f"{ws}/f.txt", "x")
    err = await _error(fs.move(await fs.resolve("d"), await fs.resolve("f.txt"), replace=True))
    assert (err.code, err.message) == (
        FsErrorCode.FS_NOT_DIRECTORY,
        f'cannot move to "{ws}/f.txt": not a directory',
    )


async def test_a_file_does_not_replace_a_directory(fs: LocalFileSystem, ws: str) -> None:
    os.mkdir(f"{ws}/d")
    _put(f"{ws}/f.txt", "x")
    err = await _error(fs.move(await fs.resolve("f.txt"), await fs.resolve("d"), replace=True))
    assert (err.code, err.message) == (
        FsErrorCode.FS_NOT_REGULAR_FILE,
        f'cannot move to "{ws}/d": not a regular file',
    )


async def test_a_directory_cannot_move_into_itself(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/d/f.txt", "x")
    err = await _error(fs.move(await fs.resolve("d"), await fs.resolve("d/sub/d")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_IO_ERROR,
        f'cannot move "{ws}/d": a directory cannot move into itself',
    )
    assert _names(f"{ws}/d") == ["f.txt"]


async def test_a_directory_cannot_move_into_itself_through_a_link(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/d/f.txt", "x")
    os.symlink("d", f"{ws}/alias")
    err = await _error(fs.move(await fs.resolve("d"), await fs.resolve("alias/d")))
    assert err.message == f'cannot move "{ws}/d": a directory cannot move into itself'
    assert _names(f"{ws}/d") == ["f.txt"]


async def test_moving_one_hard_link_onto_another_leaves_one_name(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/a.txt", "x")
    os.link(f"{ws}/a.txt", f"{ws}/b.txt")
    outcome = await fs.move(await fs.resolve("a.txt"), await fs.resolve("b.txt"), replace=True)
    assert outcome.replaced is True
    assert _names(ws) == ["b.txt"]


async def test_a_move_of_an_entry_onto_itself_does_nothing(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/d/f.txt", "x")
    outcome = await fs.move(await fs.resolve("d"), await fs.resolve("d"), replace=True)
    assert (outcome.type, outcome.replaced) == ("directory", False)
    assert _names(f"{ws}/d") == ["f.txt"]


async def test_a_directory_into_itself_is_refused_before_its_destination_is_looked_at(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/d/sub/f.txt", "x")
    err = await _error(fs.move(await fs.resolve("d"), await fs.resolve("d/sub")))
    assert err.message == f'cannot move "{ws}/d": a directory cannot move into itself'


async def test_a_destination_outside_is_refused_before_a_missing_source_is_reported(
    fs: LocalFileSystem, ws: str, base: str
) -> None:
    os.symlink(f"{base}/outside", f"{ws}/out")
    err = await _error(fs.move(await fs.resolve("nope.txt"), _target(fs, "out/a.txt")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_OUTSIDE_WORKSPACE,
        f'cannot move to "{ws}/out/a.txt": outside the workspace',
    )


async def test_a_stale_source_guard_changes_nothing(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/a.txt", "a")
    err = await _error(
        fs.move(
            await fs.resolve("a.txt"),
            await fs.resolve("b.txt"),
            expected=MoveGuard(source=AtVersion("0:0:0:0:0")),
        )
    )
    assert (err.code, err.message) == (
        FsErrorCode.FS_STALE_VERSION,
        f'cannot move "{ws}/a.txt": file changed since it was read',
    )
    assert _names(ws) == ["a.txt"]


async def test_a_stale_destination_guard_changes_nothing(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/a.txt", "a")
    _put(f"{ws}/b.txt", "b")
    err = await _error(
        fs.move(
            await fs.resolve("a.txt"),
            await fs.resolve("b.txt"),
            replace=True,
            expected=MoveGuard(destination=AtVersion("0:0:0:0:0")),
        )
    )
    assert (err.code, err.message) == (
        FsErrorCode.FS_STALE_VERSION,
        f'cannot move to "{ws}/b.txt": file changed since it was read',
    )
    assert (_get(f"{ws}/a.txt"), _get(f"{ws}/b.txt")) == ("a", "b")


async def test_a_missing_source_is_not_found_and_makes_no_directory(
    fs: LocalFileSystem, ws: str
) -> None:
    err = await _error(fs.move(await fs.resolve("a.txt"), await fs.resolve("p/b.txt")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_NOT_FOUND,
        f'cannot move "{ws}/a.txt": not found',
    )
    assert _names(ws) == []


async def test_the_workspace_root_is_never_moved(fs: LocalFileSystem, ws: str) -> None:
    err = await _error(fs.move(await fs.resolve("."), await fs.resolve("d")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_PERMISSION_DENIED,
        f'cannot move "{ws}": it is a workspace root',
    )


async def test_the_workspace_root_is_never_replaced(fs: LocalFileSystem, ws: str) -> None:
    os.mkdir(f"{ws}/d")
    err = await _error(fs.move(await fs.resolve("d"), await fs.resolve("."), replace=True))
    assert (err.code, err.message) == (
        FsErrorCode.FS_PERMISSION_DENIED,
        f'cannot move to "{ws}": it is a workspace root',
    )
    assert _names(ws) == ["d"]


async def test_a_move_to_a_destination_outside_is_refused_and_creates_nothing_there(
    fs: LocalFileSystem, ws: str, base: str
) -> None:
    _put(f"{ws}/a.txt", "a")
    os.symlink(f"{base}/outside", f"{ws}/out")
    err = await _error(fs.move(await fs.resolve("a.txt"), _target(fs, "out/new/a.txt")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_OUTSIDE_WORKSPACE,
        f'cannot move to "{ws}/out/new/a.txt": outside the workspace',
    )
    assert _names(f"{base}/outside") == ["secret.txt"]
    assert _names(ws) == ["a.txt", "out"]


async def test_a_move_of_a_source_outside_is_refused(
    fs: LocalFileSystem, ws: str, base: str
) -> None:
    os.symlink(f"{base}/outside", f"{ws}/out")
    err = await _error(fs.move(_target(fs, "out/secret.txt"), await fs.resolve("stolen.txt")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_OUTSIDE_WORKSPACE,
        f'cannot move "{ws}/out/secret.txt": outside the workspace',
    )
    assert _get(f"{base}/outside/secret.txt") == "SECRET"


async def test_a_move_into_a_read_only_root_is_refused(ws: str, base: str) -> None:
    fs = LocalFileSystem(ws, read_only_roots=[f"{base}/outside"])
    _put(f"{ws}/a.txt", "a")
    err = await _error(
        fs.move(await fs.resolve("a.txt"), await fs.resolve(f"{base}/outside/a.txt"))
    )
    assert (err.code, err.message) == (
        FsErrorCode.FS_READ_ONLY,
        f'cannot move to "{base}/outside/a.txt": read-only workspace',
    )
    assert _names(ws) == ["a.txt"]


async def test_a_move_on_a_read_only_backend_is_refused(ws: str) -> None:
    fs = LocalFileSystem(ws, read_only=True)
    _put(f"{ws}/a.txt", "a")
    err = await _error(fs.move(await fs.resolve("a.txt"), await fs.resolve("b.txt")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_READ_ONLY,
        f'cannot move "{ws}/a.txt": read-only workspace',
    )


async def test_move_without_containment_moves_between_any_directories(base: str) -> None:
    fs = LocalFileSystem(base, roots=None)
    await fs.move(await fs.resolve("outside/secret.txt"), await fs.resolve("ws/n/s.txt"))
    assert _get(f"{base}/ws/n/s.txt") == "SECRET"
    assert _names(f"{base}/outside") == []


async def test_a_move_waiting_for_another_process_lock_can_be_cancelled_and_does_nothing(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/a.txt", "a")
    holder = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)  # another open file description
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with anyio.move_on_after(0.2) as scope:
            await fs.move(await fs.resolve("a.txt"), await fs.resolve("b.txt"))
        assert scope.cancelled_caught
    finally:
        os.close(holder)
    assert _names(ws) == ["a.txt"]


async def test_a_move_waits_for_the_destination_directory_lock(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/a.txt", "a")
    os.mkdir(f"{ws}/d")
    holder = os.open(f"{ws}/d", os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with anyio.move_on_after(0.2) as scope:
            await fs.move(await fs.resolve("a.txt"), await fs.resolve("d/b.txt"))
        assert scope.cancelled_caught
    finally:
        os.close(holder)
    assert _names(ws) == ["a.txt", "d"]
    await fs.move(await fs.resolve("a.txt"), await fs.resolve("d/b.txt"))
    assert _names(f"{ws}/d") == ["b.txt"]


# -- across filesystems ----------------------------------------------------------------------


@pytest.fixture
def elsewhere(other_filesystem: str) -> str:
    return other_filesystem


async def test_a_file_moves_across_filesystems_by_copy_then_publish(
    ws: str, elsewhere: str
) -> None:
    fs = LocalFileSystem(ws, roots=[ws, elsewhere])
    _put(f"{ws}/a.txt", "across\n" * 1000)
    os.chmod(f"{ws}/a.txt", 0o640)
    mtime = os.stat(f"{ws}/a.txt").st_mtime_ns
    outcome = await fs.move(await fs.resolve("a.txt"), await fs.resolve(f"{elsewhere}/n/a.txt"))
    info = await fs.stat(await fs.resolve(f"{elsewhere}/n/a.txt"))
    assert info is not None and outcome.version == info.version
    assert _get(f"{elsewhere}/n/a.txt") == "across\n" * 1000
    moved = os.stat(f"{elsewhere}/n/a.txt")
    assert (moved.st_mode & 0o777, moved.st_mtime_ns) == (0o640, mtime)
    assert _names(ws) == []
    assert _names(f"{elsewhere}/n") == ["a.txt"]


async def test_a_symlink_moves_across_filesystems_as_a_link(ws: str, elsewhere: str) -> None:
    fs = LocalFileSystem(ws, roots=[ws, elsewhere])
    os.symlink("somewhere", f"{ws}/link")
    outcome = await fs.move(await fs.resolve("link"), _target(fs, f"{elsewhere}/link"))
    assert (outcome.type, outcome.version) == ("symlink", None)
    assert os.readlink(f"{elsewhere}/link") == "somewhere"
    assert _names(ws) == []


async def test_a_file_moved_across_filesystems_without_replace_keeps_the_destination(
    ws: str, elsewhere: str
) -> None:
    fs = LocalFileSystem(ws, roots=[ws, elsewhere])
    _put(f"{ws}/a.txt", "a")
    _put(f"{elsewhere}/a.txt", "there")
    err = await _error(fs.move(await fs.resolve("a.txt"), await fs.resolve(f"{elsewhere}/a.txt")))
    assert err.code == FsErrorCode.FS_ALREADY_EXISTS
    assert (_get(f"{ws}/a.txt"), _names(elsewhere)) == ("a", ["a.txt"])


async def test_a_directory_across_filesystems_is_refused_and_both_sides_stay(
    ws: str, elsewhere: str
) -> None:
    fs = LocalFileSystem(ws, roots=[ws, elsewhere])
    _put(f"{ws}/d/f.txt", "x")
    err = await _error(fs.move(await fs.resolve("d"), await fs.resolve(f"{elsewhere}/d")))
    assert (err.code, err.message) == (
        FsErrorCode.FS_IO_ERROR,
        f'cannot move "{ws}/d": a directory cannot move across filesystems',
    )
    assert _names(f"{ws}/d") == ["f.txt"]
    assert _names(elsewhere) == []


async def test_a_cancelled_copy_across_filesystems_leaves_both_paths_as_before(
    ws: str,
    elsewhere: str,
    monkeypatch: pytest.MonkeyPatch,
    cancel_from_worker: Callable[[anyio.CancelScope], None],
) -> None:
    fs = LocalFileSystem(ws, roots=[ws, elsewhere])
    big = "x" * (64 << 20)
    _put(f"{ws}/big.txt", big)
    scope = anyio.CancelScope()
    copied: list[int] = []
    real_sendfile = os.sendfile

    def sendfile(out_fd: int, in_fd: int, offset: int | None, count: int) -> int:
        copied.append(real_sendfile(out_fd, in_fd, offset, count))
        if len(copied) == 2:  # cancelled in the middle of the copy
            cancel_from_worker(scope)
        return copied[-1]

    monkeypatch.setattr(os, "sendfile", sendfile)
    with scope:
        await fs.move(await fs.resolve("big.txt"), await fs.resolve(f"{elsewhere}/big.txt"))
    assert scope.cancelled_caught
    assert len(copied) == 2 and sum(copied) < len(big)
    assert _names(ws) == ["big.txt"]
    assert os.stat(f"{ws}/big.txt").st_size == len(big)
    assert _names(elsewhere) == []


# -- apply_changes ---------------------------------------------------------------------------


async def test_apply_changes_writes_and_deletes_together(fs: LocalFileSystem, ws: str) -> None:
    _put(f"{ws}/old.txt", "old")
    outcomes = await fs.apply_changes(
        [
            WriteChange(await fs.resolve("new/a.txt"), "a"),
            DeleteChange(await fs.resolve("old.txt")),
        ]
    )
    written = outcomes[0]
    assert isinstance(written, FsWriteOutcome)
    assert (written.operation, written.before, written.after) == ("create", None, "a")
    assert outcomes[1] == FsDeleteOutcome("file")
    assert (_names(ws), _get(f"{ws}/new/a.txt")) == (["new"], "a")


async def test_apply_changes_with_one_stale_guard_publishes_nothing(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/old.txt", "old")
    err = await _error(
        fs.apply_changes(
            [
                WriteChange(await fs.resolve("new/a.txt"), "a"),
                DeleteChange(await fs.resolve("old.txt"), AtVersion("0:0:0:0:0")),
            ]
        )
    )
    assert not isinstance(err, FsBatchError)
    assert (err.code, err.message) == (
        FsErrorCode.FS_STALE_VERSION,
        f'cannot delete "{ws}/old.txt": file changed since it was read',
    )
    assert _names(ws) == ["old.txt"]  # the new parent directory was removed again


async def test_apply_changes_checks_a_directory_is_empty_before_publishing_anything(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/d/f.txt", "x")
    _put(f"{ws}/a.txt", "a")
    err = await _error(
        fs.apply_changes(
            [
                DeleteChange(await fs.resolve("a.txt")),
                DeleteChange(await fs.resolve("d")),
            ]
        )
    )
    assert (err.code, err.message) == (
        FsErrorCode.FS_NOT_EMPTY,
        f'cannot delete "{ws}/d": directory not empty',
    )
    assert _names(ws) == ["a.txt", "d"]


async def test_apply_changes_failing_midway_says_how_many_were_applied(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/old.txt", "old")
    err = await _error(
        fs.apply_changes(
            [
                DeleteChange(await fs.resolve("old.txt")),
                WriteChange(await fs.resolve("b.txt"), "lone surrogate \udc80"),
            ]
        )
    )
    assert isinstance(err, FsBatchError)
    assert (err.code, err.message, err.applied) == (
        FsErrorCode.FS_NOT_TEXT,
        f'cannot write "{ws}/b.txt": invalid UTF-8 text',
        1,
    )
    assert _names(ws) == []


async def test_apply_changes_refuses_two_changes_of_one_target(fs: LocalFileSystem) -> None:
    target = await fs.resolve("a.txt")
    with pytest.raises(ValueError, match="two changes of one target"):
        await fs.apply_changes([WriteChange(target, "a"), DeleteChange(target)])


async def test_apply_changes_refuses_a_target_outside_before_publishing_anything(
    fs: LocalFileSystem, ws: str, base: str
) -> None:
    os.symlink(f"{base}/outside", f"{ws}/out")
    err = await _error(
        fs.apply_changes(
            [
                WriteChange(await fs.resolve("a.txt"), "a"),
                DeleteChange(_target(fs, "out/secret.txt")),
            ]
        )
    )
    assert (err.code, err.message) == (
        FsErrorCode.FS_OUTSIDE_WORKSPACE,
        f'cannot delete "{ws}/out/secret.txt": outside the workspace',
    )
    assert _names(ws) == ["out"]
    assert _get(f"{base}/outside/secret.txt") == "SECRET"


async def test_apply_changes_holds_every_directory_lock_before_checking(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/d/old.txt", "old")
    holder = os.open(f"{ws}/d", os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with anyio.move_on_after(0.2) as scope:
            await fs.apply_changes(
                [
                    WriteChange(await fs.resolve("a.txt"), "a"),
                    DeleteChange(await fs.resolve("d/old.txt")),
                ]
            )
        assert scope.cancelled_caught
    finally:
        os.close(holder)
    assert _names(ws) == ["d"]
    assert _names(f"{ws}/d") == ["old.txt"]


# -- cancellation ----------------------------------------------------------------------------

CANCEL_POINTS = [(0, 0.0), (1, 0.0), (2, 0.0), (3, 0.0), (0, 0.001), (0, 0.005), (0, 0.02)]
"""Scheduler checkpoints, then seconds, before the cancel (``run_then_cancel``)."""


async def test_a_recursive_delete_cancelled_at_any_point_leaves_the_tree_whole_or_gone(
    fs: LocalFileSystem, ws: str
) -> None:
    outcomes = {True: 0, False: 0}
    for steps, delay in CANCEL_POINTS:
        for i in range(300):
            _put(f"{ws}/d/{i % 10}/f{i}.txt", "x")

        async def delete() -> object:
            return await fs.delete(await fs.resolve("d"), recursive=True)

        completed = await run_then_cancel(delete, steps=steps, delay=delay)
        outcomes[completed] += 1
        if completed:
            assert _names(ws) == []
        else:
            assert _names(ws) == ["d"]
            assert sum(len(files) for _, _, files in os.walk(f"{ws}/d")) == 300
            shutil.rmtree(f"{ws}/d")
    assert outcomes[False] > 0  # cancellation before the commit was exercised


async def test_a_move_cancelled_at_any_point_leaves_both_paths_before_or_after(
    fs: LocalFileSystem, ws: str
) -> None:
    outcomes = {True: 0, False: 0}
    for steps, delay in CANCEL_POINTS:
        _put(f"{ws}/a.txt", "a")

        async def move() -> object:
            return await fs.move(await fs.resolve("a.txt"), await fs.resolve("p/b.txt"))

        completed = await run_then_cancel(move, steps=steps, delay=delay)
        outcomes[completed] += 1
        if completed:
            assert (_names(ws), _names(f"{ws}/p")) == (["p"], ["b.txt"])
            shutil.rmtree(f"{ws}/p")
        else:
            assert _names(ws) == ["a.txt"]  # no parent directory left behind either
    assert outcomes[False] > 0


async def test_a_delete_waiting_for_another_process_lock_can_be_cancelled_and_does_nothing(
    fs: LocalFileSystem, ws: str
) -> None:
    _put(f"{ws}/d/f.txt", "x")
    holder = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with anyio.move_on_after(0.2) as scope:
            await fs.delete(await fs.resolve("d"), recursive=True)
        assert scope.cancelled_caught
    finally:
        os.close(holder)
    assert _names(f"{ws}/d") == ["f.txt"]
