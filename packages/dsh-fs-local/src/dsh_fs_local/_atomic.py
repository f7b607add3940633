"""The critical section of a mutation, run in one worker-thread call.

``mutate`` refuses what the workspace does not grant, reaches the target's
directory beneath its root (a :class:`~dsh_fs_local._reach.Spot`: the
directory held open and the final name), holds an advisory ``flock`` on that
directory (no lock file is ever created), checks the current state, computes
the new bytes and publishes them atomically — every step an ``*at`` call on
the held descriptor:

* a regular file with one link (or a new file) is replaced by renaming a
  hidden ``O_EXCL`` ``0600`` temporary file over it — written, given its final
  mode and owner, ``fsync``ed — then the directory is ``fsync``ed;
* without containment (``roots=None``), a file with several hard links is
  rewritten in place (same inode, so every name sees the change) after its
  previous content was saved to a hidden, ``fsync``ed backup, which is removed
  once the rewrite is durable. Under containment it is replaced by rename like
  any other file, so that a name outside the workspace keeps its bytes.

Temporary and backup files are named ``.<basename>.dsh-<pid>-<8 hex>.tmp`` /
``.bak``. A mutation first removes the ``.tmp`` files of its directory whose
process is gone (a crash cannot clean up after itself), unless the directory is
unchanged since this process's last mutation there left it without any
temporary (see :func:`_sweep_unless_clean`); stale ``.bak`` files are kept:
after a crash they are the only copy of the previous content.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import itertools
import logging
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
from dsh_fs.workspace import outside_workspace, read_only_workspace

from ._os_errors import os_failure
from ._paths import version_of
from ._reach import CreatedDirectories, Reach, Refused, Spot
from ._reading import READ_FLAGS, read_all

_UMASK_GUARD = threading.Lock()


def process_umask() -> int:
    """The umask in force now, read without changing it (``/proc/self/status``, Linux ≥ 4.7).

    Read at every creation, not once: a host may tighten its umask after the
    backend was imported. It costs about 12 µs (the kernel formats the whole
    status file), paid by creates only: an update keeps the old mode. Where
    there is no such file, the umask is swapped for ``0o077`` and put back at
    once (under a lock, so two writers of this module never interleave): a
    file another thread creates in that instant gets the stricter mask,
    never a looser one.
    """
    try:
        fd = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
        try:
            status = os.read(fd, 4096)  # "Umask:" is the second line
        finally:
            os.close(fd)
        start = status.index(b"\nUmask:") + len(b"\nUmask:")
        return int(status[start : status.index(b"\n", start)], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_GUARD:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def new_file_mode() -> int:
    """Permission bits of a file the backend creates now: ``0o666 & ~umask``, as ``open()``."""
    return 0o666 & ~process_umask()


_SET_ID = st.S_ISUID | st.S_ISGID
_COPIED_XATTRS = ("user.", "system.posix_acl_access")
"""Extended attributes a replaced file hands on: user attributes and its access ACL."""
_log = logging.getLogger("dsh_fs_local")

_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_REWRITE_FLAGS = os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
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
    """Remove the ``.tmp`` companions in the spot's directory whose process no longer runs;
    whether the directory is now known to hold none.

    Only what a crashed writer of this backend can have left is removed: a
    name of the temporary pattern whose process is gone, and a regular file
    owned by this process's user — never a user's own file that merely
    looks like one, another user's, a directory or a link. The directory is
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
        if stale and _ours(spot, name, me):
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=spot.dir_fd)
                continue
        clean = False  # a temporary stays: the next mutation must look again
    return clean


