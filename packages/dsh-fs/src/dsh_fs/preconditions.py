"""The checks a mutation makes inside its critical section, and the shared messages.

Every backend runs :func:`check_write` / :func:`check_edit` on the target's
current state, under its per-target lock, before touching content: presence
and type first, then the intent or guard (so a stale guard fails before any
matching: rule 3 of ``FileSystem``). The message builders beside them are the
refusals every backend words the same way (``not found``, ``not a
directory`` …): one spelling, so the backends cannot drift apart.
"""

from __future__ import annotations

from typing import Final

from ._errors import FsError, FsErrorCode
from ._types import (
    AtVersion,
    CreateIfAbsent,
    EditGuard,
    EntryGuard,
    EntryType,
    NotAFile,
    PathType,
    ReplaceIfVersion,
    WriteIntent,
)

__all__ = [
    "already_exists",
    "check_delete",
    "check_edit",
    "check_move_destination",
    "check_move_source",
    "check_write",
    "not_directory",
    "not_empty",
    "not_found",
    "not_regular",
    "over_read_limit",
    "parent_not_directory",
    "workspace_root",
]

_STALE = "file changed since it was read"
_GONE = "file no longer exists"


def not_found(verb: str, display_path: str) -> FsError:
    """``cannot <verb> "<p>": not found`` (``FS_NOT_FOUND``)."""
    return FsError.cannot(verb, display_path, "not found", FsErrorCode.FS_NOT_FOUND)


def not_directory(verb: str, display_path: str) -> FsError:
    """``cannot <verb> "<p>": not a directory`` (``FS_NOT_DIRECTORY``)."""
    return FsError.cannot(verb, display_path, "not a directory", FsErrorCode.FS_NOT_DIRECTORY)


def parent_not_directory(verb: str, display_path: str) -> FsError:
    """``cannot <verb> "<p>": a parent path segment is not a directory`` (``FS_NOT_FOUND``)."""
    return FsError.cannot(
        verb, display_path, "a parent path segment is not a directory", FsErrorCode.FS_NOT_FOUND
    )


def not_regular(verb: str, display_path: str) -> FsError:
    """``cannot <verb> "<p>": not a regular file`` (``FS_NOT_REGULAR_FILE``)."""
    return FsError.cannot(verb, display_path, "not a regular file", FsErrorCode.FS_NOT_REGULAR_FILE)


def over_read_limit(verb: str, display_path: str) -> FsError:
    """``cannot <verb> "<p>": more text than this read may hold`` (``FS_TOO_LARGE``): a
    bounded :meth:`~dsh_fs.FileSystem.read_texts`'s refusal, met by streaming the file."""
    return FsError.cannot(
        verb, display_path, "more text than this read may hold", FsErrorCode.FS_TOO_LARGE
    )


def check_write(
    display_path: str, current: tuple[EntryType, str] | None, expected: WriteIntent | None
) -> None:
    """Raise the write's ``FsError`` for the current ``(type, version)`` (``None``: absent).

    Order: an existing non-regular target (before any intent), then
    ``ReplaceIfVersion`` (gone, or another version), then ``CreateIfAbsent``
    on an existing file.
    """
    if current is not None and current[0] != "file":
        raise not_regular("write", display_path)
    if isinstance(expected, ReplaceIfVersion):
        if current is None:
            raise FsError.cannot("write", display_path, _GONE, FsErrorCode.FS_STALE_VERSION)
        if current[1] != expected.version:
            raise FsError.cannot("write", display_path, _STALE, FsErrorCode.FS_STALE_VERSION)
    elif isinstance(expected, CreateIfAbsent) and current is not None:
        raise FsError(
            f'cannot overwrite existing "{display_path}" without reading it first',
            FsErrorCode.FS_NOT_OBSERVED,
        )


def check_edit(
    display_path: str, current: tuple[EntryType, str] | None, guard: EditGuard | None
) -> None:
    """Raise the edit's ``FsError`` for the current ``(type, version)`` (``None``: absent).

    Order: absent, not a regular file, then a guard of another version — all
    before the content is read or matched. An absent file is ``not found``
    for an unguarded edit, but ``file no longer exists`` (stale) for a
    guarded one: it was read, then it vanished.
    """
    if current is None:
        if guard is None:
            raise not_found("edit", display_path)
        raise FsError.cannot("edit", display_path, _GONE, FsErrorCode.FS_STALE_VERSION)
    if current[0] != "file":
        raise not_regular("edit", display_path)
    if guard is not None and current[1] != guard.version:
        raise FsError.cannot("edit", display_path, _STALE, FsErrorCode.FS_STALE_VERSION)


