"""The four tool bodies: exactly the seam calls and hook calls of SPEC 5.5.

Each executor resolves its path, calls the primitives it needs and nothing
more, asks or emits the ``fs_*`` hooks, and returns a ``ToolOutput`` tuple
built by the pure renderers. Validation, cancellation and error
normalization belong to the host (:mod:`dsh_tool_fs.host`).

Seam calls per tool:

* ``list``  — ``resolve``, one ``list_dir(stat=False)``; no ``stat``, no ``fs_observed``.
* ``read``  — ``resolve``, one ``stat``, ``read_text`` or ``stream_text``, ``fs_observed``.
* ``write`` — ``resolve``, ``fs_write_intent``, ``write_text``, ``fs_observed``.
* ``edit``  — ``resolve``, ``fs_edit_intent``, ``edit_text``, ``fs_observed``.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import anyio
import pluggy
from dsh_fs import (
    CreateIfAbsent,
    EditGuard,
    FileSystem,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsTarget,
    ReplaceIfVersion,
)
from dsh_fs.streaming import SupportsSkipLines as LineSkipping

from . import diff_meta as _diff
from . import list_render, mutation_render, read_render
from .arguments import EditArgs, ListArgs, ReadArgs, WriteArgs
from .config import ToolFsConfig

# The per-call records below are plain slotted dataclasses, not frozen
# ones: a frozen dataclass pays an ``object.__setattr__`` call per field on
# every construction, a visible share of a small call's cost. Nothing but
# ``Execution.verb`` changes after construction.


ToolOutput: TypeAlias = tuple[str, dict[str, Any], dict[str, Any] | None]
"""What a successful tool body produced: ``(text, value, meta)`` — the model text, the
canonical value and the diff metadata (``None`` but for write and edit). A bare tuple:
the host unpacks it into the :class:`~dsh_tool_fs.ToolResult` at once, and a record
class would cost a Python-level ``__init__`` per call for nothing."""


@dataclass(slots=True)
class Execution:
    """Everything a tool body needs for one call."""

    fs: FileSystem
    hook: Any
    """The plugin manager's hook relay (``pm.hook``)."""
    config: ToolFsConfig
    actor: Any
    """The per-call execution object passed to every hook as ``actor``."""
    cwd: str | None
    observe: Callable[[FsTarget, str, Any], None]
    """``fs_observed`` of the same plugin manager: an :meth:`ObservedHook.call`."""
    verb: str = "resolve"
    """Which primitive the call is in: names the verb of ``<verb> aborted``."""

    def resolve(self, path: str) -> Awaitable[FsTarget]:
        """The backend's ``resolve`` of ``path`` against the call's cwd (awaited by the caller)."""
        self.verb = "resolve"
        return self.fs.resolve(path, cwd=self.cwd)


_OBSERVED_ARGS = ("target", "version", "actor")


class ObservedHook:
    """``pm.hook.fs_observed(target=…, version=…, actor=…)`` without pluggy's per-call machinery.

    pluggy's hook call copies the implementation list, builds and checks a
    keyword dict and runs its generic loop (wrappers, first result,
    teardowns): about 2 µs for one implementation that itself takes 0.3 µs,
    on every read, write and edit. For ``fs_observed`` (no result, not
    ``firstresult``) with only plain implementations taking exactly
    ``(target, version, actor)``, that loop calls each implementation, last
    registered first, and lets an exception propagate unchanged: this object
    does the same directly.

    It does so only while nothing has changed since it last looked: the
    hook's implementation list is compared (by identity, element by element)
    with the one the direct calls were built from, so registering or
    unregistering a plugin at any time sends the very next call through
    pluggy, which rebuilds them; and while the manager's call path is still
    the one it started with (tracing or ``add_hookcall_monitoring`` see every
    call through pluggy). A wrapper, a ``hookwrapper`` or an implementation
    with other parameters also means pluggy, always.
    """

    __slots__ = ("_caller", "_calls", "_pluggy_exec", "_seen", "manager")

    def __init__(self, manager: pluggy.PluginManager) -> None:
        self.manager = manager
        self._caller = manager.hook.fs_observed
        # pluggy internals, read defensively: without them every call goes through pluggy.
        self._pluggy_exec = getattr(manager, "_inner_hookexec", None)
        self._seen: list[Any] | None = None
        """The implementations last looked at (``None``: not yet, or pluggy internals missing)."""
        self._calls: tuple[Callable[[FsTarget, str, Any], object], ...] | None = None
        """The direct calls for ``_seen``, last registered first; ``None``: go through pluggy."""

    def call(self, target: FsTarget, version: str, actor: Any) -> None:
        """The hook call. A plain method: a bound method is called without the
        ``__call__`` slot's detour."""
        caller = self._caller
        calls = self._calls
        if (
            calls is None
            or caller._hookimpls != self._seen
            or self.manager._inner_hookexec is not self._pluggy_exec
        ):
            caller(target=target, version=version, actor=actor)
            self._look()
            return
        for call in calls:
            call(target, version, actor)

    def _look(self) -> None:
        """Build the direct calls from the current implementations, when they allow them."""
        impls = getattr(self._caller, "_hookimpls", None)
        if (
            self._pluggy_exec is None
            or not isinstance(impls, list)
            or getattr(self.manager, "_inner_hookexec", None) is not self._pluggy_exec
        ):
            self._seen = self._calls = None
            return
        if impls == self._seen:
            return  # unchanged, still not direct (or the call path was swapped)
        self._seen = list(impls)
        direct = all(
            not impl.hookwrapper
            and not impl.wrapper
            and tuple(impl.argnames) == _OBSERVED_ARGS
            and not impl.kwargnames
            for impl in impls
        )
        self._calls = tuple(impl.function for impl in reversed(impls)) if direct else None


