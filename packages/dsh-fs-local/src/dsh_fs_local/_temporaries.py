"""Temporaries: their names, and the sweep of those a dead process left behind.

A temporary (and a backup) is named ``.<basename>.dsh-<pid>-<8 hex>.tmp``
(``.bak``); a directory tree being removed is first renamed aside to
``.<basename>.dsh-<pid>-<8 hex>.del``. A mutation first removes the ``.tmp``
files and ``.del`` trees of its directory whose process is gone (a crash
cannot clean up after itself), unless the directory is unchanged since this
process's last mutation there left it without any temporary
(:func:`sweep_unless_clean`, a process-wide record); stale ``.bak`` files
are kept: after a crash they are the only copy of the previous content.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import secrets
import stat as st
import threading
from collections.abc import Iterator

from ._reach import Spot
from ._tree import remove_tree

__all__ = [
    "companion_name",
    "in_flight",
    "remember_clean",
    "sweep_stale_temporaries",
    "sweep_unless_clean",
]

_COMPANION = re.compile(r"\..*\.dsh-([0-9]{1,10})-[0-9a-f]{8}\.(tmp|del)", re.DOTALL)
_MAX_STEM_BYTES = 200
"""Basename bytes kept in a companion name (the rest is cut to stay under NAME_MAX)."""

_in_flight: set[str] = set()
"""This process's temporaries being written now (see :func:`in_flight`)."""
_in_flight_guard = threading.Lock()


_serials = itertools.count(secrets.randbits(32))
"""The ``<8 hex>`` of companion names: a counter from a random start, so that names
of one process never repeat (``next`` is atomic under the GIL) and no
``getrandom`` call is made per write; the pid keeps processes apart."""


def companion_name(name: str, suffix: str) -> str:
    """A fresh hidden name beside ``name``: ``.<name>.dsh-<pid>-<8 hex>.<suffix>``."""
    raw = os.fsencode(name)
    if len(raw) > _MAX_STEM_BYTES:
        name = os.fsdecode(raw[:_MAX_STEM_BYTES])
    return f".{name}.dsh-{os.getpid()}-{next(_serials) & 0xFFFFFFFF:08x}.{suffix}"


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError, ValueError):
        return False
    return False


def sweep_stale_temporaries(spot: Spot) -> bool:
    """Remove the ``.tmp`` and ``.del`` companions in the spot's directory whose process no
    longer runs; whether the directory is now known to hold none.

    Only what a crashed writer of this backend can have left is removed: a
    name of the temporary pattern whose process is gone, owned by this
    process's user, and a regular file (``.tmp``) or a directory (``.del``,
    a tree a removal had renamed aside; removed beneath its descriptor,
    never following a link inside) — never a user's own file that merely
    looks like one, another user's, or a link. The directory is
    listed and cleaned through its descriptor (never by path). A name
    carrying our own pid is stale only when it is not one of this process's
    in-flight temporaries (an earlier process with the same pid, e.g. pid 1
    of a restarted container).
    """
    if not spot.readable:
        return False
    own, me = os.getpid(), os.geteuid()
    verdicts: dict[int, bool] = {}
    try:
        names = os.listdir(spot.dir_fd)
    except OSError:
        return False
    clean = True
    for name in names:
        if not name.startswith(".") or ".dsh-" not in name:
            continue
        match = _COMPANION.fullmatch(name)
        if match is None:
            continue
        pid = int(match[1])
        if pid == own:
            with _in_flight_guard:
                stale = _flight_key(spot, name) not in _in_flight
        else:
            if pid not in verdicts:
                verdicts[pid] = _process_gone(pid)
            stale = verdicts[pid]
        tree = match[2] == "del"
        if stale and _ours(spot, name, me, tree):
            with contextlib.suppress(OSError):
                if tree:
                    remove_tree(spot.dir_fd, name)
                else:
                    os.unlink(name, dir_fd=spot.dir_fd)
                continue
        clean = False  # a temporary stays: the next mutation must look again
    return clean


def _ours(spot: Spot, name: str, uid: int, tree: bool) -> bool:
    """Whether ``name`` in the spot's directory is owned by ``uid`` and a regular file (or,
    for ``tree``, a directory)."""
    try:
        info = os.stat(name, dir_fd=spot.dir_fd, follow_symlinks=False)
    except OSError:
        return False
    kind = st.S_ISDIR(info.st_mode) if tree else st.S_ISREG(info.st_mode)
    return kind and info.st_uid == uid


_clean: dict[tuple[int, int], int] = {}
"""Directories a mutation of this process left without any temporary: ``(st_dev,
st_ino)`` → their ``st_ctime_ns`` at its end, read under the ``flock``."""
_clean_guard = threading.Lock()
_CLEAN_MAX = 4096
"""Directories remembered at most; past that the record starts afresh."""


def sweep_unless_clean(spot: Spot, locked: bool) -> bool:
    """Sweep the spot's directory unless it is recorded clean and unchanged since.

    Every writer holds the directory's ``flock`` from its sweep to its
    rename, so while the directory's ctime is what a clean mutation of ours
    left (a new name, an unlink or a rename would change it), no temporary
    can have appeared there. Without the lock nothing is known: always sweep.
    Returns whether the directory is known to hold no temporary at all.
    """
    if locked:
        directory = os.fstat(spot.dir_fd)
        with _clean_guard:
            known = _clean.get((directory.st_dev, directory.st_ino))
        if known == directory.st_ctime_ns:
            return True
    return sweep_stale_temporaries(spot) and locked


def remember_clean(spot: Spot) -> None:
    """Record the spot's directory as left clean by this mutation (still under its lock)."""
    with contextlib.suppress(OSError):
        directory = os.fstat(spot.dir_fd)
        with _clean_guard:
            if len(_clean) >= _CLEAN_MAX:
                _clean.clear()
            _clean[directory.st_dev, directory.st_ino] = directory.st_ctime_ns


def _flight_key(spot: Spot, name: str) -> str:
    """How this process remembers one of its own temporaries (a name, never opened)."""
    return spot.dir_path + "\0" + name


@contextlib.contextmanager
def in_flight(spot: Spot, name: str) -> Iterator[None]:
    """While the body runs, the temporary ``name`` in the spot's directory is this process's
    own, live one: a sweep by another thread of this process leaves it alone."""
    flight = _flight_key(spot, name)
    with _in_flight_guard:
        _in_flight.add(flight)
    try:
        yield
    finally:
        with _in_flight_guard:
            _in_flight.discard(flight)
