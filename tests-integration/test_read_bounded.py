"""A file that grows into valid text between the read's ``stat`` and its read.

The read tool looks at the file once (``stat``) and reads it afterwards; another
process may grow it in between, and the read must still allocate no more than
``read_stream_min_size`` plus the window (docs/using/security.md, "Memory stays
bounded whatever B does to a file"). Binary or sparse growth already stops at the
first chunk; growth with valid UTF-8 lines does not, so these tests grow a file of
a few bytes to 200 MiB of text lines right after ``stat`` answers, then measure the
peak memory of the read in a fresh interpreter (``VmHWM``, reset right before the
read where the kernel allows it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

GROWN_BYTES = 200 << 20
"""What the file becomes after ``stat``: 200 MiB of text lines."""
BOUND_KIB = (10 + 1) * 1024
"""``read_stream_min_size`` (10 MiB) and 1 MiB for the window: the rule's bound. A whole
read of the grown file costs over 200 MiB; a streamed one ≈ 3 MiB (a 1 MiB buffer, its
decoded chunk and the window)."""

CHILD = r"""
import json, os, sys, anyio
from dsh_fs.testing import ForwardingFileSystem
from dsh_tool_fs import ToolFs

FIRST = b"first line\n"
LINE = b"a line of valid UTF-8 text, written after stat\n"


def status_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def reset_peak():
    try:  # VmHWM := VmRSS (Linux >= 4.0); without it the peak so far is the baseline
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        pass
    return status_kib("VmHWM")


class GrowsAfterStat(ForwardingFileSystem):
    # Answers stat as the backend does; then, once armed, another writer grows the file
    # before the read tool's next seam call opens it.

    def __init__(self, inner, grow):
        super().__init__(inner)
        self.grow = grow
        self.armed = False
        self.baseline_kib = None

    async def stat(self, target):
        info = await super().stat(target)
        if self.armed:
            self.armed = False
            self.grow()
            self.baseline_kib = reset_peak()
        return info


def local_backend(directory, path, lines):
    from dsh_fs_local import LocalFileSystem

    def grow():
        block = LINE * ((1 << 20) // len(LINE))
        with open(path, "ab") as out:
            for _ in range(lines // (len(block) // len(LINE))):
                out.write(block)

    with open(path, "wb") as out:
        out.write(FIRST)
    return LocalFileSystem(directory), grow


def memory_backend(directory, path, lines):
    from dsh_fs_memory import MemoryFileSystem

    fs = MemoryFileSystem(cwd=directory, files={path: FIRST})

    def grow():
        fs.put_bytes(path, FIRST + LINE * lines)  # one allocation: the grown file itself

    return fs, grow


async def main(backend, directory, grown):
    path = os.path.join(directory, "growing.txt")
    lines = int(grown) // len(LINE)
    lines -= lines % ((1 << 20) // len(LINE))  # whole blocks for the local writer
    inner, grow = {"local": local_backend, "memory": memory_backend}[backend](
        directory, path, lines
    )
    fs = GrowsAfterStat(inner, grow)
    tools = ToolFs(fs)
    await tools.execute("read", {"file_path": path})  # warm: imports, worker thread
    fs.armed = True
    result = await tools.execute("read", {"file_path": path})
    peak_kib = status_kib("VmHWM")
    print(json.dumps({
        "error": result.text if result.is_error else None,
        "first": result.value["lines"][0] if result.value else None,
        "shown": len(result.value["lines"]) if result.value else 0,
        "total": result.value["totalLines"] if result.value else None,
        "expected_total": 1 + lines,
        "growth_kib": peak_kib - fs.baseline_kib,
    }))


anyio.run(main, *sys.argv[1:-1], backend=sys.argv[-1])
"""


@pytest.mark.parametrize("backend", ["local", "memory"])
def test_a_file_grown_into_text_after_stat_is_read_in_bounded_memory(
    tmp_path: Path, anyio_backend: str, backend: str
) -> None:
    """Issue 19: the read chose a whole-file read from the size at ``stat`` and read the
    200 MiB it found at open whole (+200 MiB of RSS); now it streams every file."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, backend, str(tmp_path), str(GROWN_BYTES), anyio_backend],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    print(result)
    assert result["error"] is None
    assert result["first"] == {"number": 1, "text": "first line"}
    assert result["shown"] > 1  # the window goes on into the grown lines
    assert result["total"] == result["expected_total"]  # read to the end it found at open
    assert result["growth_kib"] < BOUND_KIB
