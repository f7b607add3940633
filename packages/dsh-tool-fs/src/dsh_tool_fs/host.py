"""``ToolFs``: the host that validates, runs and normalizes the tools.

The host owns what is the same for every tool: argument validation (before
any filesystem call), the per-call execution object passed to the hooks as
``actor``, cancellation through an ``anyio.Event``, and turning every failure
into an error :class:`ToolResult` (``Error: <message>``) — it never raises
for a tool failure.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import pluggy
from dsh_fs import FileSystem, FsError, FsErrorCode, load_backend, load_plugin, make_plugin_manager
from dsh_fs.workspace import CWD_ROOT, RootsOption

from . import mutation_render
from .arguments import ArgumentSchema, ToolArgumentError, ToolArguments
from .config import ToolFsConfig
from .definitions import PromptSection, ToolDefinition
from .execution import Execution, ProgressSink, Session, ToolCall
from .names import escape_controls
from .spec import ToolSpec
from .tools import TOOLS, build_definitions, build_prompt_sections, installed_tools

__all__ = ["Session", "ToolCall", "ToolError", "ToolFs", "ToolResult"]

logger = logging.getLogger("dsh_tool_fs")


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
    meta: dict[str, Any] | None = None

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

    @classmethod
    def from_fs_error(cls, exc: FsError) -> ToolResult:
        """The result the host gives for ``exc`` raised inside a tool: its message, plus
        what the model can do for a stale or unread file (`` — read the file, then retry``).

        For a caller that runs a seam primitive on a model's behalf outside a tool
        (a framework adapter's ``delete``) and answers with the host's text.
        """
        return cls.failure(exc.message + _REMEDIES.get(exc.code, ""), "FsError", exc.code.value)


class ToolFs:
    """The tools (``list``, ``read``, ``write``, ``edit`` and installed ones) over one
    :class:`~dsh_fs.FileSystem`.

    ``plugins`` are registered on :attr:`plugin_manager` in the order given
    (``FsPolicy`` answers the intent hooks first wherever it stands: its
    hooks are ``tryfirst``). Without plugins writes and edits are unconditional.
    ``tools`` are the :class:`~dsh_tool_fs.ToolSpec` of the tools it offers;
    the default is the four built-in ones of :data:`dsh_tool_fs.tools.TOOLS`
    (:meth:`from_entry_points`, and :func:`dsh_tool_fs.tools.installed_tools`,
    add the installed tool distributions). ``tool_options`` are settings of
    installed tools that are not limits of the config (the memory tool's
    ``memory_dir``), each tool reading its own keys.
    """

    def __init__(
        self,
        fs: FileSystem,
        plugins: Iterable[object] = (),
        config: ToolFsConfig | Mapping[str, Any] | None = None,
        *,
        tools: Iterable[ToolSpec[Any, Any]] = TOOLS,
        tool_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.fs = fs
        self.tool_options: Mapping[str, Any] = dict(tool_options or {})
        """Operator settings of installed tools, each tool reading its own keys (the memory
        tool's ``memory_dir``); every call's :class:`Execution` carries them."""
        if config is None:
            config = ToolFsConfig()
        elif not isinstance(config, ToolFsConfig):
            config = ToolFsConfig.model_validate(dict(config))
        self.config: ToolFsConfig = config
        self.plugin_manager: pluggy.PluginManager = make_plugin_manager()
        for plugin in plugins:
            self.register(plugin)
        specs = tuple(tools)
        self._tools: dict[str, tuple[ToolSpec[Any, Any], ArgumentSchema[Any]]] = {
            spec.name: (spec, spec.argument_schema(config)) for spec in specs
        }
        self._definitions: list[ToolDefinition] | None = None  # built when first asked for
        self._sections = build_prompt_sections(specs)

    @classmethod
    def from_entry_points(
        cls,
        backend: str = "local",
        plugins: Iterable[str] = ("policy",),
        cwd: str | None = None,
        config: ToolFsConfig | Mapping[str, Any] | None = None,
        *,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str | os.PathLike[str]] = (),
        read_only: bool = False,
        tools: Iterable[str] | None = None,
        backend_options: Mapping[str, Any] | None = None,
        tool_options: Mapping[str, Any] | None = None,
    ) -> ToolFs:
        """Assemble the stack from installed distributions, by entry-point name.

        ``backend`` names a ``dsh_fs.backends`` entry point, built with ``cwd``
        as its resolution default and the workspace options ``roots``,
        ``read_only_roots`` and ``read_only`` (contained to ``cwd`` by default;
        ``roots=None`` turns containment off); ``plugins`` name
        ``dsh_fs.plugins`` entry points. An unknown name raises
        :class:`dsh_fs.EntryPointNotFound`, a backend that does not take the
        workspace options :class:`dsh_fs.WorkspaceOptionsUnsupported`, a root
        the backend rejects its ``ValueError``. ``tools`` names the tools
        to offer (default: every installed tool, :func:`~dsh_tool_fs.tools.installed_tools`);
        an unknown name raises :class:`~dsh_tool_fs.tools.UnknownToolError`.
        ``backend_options`` are further keywords of the backend's factory
        (``dsh_fs.load_backend``); ``tool_options`` go to the host as they are.
        """
        specs = installed_tools(tools)
        fs = load_backend(
            backend,
            cwd=cwd,
            roots=roots,
            read_only_roots=read_only_roots,
            read_only=read_only,
            options=backend_options,
        )
        tool = cls(fs, config=config, tools=specs, tool_options=tool_options)
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
        """The tool definitions, in the order of the tools (list, read, write, edit first)."""
        if self._definitions is None:  # a process that only calls a tool never builds them
            self._definitions = build_definitions(self.config, self._specs())
        return list(self._definitions)

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools this host offers, in order (no definition is built)."""
        return list(self._tools)

    @property
    def prompt_sections(self) -> list[PromptSection]:
        """The guidance sections, sorted by order."""
        return list(self._sections)

    @property
    def instructions(self) -> str:
        """The prompt sections joined by a blank line."""
        return "\n\n".join(section.text for section in self._sections)

    def argument_model(self, name: str) -> type[ToolArguments]:
        """The pydantic model of tool ``name``'s arguments, for a framework that takes one.

        LangChain's ``StructuredTool(args_schema=...)`` and pydantic-ai's typed
        tools accept it as it is; :meth:`execute` validates the same fields
        again under this host's config. Raises ``KeyError`` for a tool this
        host does not offer.
        """
        return self._tools[name][0].arguments

    def _specs(self) -> list[ToolSpec[Any, Any]]:
        return [spec for spec, _ in self._tools.values()]

    # -- running ------------------------------------------------------------

    async def execute(
        self,
        name: str,
        args: Any,
        *,
        session: Session | None = None,
        cancel: anyio.Event | None = None,
        progress: ProgressSink | None = None,
    ) -> ToolResult:
        """Run tool ``name`` with decoded-JSON ``args``; never raises for a tool failure.

        When ``cancel`` is set the call stops at its next await (or before its
        next primitive, whichever comes first), files stay as they were, and
        the result is ``FS_ABORTED`` ``<verb> aborted``. Cancelling the
        caller's own scope propagates as usual. ``progress``, when given, is
        awaited with the call's progress as a long tool reports it (``glob``
        and ``grep`` do: :meth:`Execution.advance`).
        """
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.failure(f'unknown tool "{name}"', "ToolNotFoundError", "UNKNOWN_TOOL")
        spec, schema = tool
        try:
            parsed = schema.validate(args)
        except ToolArgumentError as exc:
            return ToolResult.failure(exc.message, "ToolArgumentError", exc.code)
        execution = Execution(
            fs=self.fs,
            hook=self.plugin_manager.hook,
            config=self.config,
            actor=ToolCall(session, name),
            cwd=getattr(session, "cwd", None),
            cancel=cancel,
            options=self.tool_options,
            progress=progress,
        )
        if cancel is None:
            return await _run(spec, parsed, execution)
        outcome: ToolResult | None = None
        async with anyio.create_task_group() as tg:

            async def stop_when_cancelled() -> None:
                await cancel.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(stop_when_cancelled)
            outcome = await _run(spec, parsed, execution)
            tg.cancel_scope.cancel()
        if outcome is None:  # the event cancelled the primitive in flight
            return _failure(FsError(f"{execution.verb} aborted", FsErrorCode.FS_ABORTED), execution)
        return outcome


async def _run(spec: ToolSpec[Any, Any], args: Any, execution: Execution) -> ToolResult:
    """Run a tool body and its renderer; every exception but cancellation becomes a result."""
    try:
        output = spec.render(args, await spec.body(execution, args))
    except Exception as exc:
        return _failure(exc, execution)
    return ToolResult(is_error=False, text=output.text, value=output.value, meta=output.meta)


_REMEDIES = {
    FsErrorCode.FS_STALE_VERSION: " — re-read the file, then retry",
    FsErrorCode.FS_NOT_OBSERVED: " — read the file, then retry",
}
"""What the model can do about the two refusals it can act on, appended to the
message the model sees (not to the ``FsError``: a Python caller of a backend
or of the policy matches the bare message)."""


def _failure(exc: Exception, execution: Execution) -> ToolResult:
    """The error result of a tool body's exception (called in its ``except`` block: it logs it)."""
    if isinstance(exc, FsError):
        return ToolResult.from_fs_error(exc)
    logger.exception("tool %s failed", execution.actor.tool)
    return ToolResult.failure(str(exc) or type(exc).__name__, type(exc).__name__, "TOOL_FAILURE")
