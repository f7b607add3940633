"""Telling a procfs magic link from an ordinary symlink, for the component walk.

``openat2`` refuses magic links itself (``RESOLVE_NO_MAGICLINKS``); the walk
reads each link's text instead and must not follow one of these: the kernel
follows them to the object (an open file, another process's root), not to
their text.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Callable
from typing import Final

__all__ = ["is_magic_link"]

_PROC_SUPER_MAGIC: Final = 0x9FA0


def _bind_fstatfs() -> Callable[[int], int | None]:
    """``f_type`` of the filesystem holding a descriptor (``fstatfs``), or ``None``."""
    try:
        fstatfs = ctypes.CDLL(None, use_errno=True).fstatfs
    except (OSError, AttributeError):
        return lambda fd: None
    fstatfs.restype = ctypes.c_int
    fstatfs.argtypes = [ctypes.c_int, ctypes.c_void_p]
    long_format = "l"  # f_type is the first member, a native long (__fsword_t)

    def f_type(fd: int) -> int | None:
        buffer = ctypes.create_string_buffer(256)  # > sizeof(struct statfs) everywhere
        if fstatfs(fd, buffer) != 0:
            return None
        value: int = struct.unpack_from(long_format, buffer.raw)[0]
        return value

    return f_type


_f_type: Final = _bind_fstatfs()


def _proc_device() -> int | None:
    try:
        return os.stat("/proc").st_dev
    except OSError:
        return None


_PROC_DEVICE: Final = _proc_device()


def _on_procfs(dir_fd: int) -> bool:
    kind = _f_type(dir_fd)
    if kind is not None:
        return kind == _PROC_SUPER_MAGIC
    return _PROC_DEVICE is not None and os.fstat(dir_fd).st_dev == _PROC_DEVICE


def is_magic_link(dir_fd: int, text: str) -> bool:
    """Whether the link whose text is ``text``, in directory ``dir_fd``, is a procfs magic link.

    The ordinary links of procfs (``self`` → ``<pid>``, ``mounts`` →
    ``self/mounts``) are relative paths; the magic ones (``fd/N``, ``cwd``,
    ``root``, ``exe``, ``map_files/…``, ``ns/…``) read as an absolute path or
    as no path at all (``pipe:[123]``, ``anon_inode:[eventfd]``), and the kernel
    follows them to the object, not to that text.
    """
    if not text.startswith("/") and ":" not in text:
        return False
    return _on_procfs(dir_fd)
