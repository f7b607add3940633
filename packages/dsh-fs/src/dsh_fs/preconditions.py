"""The checks a mutation makes inside its critical section, and the shared messages.

Every backend runs :func:`check_write` / :func:`check_edit` on the target's
current state, under its per-target lock, before touching content: presence
and type first, then the intent or guard (so a stale guard fails before any
matching: rule 3 of ``FileSystem``). The message builders beside them are the
refusals every backend words the same way (``not found``, ``not a
directory`` …): one spelling, so the backends cannot drift apart.
"""

from __future__ import annotations

from ._errors import FsError, FsErrorCode
from ._types import CreateIfAbsent, EditGuard, EntryType, ReplaceIfVersion, WriteIntent

__all__ = [
    "check_edit",
    "check_write",
    "not_directory",
    "not_found",
    "not_regular",
    "over_read_limit",
    "parent_not_directory",
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