def _ours(spot: Spot, name: str, uid: int) -> bool:
    """Whether ``name`` in the spot's directory is a regular file owned by ``uid``."""
    try:
        info = os.stat(name, dir_fd=spot.dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return st.S_ISREG(info.st_mode) and info.st_uid == uid


_clean: dict[tuple[int, int], int] = {}
"""Directories a mutation of this process left without any temporary: ``(st_dev,
st_ino)`` → their ``st_ctime_ns`` at its end, read under the ``flock``."""
_clean_guard = threading.Lock()
_CLEAN_MAX = 4096
"""Directories remembered at most; past that the record starts afresh."""


def _sweep_unless_clean(spot: Spot, locked: bool) -> bool:
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


def _remember_clean(spot: Spot) -> None:
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


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _pwrite_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    offset = 0
    while offset < len(data):
        offset += os.pwrite(fd, view[offset:], offset)


def _lock_directory(spot: Spot) -> bool:
    """Take an exclusive ``flock`` on the spot's directory, waiting as long as needed;
    whether it is held.

    Held until the spot's descriptor is closed. Skipped when the directory
    could not be opened for reading or the filesystem does not support
    ``flock`` (the mutation then relies on the in-process lock only). The
    wait polls instead of blocking in the kernel, so that the caller's
    cancellation still ends it: a lock held by a stopped or hung process
    must not make the call uncancellable. Nothing has been changed while
    waiting.
    """
    if not spot.readable:
        return False
    try:
        _flock_cancellably(spot.dir_fd)
    except OSError as exc:
        if exc.errno not in _UNLOCKABLE:
            raise
        return False
    return True


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


def _fsync_directory(spot: Spot) -> None:
    """Best effort: some filesystems refuse ``fsync`` on a directory."""
    if spot.readable:
        with contextlib.suppress(OSError):
            os.fsync(spot.dir_fd)


def _replace_via_temporary(
    spot: Spot, data: bytes, current: os.stat_result | None, source: int | None
) -> str:
    """Publish ``data`` by renaming an ``fsync``ed temporary over the spot's name.

    Everything happens relative to the spot's directory descriptor. A
    replaced file (``current``, open as ``source``) hands on its owner,
    group, mode and extended attributes first (:func:`_hand_on_metadata`).
    The returned version comes from the temporary's descriptor, kept open
    across the rename and the directory ``fsync``: it is the file this call
    wrote (no second lookup of the name).
    """
    directory = spot.dir_fd
    temp = companion_name(spot.name, "tmp")
    flight = _flight_key(spot, temp)
    with _in_flight_guard:
        _in_flight.add(flight)
    try:
        fd = os.open(temp, _WRITE_FLAGS, 0o600, dir_fd=directory)
        try:
            try:
                _write_all(fd, data)
                if current is not None and source is not None:
                    _hand_on_metadata(source, fd, current, spot.path)
                else:
                    os.fchmod(fd, new_file_mode())
                os.fsync(fd)
                os.rename(temp, spot.name, src_dir_fd=directory, dst_dir_fd=directory)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=directory)
                raise
            _fsync_directory(spot)
            return version_of(os.fstat(fd))
        finally:
            os.close(fd)
    finally:
        with _in_flight_guard:
            _in_flight.discard(flight)


def _hand_on_metadata(source: int, fd: int, current: os.stat_result, path: str) -> None:
    """Give the new file ``fd`` what the replaced file (``current``, open as ``source``) had.

    Owner and group where this process may set them: one ``fchown`` for
    both, and when that is refused, the group alone, so that a member of the
    file's group who may not take the owner still keeps the group. The
    permission bits then, without ``S_ISUID``/``S_ISGID`` when the owner was
    not kept (set-id never changes hands: a non-owner's write loses them, as
    the kernel does) or when the replaced file had other hard links (the new
    file is not the program those links name). Last the extended attributes.
    """
    mine = os.fstat(fd)
    owner_kept = mine.st_uid == current.st_uid
    group_kept = mine.st_gid == current.st_gid
    if not (owner_kept and group_kept):
        if _try_fchown(fd, current.st_uid, current.st_gid):
            owner_kept = group_kept = True
        elif not group_kept:
            group_kept = _try_fchown(fd, -1, current.st_gid)
    mode = st.S_IMODE(current.st_mode)
    if not owner_kept or current.st_nlink > 1:
        mode &= ~_SET_ID
    elif not group_kept:
        mode &= ~st.S_ISGID
    os.fchmod(fd, mode)
    _copy_extended_attributes(source, fd, path)


