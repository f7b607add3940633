"""Calling RE2 once per match: the compiled engine under ``google-re2``'s Python wrapper.

The wrapper's ``search`` and ``fullmatch`` go through a generator and build a
match object per call (about 6 µs each here: most of a grep of a few
thousand matching lines, and a third of a glob's walk). The ``RE2`` object it
wraps answers a span in one call. Both functions here use it when the
installed wrapper has it — checked once per pattern, on a probe — and fall
back to the public API otherwise, with the same answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import re2

__all__ = ["full_match", "span_search"]


def _raw(regex: re2._Regexp[str], anchor_name: str) -> tuple[Any, Any] | None:
    """``(RE2.Match, anchor)`` when the wrapper exposes them and they answer a probe."""
    raw: Any = getattr(regex, "_regexp", None)
    anchor: Any = getattr(getattr(re2, "_Anchor", None), anchor_name, None)
    try:
        match = raw.Match
        spans = match(anchor, b"", 0, 0)
        if not isinstance(spans[0], tuple):
            return None
    except Exception:  # another wrapper: the public API answers
        return None
    return match, anchor


def span_search(regex: re2._Regexp[str]) -> Callable[[bytes, int], tuple[int, int] | None]:
    """``regex``'s search of UTF-8 ``data`` from ``pos``: the first match's byte span, or
    ``None``."""
    found = _raw(regex, "UNANCHORED")
    if found is not None:
        match, anchor = found

        def search(data: bytes, pos: int) -> tuple[int, int] | None:
            span: tuple[int, int] = match(anchor, data, pos, len(data))[0]
            return None if span[0] < 0 else span

        return search

    public = regex.search

    def search_public(data: bytes, pos: int) -> tuple[int, int] | None:
        first = public(data, pos)
        return None if first is None else (first.start(), first.end())

    return search_public


def full_match(regex: re2._Regexp[str]) -> Callable[[str], bool]:
    """Whether ``regex`` matches the whole of a text (``UnicodeEncodeError`` for a lone
    surrogate, as the wrapper raises)."""
    found = _raw(regex, "ANCHOR_BOTH")
    if found is not None:
        match, anchor = found

        def whole(text: str) -> bool:
            data = text.encode()
            first: tuple[int, int] = match(anchor, data, 0, len(data))[0]
            return first[0] >= 0

        return whole

    public = regex.fullmatch

    def whole_public(text: str) -> bool:
        return public(text) is not None

    return whole_public
