"""``Execution``: what a tool body gets for one call, and the steps it takes through it.

A body calls the seam primitives itself (each tool's module docstring lists
exactly which), but goes through :class:`Execution` for what is the same in
every tool: naming the primitive it is about to start (the ``<verb>`` of
``<verb> aborted``), stopping when the call's cancel event is set, asking the
intent hooks and emitting ``fs_observed``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
from dsh_fs import (
    AtVersion,
    CreateIfAbsent,
    EditGuard,
    EntryGuard,
    FileSystem,
    FsError,
    FsErrorCode,
    FsTarget,
    MoveGuard,
    NotAFile,
    ReplaceIfVersion,
    WriteIntent,
)

from .config import ToolFsConfig

__all__ = ["Execution", "ProgressSink", "Session", "ToolCall"]

_WORKSPACE_REFUSALS = (FsErrorCode.FS_OUTSIDE_WORKSPACE, FsErrorCode.FS_READ_ONLY)
_RESOLVE_PREFIX = "cannot resolve "


class Session:
    """One agent session: the policy's observation owner and the workspace.

    Relative paths of this session's calls resolve against ``cwd`` when it is
    set, else against the backend's default. Sessions compare and hash by
    identity and are weakly referenceable: an observation policy forgets a
    session's state once the session object is gone.
    """

    __slots__ = ("__weakref__", "cwd")

    def __init__(self, cwd: str | None = None) -> None:
        self.cwd = cwd

    def __repr__(self) -> str:
        return f"Session(cwd={self.cwd!r})"


@dataclass(frozen=True, slots=True, eq=False)
class ToolCall:
    """The per-call execution object, passed to every ``fs_*`` hook as ``actor``."""

    session: Session | None
    tool: str


class ProgressSink(Protocol):
    """Where a call's progress goes (``ToolFs.execute(progress=...)``): the MCP server sends
    it to the client as ``notifications/progress``.

    ``done`` counts every unit of work finished so far in the call (it only
    grows); ``total`` is what the call expects in all, when it knows; ``message``
    says where it is, for a person.
    """

    async def __call__(self, done: int, total: int | None, message: str | None) -> None: ...


@dataclass(slots=True, eq=False)
class Execution:
    """Everything a tool body needs for one call."""

    fs: FileSystem
    hook: Any
    """The plugin manager's hook relay (``pm.hook``)."""
    config: ToolFsConfig
    actor: ToolCall
    """Passed to every hook as ``actor``."""
    cwd: str | None
    """Relative paths resolve against it (the session's workspace), else the backend default."""
    cancel: anyio.Event | None = None
    verb: str = "resolve"
    """The primitive the call is in or about to start: the verb of ``<verb> aborted``."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The host's tool options (``ToolFs(tool_options=...)``): operator settings of an
    installed tool that are not limits, such as the memory tool's ``memory_dir``."""
    progress: ProgressSink | None = None
    """Where :meth:`advance` reports, when the caller asked for progress."""
    done: int = 0
    """Units of work :meth:`advance` counted so far."""

    async def advance(
        self, units: int, *, remaining: int | None = None, message: str | None = None
    ) -> None:
        """Count ``units`` more units of work done, for a caller that asked for progress.

        A body reports in its own units (directories listed, files searched),
        phase after phase; the count only grows, so a client's progress bar
        never goes back. ``remaining`` is the work still ahead when the body
        knows it (then the total is known). Without a progress sink this
        returns at once.
        """
        if self.progress is None:
            return
        self.done += units
        total = None if remaining is None else self.done + remaining
        await self.progress(self.done, total, message)

    def step(self, verb: str) -> None:
        """Enter primitive ``verb``; when the cancel event is already set, abort instead.

        The host also cancels a primitive in flight when the event is set,
        but an event set while nothing awaited — by an intent hook, say — is
        only seen here: checking before every primitive means no primitive
        starts after the event, so the file stays as it was.
        """
        self.verb = verb
        if self.cancel is not None and self.cancel.is_set():
            raise FsError(f"{verb} aborted", FsErrorCode.FS_ABORTED)

    async def resolve(self, path: str, verb: str | None = None) -> FsTarget:
        """The backend's ``resolve`` of ``path`` against the call's cwd.

        A workspace refusal of ``resolve`` speaks with the tool's
        verb: ``cannot resolve "<p>": outside the workspace`` becomes
        ``cannot read "<p>": …`` for ``read``. It comes before the intent
        hooks, so the model hears "outside" rather than "read it first".
        A tool that does several things names the one this path is for
        (``verb``; the tool's name by default).
        """
        self.step("resolve")
        try:
            return await self.fs.resolve(path, cwd=self.cwd)
        except FsError as exc:
            if exc.code in _WORKSPACE_REFUSALS and exc.message.startswith(_RESOLVE_PREFIX):
                rest = exc.message[len(_RESOLVE_PREFIX) :]
                message = f"cannot {verb or self.actor.tool} {rest}"
                raise FsError(message, exc.code) from exc
            raise

    def refuse_read_only(self, target: FsTarget, verb: str | None = None) -> None:
        """Refuse a write or edit the backend's workspace allows only reading.

        ``resolve`` lets such a target through (it may be read), so without
        this the policy's "read it first" would answer before the backend's
        ``read-only workspace``, yet a workspace refusal comes before every
        other answer.
        """
        workspace = self.fs.workspace
        if workspace is not None:
            workspace.check(
                verb or self.actor.tool, target.display_path, target.target_key, write=True
            )

    async def write_intent(self, target: FsTarget) -> WriteIntent | None:
        """``fs_write_intent``: the first plugin's decision for the next ``write_text``
        (after :meth:`refuse_read_only`)."""
        self.refuse_read_only(target)
        intent = await _decided(self.hook.fs_write_intent(target=target, actor=self.actor))
        if intent is not None and not isinstance(intent, CreateIfAbsent | ReplaceIfVersion):
            raise TypeError(f"fs_write_intent returned {intent!r}, not a write intent")
        return intent

    async def edit_guard(self, target: FsTarget) -> EditGuard | None:
        """``fs_edit_intent``: the first plugin's guard for the next ``edit_text``
        (after :meth:`refuse_read_only`)."""
        self.refuse_read_only(target)
        guard = await _decided(self.hook.fs_edit_intent(target=target, actor=self.actor))
        if guard is not None and not isinstance(guard, EditGuard):
            raise TypeError(f"fs_edit_intent returned {guard!r}, not an EditGuard")
        return guard

    async def delete_guard(self, target: FsTarget) -> EntryGuard | None:
        """``fs_delete_intent``: the first plugin's guard for the next ``delete``
        (after :meth:`refuse_read_only` with verb ``delete``)."""
        self.refuse_read_only(target, "delete")
        guard = await _decided(self.hook.fs_delete_intent(target=target, actor=self.actor))
        if guard is not None and not isinstance(guard, AtVersion | NotAFile):
            raise TypeError(f"fs_delete_intent returned {guard!r}, not an entry guard")
        return guard

    async def move_guard(self, source: FsTarget, destination: FsTarget) -> MoveGuard | None:
        """``fs_move_intent``: the first plugin's guards for the next ``move`` (after
        :meth:`refuse_read_only` of the source, verb ``move``, and of the destination,
        verb ``move to``)."""
        self.refuse_read_only(source, "move")
        self.refuse_read_only(destination, "move to")
        guard = await _decided(
            self.hook.fs_move_intent(source=source, destination=destination, actor=self.actor)
        )
        if guard is not None and not isinstance(guard, MoveGuard):
            raise TypeError(f"fs_move_intent returned {guard!r}, not a MoveGuard")
        return guard

    def observed(self, target: FsTarget, version: str | None) -> None:
        """``fs_observed``: every plugin records that the call saw ``version`` of ``target``
        (``None``: the call saw that ``target`` does not exist)."""
        self.hook.fs_observed(target=target, version=version, actor=self.actor)


async def _decided(result: Any) -> Any:
    """An intent hook may answer with an awaitable (see ``dsh_fs.hookspecs``): it is awaited."""
    return await result if inspect.isawaitable(result) else result