def _try_fchown(fd: int, uid: int, gid: int) -> bool:
    """``fchown``; whether it was allowed (``EPERM``/``EINVAL`` are answers, not failures)."""
    try:
        os.fchown(fd, uid, gid)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EINVAL):
            raise
        return False
    return True


def _copy_extended_attributes(source: int, fd: int, path: str) -> None:
    """Copy the ``user.*`` attributes and the access ACL of ``source`` to ``fd``.

    One ``flistxattr`` per write; nothing more when the file has none (the
    common case). An attribute that cannot be read or set (a filesystem
    without ACLs, a value too large, a name this process may not write) is
    named in the ``dsh_fs_local`` log and skipped: the write still succeeds.
    """
    try:
        names = os.listxattr(source)
    except OSError as exc:
        if exc.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
            _log.warning("cannot list the extended attributes of %r: %s", path, exc)
        return
    for name in names:
        if not name.startswith(_COPIED_XATTRS):
            continue
        try:
            os.setxattr(fd, name, os.getxattr(source, name))
        except OSError as exc:
            _log.warning("extended attribute %s of %r not kept: %s", name, path, exc)


def _rewrite_in_place(spot: Spot, data: bytes, previous: bytes, current: os.stat_result) -> str:
    """Keep the inode of a hard-linked file: backup, rewrite in place, drop the backup.

    Only without containment: under it, a name outside the workspace must keep
    its bytes. Returns the new version, taken from the rewritten descriptor.
    """
    directory = spot.dir_fd
    backup = companion_name(spot.name, "bak")
    fd = os.open(backup, _WRITE_FLAGS, 0o600, dir_fd=directory)
    try:
        try:
            _write_all(fd, previous)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(backup, dir_fd=directory)
        raise
    _fsync_directory(spot)
    fd = os.open(spot.name, _REWRITE_FLAGS, dir_fd=directory)
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
            os.unlink(backup, dir_fd=directory)
            raise
        version = version_of(os.fstat(fd))
    finally:
        os.close(fd)
    os.unlink(backup, dir_fd=directory)
    _fsync_directory(spot)
    return version


def _open_current(spot: Spot, current: os.stat_result, verb: str, display_path: str) -> int:
    """A read descriptor of the file ``current`` describes (``FS_IO_ERROR`` if it was swapped)."""
    try:
        fd = os.open(spot.name, READ_FLAGS | os.O_NOFOLLOW, dir_fd=spot.dir_fd)
    except OSError as exc:
        raise os_failure(verb, display_path, exc) from exc
    try:
        opened = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if (opened.st_dev, opened.st_ino) != (current.st_dev, current.st_ino):
        os.close(fd)
        raise FsError.cannot(
            verb, display_path, "file changed during the operation", FsErrorCode.FS_IO_ERROR
        )
    return fd


_EFFECTIVE_IDS = os.access in os.supports_effective_ids


def _may_write(spot: Spot) -> bool:
    """Whether this process may write the existing file (effective ids, as ``open``)."""
    return os.access(
        spot.name,
        os.W_OK,
        dir_fd=spot.dir_fd,
        effective_ids=_EFFECTIVE_IDS,
        follow_symlinks=False,
    )


def _locate(reach: Reach, key: str, check: Check, created: CreatedDirectories) -> Spot:
    """The spot of ``key``; when its directory is missing, ``check`` (the target is absent)
    decides first whether the missing directories may be created."""
    try:
        return reach.locate(key)
    except FileNotFoundError:
        check(None)
        return reach.make_directories(key, created)


