"""A patch process killed (SIGKILL) at random moments: every file is before or after."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import anyio
from dsh_fs_local import LocalFileSystem
from dsh_tool_fs import ToolFs
from dsh_tool_fs_patch import APPLY_PATCH

FILES = ("a.txt", "b/b.txt", "c.txt")
TRIALS = 20
FILLER = "filler line that no patch touches\n" * 5_000  # about 170 kB


def _content(version: int) -> str:
    return f"version {version}\n{FILLER}"


def _version_of(data: bytes) -> int:
    head, rest = data.decode().split("\n", 1)
    assert rest == FILLER, "a partial or mixed file"
    return int(head.removeprefix("version "))


def _bump(version: int) -> str:
    lines = ["*** Begin Patch"]
    for name in FILES:
        lines += [f"*** Update File: {name}", f"-version {version}", f"+version {version + 1}"]
    return "\n".join([*lines, "*** End Patch"])


def _fork_patcher(root: str, start: int) -> tuple[int, int]:
    """Fork a child that patches the three files to ever newer versions until killed; it
    writes how long its first patch took once that one is done."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child, killed by the parent

        async def loop() -> None:
            toolfs = ToolFs(LocalFileSystem(root), tools=(APPLY_PATCH,))
            version = start
            while True:
                began = time.monotonic()
                result = await toolfs.execute("apply_patch", {"input": _bump(version)})
                if result.is_error:
                    os._exit(2)
                if version == start:  # ready: the parent kills within a few patches' time
                    os.write(write_end, f"{time.monotonic() - began:.6f}\n".encode())
                version += 1

        try:
            anyio.run(loop)
        finally:
            os._exit(1)
    os.close(write_end)
    return pid, read_end


def test_a_patch_killed_at_random_moments_leaves_each_file_before_or_after(
    tmp_path: Path,
) -> None:
    root = os.path.realpath(tmp_path)
    for name in FILES:
        os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
        Path(root, name).write_text(_content(0))
    rng = random.Random(30)
    mixed = 0
    version = 0
    for _ in range(TRIALS):
        pid, ready = _fork_patcher(root, version)
        one_patch = float(os.read(ready, 64))  # how long a patch takes here: kill within two
        os.close(ready)
        time.sleep(rng.uniform(0.0, 2 * one_patch))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status), "the patcher stopped on its own: a patch failed"
        versions = [_version_of(Path(root, name).read_bytes()) for name in FILES]
        # each file before or after the batch the kill interrupted
        assert max(versions) - min(versions) <= 1
        if len(set(versions)) > 1:
            mixed += 1
            # finish that batch, as a model told what changed would
            for name, v in zip(FILES, versions, strict=True):
                if v < max(versions):
                    Path(root, name).write_text(_content(max(versions)))
        version = max(versions)
    print(f"kills: {TRIALS}, landed between two files of a batch: {mixed}, last version: {version}")
    assert mixed > 0, "no kill landed between two files of a batch: the test proves nothing"
