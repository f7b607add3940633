"""``LocalFileSystem.hold_directory``: a directory held open beneath the workspace for a tool.

The descriptors it hands out are reached by the backend's own containment
walk, so the refusals are the 3.3 ones, with the caller's verb.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dsh_fs import FsError, FsErrorCode
from dsh_fs_local import LocalFileSystem

pytestmark = pytest.mark.anyio


def make_tree(tmp_path: Path) -> tuple[str, str]:
    """::

    <base>/ws/src/a.py      the workspace
    <base>/ws/out -> ../outside
    <base>/ws/file.txt
    <base>/lib/             a read-only root
    <base>/outside/secret
    """
    base = os.path.realpath(tmp_path)
    ws = os.path.join(base, "ws")
    os.makedirs(os.path.join(ws, "src"))
    os.makedirs(os.path.join(base, "lib"))
    os.makedirs(os.path.join(base, "outside"))
    Path(ws, "src", "a.py").write_text("x = 1\n")
    Path(ws, "file.txt").write_text("text\n")
    Path(base, "outside", "secret").write_text("SECRET\n")
    os.symlink("../outside", os.path.join(ws, "out"))
    return base, ws


async def test_hold_directory_gives_a_listable_descriptor_and_every_readable_root(
    tmp_path: Path,
) -> None:
    base, ws = make_tree(tmp_path)
    fs = LocalFileSystem(ws, read_only_roots=[os.path.join(base, "lib")])
    held = await fs.hold_directory(await fs.resolve("src"), verb="grep")
    assert held is not None
    with held:
        assert os.listdir(held.fd) == ["a.py"]
        assert held.path == os.path.join(ws, "src")
        roots = sorted(os.readlink(f"/proc/self/fd/{fd}") for fd in held.root_fds)
        assert roots == [os.path.join(base, "lib"), ws]
        fds = (held.fd, *held.root_fds)
    assert held.fd == -1 and held.root_fds == ()
    for fd in fds:
        with pytest.raises(OSError):
            os.fstat(fd)


async def test_hold_directory_refuses_a_link_that_leaves_with_the_callers_verb(
    tmp_path: Path,
) -> None:
    _, ws = make_tree(tmp_path)
    fs = LocalFileSystem(ws)
    target = await fs.resolve(os.path.join(ws, "src"))
    # Swapped for an outside link after resolve: the held descriptor is refused, not opened.
    os.rename(os.path.join(ws, "src"), os.path.join(ws, "src-moved"))
    os.symlink("../outside", os.path.join(ws, "src"))
    with pytest.raises(FsError) as caught:
        await fs.hold_directory(target, verb="glob")
    assert caught.value.code == FsErrorCode.FS_OUTSIDE_WORKSPACE
    assert str(caught.value) == f'cannot glob "{ws}/src": outside the workspace'


async def test_hold_directory_of_a_file_or_a_missing_directory_fails_like_list(
    tmp_path: Path,
) -> None:
    _, ws = make_tree(tmp_path)
    fs = LocalFileSystem(ws)
    with pytest.raises(FsError) as caught:
        await fs.hold_directory(await fs.resolve("file.txt"), verb="grep")
    assert str(caught.value) == f'cannot grep "{ws}/file.txt": not a directory'
    with pytest.raises(FsError) as caught:
        await fs.hold_directory(await fs.resolve("gone"), verb="grep")
    assert str(caught.value) == f'cannot grep "{ws}/gone": not found'


async def test_hold_directory_is_not_offered_without_roots(
    tmp_path: Path,
) -> None:
    _, ws = make_tree(tmp_path)
    uncontained = LocalFileSystem(ws, roots=None)
    assert await uncontained.hold_directory(await uncontained.resolve("src"), verb="grep") is None
