"""The one exception type of the stack and its closed set of codes."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class FsErrorCode(StrEnum):
    """Why a filesystem operation failed. The set is closed: callers may switch on it."""

    FS_NOT_FOUND = "FS_NOT_FOUND"
    FS_NOT_DIRECTORY = "FS_NOT_DIRECTORY"
    FS_NOT_TEXT = "FS_NOT_TEXT"
    FS_NOT_REGULAR_FILE = "FS_NOT_REGULAR_FILE"
    FS_PERMISSION_DENIED = "FS_PERMISSION_DENIED"
    FS_IO_ERROR = "FS_IO_ERROR"
    FS_STALE_VERSION = "FS_STALE_VERSION"
    FS_NOT_OBSERVED = "FS_NOT_OBSERVED"
    FS_AMBIGUOUS_EDIT = "FS_AMBIGUOUS_EDIT"
    FS_EDIT_NOT_FOUND = "FS_EDIT_NOT_FOUND"
    FS_ABORTED = "FS_ABORTED"
    FS_OUTSIDE_WORKSPACE = "FS_OUTSIDE_WORKSPACE"
    FS_READ_ONLY = "FS_READ_ONLY"
    FS_TOO_LARGE = "FS_TOO_LARGE"
    FS_NOT_EMPTY = "FS_NOT_EMPTY"
    FS_ALREADY_EXISTS = "FS_ALREADY_EXISTS"


class FsError(Exception):
    """A filesystem failure the model can act on.

    ``str(err)`` is the one-line message (it names the path and what went
    wrong); ``err.code`` is the :class:`FsErrorCode`. Backends raise it with
    the original exception chained (``raise FsError(...) from exc``) so no raw
    ``OSError`` or ``UnicodeDecodeError`` ever leaves the seam.
    """

    def __init__(self, message: str, code: FsErrorCode) -> None:
        super().__init__(message)
        self.message = message
        self.code = FsErrorCode(code)

    @classmethod
    def cannot(cls, verb: str, display_path: str, reason: str, code: FsErrorCode) -> FsError:
        """The usual shape: ``cannot <verb> "<display_path>": <reason>``."""
        return cls(f'cannot {verb} "{display_path}": {reason}', code)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"FsError({self.message!r}, {self.code.value})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (type(self), (self.message, self.code))


class FsBatchError(FsError):
    """A failure of :meth:`~dsh_fs.FileSystem.apply_changes` after it began publishing.

    ``applied`` is how many of the batch's changes (the first ones, in order)
    were published before the one that failed; the others are untouched. A
    failure before the first publish (a guard, containment) is a plain
    :class:`FsError` and nothing changed.
    """

    def __init__(self, message: str, code: FsErrorCode, applied: int = 0) -> None:
        super().__init__(message, code)
        self.applied = applied

    def __repr__(self) -> str:
        return f"FsBatchError({self.message!r}, {self.code.value}, applied={self.applied})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (type(self), (self.message, self.code, self.applied))
