"""The containment walk over SFTP: the walks of one batch share their lookups, and each
still refuses what leaves the workspace (against a real ``sshd``)."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import asyncssh
import pytest
from dsh_fs_sftp._loop import SshLoop
from dsh_fs_sftp._remote import Remote
from dsh_fs_sftp._walk import Lookups, Outside
from dsh_fs_sftp.testing import SshServer

pytestmark = pytest.mark.anyio

T = TypeVar("T")


class CountingClient:
    """An SFTP client that counts the ``lstat`` of each path it sends."""

    def __init__(self, sftp: asyncssh.SFTPClient) -> None:
        self._sftp = sftp
        self.asked: Counter[str] = Counter()

    async def lstat(self, path: str) -> asyncssh.SFTPAttrs:
        self.asked[path] += 1
        return await self._sftp.lstat(path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sftp, name)


async def walks(remote: Remote, paths: list[str], *, batch: bool) -> tuple[list[str], Counter[str]]:
    """On the SSH loop: the backend's walks of ``paths`` at once (sharing one ``Lookups``
    when ``batch``), what each ended with, and the lookups the server was sent."""
    client = CountingClient(await remote.connect())
    shared = Lookups() if batch else None

    async def walk(path: str) -> str:
        try:
            spot = await remote.walker.walk(client, path, lookups=shared)  # type: ignore[arg-type]
        except Outside:
            return "outside"
        return spot.path

    return list(await asyncio.gather(*(walk(p) for p in paths))), client.asked


async def on_ssh_loop(walked: Coroutine[Any, Any, T]) -> T:
    """``walked`` run on the backend's SSH loop (asyncssh's), from an asyncio or trio test."""
    return await SshLoop.shared().run(walked, lambda result: result)


def tree(tmp_path: Path) -> tuple[str, str, list[str]]:
    """``<root>/a/b/{c,d,e}`` and ``<root>/a/out`` → a directory outside the root."""
    root = tmp_path / "root"
    for name in ("c", "d", "e"):
        (root / "a" / "b" / name).mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "a" / "out").symlink_to(tmp_path / "elsewhere")
    real = os.path.realpath(root)
    return real, f"{real}/a", [f"{real}/a/b/{name}" for name in ("c", "d", "e")]


async def test_the_walks_of_a_batch_look_up_a_shared_directory_once(
    sshd: SshServer, tmp_path: Path
) -> None:
    root, a, paths = tree(tmp_path)
    async with sshd.backend(root) as fs:
        found, asked = await on_ssh_loop(walks(fs._remote, paths, batch=True))
        assert found == paths
        assert asked == Counter({a: 1, f"{a}/b": 1, **dict.fromkeys(paths, 1)})
        # Alone, each walk looks up every directory on its way.
        found, asked = await on_ssh_loop(walks(fs._remote, paths, batch=False))
    assert found == paths
    assert asked == Counter({a: 3, f"{a}/b": 3, **dict.fromkeys(paths, 1)})


async def test_a_walk_that_leaves_the_root_is_refused_within_a_batch(
    sshd: SshServer, tmp_path: Path
) -> None:
    root, a, paths = tree(tmp_path)
    batch = [*paths, f"{a}/out", f"{a}/out/x"]
    async with sshd.backend(root) as fs:
        found, _ = await on_ssh_loop(walks(fs._remote, batch, batch=True))
    assert found == [*paths, "outside", "outside"]
