"""An entry a removal or a move works on: the link itself, never what it points to.

Removals and moves reach the entry's *directory* beneath its root and keep
its final name unfollowed (:meth:`~dsh_fs_local._reach.Reach.locate` with
``follow_final=False``): a symlink is removed or moved as a link. Everything
here is a step on that held directory: where the workspace allows it, that
it is not a root, the entry's state for the guards, and the directory locks
of one or more entries, taken in one fixed order.
"""

from __future__ import annotations

import os
import stat as st
from collections.abc import Iterable

from dsh_fs import PathType
from dsh_fs.preconditions import parent_not_directory, workspace_root
from dsh_fs.workspace import is_beneath, read_only_workspace

from ._os_errors import os_failure
from ._paths import fd_path, path_type_of, version_of
from ._publish import lock_directory
from ._reach import PATH_FLAGS, CreatedDirectories, Reach, Refused, Spot
from ._temporaries import sweep_unless_clean

__all__ = [
    "EntryState",
    "check_not_a_root",
    "entry_state",
    "lock_in_order",
    "reach_entry",
]

EntryState = tuple[PathType, str | None] | None
"""What the shared guards look at: ``(lstat type, stat version)``, ``None`` when absent."""


def reach_entry(
    reach: Reach,
    path: str,
    display_path: str,
    verb: str,
    created: CreatedDirectories | None = None,
) -> Spot | None:
    """The spot of the entry ``path`` (its final name not followed), in a place where the
    workspace grants writes; ``None`` when its directory is missing (the entry is absent).

    ``created`` (a move's destination) makes the missing directories instead,
    as a write does. The workspace is asked before any other answer: a
    refused path is refused even when it does not exist. A root itself is
    ``cannot <verb> "<p>": it is a workspace root``.
    """
    workspace = reach.workspace
    try:
        try:
            spot = reach.locate(path, follow_final=False)
        except (FileNotFoundError, NotADirectoryError):
            workspace.check(verb, display_path, path, write=True)
            if created is None:
                return None
            spot = reach.make_directories(path, created, follow_final=False)
    except Refused as refused:
        raise refused.error(verb, display_path) from None
    except IsADirectoryError as exc:
        # ``path`` is a root itself: a read-only one says so first.
        workspace.check(verb, display_path, path, write=True)
        raise workspace_root(verb, display_path) from exc
    except NotADirectoryError as exc:
        raise parent_not_directory(verb, display_path) from exc
    except OSError as exc:
        workspace.check(verb, display_path, path, write=True)
        raise os_failure(verb, display_path, exc) from exc
    try:
        workspace.check(verb, display_path, spot.path, write=True)
        check_not_a_root(reach, spot, verb, display_path)
    except BaseException:
        spot.close()
        raise
    return spot


def canonical_path(spot: Spot) -> str:
    """The kernel's path of the spot's entry (its directory's realpath and the name)."""
    directory = fd_path(spot.dir_fd) or spot.dir_path
    return directory.rstrip("/") + "/" + spot.name


def check_not_a_root(reach: Reach, spot: Spot, verb: str, display_path: str) -> None:
    """Refuse an entry that is a workspace root or holds one (a tree with a nested root):
    ``it is a workspace root``, or ``read-only workspace`` for a read-only root inside it."""
    workspace = reach.workspace
    path = canonical_path(spot)
    if any(is_beneath(root, path) for root in workspace.roots or ()):
        raise workspace_root(verb, display_path)
    if any(is_beneath(root, path) for root in workspace.read_only_roots):
        raise read_only_workspace(verb, display_path)


def entry_state(reach: Reach, spot: Spot) -> tuple[os.stat_result | None, EntryState]:
    """The entry's ``lstat`` (``None``: absent) and what the guards see of it.

    A symlink's version is its target's, reached beneath the root like any
    lookup (``None`` when it dangles or leads outside).
    """
    try:
        info = os.stat(spot.name, dir_fd=spot.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None, None
    if not st.S_ISLNK(info.st_mode):
        return info, (path_type_of(info.st_mode), version_of(info))
    try:
        fd = reach.open(spot.path, PATH_FLAGS)
    except (OSError, Refused):
        return info, ("symlink", None)
    try:
        return info, ("symlink", version_of(os.fstat(fd)))
    finally:
        os.close(fd)


def lock_in_order(spots: Iterable[Spot]) -> list[Spot]:
    """Take the ``flock`` of every spot's directory, each directory once, in the order of
    ``(st_dev, st_ino)``; the spots whose lock was taken, swept of stale temporaries.

    One fixed order for every process, so two moves (or batches) that need
    the same two directories cannot each hold one and wait for the other.
    A directory is locked once even when several spots hold it (``flock``
    locks of two descriptors of one directory exclude each other, even in
    one process). The locks last until the spots are closed.
    """
    distinct: dict[tuple[int, int], Spot] = {}
    for spot in spots:
        info = os.fstat(spot.dir_fd)
        distinct.setdefault((info.st_dev, info.st_ino), spot)
    locked: list[Spot] = []
    for _, spot in sorted(distinct.items()):
        sweep_unless_clean(spot, lock_directory(spot))
        locked.append(spot)
    return locked
