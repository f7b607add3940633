"""Finding backends and plugins that are installed, by entry-point name.

A backend distribution declares ``[project.entry-points."dsh_fs.backends"]``
``name = "module:Factory"``; the factory is called with the keyword ``cwd``
(``str | None``) and returns a :class:`~dsh_fs.FileSystem`. A plugin
distribution declares ``[project.entry-points."dsh_fs.plugins"]``
``name = "module:object"``; a class is instantiated with no arguments,
anything else (a module, an instance) is registered as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, cast

from ._filesystem import FileSystem

BACKENDS_GROUP = "dsh_fs.backends"
PLUGINS_GROUP = "dsh_fs.plugins"

BackendFactory = Callable[..., FileSystem]


class EntryPointNotFound(LookupError):
    """No installed distribution declares the requested name."""


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


def load_backend(name: str, *, cwd: str | None = None) -> FileSystem:
    """Build backend ``name`` with ``cwd`` as its resolution default."""
    fs = load_backend_factory(name)(cwd=cwd)
    if not isinstance(fs, FileSystem):
        raise TypeError(f'{BACKENDS_GROUP} entry point "{name}" did not build a FileSystem')
    return fs


def load_plugin(name: str) -> Any:
    """A ready-to-register plugin object for plugin ``name``."""
    obj = _find(PLUGINS_GROUP, name).load()
    return obj() if isinstance(obj, type) else obj
