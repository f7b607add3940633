"""Finding backends and plugins that are installed, by entry-point name.

A backend distribution declares ``[project.entry-points."dsh_fs.backends"]``
``name = "module:Factory"``; the factory is called with the keywords ``cwd``
(``str | None``) and the workspace options (``roots``, ``read_only_roots``,
``read_only``: :class:`~dsh_fs.workspace.Workspace`) and returns a
:class:`~dsh_fs.FileSystem`. A plugin distribution declares
``[project.entry-points."dsh_fs.plugins"]`` ``name = "module:object"``; a class
is instantiated with no arguments, anything else (a module, an instance) is
registered as it is.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, cast

from ._filesystem import FileSystem
from .workspace import CWD_ROOT, RootsOption

BACKENDS_GROUP = "dsh_fs.backends"
PLUGINS_GROUP = "dsh_fs.plugins"

BackendFactory = Callable[..., FileSystem]


WORKSPACE_OPTIONS = ("roots", "read_only_roots", "read_only")
"""The keywords every backend factory is called with besides ``cwd``."""


class EntryPointNotFound(LookupError):
    """No installed distribution declares the requested name."""


class WorkspaceOptionsUnsupported(TypeError):
    """A backend factory that does not take the workspace options (it would run uncontained)."""


def installed_names(group: str) -> list[str]:
    """Sorted names declared in ``group`` by the installed distributions."""
    return sorted({ep.name for ep in entry_points(group=group)})


def _find(group: str, name: str) -> EntryPoint:
    for ep in entry_points(group=group):
        if ep.name == name:
            return ep
    installed = ", ".join(installed_names(group)) or "none"
    raise EntryPointNotFound(f'no {group} entry point named "{name}" (installed: {installed})')


def load_backend_factory(name: str) -> BackendFactory:
    """The factory behind backend ``name``; ``EntryPointNotFound`` lists the installed ones."""
    return cast(BackendFactory, _find(BACKENDS_GROUP, name).load())


def load_backend(
    name: str,
    *,
    cwd: str | None = None,
    roots: RootsOption = CWD_ROOT,
    read_only_roots: Iterable[str | os.PathLike[str]] = (),
    read_only: bool = False,
    options: Mapping[str, Any] | None = None,
) -> FileSystem:
    """Build backend ``name`` with ``cwd`` as its resolution default, contained as asked.

    ``options`` are further keywords of that backend's factory, passed as
    they are (an SSH key for a remote backend, say): what ``dsh-fs
    --backend-option KEY=VALUE`` gives a third-party backend.

    The workspace options are always passed (the default, ``roots=CWD_ROOT``,
    is containment to ``cwd``): a factory whose signature takes none of
    them could only build a backend that ignores them, so it raises
    :class:`WorkspaceOptionsUnsupported` naming the entry point, before the
    factory is called. A root the backend rejects raises its ``ValueError``.
    """
    factory = load_backend_factory(name)
    if not _takes_workspace_options(factory):
        raise WorkspaceOptionsUnsupported(
            f'{BACKENDS_GROUP} entry point "{name}" does not take the workspace options '
            f"({', '.join(WORKSPACE_OPTIONS)})"
        )
    fs = factory(
        cwd=cwd,
        roots=roots,
        read_only_roots=read_only_roots,
        read_only=read_only,
        **dict(options or {}),
    )
    if not isinstance(fs, FileSystem):
        raise TypeError(f'{BACKENDS_GROUP} entry point "{name}" did not build a FileSystem')
    return fs


def _takes_workspace_options(factory: BackendFactory) -> bool:
    """Whether ``factory`` accepts every workspace keyword (an unknown signature: assume so)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return True
    keywords = {
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    return keywords.issuperset(WORKSPACE_OPTIONS)


def load_plugin(name: str) -> Any:
    """A ready-to-register plugin object for plugin ``name``."""
    obj = _find(PLUGINS_GROUP, name).load()
    return obj() if isinstance(obj, type) else obj
