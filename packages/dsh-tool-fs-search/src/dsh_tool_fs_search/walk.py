"""Producing the candidate files of a search: the scope, the walk, the order.

This is the first half of ``glob`` and ``grep`` (the second is matching and
rendering, :mod:`dsh_tool_fs_search.grep_page`): :func:`open_scope` resolves
the searched ``path`` and loads the ignore files above it;
:func:`walk_candidates` walks the tree beneath it through the seam —
``list_dirs(stat=True)`` of many directories at once and ``read_text`` of
their ignore files,
nothing else — and :func:`order_candidates` puts the files in the order the
model sees them. Because every step is a :class:`~dsh_fs.FileSystem`
primitive, the backend's containment holds by construction.

What is walked: symlinks are never followed (``FsDirEntry.symlink``),
entries that are neither file nor directory are skipped, the VCS
directories ``.git``, ``.hg``, ``.svn`` and ``.jj`` are never entered, hidden
files are included, and git's ignore rules apply
(:mod:`dsh_tool_fs_search.ignore`) from the workspace root down.
"""

from __future__ import annotations

import heapq
import itertools
import math
import posixpath
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from dsh_fs import FsDirEntry, FsError, FsErrorCode, FsTarget
from dsh_tool_fs import Execution

from .globs import PathGlob
from .ignore import EXCLUDE_FILE, GITIGNORE_FILE, IGNORE_FILE, IgnoreRules

__all__ = [
    "VCS_DIRS",
    "Candidate",
    "Candidates",
    "Deadline",
    "SearchScope",
    "Verb",
    "ignore_files_of",
    "open_scope",
    "order_candidates",
    "order_key",
    "order_paths",
    "walk_candidates",
]

Verb = Literal["glob", "grep"]

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".jj"})
"""Directories a walk never enters (an explicitly given ``path`` is still searched)."""

_SKIPPED = (FsErrorCode.FS_ABORTED,)

DIRECTORIES_AT_ONCE = 64
"""Directories listed by one ``list_dirs`` call (the local backend lists them in one
worker-thread hop; the default lists 16 at once)."""


class Deadline:
    """The moment a search stops walking: ``search_time_limit`` seconds after it starts."""

    __slots__ = ("_end", "seconds")

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self._end


@dataclass(frozen=True, slots=True)
class SearchScope:
    """What one search covers: the resolved ``path`` and the ignore rules in force there.

    ``base`` is the searched path relative to where ``rules`` start (the
    workspace root, with a trailing ``/``; ``""`` when the rules start at the
    searched directory itself). ``ancestors_dropped`` is true when the searched
    path is itself ignored: it is searched anyway, with only the ignore files
    inside it.
    """

    verb: Verb
    target: FsTarget
    is_file: bool
    size: int | None
    modified_ns: int | None
    rules: IgnoreRules
    base: str
    ancestors_dropped: bool = False


@dataclass(slots=True)
class Candidate:
    """One file to report or search; ``path`` is relative to the searched directory.

    Not frozen (nothing changes one once built): a walk builds one per file,
    and a frozen dataclass takes 3.5 times as long to build (0.7 against 0.2 µs
    here; docs/maintaining/benchmarks.md, G1).
    """

    path: str
    target: FsTarget
    size: int | None
    modified_ns: int | None


@dataclass(frozen=True, slots=True)
class Candidates:
    """The files of a search in the model's order, and whether the time limit cut the walk.

    ``files`` is the whole order, or only its start when the search asked
    for the ``first`` files (a glob page); ``total`` counts them all.
    """

    files: list[Candidate]
    total: int
    stopped: bool


def order_key(path: str) -> tuple[tuple[str, str], ...]:
    """Path order: segment by segment, each by ``(casefold, name)``; no directories first."""
    return tuple((segment.casefold(), segment) for segment in path.split("/"))


def _time_key(modified_ns: int | None) -> float:
    # Newest first; a file without a modification time sorts after every file with one.
    return math.inf if modified_ns is None else -modified_ns


