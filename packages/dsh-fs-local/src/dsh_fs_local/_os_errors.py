"""OS failures as ``FsError`` values: one mapping, used by every primitive."""

from __future__ import annotations

import errno
import os

from dsh_fs import FsError, FsErrorCode
from dsh_fs.preconditions import not_found, parent_not_directory


def os_failure(verb: str, display_path: str, exc: OSError) -> FsError:
    """The ``FsError`` for an ``OSError`` raised while doing ``verb`` on ``display_path``.

    ``EACCES``/``EPERM`` → ``FS_PERMISSION_DENIED``; ``ENOENT`` → ``FS_NOT_FOUND``
    ``not found``; ``ENOTDIR`` → ``FS_NOT_FOUND`` (a parent segment is a file);
    anything else (``ELOOP`` included) → ``FS_IO_ERROR`` with the OS error text.
    The caller chains ``exc`` as the cause.
    """
    code = exc.errno
    if code in (errno.EACCES, errno.EPERM):
        return FsError.cannot(
            verb, display_path, "permission denied", FsErrorCode.FS_PERMISSION_DENIED
        )
    if code == errno.ENOENT:
        return not_found(verb, display_path)
    if code == errno.ENOTDIR:
        return parent_not_directory(verb, display_path)
    return FsError.cannot(verb, display_path, os_error_text(exc), FsErrorCode.FS_IO_ERROR)


def os_error_text(exc: OSError) -> str:
    """The OS's own description of ``exc`` (``os.strerror``), without the path."""
    if exc.errno is not None:
        return os.strerror(exc.errno)
    return str(exc) or type(exc).__name__
