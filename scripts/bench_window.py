"""Micro-benchmark of the read window against the raw decode-and-count floor.

Generates a 1,000,000-line text of about 100 MB, then times, over 1 MiB
chunks of its UTF-8 bytes:

- baseline: incremental UTF-8 decode of each chunk + ``chunk.count("\\n")``
  (the least any exact line count over a stream can cost);
- window: the same decode + ``WindowBuilder.feed`` + ``finish`` with the
  default config (limit 2000, 2000 chars per line, 51200 bytes), at several
  offsets.

Prints the best of ``--rounds`` timings (runs alternated, the order rotated
each round) and the ratio window / baseline (1.00 means the window costs
nothing beyond decoding and counting); then the same without the decode,
which isolates the builder's own overhead over ``str.count``.

    hatch run python scripts/bench_window.py [--lines 1000000] [--rounds 7] [--cpu]
"""

from __future__ import annotations

import argparse
import codecs
import time
from collections.abc import Callable

from dsh_tool_fs import ToolFsConfig
from dsh_tool_fs.read_window import WindowBuilder

CHUNK = 1 << 20
CONFIG = ToolFsConfig()


def default_builder(offset: int) -> WindowBuilder:
    """The window the read tool builds with the default config, from line ``offset``."""
    return WindowBuilder(
        offset=offset,
        limit=CONFIG.read_limit,
        max_line_length=CONFIG.read_max_line_length,
        max_bytes=CONFIG.read_max_bytes,
    )


def make_text(lines: int) -> bytes:
    # ~100 bytes per line, a few distinct shapes, one non-ASCII character per
    # 16 lines so the decoder cannot take its pure-ASCII shortcut everywhere.
    shapes = [
        (f"line {{:>7}} {'x' * 80} {i:02d}" if i % 16 else f"línea {{:>7}} {'y' * 79} {i:02d}")
        for i in range(16)
    ]
    return "".join(shapes[n % 16].format(n) + "\n" for n in range(lines)).encode()


def chunks(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def baseline(raw: list[bytes]) -> int:
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    total = 0
    for piece in raw:
        total += decoder.decode(piece).count("\n")
    return total


def windowed(raw: list[bytes], offset: int) -> int:
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    builder = default_builder(offset)
    for piece in raw:
        builder.feed(decoder.decode(piece))
    return builder.finish().total_lines


def count_only(text: list[str]) -> int:
    return sum(piece.count("\n") for piece in text)


def feed_only(text: list[str], offset: int) -> int:
    builder = default_builder(offset)
    for piece in text:
        builder.feed(piece)
    return builder.finish().total_lines


CLOCK = time.perf_counter


def timed(run: Callable[[], int]) -> tuple[float, int]:
    start = CLOCK()
    result = run()
    return CLOCK() - start, result


def interleaved(
    base: Callable[[], int], runs: dict[str, Callable[[], int]], rounds: int, expected: int
) -> tuple[float, dict[str, float]]:
    """Best time of the baseline and of each run, alternated round by round.

    Other processes share the machine; alternating keeps a burst of load
    from landing on one side only, and the minimum is the least disturbed run.
    """
    everything = {"": base, **runs}
    names = list(everything)
    bests = dict.fromkeys(names, float("inf"))
    for round_ in range(rounds):
        for i in range(len(names)):
            name = names[(round_ + i) % len(names)]  # rotate who goes first
            took, total = timed(everything[name])
            assert total == expected, (name, total, expected)
            bests[name] = min(bests[name], took)
    base_best = bests.pop("")
    return base_best, bests


def report(title: str, base: float, bests: dict[str, float]) -> float:
    print(f"{title}\n  baseline            {base * 1000:8.1f} ms")
    worst = 0.0
    for name, took in bests.items():
        ratio = took / base
        worst = max(worst, ratio)
        print(f"  {name:<19} {took * 1000:8.1f} ms  ratio {ratio:.3f}")
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time with process CPU time instead of wall time (steadier on a busy machine)",
    )
    args = parser.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time

    data = make_text(args.lines)
    raw = chunks(data)
    print(f"text: {args.lines} lines, {len(data) / 1e6:.1f} MB, {len(raw)} chunks of 1 MiB")
    offsets = (1, args.lines // 2, args.lines)
    expected = args.lines

    base, bests = interleaved(
        lambda: baseline(raw),
        {f"offset={o}": (lambda o=o: windowed(raw, o)) for o in offsets},  # type: ignore[misc]
        args.rounds,
        expected,
    )
    worst = report("decode + count  vs  decode + WindowBuilder:", base, bests)

    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    text = [decoder.decode(piece) for piece in raw]
    base, bests = interleaved(
        lambda: count_only(text),
        {f"offset={o}": (lambda o=o: feed_only(text, o)) for o in offsets},  # type: ignore[misc]
        args.rounds,
        expected,
    )
    report("count only  vs  WindowBuilder only (pre-decoded chunks):", base, bests)
    print(f"worst ratio (decode + window / decode + count): {worst:.3f}")


if __name__ == "__main__":
    main()
