"""Path identity: display paths, the kernel's path of a descriptor, versions and entry types."""

from __future__ import annotations

import os
import stat as st

from dsh_fs import EntryType, FsError, FsErrorCode, PathType

_PROC_FD = "/proc/self/fd/"


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


def fd_path(fd: int) -> str | None:
    """The kernel's path of an open descriptor (``/proc/self/fd``): its realpath at this moment.

    ``None`` when the kernel has none to give: no ``/proc``, an object without a
    path (a pipe reads ``pipe:[n]``), or a file unlinked since it was opened.
    """
    try:
        path = os.readlink(f"{_PROC_FD}{fd}")
    except OSError:
        return None
    if not path.startswith("/") or path.endswith(" (deleted)"):
        return None
    return path


def version_of(s: os.stat_result) -> str:
    """The opaque freshness token of a stat result.

    ``(dev, ino, size, mtime_ns, ctime_ns)``: a rename-replace changes the
    inode, an in-place rewrite changes ``ctime`` (which no user can set back).
    A listing makes one per child: ``%`` formats the five numbers in half the
    time of an f-string's ``:x`` specs (docs/maintaining/benchmarks.md, G1).
    """
    return "%x:%x:%x:%x:%x" % (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)  # noqa: UP031


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


def file_state(info: os.stat_result | None) -> tuple[EntryType, str] | None:
    """What the write and edit preconditions look at: ``(type, version)``; ``None``: absent."""
    return None if info is None else (entry_type_of(info.st_mode), version_of(info))
