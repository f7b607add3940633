"""What every paged result shares: the rule for an offset past the end, and its number.

``list``, ``read``, ``glob`` and ``grep`` page their results with a 1-based
``offset``; each names what it counts (``12 lines``, ``3 entries``,
``1 file``, ``0 matches``), and :func:`check_offset` says the rest once.
"""

from __future__ import annotations

from dsh_fs import FsError, FsErrorCode

__all__ = ["check_offset", "decimal_text"]


def check_offset(offset: int, total: int, display_path: str, counted: str) -> None:
    """Raise ``FS_NOT_FOUND`` when ``offset`` lies past the last of ``total`` items.

    ``offset <offset> is out of range for "<p>" (<counted>)``, where ``counted``
    is how the result names its total (``"12 lines"``). ``offset`` 1 with
    nothing to show is an empty page, not an error. The message names the
    display path as is, like every ``FsError`` message of the stack
    (``cannot read "<p>": …``): the name rule (``names.quote_name``) applies to
    list entries and envelope ``<path>`` lines, and an error message is neither.
    """
    if offset > total and not (offset == 1 and total == 0):
        raise FsError(
            f'offset {decimal_text(offset)} is out of range for "{display_path}" ({counted})',
            FsErrorCode.FS_NOT_FOUND,
        )


_DIGITS_PER_PART = 4000
"""Below CPython's default int -> str limit of 4,300 digits."""


def decimal_text(number: int) -> str:
    """``str(number)``, also beyond CPython's 4,300-digit conversion limit.

    Arguments arrive as decoded JSON, which bounds no integer: an offset of
    5,000 digits must still be echoed in its out-of-range message instead of
    failing the call. Larger numbers are converted in parts under the limit.
    """
    try:
        return str(number)
    except ValueError:
        sign, rest = ("-", -number) if number < 0 else ("", number)
        base = 10**_DIGITS_PER_PART
        parts: list[int] = []
        while rest:
            rest, part = divmod(rest, base)
            parts.append(part)
        head, *tail = reversed(parts)
        return sign + str(head) + "".join(str(part).zfill(_DIGITS_PER_PART) for part in tail)
