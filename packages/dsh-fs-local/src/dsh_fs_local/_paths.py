"""Path identity: display paths, realpath target keys, versions and entry types."""

from __future__ import annotations

import errno
import os
import stat as st

from dsh_fs import EntryType, FsError, FsErrorCode, PathType

_PROC_FD = "/proc/self/fd/"
_HAS_O_PATH = hasattr(os, "O_PATH") and os.path.isdir(_PROC_FD)
_O_PATH = getattr(os, "O_PATH", 0) | os.O_CLOEXEC


def display_path_of(path: str, cwd: str) -> str:
    """The absolute, normalized (not realpathed) form of ``path`` relative to ``cwd``.

    Raises ``FS_NOT_FOUND`` ``file_path must be a non-empty string`` for an
    empty or whitespace-only path. A NUL byte is refused *before*
    normalization (``a\\0/../b`` must not become a lookup of ``b``); the message
    names the normalized path, like every other workspace refusal.
    """
    if not path or not path.strip():
        raise FsError("file_path must be a non-empty string", FsErrorCode.FS_NOT_FOUND)
    display_path = os.path.normpath(os.path.join(cwd, path))
    if "\0" in path or "\0" in cwd:
        raise FsError.cannot(
            "resolve", display_path, "path contains a NUL byte", FsErrorCode.FS_NOT_FOUND
        )
    try:
        os.fsencode(display_path)
    except UnicodeEncodeError as exc:
        # surrogateescape round-trips undecodable bytes (U+DC80..U+DCFF) only.
        raise FsError.cannot(
            "resolve", display_path, "path contains an unpaired surrogate", FsErrorCode.FS_NOT_FOUND
        ) from exc
    return display_path


def _realpath_existing(display_path: str) -> str:
    """Realpath of an existing path; raises the ``OSError`` of the lookup otherwise.

    On Linux: one ``open(O_PATH)`` and a ``readlink`` of its ``/proc/self/fd``
    entry (three syscalls, whatever the depth); elsewhere ``realpath(strict=True)``.
    """
    if not _HAS_O_PATH:
        return os.path.realpath(display_path, strict=True)
    fd = os.open(display_path, _O_PATH)
    try:
        return os.readlink(f"{_PROC_FD}{fd}")
    finally:
        os.close(fd)


def realpath_anywhere(display_path: str) -> str:
    """The identity of ``display_path`` without containment (``roots=None``): its realpath.

    A missing path gets the realpath of its nearest existing ancestor joined
    with the missing remainder (dangling symlinks are followed, so a write
    through one creates the file it points to). A parent segment that is a
    file raises ``ENOTDIR``, a symlink loop ``ELOOP``. When a segment cannot
    be searched (``EACCES``) the key is computed lexically as far as
    possible: the primitive that touches the file reports the denial.
    """
    try:
        key = _realpath_existing(display_path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.EACCES, errno.EPERM):
            return os.path.realpath(display_path)
        raise
    if not key.startswith("/"):
        # An object without a path (``/dev/stdin`` on a pipe reads "pipe:[n]"):
        # keep the final link unresolved; its (followed) type is never a file.
        parent, name = os.path.split(display_path)
        return os.path.join(_realpath_existing(parent), name) if name else display_path
    if key.endswith(" (deleted)") and not os.path.lexists(key):
        # Replaced between open and readlink: fall back to the lexical walk.
        return os.path.realpath(display_path)
    return key


def version_of(s: os.stat_result) -> str:
    """The opaque freshness token of a stat result.

    ``(dev, ino, size, mtime_ns, ctime_ns)``: a rename-replace changes the
    inode, an in-place rewrite changes ``ctime`` (which no user can set back).
    """
    return f"{s.st_dev:x}:{s.st_ino:x}:{s.st_size:x}:{s.st_mtime_ns:x}:{s.st_ctime_ns:x}"


def entry_type_of(mode: int) -> EntryType:
    if st.S_ISREG(mode):
        return "file"
    if st.S_ISDIR(mode):
        return "directory"
    return "other"


def path_type_of(mode: int) -> PathType:
    if st.S_ISLNK(mode):
        return "symlink"
    return entry_type_of(mode)
