"""What the command writes: stdout is always UTF-8, and lone surrogates never crash it.

In JSON output a lone surrogate (an undecodable file name byte, as Python
decodes it) is written as its ``\\udcxx`` escape, so every line stays valid
UTF-8 JSON and ``json.loads`` gives back the very string the tool produced
(a backend maps it back to the original bytes). In plain text (``call``
without ``--json``) a surrogate that stands for an undecodable byte is
written as that byte, as ``ls`` would, and any other lone surrogate as a
``\\udxxx`` escape.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, BinaryIO

from ..names import escape_surrogates

_SURROGATE = re.compile("[\ud800-\udfff]")


def json_line(obj: Any) -> str:
    """``obj`` as one line of JSON, non-ASCII kept, lone surrogates escaped (valid UTF-8)."""
    return escape_surrogates(json.dumps(obj, ensure_ascii=False))


def encode_plain(text: str) -> bytes:
    """UTF-8 for a terminal: an undecodable byte (``\\udc80``-``\\udcff``) is written back raw."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        pass
    out = bytearray()
    for part in re.split("([\ud800-\udfff])", text):
        if len(part) == 1 and _SURROGATE.match(part):
            code = ord(part)
            out += bytes([code - 0xDC00]) if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}".encode()
        else:
            out += part.encode("utf-8")
    return bytes(out)


def write(stream: BinaryIO, data: bytes) -> None:
    """Write and flush at once: a client may wait for each answer before the next request."""
    stream.write(data)
    stream.flush()


def silence_stdout() -> None:
    """Point stdout at /dev/null once its reader went away: Python's flush at exit cannot fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
