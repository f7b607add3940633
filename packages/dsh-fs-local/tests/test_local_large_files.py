"""Bounded memory for huge files and huge lines (SPEC 2.3 stream_text).

Each measurement runs in a fresh interpreter (in a forked grandchild, since
``ru_maxrss`` is inherited across ``execve``): ``ru_maxrss`` (peak resident
set, KiB on Linux) is read after the imports and again after streaming, and
the growth must stay under 64 MB.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

MEASURE = r"""
import json, os, resource, sys, traceback, anyio
from dsh_fs_local import LocalFileSystem

# ru_maxrss survives execve: a child of a big process (pytest) starts with its
# parent's peak. A forked grandchild starts from its own size, so it measures.
pid = os.fork()
if pid:
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))

async def main(path, how):
    fs = LocalFileSystem(os.path.dirname(path))
    target = await fs.resolve(path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    chars = chunks = 0
    if how == "read_text":  # the control: a whole read must show up
        chars, chunks = len(await fs.read_text(target)), 1
    else:
        async for chunk in fs.stream_text(target):
            chars += len(chunk)
            chunks += 1
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"chars": chars, "chunks": chunks, "growth_kib": after - before}))

try:
    anyio.run(main, sys.argv[1], sys.argv[2])
    sys.stdout.flush()
    os._exit(0)
except BaseException:
    traceback.print_exc()
    sys.stderr.flush()
    os._exit(1)
"""

LIMIT_KIB = 64 * 1024


def _fill(path: Path, total: int, piece: bytes) -> int:
    """Write whole copies of ``piece`` up to about ``total`` bytes; return the copies."""
    per_block = (1 << 20) // len(piece)
    block = piece * per_block
    blocks = total // len(block)
    with open(path, "wb") as out:
        for _ in range(blocks):
            out.write(block)
    return blocks * per_block


RunPython = Callable[..., CompletedProcess[str]]


def _measure(run_python: RunPython, path: Path, how: str = "stream_text") -> dict[str, int]:
    done = run_python(MEASURE, str(path), how, timeout=120)
    result: dict[str, int] = json.loads(done.stdout)
    print(f"{path.name} via {how}: {result}")
    return result


def test_streaming_a_200_mb_file_keeps_memory_growth_under_64_mb(
    tmp_path: Path, run_python: RunPython
) -> None:
    path = tmp_path / "big.txt"
    piece = "line with some multi-byte text: é€語𝄞\n".encode()
    copies = _fill(path, 200 * 1024 * 1024, piece)
    assert os.path.getsize(path) >= 199 * 1024 * 1024
    result = _measure(run_python, path)
    assert result["growth_kib"] < LIMIT_KIB
    assert result["chars"] == copies * len(piece.decode())


def test_streaming_a_50_mb_single_line_keeps_memory_growth_under_64_mb(
    tmp_path: Path, run_python: RunPython
) -> None:
    path = tmp_path / "line.txt"
    copies = _fill(path, 50 * 1024 * 1024, "x€".encode())
    result = _measure(run_python, path)
    assert result["growth_kib"] < LIMIT_KIB
    assert result["chars"] == copies * 2


def test_the_memory_measurement_sees_a_whole_file_read(
    tmp_path: Path, run_python: RunPython
) -> None:
    """Control: ``read_text`` of the 50 MB line does grow the peak, so the
    near-zero growth of the streams above is a real measurement."""
    path = tmp_path / "line.txt"
    copies = _fill(path, 50 * 1024 * 1024, "x€".encode())
    result = _measure(run_python, path, "read_text")
    assert result["chars"] == copies * 2
    assert result["growth_kib"] > 50 * 1024
