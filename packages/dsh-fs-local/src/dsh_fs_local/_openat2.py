"""The kernel's ``openat2`` through ``ctypes`` (the standard library has no binding), probed once.

``openat2(root_fd, rel, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`` (Linux ≥ 5.6)
refuses ``..`` above the directory, absolute paths and symlinks that leave
it (``EXDEV``) and ``/proc`` magic links (``ELOOP``) in one system call. It
also refuses an absolute symlink that points *inside*, and a loop looks like
a magic link: on those answers the component walk of
:class:`~dsh_fs_local._beneath.Beneath` decides.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from collections.abc import Callable
from typing import Final, Literal

from ._reach import DIRECTORY_PATH_FLAGS

__all__ = [
    "DECIDED_BY_THE_WALK",
    "OPENAT2",
    "OpenAt2",
    "ResolutionMode",
    "default_mode",
    "kernel_has_openat2",
]

ResolutionMode = Literal["openat2", "walk"]
"""How ``Beneath`` resolves: one ``openat2`` per lookup, or the component walk only."""

_RESOLVE_NO_MAGICLINKS: Final = 0x02
_RESOLVE_BENEATH: Final = 0x08
_SYS_OPENAT2: Final = 437  # the unified syscall table: x86_64, aarch64 and the rest but alpha
DECIDED_BY_THE_WALK: Final = frozenset({errno.EXDEV, errno.ELOOP, errno.EAGAIN})
"""``openat2`` errors that the walk decides: an inside absolute link, a magic link, a
loop, and a ``..`` lookup that a rename elsewhere kept failing (``EAGAIN``, retried first)."""
_EAGAIN_TRIES: Final = 4
"""``openat2`` calls made while it answers ``EAGAIN`` before the walk answers instead."""


class _OpenHow(ctypes.Structure):
    """``struct open_how`` (``linux/openat2.h``): three ``__u64``."""

    _fields_ = [
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    ]


OpenAt2 = Callable[[int, bytes, int], int]
"""``openat2(dir_fd, rel, flags)`` beneath ``dir_fd`` without magic links; raises ``OSError``."""


def _bind_openat2() -> OpenAt2 | None:
    """The ``openat2`` binding, or ``None`` when this kernel (or its seccomp filter) lacks it."""
    if not sys.platform.startswith("linux") or not hasattr(os, "O_PATH"):
        return None
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    syscall.argtypes = [
        ctypes.c_long,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_void_p,
        ctypes.c_size_t,
    ]
    size = ctypes.sizeof(_OpenHow)
    hows: dict[int, _OpenHow] = {}
    resolve = _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS

    def openat2(dir_fd: int, rel: bytes, flags: int) -> int:
        how = hows.get(flags)
        if how is None:
            # One read-only struct per flag set, shared by every thread.
            how = hows[flags] = _OpenHow(flags, 0, resolve)
        # RESOLVE_BENEATH answers EAGAIN when any rename on the machine ran
        # during a ".." lookup: try again a few times, then let the walk decide.
        for _ in range(_EAGAIN_TRIES):
            fd: int = syscall(_SYS_OPENAT2, dir_fd, rel, ctypes.byref(how), size)
            if fd >= 0:
                return fd
            code = ctypes.get_errno()
            if code != errno.EAGAIN:
                break
        raise OSError(code, os.strerror(code))

    # Probe once: "." beneath "/" opens, ".." beneath it is EXDEV. Any other
    # answer (ENOSYS, EPERM from seccomp, another syscall at 437) means no.
    try:
        probe = os.open("/", DIRECTORY_PATH_FLAGS)
    except OSError:
        return None
    try:
        os.close(openat2(probe, b".", DIRECTORY_PATH_FLAGS))
        try:
            os.close(openat2(probe, b"..", DIRECTORY_PATH_FLAGS))
        except OSError as exc:
            return openat2 if exc.errno == errno.EXDEV else None
        return None
    except OSError:
        return None
    finally:
        os.close(probe)


OPENAT2: Final = _bind_openat2()
"""The binding, probed at import; ``None`` where this process cannot use it."""


def kernel_has_openat2() -> bool:
    """Whether this process can use ``openat2`` with ``RESOLVE_BENEATH`` (probed at import)."""
    return OPENAT2 is not None


def default_mode() -> ResolutionMode:
    """``"openat2"`` where the kernel has it, else ``"walk"``."""
    return "openat2" if OPENAT2 is not None else "walk"
