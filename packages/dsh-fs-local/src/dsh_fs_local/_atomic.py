"""The critical section of a mutation, run in one worker-thread call.

``mutate`` holds an advisory ``flock`` on the target's parent directory (no
lock file is ever created), checks the current state, computes the new bytes
and publishes them atomically:

* a regular file with one link (or a new file) is replaced by renaming a
  hidden ``O_EXCL`` ``0600`` temporary file over it — written, given its final
  mode and owner, ``fsync``ed — then the directory is ``fsync``ed;
* a file with several hard links is rewritten in place (same inode, so every
  name sees the change) after its previous content was saved to a hidden,
  ``fsync``ed backup, which is removed once the rewrite is durable.

Temporary and backup files are named ``.<basename>.dsh-<pid>-<8 hex>.tmp`` /
``.bak``. Every mutation first removes the ``.tmp`` files of its directory whose
process is gone (a crash cannot clean up after itself); stale ``.bak`` files are
kept: after a crash they are the only copy of the previous content.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import itertools
import os
import re
import secrets
import stat as st
import threading
import time
from collections.abc import Callable

from anyio import from_thread
from dsh_fs import FsError, FsErrorCode
from dsh_fs.preconditions import not_regular, parent_not_directory

from ._os_errors import os_failure
from ._paths import version_of
from ._reading import READ_FLAGS, read_all


def _process_umask() -> int:
    """The umask, read without changing it (``/proc/self/status``, Linux ≥ 4.7).

    Elsewhere it falls back to setting and restoring it once, at import time,
    before the backend starts any thread of its own.
    """
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


UMASK = _process_umask()
"""The process umask when the backend was imported."""
NEW_FILE_MODE = 0o666 & ~UMASK
"""Permission bits of a file the backend creates (what ``open()`` would give it)."""

_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_COMPANION = re.compile(r"\..*\.dsh-([0-9]{1,10})-[0-9a-f]{8}\.tmp", re.DOTALL)
_MAX_STEM_BYTES = 200
"""Basename bytes kept in a companion name (the rest is cut to stay under NAME_MAX)."""
_UNLOCKABLE = {errno.EBADF, errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP}

_in_flight: set[str] = set()
_in_flight_guard = threading.Lock()

Check = Callable[[os.stat_result | None], None]
"""Raises the mutation's ``FsError`` for the current state (``None``: absent)."""
Plan = Callable[[bytes | None], bytes]
"""Computes the new bytes from the previous ones (``None``: absent)."""


_serials = itertools.count(secrets.randbits(32))
"""The ``<8 hex>`` of companion names: a counter from a random start, so that names
of one process never repeat (``next`` is atomic under the GIL) and no
``getrandom`` call is made per write; the pid keeps processes apart."""


def companion_path(key: str, suffix: str) -> str:
    """A fresh hidden name beside ``key``: ``.<basename>.dsh-<pid>-<8 hex>.<suffix>``."""
    parent, base = os.path.split(key)
    raw = os.fsencode(base)
    if len(raw) > _MAX_STEM_BYTES:
        base = os.fsdecode(raw[:_MAX_STEM_BYTES])
    name = f".{base}.dsh-{os.getpid()}-{next(_serials) & 0xFFFFFFFF:08x}.{suffix}"
    return os.path.join(parent, name)


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError, ValueError):
        return False
    return False


def sweep_stale_temporaries(directory: str, dir_fd: int | None = None) -> None:
    """Remove ``.tmp`` companions of processes that no longer run.

    A name carrying our own pid is stale only when it is not one of this
    process's in-flight temporaries (an earlier process with the same pid,
    e.g. pid 1 of a restarted container). ``dir_fd`` (open on ``directory``)
    is listed instead of looking the directory up again.
    """
    own = os.getpid()
    verdicts: dict[int, bool] = {}
    try:
        names = os.listdir(directory if dir_fd is None else dir_fd)
    except OSError:
        return
    for name in names:
        if not name.startswith(".") or ".dsh-" not in name:
            continue
        match = _COMPANION.fullmatch(name)
        if match is None:
            continue
        pid = int(match[1])
        path = os.path.join(directory, name)
        if pid == own:
            with _in_flight_guard:
                stale = path not in _in_flight
        else:
            if pid not in verdicts:
                verdicts[pid] = _process_gone(pid)
            stale = verdicts[pid]
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(path)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _pwrite_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    offset = 0
    while offset < len(data):
        offset += os.pwrite(fd, view[offset:], offset)


