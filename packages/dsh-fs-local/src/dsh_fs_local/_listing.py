"""``list_dir`` in one ``scandir`` pass over a descriptor (runs in a worker thread)."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Sequence

from dsh_fs import EntryType, FsDirEntry, FsError, FsTarget
from dsh_fs.preconditions import not_directory, not_found

from ._os_errors import os_failure
from ._paths import entry_type_of, version_of
from ._reach import LISTABLE_FLAGS, PATH_FLAGS, Reach, Refused


def list_failure(
    reach: Reach, key: str, display_path: str, exc: OSError, verb: str = "list"
) -> FsError:
    """The error of a directory that could not be opened for listing, with ``verb``."""
    if exc.errno == errno.ENOENT:
        return not_found(verb, display_path)
    if exc.errno == errno.ENOTDIR:
        # Either the target is not a directory, or a parent segment is a file.
        try:
            os.close(reach.open(key, PATH_FLAGS))
        except (OSError, Refused):
            return not_found(verb, display_path)
        return not_directory(verb, display_path)
    return os_failure(verb, display_path, exc)


_Child = tuple[str, EntryType, str | None, int | None, int | None]
"""Key, type, version, size and modification time of a listed child."""


def _symlink_child(reach: Reach, child_key: str, with_stat: bool) -> _Child:
    """The key, type, version, size and mtime of a symlink child, followed beneath the workspace.

    A link that leaves the workspace (or is a magic link) is ``other``, keeps
    its unresolved key and is never statted through; a broken one is
    ``other`` with the key of the file it points to.
    """
    try:
        fd = reach.open(child_key, PATH_FLAGS)
    except Refused:
        return child_key, "other", None, None, None
    except FileNotFoundError:
        try:
            return reach.key_of(child_key), "other", None, None, None
        except (OSError, Refused):
            return child_key, "other", None, None, None
    except OSError:
        return child_key, "other", None, None, None
    try:
        info = os.fstat(fd)
        key = reach.key_of(child_key)
    except (OSError, Refused):
        return child_key, "other", None, None, None
    finally:
        os.close(fd)
    kind = entry_type_of(info.st_mode)
    if not with_stat:
        return key, kind, None, None, None
    size = info.st_size if kind == "file" else None
    return key, kind, version_of(info), size, info.st_mtime_ns


def list_directory(reach: Reach, key: str, display_path: str, with_stat: bool) -> list[FsDirEntry]:
    """The direct children of the directory ``key``, opened through ``reach``.

    Types come from the directory entry (``d_type``) without a ``stat``; only
    symlinks (followed beneath the workspace; a broken or escaping one is
    ``other``) and entries of unreported type cost one. A child's key is the
    parent key joined with its name — resolved only for symlinks. ``with_stat``
    adds version, file size and modification time.
    """
    try:
        dir_fd = reach.open(key, LISTABLE_FLAGS)
    except Refused as refused:
        raise refused.error("list", display_path) from None
    except OSError as exc:
        raise list_failure(reach, key, display_path, exc) from exc
    try:
        scan = os.scandir(dir_fd)
    except OSError as exc:
        os.close(dir_fd)
        raise os_failure("list", display_path, exc) from exc
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
                modified: int | None = None
                kind: EntryType
                link = entry.is_symlink()
                if link:
                    child_key, kind, version, size, modified = _symlink_child(
                        reach, key_prefix + name, with_stat
                    )
                else:
                    child_key = key_prefix + name
                    try:
                        if with_stat:
                            info = entry.stat(follow_symlinks=False)
                            kind = entry_type_of(info.st_mode)
                            version = version_of(info)
                            modified = info.st_mtime_ns
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
                append(FsDirEntry(name, kind, target, version, size, modified, link))
        except OSError as exc:
            raise os_failure("list", display_path, exc) from exc
        finally:
            os.close(dir_fd)
    return entries


def list_directories(
    reach: Reach,
    directories: Sequence[tuple[str, str]],
    with_stat: bool,
    check_cancelled: Callable[[], object],
) -> list[list[FsDirEntry] | FsError]:
    """:func:`list_directory` of each ``(key, display path)``, its entries or its ``FsError``,
    in order, in one worker-thread call; ``check_cancelled`` (which raises the caller's
    cancellation) runs before each directory."""
    listings: list[list[FsDirEntry] | FsError] = []
    for key, display_path in directories:
        check_cancelled()
        try:
            listings.append(list_directory(reach, key, display_path, with_stat))
        except FsError as exc:
            listings.append(exc)
    return listings
