"""The optional ``hold_directory``: off by default; ``HeldDirectory`` owns its descriptors."""

from __future__ import annotations

import os

import pytest
from dsh_fs import HeldDirectory
from dsh_fs_memory import MemoryFileSystem

pytestmark = pytest.mark.anyio


async def test_a_backend_that_does_not_override_hold_directory_offers_none() -> None:
    fs = MemoryFileSystem("/ws", files={"/ws/a.txt": "a\n"})
    assert await fs.hold_directory(await fs.resolve("/ws"), verb="grep") is None


def test_a_held_directory_closes_every_descriptor_once() -> None:
    fds = [os.open("/", os.O_RDONLY | os.O_DIRECTORY) for _ in range(3)]
    held = HeldDirectory(fds[0], fds[1:], "/")
    with held:
        assert os.listdir(held.fd)
    held.close()  # idempotent
    for fd in fds:
        with pytest.raises(OSError):
            os.fstat(fd)