def order_paths(times: Mapping[str, int | None], first: int | None = None) -> list[str]:
    """The paths of ``times`` (path → modification time in ns) newest first, ties in
    :func:`order_key` order; with ``first``, only the first ``first`` of that order.

    The path order is computed only among files of equal times, and with
    ``first`` only for the files that can reach the page: the ``first``
    newest times, and every file that shares the last of them (a glob of
    7,000 files shows 100: the cost is then a selection by time, not a sort).
    """
    keys = {path: _time_key(modified) for path, modified in times.items()}
    chosen: Iterable[str] = keys
    if first is not None and first < len(keys):
        if first <= 0:
            return []
        last = heapq.nsmallest(first, keys.values())[-1]
        chosen = [path for path, key in keys.items() if key <= last]
    ordered: list[str] = []
    for _, run in itertools.groupby(sorted(chosen, key=keys.__getitem__), key=keys.__getitem__):
        ties = list(run)
        if len(ties) > 1:
            ties.sort(key=order_key)
        ordered.extend(ties)
    return ordered if first is None else ordered[:first]


def order_candidates(files: Iterable[Candidate], first: int | None = None) -> list[Candidate]:
    """``files`` in :func:`order_paths` order (paths are unique within one search)."""
    by_path = {candidate.path: candidate for candidate in files}
    times = {path: candidate.modified_ns for path, candidate in by_path.items()}
    return [by_path[path] for path in order_paths(times, first)]


def _as_verb(exc: FsError, verb: str) -> FsError:
    """A backend's ``cannot list "<p>": …`` as the search's ``cannot <verb> "<p>": …``."""
    for prefix in ("cannot list ", "cannot read ", "cannot resolve "):
        if exc.message.startswith(prefix):
            return FsError(f"cannot {verb} {exc.message[len(prefix) :]}", exc.code)
    return exc


async def _read_optional(ex: Execution, target: FsTarget) -> str | None:
    """The text of an ignore file, or ``None`` when it cannot be read (absent, binary …)."""
    try:
        return await ex.fs.read_text(target)
    except FsError as exc:
        if exc.code in _SKIPPED:
            raise
        return None


async def _ignore_files_at(ex: Execution, directory: str) -> dict[str, str]:
    """The ignore files of ``directory`` (an absolute path) that exist, kind → text."""
    found: dict[str, str] = {}
    for kind in (IGNORE_FILE, GITIGNORE_FILE, EXCLUDE_FILE):
        try:
            target = await ex.fs.resolve(posixpath.join(directory, kind))
        except FsError:
            continue
        text = await _read_optional(ex, target)
        if text is not None:
            found[kind] = text
    return found


async def open_scope(ex: Execution, path: str, verb: Verb) -> SearchScope:
    """Resolve ``path`` and load the ignore files between the workspace root and it.

    (For one file there are none to load: a file given as ``path`` is searched.)

    Missing → ``cannot <verb> "<P>": not found``; ``glob`` of anything but a
    directory → ``not a directory``; ``grep`` of something neither file nor
    directory → ``not a regular file``. The workspace root is the backend's
    root that holds the path (:attr:`dsh_fs.FileSystem.workspace`); a backend
    without containment starts the ignore rules at the searched path.
    """
    target = await ex.resolve(path)
    p = target.display_path
    ex.step(verb)
    try:
        info = await ex.fs.stat(target)
    except FsError as exc:
        raise _as_verb(exc, verb) from exc
    if info is None:
        raise FsError.cannot(verb, p, "not found", FsErrorCode.FS_NOT_FOUND)
    is_file = info.type == "file"
    if info.type != "directory" and (verb == "glob" or not is_file):
        if verb == "glob":
            raise FsError.cannot(verb, p, "not a directory", FsErrorCode.FS_NOT_DIRECTORY)
        raise FsError.cannot(verb, p, "not a regular file", FsErrorCode.FS_NOT_REGULAR_FILE)
    workspace = ex.fs.workspace
    root = None
    if workspace is not None and workspace.contained:
        root = workspace.root_of(target.target_key)
    rules = IgnoreRules()
    base = ""
    dropped = False
    # One file given as path is searched whatever the rules: they matter for a directory only.
    if root is not None and not is_file and target.target_key != root:
        directory = ""
        for segment in target.target_key[len(root) :].strip("/").split("/"):
            ex.step(verb)
            found = await _ignore_files_at(ex, posixpath.join(root, directory))
            rules = rules.below(directory, found)
            if rules.ignores(directory + segment, is_dir=True):
                rules, base, dropped = IgnoreRules(), "", True
                break
            directory += segment + "/"
        else:
            base = directory
    return SearchScope(
        verb=verb,
        target=target,
        is_file=is_file,
        size=info.size,
        modified_ns=info.modified_ns,
        rules=rules,
        base=base,
        ancestors_dropped=dropped,
    )


