"""``ToolFs``: the host that validates, runs and normalizes the four tools.

The host owns what is the same for every tool: argument validation (before
any filesystem call), the per-call execution object passed to the hooks as
``actor``, cancellation through an ``anyio.Event``, and turning every failure
into an error :class:`ToolResult` (``Error: <message>``) — it never raises
for a tool failure.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pluggy
from dsh_fs import FileSystem, FsError, FsErrorCode, load_backend, load_plugin, make_plugin_manager

from . import executors, mutation_render
from .arguments import PLAIN_ARGUMENTS as _PLAIN_ARGUMENTS
from .arguments import EditArgs, ListArgs, ReadArgs, ToolArgs, ToolArgumentError, WriteArgs
from .arguments import two_stages as _two_stages
from .config import ToolFsConfig
from .definitions import (
    TOOL_NAMES,
    PromptSection,
    ToolDefinition,
    build_definitions,
    build_prompt_sections,
)
from .executors import Execution, ObservedHook, ToolOutput
from .names import escape_controls

logger = logging.getLogger("dsh_tool_fs")


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


@dataclass(frozen=True, slots=True)
class ToolError:
    """Why a call failed: the model-facing ``message``, an error class ``name`` and a ``code``."""

    message: str
    name: str
    code: str

    def to_dict(self) -> dict[str, str]:
        return {"message": self.message, "name": self.name, "code": self.code}


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one call.

    ``text`` is exactly what the model sees; ``value`` the canonical value
    (success only); ``error`` the failure (error only); ``meta`` the diff
    metadata of a successful write or edit.
    """

    is_error: bool
    text: str
    value: dict[str, Any] | None = None
    error: ToolError | None = None
    meta: dict[str, Any] | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: keys ``is_error``, ``text``, ``value``, ``error``, ``meta``."""
        return {
            "is_error": self.is_error,
            "text": self.text,
            "value": self.value,
            "error": None if self.error is None else self.error.to_dict(),
            "meta": self.meta,
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as one line of JSON (non-ASCII kept)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def failure(cls, message: str, name: str, code: str) -> ToolResult:
        # One line of valid UTF-8, in the text and the error alike.
        message = escape_controls(message)
        return cls(
            is_error=True,
            text=mutation_render.render_error(message),
            error=ToolError(message=message, name=name, code=str(code)),
        )


# Every call builds a ToolCall and a ToolResult. Like ``dsh_fs.new_dir_entry``
# the host fills their slots through the slot descriptors: the very same frozen
# objects (equal, hashable, same repr), without the frozen ``__init__``'s
# ``object.__setattr__`` per field — about a microsecond per call.
_new = object.__new__
_set_call_session = vars(ToolCall)["session"].__set__
_set_call_tool = vars(ToolCall)["tool"].__set__
_set_is_error = vars(ToolResult)["is_error"].__set__
_set_text = vars(ToolResult)["text"].__set__
_set_value = vars(ToolResult)["value"].__set__
_set_error = vars(ToolResult)["error"].__set__
_set_meta = vars(ToolResult)["meta"].__set__

_Body = Callable[[Execution, Any], Awaitable[ToolOutput]]

# The tool body for each kind of validated arguments.
_BODIES: dict[type[ToolArgs], _Body] = {
    ListArgs: executors.run_list,
    ReadArgs: executors.run_read,
    WriteArgs: executors.run_write,
    EditArgs: executors.run_edit,
}


def _aborted(verb: str) -> ToolResult:
    return ToolResult.failure(f"{verb} aborted", "FsError", FsErrorCode.FS_ABORTED)


class ToolFs:
    """The ``list``, ``read``, ``write`` and ``edit`` tools over one :class:`~dsh_fs.FileSystem`.

    ``plugins`` are registered on :attr:`plugin_manager` in the order given
    (``FsPolicy`` answers the intent hooks first wherever it stands: its
    hooks are ``tryfirst``). Without plugins writes and edits are unconditional.
    """

    def __init__(
        self,
        fs: FileSystem,
        plugins: Iterable[object] = (),
        config: ToolFsConfig | Mapping[str, Any] | None = None,
    ) -> None:
        self.fs = fs
        if config is None:
            config = ToolFsConfig()
        elif not isinstance(config, ToolFsConfig):
            config = ToolFsConfig.model_validate(dict(config))
        self.config: ToolFsConfig = config
        self.plugin_manager: pluggy.PluginManager = make_plugin_manager()
        self._observe = ObservedHook(self.plugin_manager)
        self._observe_call = self._observe.call
        for plugin in plugins:
            self.register(plugin)
        self._definitions = build_definitions(config)
        self._sections = sorted(build_prompt_sections(), key=lambda s: s.order)

    @classmethod
    def from_entry_points(
        cls,
        backend: str = "local",
        plugins: Iterable[str] = ("policy",),
        cwd: str | None = None,
        config: ToolFsConfig | Mapping[str, Any] | None = None,
    ) -> ToolFs:
        """Assemble the stack from installed distributions, by entry-point name.

        ``backend`` names a ``dsh_fs.backends`` entry point (built with ``cwd``
        as its resolution default), ``plugins`` name ``dsh_fs.plugins`` entry
        points. An unknown name raises :class:`dsh_fs.EntryPointNotFound`.
        """
        fs = load_backend(backend, cwd=cwd)
        tool = cls(fs, config=config)
        for name in plugins:
            tool.register(load_plugin(name), name=name)
        return tool

    # -- plugins ------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> None:
        """Register a plugin (an object or module with ``@dsh_fs.hookimpl`` functions)."""
        self.plugin_manager.register(plugin, name=name)

    def unregister(self, plugin: object | None = None, name: str | None = None) -> None:
        """Unregister a plugin (by object or name) and drop its state.

        A plugin that defines ``reset()`` (as ``FsPolicy`` does) has it called,
        so its state does not survive being registered again.
        """
        removed = self.plugin_manager.unregister(plugin=plugin, name=name)
        reset = getattr(removed, "reset", None)
        if callable(reset):
            reset()

    @property
    def plugins(self) -> list[object]:
        """The registered plugins, in registration order."""
        return [
            plugin for _, plugin in self.plugin_manager.list_name_plugin() if plugin is not None
        ]

    # -- what the model sees --------------------------------------------------

    @property
    def definitions(self) -> list[ToolDefinition]:
        """The four tool definitions, in the order list, read, write, edit."""
        return list(self._definitions)

    @property
    def prompt_sections(self) -> list[PromptSection]:
        """The four guidance sections, sorted by order."""
        return list(self._sections)

    @property
    def instructions(self) -> str:
        """The prompt sections joined by a blank line."""
        return "\n\n".join(section.text for section in self._sections)

    # -- running ------------------------------------------------------------

    async def execute(
        self,
        name: str,
        args: Any,
        *,
        session: Session | None = None,
        cancel: anyio.Event | None = None,
    ) -> ToolResult:
        """Run tool ``name`` with decoded-JSON ``args``; never raises for a tool failure.

        When ``cancel`` is set the call stops at its next await, files stay as
        they were, and the result is ``FS_ABORTED`` ``<verb> aborted``.
        Cancelling the caller's own scope propagates as usual.
        """
        config = self.config
        plain = _PLAIN_ARGUMENTS.get(name)
        parsed = plain(args, config) if plain is not None and type(args) is dict else None
        if parsed is None:  # not plain valid arguments: the two stages decide, with the message
            if name not in TOOL_NAMES:
                return ToolResult.failure(
                    f'unknown tool "{name}"', "ToolNotFoundError", "UNKNOWN_TOOL"
                )
            try:
                parsed = _two_stages(name, args, config)
            except ToolArgumentError as exc:
                return ToolResult.failure(exc.message, "ToolArgumentError", exc.code)
        actor = _new(ToolCall)
        _set_call_session(actor, session)
        _set_call_tool(actor, name)
        pm = self.plugin_manager
        if self._observe.manager is not pm:  # the attribute was given another manager
            self._observe = ObservedHook(pm)
            self._observe_call = self._observe.call
        cwd = getattr(session, "cwd", None)
        execution = Execution(self.fs, pm.hook, config, actor, cwd, self._observe_call)
        body = _BODIES[type(parsed)]
        if cancel is None:
            # The body awaited right here: one coroutine less per call than through _guarded.
            try:
                out = await body(execution, parsed)
            except Exception as exc:
                return _failure(exc, execution)
            return _success(out)
        return await self._cancellable(body, parsed, execution, cancel)

    async def _cancellable(
        self, body: _Body, args: ToolArgs, execution: Execution, cancel: anyio.Event
    ) -> ToolResult:
        """Run a tool body that stops when ``cancel`` is set.

        Apart from ``execute``: the closure below makes its variables cells, built
        on every call of the function that holds it.
        """
        if cancel.is_set():
            return _aborted("resolve")
        outcome: ToolResult | None = None
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                await cancel.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            outcome = await self._guarded(body, args, execution)
            tg.cancel_scope.cancel()
        if outcome is None:  # our own scope was cancelled by the event
            return _aborted(execution.verb)
        return outcome

    async def _guarded(self, body: _Body, args: ToolArgs, execution: Execution) -> ToolResult:
        """Run a tool body; every exception but cancellation becomes an error result."""
        try:
            out = await body(execution, args)
        except Exception as exc:
            return _failure(exc, execution)
        return _success(out)


def _success(out: ToolOutput) -> ToolResult:
    text, value, meta = out
    result = _new(ToolResult)
    _set_is_error(result, False)
    _set_text(result, text)
    _set_value(result, value)
    _set_error(result, None)
    _set_meta(result, meta)
    return result


def _failure(exc: Exception, execution: Execution) -> ToolResult:
    """The error result of a tool body's exception (called in its ``except`` block: it logs it)."""
    if isinstance(exc, FsError):
        return ToolResult.failure(exc.message, "FsError", exc.code.value)
    logger.exception("tool %s failed", execution.actor.tool)
    return ToolResult.failure(str(exc) or type(exc).__name__, type(exc).__name__, "TOOL_FAILURE")
