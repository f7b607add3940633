"""Immutable value types that cross the seam.

They are plain frozen dataclasses, built with their constructors: hashable,
comparable, and free of any backend detail. ``version`` strings are opaque
freshness tokens: compare them for equality, never parse them.

The two that a listing builds one of per child, :class:`FsTarget` and
:class:`FsDirEntry`, have their own ``__init__``, which stores each field
through its slot's descriptor: the one ``dataclass`` writes for a frozen class
calls ``object.__setattr__`` per field and takes twice as long (1.1 against
0.6 µs an entry here), and a search over a large tree builds tens of thousands
(docs/maintaining/benchmarks.md, G1). Assigning a field afterwards still
raises ``dataclasses.FrozenInstanceError``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

EntryType: TypeAlias = Literal["file", "directory", "other"]
PathType: TypeAlias = Literal["file", "directory", "symlink", "other"]


def _slot_setters(cls: type, *names: str) -> tuple[Callable[[Any, Any], None], ...]:
    """The ``__set__`` of each named slot of ``cls``: how its own ``__init__`` stores a field."""
    return tuple(vars(cls)[name].__set__ for name in names)


@dataclass(frozen=True, slots=True, init=False)
class FsTarget:
    """A resolved path.

    ``target_key`` is opaque identity: the same file reached through different
    paths (symlinks, ``..``) has the same key. ``display_path`` is the only
    part ever shown to the model or a user interface.
    """

    target_key: str
    display_path: str

    def __init__(self, target_key: str, display_path: str) -> None:
        _set_target_key(self, target_key)
        _set_display_path(self, display_path)


_set_target_key, _set_display_path = _slot_setters(FsTarget, "target_key", "display_path")


@dataclass(frozen=True, slots=True)
class FsInfo:
    """What ``stat`` reports about an existing target (symlinks followed).

    ``modified_ns`` is the modification time in nanoseconds, ``None`` where a
    backend has none. Search orders files by it; it is never a freshness
    token (that is ``version``).
    """

    version: str
    type: EntryType
    size: int | None
    modified_ns: int | None = None


@dataclass(frozen=True, slots=True)
class FsPathInfo:
    """What ``lstat`` reports: like :class:`FsInfo` but a final symlink is itself."""

    version: str
    type: PathType
    size: int | None
    modified_ns: int | None = None


@dataclass(frozen=True, slots=True, init=False)
class FsDirEntry:
    """One direct child of a listed directory.

    ``type`` follows symlinks (a link to a directory is ``directory``, a broken
    link is ``other``). ``version``, ``size`` and ``modified_ns`` are only
    filled in when the listing was asked for ``stat=True`` (``size`` only for
    files; ``modified_ns`` as in :class:`FsInfo`).

    ``symlink`` is true when the entry itself is a symbolic link, whatever it
    points at — with or without ``stat``. It is optional for a backend (the
    default ``False`` means "not a link, or unknown"); a backend that has
    symlinks sets it, so that a tree walk (``glob``, ``grep``) can refuse to
    follow links without one ``lstat`` per entry.
    """

    name: str
    type: EntryType
    target: FsTarget
    version: str | None = None
    size: int | None = None
    modified_ns: int | None = None
    symlink: bool = False

    def __init__(
        self,
        name: str,
        type: EntryType,
        target: FsTarget,
        version: str | None = None,
        size: int | None = None,
        modified_ns: int | None = None,
        symlink: bool = False,
    ) -> None:
        _set_name(self, name)
        _set_type(self, type)
        _set_target(self, target)
        _set_version(self, version)
        _set_size(self, size)
        _set_modified_ns(self, modified_ns)
        _set_symlink(self, symlink)


(
    _set_name,
    _set_type,
    _set_target,
    _set_version,
    _set_size,
    _set_modified_ns,
    _set_symlink,
) = _slot_setters(FsDirEntry, "name", "type", "target", "version", "size", "modified_ns", "symlink")


@dataclass(frozen=True, slots=True)
class CreateIfAbsent:
    """Write intent: create the file; fail ``FS_NOT_OBSERVED`` if it already exists."""


@dataclass(frozen=True, slots=True)
class ReplaceIfVersion:
    """Write intent: replace the file only if it is still at ``version``."""

    version: str


WriteIntent: TypeAlias = CreateIfAbsent | ReplaceIfVersion
"""A write's precondition; ``None`` (no intent) means an unconditional write."""