def _lock_directory(directory: str) -> int | None:
    """Open ``directory`` and take an exclusive ``flock`` on it, waiting as long as needed.

    Returns the descriptor that holds the lock, or ``None`` when the directory
    cannot be opened for reading or the filesystem does not support ``flock``
    (the mutation then relies on the in-process lock only). The wait polls
    instead of blocking in the kernel, so that the caller's cancellation still
    ends it: a lock held by a stopped or hung process must not make the call
    uncancellable. Nothing has been changed while waiting.
    """
    try:
        fd = os.open(directory, _DIR_FLAGS)
    except PermissionError:
        return None
    try:
        _flock_cancellably(fd)
    except OSError as exc:
        if exc.errno not in _UNLOCKABLE:
            os.close(fd)
            raise
    except BaseException:
        os.close(fd)
        raise
    return fd


def _flock_cancellably(fd: int) -> None:
    delay = 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        # Raises the caller's cancellation (RuntimeError: not in an AnyIO
        # worker thread, so nobody can cancel this wait).
        with contextlib.suppress(RuntimeError):
            from_thread.check_cancelled()
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def _fsync_directory(fd: int | None, directory: str) -> None:
    """Best effort: some filesystems refuse ``fsync`` on a directory."""
    try:
        if fd is not None:
            os.fsync(fd)
            return
        probe = os.open(directory, _DIR_FLAGS)
        try:
            os.fsync(probe)
        finally:
            os.close(probe)
    except OSError:
        pass


def _replace_via_temporary(
    key: str, data: bytes, current: os.stat_result | None, dir_fd: int | None
) -> str:
    """Publish ``data`` at ``key`` by renaming an ``fsync``ed temporary; returns the new version.

    The version comes from the temporary's descriptor, kept open across the
    rename and the directory ``fsync``: it is the file this call wrote (no
    second lookup of ``key``).
    """
    temp = companion_path(key, "tmp")
    with _in_flight_guard:
        _in_flight.add(temp)
    try:
        fd = os.open(temp, _WRITE_FLAGS, 0o600)
        try:
            try:
                _write_all(fd, data)
                if current is not None:
                    mine = os.fstat(fd)
                    if (mine.st_uid, mine.st_gid) != (current.st_uid, current.st_gid):
                        try:
                            os.fchown(fd, current.st_uid, current.st_gid)
                        except OSError as exc:
                            if exc.errno not in (errno.EPERM, errno.EINVAL):
                                raise
                    os.fchmod(fd, st.S_IMODE(current.st_mode))
                else:
                    os.fchmod(fd, NEW_FILE_MODE)
                os.fsync(fd)
                os.rename(temp, key)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
            _fsync_directory(dir_fd, os.path.dirname(key))
            return version_of(os.fstat(fd))
        finally:
            os.close(fd)
    finally:
        with _in_flight_guard:
            _in_flight.discard(temp)


