"""The optional ``hold_directory``: off by default; ``HeldDirectory`` owns its descriptors."""

from __future__ import annotations

import os

import pytest
from dsh_fs import FsTarget, HeldDirectory
from dsh_fs.testing import ForwardingFileSystem
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


async def test_a_forwarding_wrapper_forwards_the_optional_methods() -> None:
    """A wrapper keeps what its backend offers beyond the eight primitives."""
    calls: list[str] = []

    class Inner(MemoryFileSystem):
        async def hold_directory(self, target: FsTarget, *, verb: str) -> HeldDirectory | None:
            calls.append(f"hold {verb}")
            return None

        async def connect(self) -> None:
            calls.append("connect")

        async def aclose(self) -> None:
            calls.append("aclose")

    wrapper = ForwardingFileSystem(Inner(cwd="/w"))
    await wrapper.connect()
    assert await wrapper.hold_directory(await wrapper.resolve("."), verb="grep") is None
    await wrapper.aclose()
    assert calls == ["connect", "hold grep", "aclose"]
