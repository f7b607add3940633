"""Git's ignore rules for a walk: ``.ignore``, ``.gitignore`` and ``.git/info/exclude``.

Each ignore file is one :class:`pathspec.GitIgnoreSpec` (git's semantics:
negation, anchoring, directory-only patterns, last match wins), applied to
paths relative to the directory that holds it. :class:`IgnoreRules` is the
immutable stack of those files in force in one directory of the walk; a
child directory adds its own files with :meth:`IgnoreRules.below`.

Precedence, as ripgrep has it: a ``.ignore`` file (the deepest that decides
first) beats every ``.gitignore``, which beats every ``.git/info/exclude``.
Only the files from the workspace root down are read — nothing above it, no
global or user configuration — whether or not the tree is a git repository.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .globs import matchable

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["EXCLUDE_FILE", "GITIGNORE_FILE", "IGNORE_FILE", "IgnoreFile", "IgnoreRules"]

IGNORE_FILE = ".ignore"
GITIGNORE_FILE = ".gitignore"
EXCLUDE_FILE = ".git/info/exclude"

_KINDS = (IGNORE_FILE, GITIGNORE_FILE, EXCLUDE_FILE)
"""The kinds of ignore file, strongest first."""


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """One ignore file's patterns; ``cut`` is the length of its directory's path, ``/`` included.

    Paths given to :class:`IgnoreRules` are relative to the directory the
    rules start from (the workspace root, or the searched directory); this
    file sees ``path[cut:]``, the path relative to its own directory.
    """

    kind: str
    spec: GitIgnoreSpec
    cut: int

    def decides(self, path: str) -> bool | None:
        """True: ignored, False: re-included (``!pattern``), None: no pattern matches."""
        try:
            return self.spec.check_file(path[self.cut :]).include
        except UnicodeEncodeError:
            return self.spec.check_file(matchable(path[self.cut :])).include


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """The ignore files in force in one directory, deepest last."""

    files: tuple[IgnoreFile, ...] = ()

    def ignores(self, path: str, *, is_dir: bool) -> bool:
        """Whether the entry at ``path`` (relative to where the rules start) is ignored."""
        if not self.files:
            return False
        probe = path + "/" if is_dir else path
        for kind in _KINDS:
            for ignore_file in reversed(self.files):
                if ignore_file.kind == kind:
                    decided = ignore_file.decides(probe)
                    if decided is not None:
                        return decided
        return False

    def below(self, directory: str, found: dict[str, str]) -> IgnoreRules:
        """These rules plus the ignore files ``found`` (kind → text) of ``directory``.

        ``directory`` is relative to where the rules start, with a trailing
        ``/`` (``""`` for that directory itself).
        """
        if not found:  # most directories: no ignore file
            return self
        # Imported with the first ignore file, not with the tool: every dsh-fs process loads
        # the installed tools, and pathspec is a third of this package's import time.
        from pathspec import GitIgnoreSpec

        cut = len(directory)
        added = []
        for kind in _KINDS:
            if kind in found:
                spec = GitIgnoreSpec.from_lines(found[kind].splitlines())
                # A file of comments and blank lines only adds nothing.
                if any(pattern.include is not None for pattern in spec.patterns):
                    added.append(IgnoreFile(kind, spec, cut))
        return IgnoreRules(self.files + tuple(added)) if added else self
