"""Reading regular files without ever blocking on a special file.

Every function here runs in a worker thread. The type check comes from a
``stat`` taken *before* any ``open``, so a FIFO, socket or device is never
opened; the ``open`` itself uses ``O_NONBLOCK`` in case the path was swapped
for a FIFO in between, and an ``fstat`` of the opened descriptor confirms it
is still a regular file.
"""

from __future__ import annotations

import errno
import os
import stat as st

from dsh_fs import FsError, FsErrorCode
from dsh_fs.text import StreamDecoder, decode_text

from ._os_errors import os_failure

READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
STREAM_CHUNK_BYTES = 1 << 20
"""Bytes read per ``stream_text`` step (one worker-thread hop each)."""


def _not_regular(verb: str, display_path: str) -> FsError:
    return FsError.cannot(verb, display_path, "not a regular file", FsErrorCode.FS_NOT_REGULAR_FILE)


def _lookup_failure(verb: str, display_path: str, exc: OSError) -> FsError:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return FsError.cannot(verb, display_path, "not found", FsErrorCode.FS_NOT_FOUND)
    return os_failure(verb, display_path, exc)


def open_regular(path: str, verb: str, display_path: str) -> tuple[int, int]:
    """Open an existing regular file for reading: its descriptor and size.

    Raises the read's ``FsError`` when it is absent or not a regular file.
    """
    try:
        before = os.stat(path)
    except OSError as exc:
        raise _lookup_failure(verb, display_path, exc) from exc
    if not st.S_ISREG(before.st_mode):
        raise _not_regular(verb, display_path)
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError as exc:
        raise _lookup_failure(verb, display_path, exc) from exc
    try:
        opened = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise os_failure(verb, display_path, exc) from exc
    if not st.S_ISREG(opened.st_mode):
        os.close(fd)
        raise _not_regular(verb, display_path)
    return fd, opened.st_size


def read_all(fd: int, size: int, verb: str, display_path: str) -> bytes:
    """Every byte of an open regular file of (``fstat``) size ``size``.

    Asking for one byte more than expected and getting exactly ``size`` proves
    the end of the file in a single ``read``; a file that grew or shrank in
    the meantime is read on to its end.
    """
    try:
        data = os.read(fd, size + 1)
        if len(data) == size:
            return data
        parts = [data]
        while chunk := os.read(fd, STREAM_CHUNK_BYTES):
            parts.append(chunk)
        return b"".join(parts)
    except OSError as exc:
        raise os_failure(verb, display_path, exc) from exc


def read_text_file(path: str, display_path: str) -> str:
    """``read_text`` in one go: stat, open, read and strict decode."""
    fd, size = open_regular(path, "read", display_path)
    try:
        data = read_all(fd, size, "read", display_path)
    finally:
        os.close(fd)
    return decode_text(data, "read", display_path)


def read_text_chunk(fd: int, decoder: StreamDecoder, display_path: str) -> tuple[str, bool]:
    """One ``stream_text`` step: the next decoded text and whether the end was reached."""
    try:
        chunk = os.read(fd, STREAM_CHUNK_BYTES)
    except OSError as exc:
        raise os_failure("read", display_path, exc) from exc
    if not chunk:
        return decoder.feed(b"", final=True), True
    return decoder.feed(chunk), False


def open_stream(path: str, display_path: str, decoder: StreamDecoder) -> tuple[int, str, bool]:
    """The first ``stream_text`` step: open the file and decode its first chunk."""
    fd, _ = open_regular(path, "read", display_path)
    try:
        text, done = read_text_chunk(fd, decoder, display_path)
    except BaseException:
        os.close(fd)
        raise
    return fd, text, done
