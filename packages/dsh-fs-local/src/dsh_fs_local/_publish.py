"""Publishing new bytes: the directory lock, and the two ways a file is replaced.

Every step is an ``*at`` call on the descriptor of the target's directory
(a :class:`~dsh_fs_local._reach.Spot`), under an advisory ``flock`` on that
directory (no lock file is ever created):

* a regular file with one link (or a new file) is replaced by renaming a
  hidden ``O_EXCL`` ``0600`` temporary file over it — written, given its final
  mode and owner, ``fsync``ed — then the directory is ``fsync``ed
  (:func:`replace_via_temporary`);
* without containment (``roots=None``), a file with several hard links is
  rewritten in place (same inode, so every name sees the change) after its
  previous content was saved to a hidden, ``fsync``ed backup, which is removed
  once the rewrite is durable (:func:`rewrite_in_place`). Under containment it
  is replaced by rename like any other file, so that a name outside the
  workspace keeps its bytes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import stat as st
import threading
import time

from anyio import from_thread
from dsh_fs.text import Bytes

from ._paths import version_of
from ._reach import Spot
from ._temporaries import companion_name, in_flight

__all__ = [
    "WRITE_FLAGS",
    "fsync_directory",
    "hand_on_metadata",
    "lock_directory",
    "new_file_mode",
    "process_umask",
    "replace_via_temporary",
    "rewrite_in_place",
]

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

WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_REWRITE_FLAGS = os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
_UNLOCKABLE = {errno.EBADF, errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP}


def _write_all(fd: int, pieces: tuple[Bytes, ...]) -> None:
    views = [memoryview(piece) for piece in pieces]
    while views:
        written = os.writev(fd, views)
        while views and written >= len(views[0]):
            written -= len(views.pop(0))
        if views:
            views[0] = views[0][written:]


def _pwrite_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    offset = 0
    while offset < len(data):
        offset += os.pwrite(fd, view[offset:], offset)


def lock_directory(spot: Spot) -> bool:
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


def fsync_directory(spot: Spot) -> None:
    """Best effort: some filesystems refuse ``fsync`` on a directory."""
    if spot.readable:
        with contextlib.suppress(OSError):
            os.fsync(spot.dir_fd)


def replace_via_temporary(
    spot: Spot, pieces: tuple[Bytes, ...], current: os.stat_result | None, source: int | None
) -> str:
    """Publish ``pieces`` (written one after the other) by renaming an ``fsync``ed temporary
    over the spot's name.

    Everything happens relative to the spot's directory descriptor. A
    replaced file (``current``, open as ``source``) hands on its owner,
    group, mode and extended attributes first (:func:`hand_on_metadata`).
    The returned version comes from the temporary's descriptor, kept open
    across the rename and the directory ``fsync``: it is the file this call
    wrote (no second lookup of the name).
    """
    directory = spot.dir_fd
    temp = companion_name(spot.name, "tmp")
    with in_flight(spot, temp):
        fd = os.open(temp, WRITE_FLAGS, 0o600, dir_fd=directory)
        try:
            try:
                _write_all(fd, pieces)
                if current is not None and source is not None:
                    hand_on_metadata(source, fd, current, spot.path)
                else:
                    os.fchmod(fd, new_file_mode())
                os.fsync(fd)
                os.rename(temp, spot.name, src_dir_fd=directory, dst_dir_fd=directory)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=directory)
                raise
            fsync_directory(spot)
            return version_of(os.fstat(fd))
        finally:
            os.close(fd)


def hand_on_metadata(source: int, fd: int, current: os.stat_result, path: str) -> None:
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


def rewrite_in_place(spot: Spot, data: bytes, previous: bytes, current: os.stat_result) -> str:
    """Keep the inode of a hard-linked file: backup, rewrite in place, drop the backup.

    Only without containment: under it, a name outside the workspace must keep
    its bytes. Returns the new version, taken from the rewritten descriptor.
    """
    directory = spot.dir_fd
    backup = companion_name(spot.name, "bak")
    fd = os.open(backup, WRITE_FLAGS, 0o600, dir_fd=directory)
    try:
        try:
            _write_all(fd, (previous,))
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(backup, dir_fd=directory)
        raise
    fsync_directory(spot)
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
    fsync_directory(spot)
    return version
