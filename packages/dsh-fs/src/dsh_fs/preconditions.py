"""The checks a mutation makes inside its critical section, in contract order.

Every backend runs them on the target's current state, under its per-target
lock, before touching content: the type first, then the intent or guard
(so a stale guard fails before any matching, SPEC 2.3 rule 3). Keeping them
here keeps the messages and their order identical across backends.
"""

from __future__ import annotations

from ._errors import FsError, FsErrorCode
from ._types import CreateIfAbsent, EditGuard, EntryType, ReplaceIfVersion, WriteIntent

_STALE = "file changed since it was read"


def not_regular(verb: str, display_path: str) -> FsError:
    """``cannot <verb> "<p>": not a regular file`` (``FS_NOT_REGULAR_FILE``)."""
    return FsError.cannot(verb, display_path, "not a regular file", FsErrorCode.FS_NOT_REGULAR_FILE)


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
            raise FsError.cannot(
                "write", display_path, "file no longer exists", FsErrorCode.FS_STALE_VERSION
            )
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

    Order: absent (stale, guarded or not), not a regular file, then a guard
    of another version — all before the content is read or matched.
    """
    if current is None:
        raise FsError.cannot("edit", display_path, _STALE, FsErrorCode.FS_STALE_VERSION)
    if current[0] != "file":
        raise not_regular("edit", display_path)
    if guard is not None and current[1] != guard.version:
        raise FsError.cannot("edit", display_path, _STALE, FsErrorCode.FS_STALE_VERSION)