def _read_only_refusal(reach: Reach, key: str, verb: str, display_path: str) -> FsError:
    """The refusal of a write to ``key``, which the workspace lets this backend only read.

    Outside wins over read-only: a directory on the way may have
    been swapped for a link that leaves every root since ``resolve``, so the
    target's directory is reached (never created) before the answer is given.
    """
    try:
        spot = reach.locate(key)
    except Refused as exc:
        return exc.error(verb, display_path)
    except OSError:
        return read_only_workspace(verb, display_path)
    try:
        if reach.workspace.access(spot.path) is None:
            return outside_workspace(verb, display_path)
    finally:
        spot.close()
    return read_only_workspace(verb, display_path)


def mutate(
    reach: Reach,
    key: str,
    display_path: str,
    verb: str,
    check: Check,
    plan: Plan,
    previous_max: int | None = None,
) -> tuple[str, bool, bytes | None]:
    """Run one mutation of ``key``; returns the new version, whether a file was replaced,
    and the previous bytes.

    The workspace refusal comes first (outside, then read-only), before
    anything is looked up. ``check`` then sees the current state (it raises
    for a special file, a stale version or a failed intent); ``plan`` turns
    the previous bytes into the new ones (it may raise, e.g. an edit that does
    not match). A previous file larger than ``previous_max`` is not read
    (``plan`` and the result see ``None``), unless its bytes are needed for
    an in-place rewrite. Every step after the refusal works through the
    descriptor of the target's directory, reached beneath its root. Any
    ``FsError`` leaves the target and the directory exactly as they were.
    """
    workspace = reach.workspace
    workspace.check(verb, display_path, key, write=False)
    if workspace.access(key) != "write":
        raise _read_only_refusal(reach, key, verb, display_path)
    created = CreatedDirectories()
    try:
        spot = _locate(reach, key, check, created)
    except BaseException as exc:
        created.undo()
        if isinstance(exc, Refused):
            raise exc.error(verb, display_path) from None
        if isinstance(exc, NotADirectoryError | FileExistsError):
            raise parent_not_directory(verb, display_path) from exc
        if isinstance(exc, IsADirectoryError):
            raise not_regular(verb, display_path) from exc
        if isinstance(exc, OSError):
            raise os_failure(verb, display_path, exc) from exc
        raise
    try:
        # The walk may have followed a final link or an absolute one into
        # another root: the place it reached is what must grant the write.
        workspace.check(verb, display_path, spot.path, write=True)
        clean = _sweep_unless_clean(spot, _lock_directory(spot))
        try:
            current: os.stat_result | None = os.stat(
                spot.name, dir_fd=spot.dir_fd, follow_symlinks=False
            )
        except FileNotFoundError:
            current = None
        check(current)
        if current is not None and not _may_write(spot):
            # Replacing by rename only needs the directory's permission; a
            # read-only file is still not ours to change (as open() would say).
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
        source = None if current is None else _open_current(spot, current, verb, display_path)
        try:
            in_place = current is not None and current.st_nlink > 1 and not workspace.contained
            previous = None
            if (
                source is not None
                and current is not None
                and (in_place or previous_max is None or current.st_size <= previous_max)
            ):
                previous = read_all(source, current.st_size, verb, display_path)
            data = plan(previous)
            if in_place and current is not None and previous is not None:
                version = _rewrite_in_place(spot, data, previous, current)
            else:
                version = _replace_via_temporary(spot, data, current, source)
        finally:
            if source is not None:
                os.close(source)
        if clean:
            _remember_clean(spot)
    except BaseException as exc:
        spot.close()
        created.undo()
        if not isinstance(exc, OSError):
            raise
        if exc.errno == errno.EISDIR:
            raise not_regular(verb, display_path) from exc
        raise os_failure(verb, display_path, exc) from exc
    spot.close()
    created.close()
    return version, current is not None, previous