@dataclass(frozen=True, slots=True)
class EditGuard:
    """Edit precondition: the file must still be at ``version`` (checked before matching)."""

    version: str


@dataclass(frozen=True, slots=True)
class AtVersion:
    """Entry guard of a removal or move: the entry must still be at ``version``.

    Absent → ``FS_STALE_VERSION`` ``… file no longer exists``; another version
    → ``FS_STALE_VERSION`` ``… file changed since it was read``.
    """

    version: str


@dataclass(frozen=True, slots=True)
class NotAFile:
    """Entry guard of a removal or move: the entry must not be a regular file.

    What a caller that has not read the entry asks for: a directory, a
    symlink or nothing at all may go ahead, but a regular file there fails
    ``FS_NOT_OBSERVED`` (``cannot delete "<p>" without reading it first``, or
    for a move's destination ``cannot overwrite existing "<p>" without
    reading it first``) — its content would be lost unseen.
    """


EntryGuard: TypeAlias = AtVersion | NotAFile
"""The precondition on one entry of a removal or a move; ``None`` means unguarded."""


@dataclass(frozen=True, slots=True)
class MoveGuard:
    """The preconditions of a move: one :data:`EntryGuard` (or ``None``) per path."""

    source: EntryGuard | None = None
    destination: EntryGuard | None = None


@dataclass(frozen=True, slots=True)
class FsEditRequest:
    """A literal replacement of ``old_string`` by ``new_string``."""

    old_string: str
    new_string: str
    replace_all: bool = False


@dataclass(frozen=True, slots=True)
class FsWriteOutcome:
    """Result of ``write_text``.

    ``before`` is the previous content LF-normalized, or ``None`` for a create
    or when the previous content was not text; ``after`` is the written
    content LF-normalized; ``version`` is what a fresh ``stat`` reports.
    """

    operation: Literal["create", "update"]
    version: str
    before: str | None
    after: str


@dataclass(frozen=True, slots=True)
class FsEditOutcome:
    """Result of ``edit_text``; ``before`` and ``after`` are LF-normalized."""

    version: str
    before: str
    after: str
    replacements: int = 1


@dataclass(frozen=True, slots=True)
class FsDeleteOutcome:
    """Result of ``delete``: what the entry was (``lstat``'s type, a link is ``symlink``)."""

    type: PathType


@dataclass(frozen=True, slots=True)
class FsMoveOutcome:
    """Result of ``move``.

    ``type`` is what moved (``lstat``'s type); ``version`` is what a fresh
    ``stat`` of the destination reports (``None`` for a dangling link);
    ``replaced`` says whether an entry at the destination was replaced.
    """

    type: PathType
    version: str | None
    replaced: bool


@dataclass(frozen=True, slots=True)
class WriteChange:
    """One change of :meth:`~dsh_fs.FileSystem.apply_changes`: ``write_text`` of ``target``."""

    target: FsTarget
    content: str
    expected: WriteIntent | None = None


@dataclass(frozen=True, slots=True)
class DeleteChange:
    """One change of :meth:`~dsh_fs.FileSystem.apply_changes`: ``delete`` of ``target``."""

    target: FsTarget
    expected: EntryGuard | None = None
    recursive: bool = False


FsChange: TypeAlias = WriteChange | DeleteChange
"""One change of a batch; its outcome is an ``FsWriteOutcome`` or an ``FsDeleteOutcome``."""
