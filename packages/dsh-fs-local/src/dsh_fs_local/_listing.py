"""``list_dir`` in one ``scandir`` pass (runs in a worker thread)."""

from __future__ import annotations

import errno
import os

from dsh_fs import EntryType, FsDirEntry, FsError, FsTarget
from dsh_fs.preconditions import not_directory, not_found

from ._os_errors import os_failure
from ._paths import entry_type_of, version_of


def _list_failure(key: str, display_path: str, exc: OSError) -> FsError:
    if exc.errno == errno.ENOENT:
        return not_found("list", display_path)
    if exc.errno == errno.ENOTDIR:
        # Either the target is not a directory, or a parent segment is a file.
        try:
            os.stat(key)
        except OSError:
            return not_found("list", display_path)
        return not_directory("list", display_path)
    return os_failure("list", display_path, exc)


def list_directory(key: str, display_path: str, with_stat: bool) -> list[FsDirEntry]:
    """The direct children of the directory ``key``.

    Types come from the directory entry (``d_type``) without a ``stat``; only
    symlinks (followed, a broken one is ``other``) and entries of unreported
    type cost one. A child's key is the parent key joined with its name — a
    ``realpath`` only for symlinks. ``with_stat`` adds version and file size.
    """
    try:
        scan = os.scandir(key)
    except OSError as exc:
        raise _list_failure(key, display_path, exc) from exc
    entries: list[FsDirEntry] = []
    append = entries.append
    # Plain concatenation: os.path.join costs more than the rest of an entry.
    key_prefix = key.rstrip("/") + "/"
    display_prefix = display_path.rstrip("/") + "/"
    with scan:
        try:
            for entry in scan:
                name = entry.name
                version: str | None = None
                size: int | None = None
                kind: EntryType
                if entry.is_symlink():
                    child_key = os.path.realpath(entry.path)
                    try:
                        info = entry.stat()
                    except OSError:
                        kind = "other"
                    else:
                        kind = entry_type_of(info.st_mode)
                        if with_stat:
                            version = version_of(info)
                            if kind == "file":
                                size = info.st_size
                else:
                    child_key = key_prefix + name
                    try:
                        if with_stat:
                            info = entry.stat(follow_symlinks=False)
                            kind = entry_type_of(info.st_mode)
                            version = version_of(info)
                            if kind == "file":
                                size = info.st_size
                        elif entry.is_dir(follow_symlinks=False):
                            kind = "directory"
                        elif entry.is_file(follow_symlinks=False):
                            kind = "file"
                        else:
                            kind = "other"
                    except OSError:
                        # Removed between readdir and a needed stat: skip it.
                        continue
                target = FsTarget(child_key, display_prefix + name)
                append(FsDirEntry(name, kind, target, version, size))
        except OSError as exc:
            raise os_failure("list", display_path, exc) from exc
    return entries
