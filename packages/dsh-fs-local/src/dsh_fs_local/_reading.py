"""Reading regular files without ever blocking on a special file.

Every function here runs in a worker thread and reaches the file through a
:class:`~dsh_fs_local._reach.Reach` (beneath the workspace roots). The type
check comes from an ``O_PATH`` descriptor taken *before* any ``open``, so a
FIFO, socket or device is never opened; the ``open`` itself uses
``O_NONBLOCK`` in case the path was swapped for a FIFO in between, and an
``fstat`` of the opened descriptor confirms it is still a regular file.
"""

from __future__ import annotations

import errno
import os
import stat as st
from collections.abc import Callable, Sequence

from dsh_fs import FsError
from dsh_fs.preconditions import not_found, not_regular, over_read_limit
from dsh_fs.text import LARGE_FILE_BYTES, StreamDecoder, decode_text

from ._os_errors import os_failure
from ._reach import PATH_FLAGS, Reach, Refused

READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
STREAM_CHUNK_BYTES = 1 << 20
"""Bytes per ``os.read`` when a file of unknown size (0) is read whole."""


def _lookup_failure(verb: str, display_path: str, exc: OSError) -> FsError:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return not_found(verb, display_path)
    return os_failure(verb, display_path, exc)


def open_regular(reach: Reach, key: str, verb: str, display_path: str) -> tuple[int, int]:
    """Open the existing regular file ``key``, reached through ``reach``: its descriptor and size.

    The type comes from an ``O_PATH`` descriptor (which opens nothing) before
    the file is opened for reading, so a FIFO or a device is never opened.
    Raises the read's ``FsError`` when it is absent, not a regular file, or
    (containment) outside the workspace.
    """
    try:
        try:
            probe = reach.open(key, PATH_FLAGS)
        except OSError as exc:
            raise _lookup_failure(verb, display_path, exc) from exc
        try:
            before = os.fstat(probe)
        finally:
            os.close(probe)
        if not st.S_ISREG(before.st_mode):
            raise not_regular(verb, display_path)
        try:
            fd = reach.open(key, READ_FLAGS)
        except OSError as exc:
            raise _lookup_failure(verb, display_path, exc) from exc
    except Refused as refused:
        raise refused.error(verb, display_path) from None
    try:
        opened = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise os_failure(verb, display_path, exc) from exc
    if not st.S_ISREG(opened.st_mode):
        os.close(fd)
        raise not_regular(verb, display_path)
    return fd, opened.st_size


def read_all(fd: int, size: int, verb: str, display_path: str) -> bytes:
    """The content of an open regular file as it was when opened: ``size`` bytes.

    ``size`` is the ``fstat`` size of the descriptor. Bytes appended later
    are not chased (a log written to nonstop still reads to an end); a file
    that shrank ends early. A size of 0 means "unknown" (``/proc`` files
    report 0): such a file is read to its end.
    """
    try:
        if size <= 0:
            parts = []
            while chunk := os.read(fd, STREAM_CHUNK_BYTES):
                parts.append(chunk)
            return b"".join(parts)
        data = os.read(fd, size)
        if len(data) == size or not data:
            return data
        parts = [data]
        got = len(data)
        while got < size and (chunk := os.read(fd, min(STREAM_CHUNK_BYTES, size - got))):
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)
    except OSError as exc:
        raise os_failure(verb, display_path, exc) from exc


def read_text_file(reach: Reach, key: str, display_path: str) -> str:
    """``read_text`` in one go: type check, open, read and strict decode.

    Whole or in chunks is decided from the size of the *opened* file, never
    from an earlier ``stat``: another process may have grown it in between
    (or flip a sparse file between 0 bytes and gigabytes). Up to
    :data:`~dsh_fs.text.LARGE_FILE_BYTES` it is read in one piece of exactly
    that size; a larger one, or one of unknown size (0), is decoded chunk by
    chunk, so binary or invalid bytes end the read at the first chunk that
    shows them and no piece of raw bytes larger than a chunk is ever held.
    """
    return _read_text(reach, key, display_path, None)[0]


