"""A call's progress: ``Execution.advance`` and ``ToolFs.execute(progress=...)``."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import Execution, ToolCall, ToolFs, ToolFsConfig

Seen = list[tuple[int, int | None, str | None]]


def execution(seen: Seen | None) -> Execution:
    async def sink(done: int, total: int | None, message: str | None) -> None:
        assert seen is not None
        seen.append((done, total, message))

    return Execution(
        fs=MemoryFileSystem(cwd="/"),
        hook=None,
        config=ToolFsConfig(),
        actor=ToolCall(None, "grep"),
        cwd=None,
        progress=None if seen is None else sink,
    )


@pytest.mark.anyio
async def test_progress_is_one_growing_count_across_the_phases_of_a_call() -> None:
    seen: Seen = []
    ex = execution(seen)
    await ex.advance(3, message="12 files found")  # walking: the total is not known
    await ex.advance(0, remaining=12, message="0 of 12 files searched")
    await ex.advance(5)
    assert seen == [(3, None, "12 files found"), (3, 15, "0 of 12 files searched"), (8, None, None)]


@pytest.mark.anyio
async def test_without_a_sink_advancing_counts_nothing() -> None:
    ex = execution(None)
    await ex.advance(7, remaining=1, message="ignored")
    assert ex.done == 0


@pytest.mark.anyio
async def test_execute_hands_its_progress_sink_to_the_tool_body() -> None:
    seen: list[Any] = []

    async def sink(done: int, total: int | None, message: str | None) -> None:
        seen.append(done)

    toolfs = ToolFs.from_entry_points(backend="memory", plugins=(), cwd="/", tools=["glob"])
    await toolfs.fs.write_text(await toolfs.fs.resolve("/a.txt"), "x\n")
    result = await toolfs.execute("glob", {"pattern": "*.txt"}, progress=sink)
    assert result.is_error is False
    assert seen and seen == sorted(seen)
