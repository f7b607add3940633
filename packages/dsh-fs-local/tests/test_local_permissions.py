"""``FS_PERMISSION_DENIED`` from the host, checked as user ``nobody``.

CI runs as root, which ignores permission bits; each check runs in a forked
child that dropped to ``nobody`` (see the ``as_nobody`` fixture).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from dsh_fs import FsEditRequest, FsError
from dsh_fs_local import LocalFileSystem

AsNobody = Callable[[Callable[[], Any]], Any]


def outcome_of(call: Callable[[LocalFileSystem], Awaitable[object]]) -> Callable[[], Any]:
    """A child-side function: run ``call`` and return ``(message, code)`` or the value."""

    def run() -> Any:
        async def main() -> Any:
            fs = LocalFileSystem(cwd="/")
            try:
                with anyio.fail_after(10):
                    return await call(fs)
            except FsError as err:
                return (str(err), err.code.value)

        return anyio.run(main)

    return run


def denied(verb: str, path: Path) -> tuple[str, str]:
    """What a child returns for a refused ``verb`` of ``path``: message and code."""
    return (f'cannot {verb} "{path}": permission denied', "FS_PERMISSION_DENIED")


def test_read_of_an_unreadable_file_is_permission_denied(
    as_nobody: AsNobody, reachable_dir: Path
) -> None:
    secret = reachable_dir / "secret.txt"
    secret.write_text("s\n")
    secret.chmod(0o600)

    async def read(fs: LocalFileSystem) -> object:
        return await fs.read_text(await fs.resolve(str(secret)))

    async def stream(fs: LocalFileSystem) -> object:
        return [c async for c in fs.stream_text(await fs.resolve(str(secret)))]

    expected = denied("read", secret)
    assert as_nobody(outcome_of(read)) == expected
    assert as_nobody(outcome_of(stream)) == expected


def test_read_under_an_unreachable_directory_is_permission_denied(
    as_nobody: AsNobody, reachable_dir: Path
) -> None:
    hidden = reachable_dir / "closed"
    hidden.mkdir()
    (hidden / "f.txt").write_text("x")
    hidden.chmod(0o700)
    path = hidden / "f.txt"

    async def read(fs: LocalFileSystem) -> object:
        return await fs.read_text(await fs.resolve(str(path)))

    assert as_nobody(outcome_of(read)) == denied("read", path)


def test_list_of_an_unreadable_directory_is_permission_denied(
    as_nobody: AsNobody, reachable_dir: Path
) -> None:
    closed = reachable_dir / "closed"
    closed.mkdir()
    closed.chmod(0o711)

    async def listing(fs: LocalFileSystem) -> object:
        return await fs.list_dir(await fs.resolve(str(closed)))

    assert as_nobody(outcome_of(listing)) == denied("list", closed)


def test_write_into_a_read_only_directory_is_permission_denied_and_leaves_nothing(
    as_nobody: AsNobody, reachable_dir: Path
) -> None:
    ro = reachable_dir / "ro"
    ro.mkdir()
    (ro / "f.txt").write_text("old\n")
    (ro / "f.txt").chmod(0o666)
    ro.chmod(0o755)
    path = ro / "f.txt"

    async def write(fs: LocalFileSystem) -> object:
        return await fs.write_text(await fs.resolve(str(path)), "new\n")

    async def edit(fs: LocalFileSystem) -> object:
        return await fs.edit_text(await fs.resolve(str(path)), FsEditRequest("old", "new"))

    async def create(fs: LocalFileSystem) -> object:
        return await fs.write_text(await fs.resolve(str(ro / "sub" / "new.txt")), "x")

    assert as_nobody(outcome_of(write)) == denied("write", path)
    assert as_nobody(outcome_of(edit)) == denied("edit", path)
    assert as_nobody(outcome_of(create)) == denied("write", ro / "sub" / "new.txt")
    assert sorted(os.listdir(ro)) == ["f.txt"]
    assert path.read_text() == "old\n"


def test_a_read_only_file_in_a_writable_directory_is_not_replaced(
    as_nobody: AsNobody, reachable_dir: Path
) -> None:
    """Rename would be allowed by the directory; the file's own bits still say no."""
    open_dir = reachable_dir / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    path = open_dir / "protected.txt"
    path.write_text("keep\n")
    path.chmod(0o444)

    async def write(fs: LocalFileSystem) -> object:
        return await fs.write_text(await fs.resolve(str(path)), "changed\n")

    async def edit(fs: LocalFileSystem) -> object:
        return await fs.edit_text(await fs.resolve(str(path)), FsEditRequest("keep", "x"))

    assert as_nobody(outcome_of(write)) == denied("write", path)
    assert as_nobody(outcome_of(edit)) == denied("edit", path)
    assert path.read_text() == "keep\n"
    assert sorted(os.listdir(open_dir)) == ["protected.txt"]


def test_stat_under_an_unreachable_directory_is_permission_denied(
    as_nobody: AsNobody, reachable_dir: Path
) -> None:
    hidden = reachable_dir / "closed"
    hidden.mkdir()
    hidden.chmod(0o700)
    path = hidden / "f.txt"

    async def stat(fs: LocalFileSystem) -> object:
        return await fs.stat(await fs.resolve(str(path)))

    assert as_nobody(outcome_of(stat)) == denied("read", path)


def test_the_child_really_is_unprivileged(as_nobody: AsNobody) -> None:
    if os.geteuid() != 0:
        pytest.skip("not running as root: the checks above run directly")
    assert as_nobody(os.geteuid) == 65534


def test_delete_in_a_directory_this_user_may_not_write_is_permission_denied(
    as_nobody: AsNobody, reachable_dir: Path
) -> None:
    kept = reachable_dir / "kept.txt"
    kept.write_text("k\n")  # in root's 0o755 directory

    async def delete(fs: LocalFileSystem) -> object:
        return await fs.delete(await fs.resolve(str(kept)))

    assert as_nobody(outcome_of(delete)) == denied("delete", kept)
    assert kept.read_text() == "k\n"


def test_a_tree_that_cannot_be_deleted_whole_is_put_back_with_what_remains(
    as_nobody: AsNobody, reachable_dir: Path
) -> None:
    """nobody may rename its own tree aside, but not empty root's directory inside it."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make a directory another user owns")
    tree = reachable_dir / "mine" / "tree"
    (tree / "theirs").mkdir(parents=True)
    (tree / "theirs" / "f.txt").write_text("root's\n")
    (tree / "own.txt").write_text("mine\n")
    for path in (reachable_dir / "mine", tree, tree / "own.txt"):
        os.chown(path, 65534, 65534)

    async def delete(fs: LocalFileSystem) -> object:
        return await fs.delete(await fs.resolve(str(tree)), recursive=True)

    assert as_nobody(outcome_of(delete)) == denied("delete", tree)
    assert sorted(os.listdir(reachable_dir / "mine")) == ["tree"]
    assert (tree / "theirs" / "f.txt").read_text() == "root's\n"
