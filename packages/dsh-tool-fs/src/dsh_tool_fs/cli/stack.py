"""The stack a command runs on, assembled from entry points as its options describe.

Every name the options give (backend, tools, plugins) and every workspace
directory is checked before anything is built: a bad one is a
:class:`~.usage.UsageError` or :class:`~.usage.WorkspaceError` (one stderr
line, exit 2), and an unknown tool is refused before any root is opened.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from dsh_fs import (
    BACKENDS_GROUP,
    PLUGINS_GROUP,
    EntryPointNotFound,
    FileSystem,
    FsError,
    WorkspaceOptionsUnsupported,
    installed_names,
    load_backend_factory,
)
from dsh_fs.workspace import CWD_ROOT, RootsOption

from ..config import ToolFsConfig, ToolFsConfigError
from ..host import Session, ToolFs
from ..tools import UnknownToolError, offered_tool_names
from .usage import UsageError, WorkspaceError

logger = logging.getLogger("dsh_tool_fs.cli")

DEFAULT_POLICY_PLUGIN = "policy"
HOST_BACKEND = "local"
"""The backend whose paths are this machine's: its workspace directories are checked here."""


@dataclass(frozen=True, slots=True)
class WorkspaceOptions:
    """The workspace options as the backend constructor's keywords."""

    roots: RootsOption = CWD_ROOT
    read_only_roots: tuple[str, ...] = ()
    read_only: bool = False
    cwd: str | None = None
    """The backend's cwd (:func:`workspace`)."""

    @property
    def session_cwd(self) -> str | None:
        """The cwd of the tool calls: ``--cwd`` as a path, ``None`` (the backend's) for a URL."""
        return None if self.cwd is not None and "://" in self.cwd else self.cwd


@dataclass(frozen=True, slots=True)
class Stack:
    """What a command runs: the host, and the workspace it was built for."""

    toolfs: ToolFs
    workspace: WorkspaceOptions

    def session(self) -> Session:
        """A new session (observation owner) of tool calls in the workspace's cwd."""
        return Session(cwd=self.workspace.session_cwd)


def build_stack(args: argparse.Namespace) -> Stack:
    """The host for the stack the options describe, found through entry points.

    The names come first (backend, tools), then the workspace directories,
    the plugins and the config; only then is the backend built, its roots
    opened.
    """
    backends = installed_names(BACKENDS_GROUP)
    if args.backend not in backends:
        raise UsageError(
            f'unknown backend "{args.backend}" (installed {BACKENDS_GROUP}: {_names(backends)})'
        )
    tools = offered_tools(args)
    options = workspace_options(args)
    plugins = plugin_names(args, installed_names(PLUGINS_GROUP))
    config = parse_config(args.config)
    try:
        toolfs = ToolFs.from_entry_points(
            backend=args.backend,
            plugins=tuple(plugins),
            cwd=options.cwd,
            config=config,
            roots=options.roots,
            read_only_roots=options.read_only_roots,
            read_only=options.read_only,
            tools=tools,
            backend_options=backend_options(args),
            tool_options=tool_options(args),
        )
    except (EntryPointNotFound, WorkspaceOptionsUnsupported) as exc:
        raise UsageError(str(exc)) from exc
    except TypeError as exc:  # an option the backend does not take
        raise UsageError(f'--backend "{args.backend}": {exc}') from exc
    except ValueError as exc:  # a root the backend rejects, in its own namespace
        raise WorkspaceError(f'--backend "{args.backend}": {exc}') from exc
    return Stack(toolfs, options)


def roots_stack(args: argparse.Namespace) -> Callable[[Sequence[str]], ToolFs]:
    """``dsh-fs mcp --client-roots``: builds the host for a set of client roots (absolute
    directories; the first is the cwd, each is read-write) with every other option of
    the command — backend, plugins, tools, config, ``--allow-read``, ``--read-only``."""
    options = workspace_options(args)
    plugins = tuple(plugin_names(args, installed_names(PLUGINS_GROUP)))
    config = parse_config(args.config)
    tools = offered_tools(args)
    extra = backend_options(args)

    def build(roots: Sequence[str]) -> ToolFs:
        return ToolFs.from_entry_points(
            backend=args.backend,
            plugins=plugins,
            cwd=roots[0],
            config=config,
            roots=(".", *roots[1:]),
            read_only_roots=options.read_only_roots,
            read_only=options.read_only,
            tools=tools,
            backend_options=extra,
        )

    return build


