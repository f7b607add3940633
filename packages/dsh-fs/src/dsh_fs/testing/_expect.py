"""Assertion helpers shared by the contract classes.

Every failure the kit provokes goes through :func:`expect_fs_error`, which
also checks rule "no raw exceptions": anything other than an ``FsError`` with
the exact message and code fails the test.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Literal, Protocol, TypeAlias, cast

import anyio
import anyio.lowlevel
import pytest

from .._errors import FsError, FsErrorCode
from .._filesystem import FileSystem
from .._types import FsTarget
from ..streaming import SupportsSkipLines

ReadHow: TypeAlias = Literal["read_text", "stream_text", "read_texts", "skip_lines"]
READ_HOWS: tuple[ReadHow, ...] = ("read_text", "stream_text", "read_texts")
"""The ways to get a file's whole text (``read_texts`` of that one file)."""
CHECK_HOWS: tuple[ReadHow, ...] = (*READ_HOWS, "skip_lines")
"""The ways to read a file that must all refuse it the same way: also ``skip_lines(None)``
of the stream, when the backend's stream offers it (optional)."""


def bytes_difference(actual: bytes | None, expected: bytes) -> str:
    """``""`` when ``actual == expected``, else where they part, in one line.

    For contents of many kilobytes: a plain ``assert actual == expected``
    would have pytest diff the two reprs, which takes minutes where pytest
    does not truncate (``CI`` set).
    """
    if actual == expected:
        return ""
    if actual is None:
        return f"the file is missing (expected {len(expected)} bytes)"
    pairs = zip(actual, expected, strict=False)
    at = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(actual), len(expected)))
    return (
        f"{len(actual)} bytes, expected {len(expected)}; they part at byte {at}: "
        f"{actual[at : at + 20]!r} instead of {expected[at : at + 20]!r}"
    )


def under(root: str, rel: str) -> str:
    """``rel`` (``/``-separated) joined onto the absolute ``root``."""
    return f"{root.rstrip('/')}/{rel}"


async def version_of(fs: FileSystem, path: str) -> str:
    """The version ``stat`` reports for ``path`` now (it must exist)."""
    info = await fs.stat(await fs.resolve(path))
    assert info is not None, f"{path} is missing"
    return info.version


async def expect_fs_error(call: Awaitable[object], code: FsErrorCode, message: str) -> FsError:
    """Await ``call`` and require exactly ``FsError(message, code)``."""
    try:
        await call
    except FsError as err:
        assert (str(err), err.code) == (message, code)
        return err
    except anyio.get_cancelled_exc_class():
        raise
    except Exception as exc:  # the rule under test: only FsError may escape
        pytest.fail(
            f"expected FsError {code.value} {message!r}, got raw {type(exc).__name__}: {exc!r}"
        )
    pytest.fail(f"expected FsError {code.value} {message!r}, but the call succeeded")


async def collect_stream(stream: AsyncIterator[str]) -> list[str]:
    """Every chunk ``stream_text`` yields, in order."""
    return [chunk async for chunk in stream]


async def read_via(fs: FileSystem, target: FsTarget, how: ReadHow) -> str:
    """The whole text through ``read_text``, ``stream_text`` joined, or ``read_texts`` of the
    one target (its ``FsError`` raised).

    ``skip_lines`` passes over the whole stream and returns ``""`` (for tests
    that expect a failure); it skips the test when the stream cannot skip.
    """
    if how == "read_text":
        return await fs.read_text(target)
    if how == "read_texts":
        [text] = await fs.read_texts([target])
        if isinstance(text, FsError):
            raise text
        return text
    if how == "skip_lines":
        stream = skipping_stream(fs, target)
        try:
            await stream.skip_lines(None)
        finally:
            await stream.aclose()
        return ""
    return "".join(await collect_stream(fs.stream_text(target)))


class SkippingStream(SupportsSkipLines, Protocol):
    def __aiter__(self) -> AsyncIterator[str]: ...
    async def __anext__(self) -> str: ...
    async def aclose(self) -> None: ...


def skipping_stream(fs: FileSystem, target: FsTarget) -> SkippingStream:
    """``fs.stream_text(target)`` when it offers ``skip_lines``; else the test is skipped."""
    stream = fs.stream_text(target)
    if not isinstance(stream, SupportsSkipLines):
        pytest.skip("this backend's stream_text offers no skip_lines (an optional capability)")
    return cast(SkippingStream, stream)


def multibyte_text(min_bytes: int, *, seed: int = 0) -> str:
    """Text of at least ``min_bytes`` UTF-8 bytes mixing 1- to 4-byte characters.

    The characters come in a seeded random order, so whatever chunk size a
    backend streams with, many chunk boundaries fall inside a multi-byte
    character. Line endings ``\\n``, ``\\r\\n`` and a lone ``\\r`` are mixed in.
    """
    pieces = ["a", "Z", " ", "é", "ß", "€", "語", "\U0001d11e", "\U0001f600", "\n", "\r\n", "\r"]
    weights = [10, 5, 5, 6, 3, 6, 6, 5, 5, 2, 2, 1]
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < min_bytes:
        batch = rng.choices(pieces, weights, k=4096)
        out.extend(batch)
        size += sum(len(p.encode()) for p in batch)
    return "".join(out)


async def run_then_cancel(
    mutation: Callable[[], Awaitable[object]], *, steps: int = 0, delay: float = 0.0
) -> bool:
    """Start ``mutation`` in a task, let it run for a while, then cancel it.

    The task is cancelled after ``steps`` scheduler checkpoints of this task
    and then ``delay`` seconds. Returns ``True`` if the mutation returned
    before the cancellation took effect, ``False`` if it raised anyio's
    cancellation exception. Any other exception (an ``FsError`` included)
    fails the test: a cancelled call must propagate the cancellation.
    """
    completed = False
    other: BaseException | None = None
    scope = anyio.CancelScope()

    async def runner() -> None:
        nonlocal completed, other
        with scope:
            try:
                await mutation()
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as exc:
                other = exc
                return
            completed = True

    async with anyio.create_task_group() as tg:
        tg.start_soon(runner)
        for _ in range(steps):
            await anyio.lowlevel.checkpoint()
        if delay:
            await anyio.sleep(delay)
        scope.cancel()
    if other is not None:
        pytest.fail(
            "a cancelled mutation must propagate the cancellation, "
            f"it raised {type(other).__name__}: {other!r}"
        )
    if not completed:
        assert scope.cancelled_caught, "the mutation neither returned nor was cancelled"
    return completed
