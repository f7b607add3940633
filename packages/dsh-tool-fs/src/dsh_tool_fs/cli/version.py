"""``dsh-fs --version``: exactly what would run, for a bug report."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, entry_points, version

from dsh_fs import BACKENDS_GROUP, PLUGINS_GROUP

from ..tools import TOOLS_GROUP


def installed_version(distribution: str) -> str:
    """The installed version of ``distribution``, or ``unknown``."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"


def version_report() -> str:
    """What ``dsh-fs --version`` prints.

    The command's own version first (``dsh-fs <dsh-tool-fs version>``), then
    the two layers it always uses, then every installed backend, plugin and
    tool entry point with the distribution (and version) that declares it,
    then the runtime libraries and Python, and whether search's native fast
    path can run here.
    """
    lines = [f"dsh-fs {installed_version('dsh-tool-fs')}"]
    lines += [f"  layer {dist} {installed_version(dist)}" for dist in ("dsh-tool-fs", "dsh-fs")]
    groups = (("backend", BACKENDS_GROUP), ("plugin", PLUGINS_GROUP), ("tool", TOOLS_GROUP))
    for kind, group in groups:
        found = sorted(entry_points(group=group), key=lambda ep: (ep.name, ep.value))
        for ep in found:
            dist = ep.dist
            origin = "unknown distribution" if dist is None else f"{dist.name} {dist.version}"
            lines.append(f"  {kind} {ep.name}: {origin}")
        if not found:
            lines.append(f"  {kind}: none installed")
    libraries = ", ".join(
        f"{lib} {installed_version(lib)}" for lib in ("anyio", "pluggy", "pydantic", "mcp")
    )
    lines.append(f"  with {libraries} on Python {platform.python_version()}")
    search = _search_fast_path()
    if search is not None:
        lines.append(f"  search fast path: {search}")
    return "\n".join(lines) + "\n"


def _search_fast_path() -> str | None:
    """Whether ``glob`` and ``grep`` can take the native fast path (a Landlock-confined
    ``rg``), when dsh-tool-fs-search is installed; imported only for ``--version``."""
    try:
        from dsh_tool_fs_search.fast_path import native_status
    except ImportError:
        return None
    return native_status()