def offered_tools(args: argparse.Namespace) -> list[str] | None:
    """The tools to offer (``None``: every installed one), each name checked as installed.

    ``--tools`` chooses; ``call`` offers only the tool it calls, so that no
    other tool's module is imported, and refuses one that is not offered.
    """
    chosen = None if args.tools is None else [name.strip() for name in args.tools.split(",")]
    try:
        offered = offered_tool_names(chosen)
    except UnknownToolError as exc:
        raise UsageError(f"--tools: {exc}") from exc
    if args.command != "call":
        return chosen
    if args.tool not in offered:
        raise UsageError(f'unknown tool "{args.tool}" (tools: {_names(offered)})')
    return [args.tool]


def workspace(args: argparse.Namespace) -> str | None:
    """``--cwd`` made absolute, or ``None`` for the backend's own default.

    A URL (``sftp://user@host/path``) and any directory of a backend other
    than the local one is the backend's to read, as it is.
    """
    if args.cwd is None:
        return None
    return os.path.abspath(args.cwd) if args.backend == HOST_BACKEND else str(args.cwd)


def workspace_options(args: argparse.Namespace) -> WorkspaceOptions:
    """The backend's cwd and roots from ``--cwd``, ``--allow``, ``--allow-read``,
    ``--read-only`` and ``--allow-anywhere`` (directories made absolute against the
    current directory).

    The read-write roots are the backend's cwd (``"."``: roots resolve against
    it) and each ``--allow``. With the local backend (:data:`HOST_BACKEND`)
    every directory, ``--cwd`` included, must be an existing directory on this
    machine, else :class:`WorkspaceError` names the first that is not; another
    backend checks them in its own namespace when it is built.
    """
    if args.allow_anywhere and (args.allow or args.allow_read):
        raise WorkspaceError("--allow-anywhere turns containment off: it takes no --allow(-read)")
    if args.backend == HOST_BACKEND:
        named = [("--cwd", args.cwd)] if args.cwd is not None else []
        named += [("--allow", d) for d in args.allow]
        named += [("--allow-read", d) for d in args.allow_read]
        for option, directory in named:
            if not os.path.isdir(directory):
                raise WorkspaceError(f'{option} "{directory}": {_not_a_directory(directory)}')
    cwd = workspace(args)
    if args.allow_anywhere:
        return WorkspaceOptions(roots=None, read_only=args.read_only, cwd=cwd)
    # Another backend's directories are in its own namespace: a relative one
    # resolves against its cwd, there.
    here: Callable[[str], str] = os.path.abspath if args.backend == HOST_BACKEND else str
    allowed = tuple(map(here, args.allow))
    return WorkspaceOptions(
        roots=(".", *allowed) if allowed else CWD_ROOT,
        read_only_roots=tuple(map(here, args.allow_read)),
        read_only=args.read_only,
        cwd=cwd,
    )


def tool_options(args: argparse.Namespace) -> dict[str, Any]:
    """Settings of installed tools: ``--memory-dir`` (``memory_dir``, made absolute with the
    local backend; another backend's directory is in its own namespace)."""
    if args.memory_dir is None:
        return {}
    here = os.path.abspath if args.backend == HOST_BACKEND else str
    return {"memory_dir": here(args.memory_dir)}