async def _decided(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


async def run_list(ex: Execution, args: ListArgs) -> ToolOutput:
    target = await ex.resolve(args.path)
    ex.verb = "list"
    entries = await ex.fs.list_dir(target, stat=False)
    page = list_render.build_list_page(
        entries,
        display_path=target.display_path,
        offset=args.offset,
        max_entries=ex.config.list_max_entries,
    )
    return list_render.render_list(page), list_render.list_value(page), None


async def run_read(ex: Execution, args: ReadArgs) -> ToolOutput:
    # The verb is "resolve" from the start; calling the seam and the hook directly
    # spares the most frequent call two Python frames.
    target = await ex.fs.resolve(args.file_path, cwd=ex.cwd)
    p = target.display_path
    ex.verb = "stat"
    info = await ex.fs.stat(target)
    if info is None:
        raise FsError.cannot("read", p, "not found", FsErrorCode.FS_NOT_FOUND)
    if info.type != "file":
        raise FsError.cannot("read", p, "not a regular file", FsErrorCode.FS_NOT_REGULAR_FILE)
    cfg = ex.config
    ex.verb = "read"
    if info.size is None or info.size >= cfg.read_stream_min_size:
        builder = read_render.WindowBuilder(
            offset=args.offset,
            limit=args.limit,
            max_line_length=cfg.read_max_line_length,
            max_bytes=cfg.read_max_bytes,
        )
        chunks = ex.fs.stream_text(target)
        try:
            await _feed_window(builder, chunks)
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(
                    shield=True
                ):  # release the backend's file even when cancelled
                    await aclose()
        window = builder.finish()
    else:
        text = await ex.fs.read_text(target)
        window = read_render.build_window(
            text,
            offset=args.offset,
            limit=args.limit,
            max_line_length=cfg.read_max_line_length,
            max_bytes=cfg.read_max_bytes,
        )
    read_render.check_offset(window, p)
    ex.observe(target, info.version, ex.actor)
    return read_render.render_read(p, window), read_render.read_value(p, window), None


async def _feed_window(builder: read_render.WindowBuilder, chunks: AsyncIterator[str]) -> None:
    """Feed a streamed file to the window builder, passing over counted-only lines.

    When the stream can skip lines (:class:`dsh_fs.streaming.LineSkipping`),
    the lines the window only counts — before ``offset``, the rest of an
    over-long line, everything after the window — are passed over by the
    backend without being decoded into text; the result is the same.
    """
    skipper = chunks if isinstance(chunks, LineSkipping) else None
    while True:
        if skipper is not None:
            wanted = builder.countable_lines()
            if wanted != 0:
                newlines, partial = await skipper.skip_lines(wanted)
                builder.skipped(newlines, partial)
                if wanted is None or newlines < wanted:
                    return  # the end of the text
                continue
        chunk = await anext(chunks, None)
        if chunk is None:
            return
        builder.feed(chunk)


async def run_write(ex: Execution, args: WriteArgs) -> ToolOutput:
    target = await ex.resolve(args.file_path)
    ex.verb = "write"
    intent = await _decided(ex.hook.fs_write_intent(target=target, actor=ex.actor))
    if intent is not None and not isinstance(intent, CreateIfAbsent | ReplaceIfVersion):
        raise TypeError(f"fs_write_intent returned {intent!r}, not a write intent")
    outcome = await ex.fs.write_text(target, args.content, intent)
    ex.observe(target, outcome.version, ex.actor)
    p = target.display_path
    return (
        mutation_render.render_write(p, outcome.operation),
        mutation_render.write_value(p, outcome.operation, outcome.before, outcome.after),
        _diff.diff_meta(args.file_path, outcome.before, outcome.after),
    )


async def run_edit(ex: Execution, args: EditArgs) -> ToolOutput:
    target = await ex.resolve(args.file_path)
    ex.verb = "edit"
    guard = await _decided(ex.hook.fs_edit_intent(target=target, actor=ex.actor))
    if guard is not None and not isinstance(guard, EditGuard):
        raise TypeError(f"fs_edit_intent returned {guard!r}, not an EditGuard")
    request = FsEditRequest(args.old_string, args.new_string, args.replace_all)
    outcome = await ex.fs.edit_text(target, request, guard)
    ex.observe(target, outcome.version, ex.actor)
    p = target.display_path
    return (
        mutation_render.render_edit(p, replace_all=args.replace_all),
        mutation_render.edit_value(p, outcome.before, outcome.after),
        _diff.diff_meta(args.file_path, outcome.before, outcome.after),
    )