MOVE_TO: Final = "move to"
"""The verb of a move's refusals about its destination: ``cannot move to "<p>": …``."""


def not_empty(verb: str, display_path: str) -> FsError:
    """``cannot <verb> "<p>": directory not empty`` (``FS_NOT_EMPTY``)."""
    return FsError.cannot(verb, display_path, "directory not empty", FsErrorCode.FS_NOT_EMPTY)


def already_exists(display_path: str) -> FsError:
    """``cannot move to "<p>": already exists`` (``FS_ALREADY_EXISTS``): a move that may not
    replace its destination."""
    return FsError.cannot(MOVE_TO, display_path, "already exists", FsErrorCode.FS_ALREADY_EXISTS)


def workspace_root(verb: str, display_path: str) -> FsError:
    """``cannot <verb> "<p>": it is a workspace root`` (``FS_PERMISSION_DENIED``): a root
    is never removed, moved or replaced."""
    return FsError.cannot(
        verb, display_path, "it is a workspace root", FsErrorCode.FS_PERMISSION_DENIED
    )


def _check_guard(
    verb: str,
    display_path: str,
    current: tuple[PathType, str | None] | None,
    guard: EntryGuard | None,
    unobserved: str,
) -> None:
    if isinstance(guard, AtVersion):
        if current is None or current[1] is None:
            raise FsError.cannot(verb, display_path, _GONE, FsErrorCode.FS_STALE_VERSION)
        if current[1] != guard.version:
            raise FsError.cannot(verb, display_path, _STALE, FsErrorCode.FS_STALE_VERSION)
    elif isinstance(guard, NotAFile) and current is not None and current[0] == "file":
        raise FsError(unobserved, FsErrorCode.FS_NOT_OBSERVED)


def check_delete(
    display_path: str, current: tuple[PathType, str | None] | None, guard: EntryGuard | None
) -> None:
    """Raise the removal's ``FsError`` for the entry's current ``(lstat type, stat version)``.

    ``current`` is ``None`` when nothing is there; the version is what
    ``stat`` reports (a link's is its target's, ``None`` when it dangles).
    Order: a guarded entry that is gone or changed (stale), an unguarded one
    that is absent (``not found``), then ``NotAFile`` on a regular file
    (``cannot delete "<p>" without reading it first``). Whether a directory
    is empty is the backend's to check afterwards (:func:`not_empty`).
    """
    if current is None and not isinstance(guard, AtVersion):
        raise not_found("delete", display_path)
    _check_guard(
        "delete",
        display_path,
        current,
        guard,
        f'cannot delete "{display_path}" without reading it first',
    )


def check_move_source(
    display_path: str, current: tuple[PathType, str | None] | None, guard: EntryGuard | None
) -> None:
    """:func:`check_delete` for a move's source, worded ``cannot move "<p>": …``."""
    if current is None and not isinstance(guard, AtVersion):
        raise not_found("move", display_path)
    _check_guard(
        "move",
        display_path,
        current,
        guard,
        f'cannot move "{display_path}" without reading it first',
    )


def check_move_destination(
    display_path: str,
    current: tuple[PathType, str | None] | None,
    guard: EntryGuard | None,
    *,
    replace: bool,
) -> None:
    """Raise the move's ``FsError`` about its destination's current state.

    Order: an existing destination the move may not replace
    (``cannot move to "<p>": already exists``), then its guard: stale
    (``cannot move to "<p>": file changed since it was read`` / ``file no
    longer exists``), or ``NotAFile`` on a regular file (``cannot overwrite
    existing "<p>" without reading it first``). Type clashes (a directory
    onto a file, onto a non-empty directory) are the backend's to answer.
    """
    if current is not None and not replace:
        raise already_exists(display_path)
    _check_guard(
        MOVE_TO,
        display_path,
        current,
        guard,
        f'cannot overwrite existing "{display_path}" without reading it first',
    )