def _not_a_directory(directory: str) -> str:
    """Why a workspace directory of the local backend cannot be one, with a hint for a URL
    of another installed backend (``sftp://…`` without ``--backend sftp``)."""
    scheme, sep, _ = directory.partition("://")
    if sep and scheme in installed_names(BACKENDS_GROUP):
        return f"a {scheme}:// URL needs --backend {scheme}"
    if not os.path.lexists(directory):
        return "does not exist"
    return "not a directory"


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backend constructor's further keywords: ``--backend-option KEY=VALUE`` (VALUE
    parsed as JSON when it is JSON, else kept as a string), ``--ssh-key`` (``ssh_key``) and
    ``--known-hosts`` (``known_hosts``)."""
    options: dict[str, Any] = {}
    for item in args.backend_option:
        key, value = _key_value("--backend-option", item)
        if not key.isidentifier():
            raise UsageError(f'--backend-option expects KEY=VALUE, got "{item}"')
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    _check_backend_options(args.backend, options)
    if args.ssh_key is not None:
        if not os.path.isfile(os.path.expanduser(args.ssh_key)):
            problem = "does not exist" if not os.path.lexists(args.ssh_key) else "not a file"
            raise UsageError(f'--ssh-key "{args.ssh_key}": {problem}')
        options["ssh_key"] = args.ssh_key
    if args.known_hosts is not None:
        options["known_hosts"] = args.known_hosts
    return options


def _key_value(option: str, item: str) -> tuple[str, str]:
    """``KEY=VALUE`` of ``option``, refused with spaces around either (``read_limit= 10``)."""
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise UsageError(f'{option} expects KEY=VALUE, got "{item}"')
    if key != key.strip() or value != value.strip():
        raise UsageError(f'{option} expects KEY=VALUE with no spaces around "=", got "{item}"')
    return key, value


def _check_backend_options(backend: str, options: dict[str, Any]) -> None:
    """Refuse a ``--backend-option`` the backend's factory does not take, by name (rather
    than with Python's ``unexpected keyword argument``)."""
    if not options:
        return
    try:
        parameters = inspect.signature(load_backend_factory(backend)).parameters
    except (EntryPointNotFound, TypeError, ValueError):
        return  # an unknown name is reported by its caller; no signature: the factory decides
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    taken = [
        name
        for name, p in parameters.items()
        if p.kind is not inspect.Parameter.VAR_POSITIONAL and name not in _WORKSPACE_KEYWORDS
    ]
    for key in options:
        if key not in parameters or key in _WORKSPACE_KEYWORDS:
            raise UsageError(
                f'--backend-option {key}: the "{backend}" backend has no option "{key}" '
                f"(its options: {_names(taken)})"
            )


_WORKSPACE_KEYWORDS = ("cwd", "roots", "read_only_roots", "read_only")
"""The backend keywords the workspace options set: not ``--backend-option`` keys."""


def start_backend(toolfs: ToolFs, args: argparse.Namespace) -> None:
    """Reach the backend's storage before the first call (a remote backend connects): a
    server that cannot be reached is a start-up error, one line, exit 2. A backend
    without a ``connect`` of its own (the local one) has nothing to reach: no event
    loop is started for it."""
    if type(toolfs.fs).connect is FileSystem.connect:
        return
    try:
        anyio.run(toolfs.fs.connect)
    except FsError as exc:
        raise WorkspaceError(f'--cwd "{args.cwd}": {exc}') from exc
    except ValueError as exc:  # a root the backend rejects, in its own namespace
        raise WorkspaceError(f'--backend "{args.backend}": {exc}') from exc


def plugin_names(args: argparse.Namespace, installed: Sequence[str]) -> list[str]:
    """Plugins to load, in order: the policy (unless ``--no-policy``), then ``--plugin``.

    The policy is loaded by default only when installed (a warning says the
    tools then run unguarded); a plugin named with ``--plugin`` must be
    installed. ``--no-policy`` drops only the default: ``--plugin policy``
    still loads it.
    """
    names: list[str] = []
    if not args.no_policy:
        if DEFAULT_POLICY_PLUGIN in installed:
            names.append(DEFAULT_POLICY_PLUGIN)
        else:
            logger.warning(
                'the "%s" plugin is not installed: writes and edits are unguarded',
                DEFAULT_POLICY_PLUGIN,
            )
    for name in args.plugin:
        if name not in installed:
            raise UsageError(
                f'unknown plugin "{name}" (installed {PLUGINS_GROUP}: {_names(installed)})'
            )
        if name not in names:
            names.append(name)
    return names


def parse_config(items: Sequence[str]) -> ToolFsConfig:
    """``--config KEY=VALUE`` items (snake_case or camelCase keys) as a :class:`ToolFsConfig`."""
    values: dict[str, Any] = {}
    for item in items:
        key, value = _key_value("--config", item)
        try:
            values[key] = json.loads(value)
        except json.JSONDecodeError:
            values[key] = value
    try:
        return ToolFsConfig.model_validate(values)
    except ToolFsConfigError as exc:  # named as typed; an unknown key gets the valid ones
        keys = f" (keys: {', '.join(ToolFsConfig.aliases())})" if exc.unknown_key else ""
        raise UsageError(f"--config: {exc.as_typed()}{keys}") from exc


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) or "none"