def read_text_files(
    reach: Reach,
    files: Sequence[tuple[str, str]],
    max_bytes: int | None,
    check_cancelled: Callable[[], object],
) -> list[str | FsError]:
    """:func:`read_text_file` of each ``(key, display_path)`` of ``files``, in order: its text
    or its ``FsError``; with ``max_bytes``, the bytes all of them may take together (a file
    that would pass what is left fails ``FS_TOO_LARGE``, unread). ``check_cancelled`` (the
    caller's cancellation) runs before each."""
    texts: list[str | FsError] = []
    left = max_bytes
    for key, display_path in files:
        check_cancelled()
        try:
            text, size = _read_text(reach, key, display_path, left)
        except FsError as exc:
            texts.append(exc)
            continue
        texts.append(text)
        if left is not None:
            left -= size
    return texts


def _read_text(reach: Reach, key: str, display_path: str, max_bytes: int | None) -> tuple[str, int]:
    """:func:`read_text_file`'s text and the bytes it was read from; with ``max_bytes``, a file
    of more bytes than that — opened, or read to its end from an unknown size — fails
    ``FS_TOO_LARGE``, unread."""
    fd, size = open_regular(reach, key, "read", display_path)
    try:
        if max_bytes is not None and size > max_bytes:
            raise over_read_limit("read", display_path)
        if 0 < size <= LARGE_FILE_BYTES:
            data = read_all(fd, size, "read", display_path)
        else:
            return _decode_in_chunks(fd, size, display_path, max_bytes)
    finally:
        os.close(fd)
    return decode_text(data, "read", display_path), len(data)


def _decode_in_chunks(
    fd: int, size: int, display_path: str, max_bytes: int | None
) -> tuple[str, int]:
    """The text of ``size`` bytes (0: up to the end) of ``fd``, decoded chunk by chunk, and the
    bytes read; with ``max_bytes``, ``FS_TOO_LARGE`` once more than that was read."""
    decoder = StreamDecoder(display_path)
    parts = []
    remaining = size if size > 0 else -1
    read = 0
    try:
        while remaining != 0:
            wanted = STREAM_CHUNK_BYTES if remaining < 0 else min(STREAM_CHUNK_BYTES, remaining)
            chunk = os.read(fd, wanted)
            if not chunk:
                break
            if remaining > 0:
                remaining -= len(chunk)
            read += len(chunk)
            if max_bytes is not None and read > max_bytes:
                raise over_read_limit("read", display_path)
            parts.append(decoder.feed(chunk))
    except OSError as exc:
        raise os_failure("read", display_path, exc) from exc
    parts.append(decoder.feed(b"", final=True))
    return "".join(parts), read


class FileSource:
    """An open regular file as a :class:`dsh_fs.streaming.ByteSource` (``stream_text``).

    Like :func:`read_all`, it ends at the size the file had when it was
    opened (or at its end, for a file that reports size 0). Opening runs the
    same checks as every read: a missing or non-regular file raises here.
    """

    __slots__ = ("_display_path", "_fd", "_remaining")

    def __init__(self, reach: Reach, key: str, display_path: str) -> None:
        self._display_path = display_path
        self._fd, size = open_regular(reach, key, "read", display_path)
        self._remaining = size if size > 0 else -1

    @property
    def at_end(self) -> bool:
        return self._remaining == 0

    def readinto(self, buffer: memoryview) -> int:
        remaining = self._remaining
        if remaining == 0:
            return 0
        if 0 < remaining < len(buffer):
            buffer = buffer[:remaining]
        try:
            got = os.readv(self._fd, [buffer])
        except OSError as exc:
            raise os_failure("read", self._display_path, exc) from exc
        if remaining > 0:
            self._remaining = remaining - got if got else 0  # 0: the file shrank
        return got

    def close(self) -> None:
        os.close(self._fd)