def _rewrite_in_place(
    key: str, data: bytes, previous: bytes, current: os.stat_result, dir_fd: int | None
) -> str:
    """Keep the inode of a hard-linked file: backup, rewrite in place, drop the backup.

    Returns the new version, taken from the rewritten descriptor (no second
    lookup of ``key``).
    """
    directory = os.path.dirname(key)
    backup = companion_path(key, "bak")
    fd = os.open(backup, _WRITE_FLAGS, 0o600)
    try:
        try:
            _write_all(fd, previous)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(backup)
        raise
    _fsync_directory(dir_fd, directory)
    fd = os.open(key, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (current.st_dev, current.st_ino):
            raise OSError(errno.ESTALE, os.strerror(errno.ESTALE))
        try:
            _pwrite_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except BaseException:
            # Put the previous content back; the backup stays if even that fails.
            _pwrite_all(fd, previous)
            os.ftruncate(fd, len(previous))
            with contextlib.suppress(OSError):  # and its mtime: a failed write changed nothing
                os.utime(fd, ns=(current.st_atime_ns, current.st_mtime_ns))
            os.fsync(fd)
            os.unlink(backup)
            raise
        version = version_of(os.fstat(fd))
    finally:
        os.close(fd)
    os.unlink(backup)
    _fsync_directory(dir_fd, directory)
    return version


def _read_current(key: str, current: os.stat_result, verb: str, display_path: str) -> bytes:
    try:
        fd = os.open(key, READ_FLAGS)
    except OSError as exc:
        raise os_failure(verb, display_path, exc) from exc
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (current.st_dev, current.st_ino):
            raise FsError.cannot(
                verb, display_path, "file changed during the operation", FsErrorCode.FS_IO_ERROR
            )
        return read_all(fd, opened.st_size, verb, display_path)
    finally:
        os.close(fd)


_EFFECTIVE_IDS = os.access in os.supports_effective_ids


def _may_write(path: str) -> bool:
    """Whether this process may write the existing file (effective ids, as ``open``)."""
    return os.access(path, os.W_OK, effective_ids=_EFFECTIVE_IDS)


def _make_directories(directory: str, created: list[str]) -> None:
    """``os.makedirs``, recording each directory it creates (outermost first)."""
    missing: list[str] = []
    path = directory
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise
            continue
        created.append(path)


def _remove_directories(created: list[str]) -> None:
    """Undo :func:`_make_directories` after a failed write (only what is still empty)."""
    for path in reversed(created):
        try:
            os.rmdir(path)
        except OSError:
            return


def mutate(
    key: str, display_path: str, verb: str, check: Check, plan: Plan
) -> tuple[str, bytes | None]:
    """Run one mutation of ``key``; returns the new version and the previous bytes.

    ``check`` sees the current state first (it raises for a special file, a
    stale version or a failed intent); ``plan`` then turns the previous bytes
    into the new ones (it may raise, e.g. an edit that does not match). Any
    ``FsError`` leaves the target and the directory exactly as they were.
    """
    directory = os.path.dirname(key)
    created: list[str] = []
    try:
        try:
            dir_fd = _lock_directory(directory)
        except FileNotFoundError:
            check(None)
            _make_directories(directory, created)
            dir_fd = _lock_directory(directory)
    except BaseException as exc:
        _remove_directories(created)
        if isinstance(exc, NotADirectoryError | FileExistsError):
            raise parent_not_directory(verb, display_path) from exc
        if isinstance(exc, OSError):
            raise os_failure(verb, display_path, exc) from exc
        raise
    try:
        sweep_stale_temporaries(directory, dir_fd)
        try:
            current: os.stat_result | None = os.stat(key)
        except FileNotFoundError:
            current = None
        except NotADirectoryError as exc:
            raise parent_not_directory(verb, display_path) from exc
        check(current)
        if current is not None and not _may_write(key):
            # Replacing by rename only needs the directory's permission; a
            # read-only file is still not ours to change (as open() would say).
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
        previous = None if current is None else _read_current(key, current, verb, display_path)
        data = plan(previous)
        if current is not None and previous is not None and current.st_nlink > 1:
            return _rewrite_in_place(key, data, previous, current, dir_fd), previous
        return _replace_via_temporary(key, data, current, dir_fd), previous
    except BaseException as exc:
        if dir_fd is not None:
            os.close(dir_fd)
            dir_fd = None
        _remove_directories(created)
        if not isinstance(exc, OSError):
            raise
        if exc.errno == errno.EISDIR:
            raise not_regular(verb, display_path) from exc
        raise os_failure(verb, display_path, exc) from exc
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
