"""The kernel's ``renameat2`` through ``ctypes`` (the standard library has no binding).

``os.rename`` always replaces its destination. A move that may not replace
one needs ``RENAME_NOREPLACE``: the kernel refuses an existing destination
(``EEXIST``) in the same system call that renames, so nothing can appear in
between a check and the rename. glibc ≥ 2.28 exports ``renameat2``; elsewhere
the raw system call is used on x86_64 and aarch64. Where neither exists (or a
filesystem refuses the flag) :func:`rename_at` falls back to a check of the
destination under the caller's locks.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys
from collections.abc import Callable
from typing import Any, Final

__all__ = ["RENAMEAT2", "RENAME_NOREPLACE", "Renameat2", "rename_at"]

RENAME_NOREPLACE: Final = 1
_SYSCALL_NUMBERS: Final = {"x86_64": 316, "aarch64": 276}

Renameat2 = Callable[[int, bytes, int, bytes, int], int]
"""``renameat2(old_dir, old, new_dir, new, flags)``: 0, or -1 with ``ctypes.get_errno()``."""

_ARGTYPES: Final[list[Any]] = [
    ctypes.c_int,
    ctypes.c_char_p,
    ctypes.c_int,
    ctypes.c_char_p,
    ctypes.c_uint,
]


def _bind() -> Renameat2 | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    function = getattr(libc, "renameat2", None)
    if function is not None:
        function.restype = ctypes.c_int
        function.argtypes = _ARGTYPES
        return function  # type: ignore[no-any-return]
    number = _SYSCALL_NUMBERS.get(platform.machine())
    if number is None:
        return None
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    syscall.argtypes = [ctypes.c_long, *_ARGTYPES]

    def renameat2(old_dir: int, old: bytes, new_dir: int, new: bytes, flags: int) -> int:
        result: int = syscall(number, old_dir, old, new_dir, new, flags)
        return result

    return renameat2


RENAMEAT2: Final = _bind()
"""The binding (glibc's ``renameat2``, else the raw system call); ``None`` where neither
exists. The swap-race test exchanges names with it (``RENAME_EXCHANGE``)."""


def rename_at(old_dir: int, old: str, new_dir: int, new: str, *, replace: bool) -> None:
    """Rename ``old`` in the directory ``old_dir`` to ``new`` in ``new_dir`` (descriptors).

    With ``replace=False`` an existing ``new`` fails ``EEXIST`` atomically
    (``RENAME_NOREPLACE``). Where the kernel, libc or the filesystem lacks that
    flag (``ENOSYS``/``EINVAL``), ``new`` is looked at and, when absent, renamed
    to with a plain rename: the caller holds both directories' locks, so only
    a process that does not take them can slip in between.
    """
    if not replace and RENAMEAT2 is not None:
        if RENAMEAT2(old_dir, os.fsencode(old), new_dir, os.fsencode(new), RENAME_NOREPLACE) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.ENOSYS, errno.EINVAL):
            raise OSError(code, os.strerror(code))
    if not replace:
        try:
            os.stat(new, dir_fd=new_dir, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            raise OSError(errno.EEXIST, os.strerror(errno.EEXIST))
    os.rename(old, new, src_dir_fd=old_dir, dst_dir_fd=new_dir)