async def walk_candidates(
    ex: Execution,
    scope: SearchScope,
    *,
    include: PathGlob | None,
    deadline: Deadline,
    first: int | None = None,
) -> Candidates:
    """Every file beneath the scope the search covers, in :func:`order_candidates` order
    (only the ``first`` of them when given, with the count of all).

    A directory that cannot be listed below the searched one (permission
    denied, gone, swapped for something outside) is skipped; the searched
    directory itself failing is the search's error (``cannot <verb> "<P>": …``).
    Up to :data:`DIRECTORIES_AT_ONCE` pending directories are listed at once.
    The walk stops early, with ``stopped=True``, when ``deadline`` passes.
    """
    if scope.is_file:
        name = posixpath.basename(scope.target.display_path.rstrip("/")) or "."
        if include is not None and not include.matches(name):
            return Candidates([], 0, stopped=False)
        only = Candidate(name, scope.target, scope.size, scope.modified_ns)
        return Candidates([only], 1, stopped=False)
    files: list[Candidate] = []
    seen: set[str] = set()
    # (directory, its path relative to the search with "/", or "", rules in force above it)
    pending: list[tuple[FsTarget, str, IgnoreRules]] = [(scope.target, "", scope.rules)]
    stopped = False
    base = scope.base
    while pending:
        if deadline.expired:
            stopped = True
            break
        batch: list[tuple[FsTarget, str, IgnoreRules]] = []
        while pending and len(batch) < DIRECTORIES_AT_ONCE:
            walked = pending.pop()
            if walked[0].target_key not in seen:  # a loop, on a backend without symlink flags
                seen.add(walked[0].target_key)
                batch.append(walked)
        ex.step(scope.verb)
        listings = await ex.fs.list_dirs([d for d, _, _ in batch], stat=True)
        listed: list[Candidate] = []
        for (directory, prefix, rules), entries in zip(batch, listings, strict=True):
            if isinstance(entries, FsError):
                if entries.code in _SKIPPED:
                    raise entries
                if directory is scope.target:
                    raise _as_verb(entries, scope.verb) from entries
                continue
            rules = rules.below(base + prefix, await ignore_files_of(ex, entries))
            for entry in entries:
                if entry.symlink:
                    continue
                path = prefix + entry.name
                if entry.type == "directory":
                    if entry.name in VCS_DIRS or rules.ignores(base + path, is_dir=True):
                        continue
                    pending.append((entry.target, path + "/", rules))
                elif entry.type == "file":
                    if rules.ignores(base + path, is_dir=False):
                        continue
                    listed.append(Candidate(path, entry.target, entry.size, entry.modified_ns))
        if include is not None:
            named = include.named([candidate.path for candidate in listed])
            listed = list(itertools.compress(listed, named))
        files += listed
        await ex.advance(len(batch), message=f"{len(files)} files found")
    return Candidates(order_candidates(files, first), len(files), stopped)


async def ignore_files_of(ex: Execution, entries: list[FsDirEntry]) -> dict[str, str]:
    """The ignore files among a directory's ``entries``, kind → text (one read each): what
    the walk reads in each directory, and the native path for each directory it lists."""
    found: dict[str, str] = {}
    for entry in entries:
        if entry.symlink:
            continue
        if entry.name in (IGNORE_FILE, GITIGNORE_FILE) and entry.type == "file":
            text = await _read_optional(ex, entry.target)
        elif entry.name == ".git" and entry.type == "directory":
            try:
                exclude = await ex.fs.resolve(
                    posixpath.join(entry.target.display_path, "info", "exclude")
                )
            except FsError:
                continue
            text = await _read_optional(ex, exclude)
            if text is not None:
                found[EXCLUDE_FILE] = text
            continue
        else:
            continue
        if text is not None:
            found[entry.name] = text
    return found
