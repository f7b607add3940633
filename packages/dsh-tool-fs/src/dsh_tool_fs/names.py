"""The name rule: no output can be forged by a file name.

A file name is chosen by whoever wrote the file, so it may contain a newline,
``</content>`` or a trailing ``@`` and try to pass for another entry, a
footer or the end of an envelope. Such names are written as a JSON string
literal instead; ordinary names (the overwhelming majority) stay verbatim.
"""

from __future__ import annotations

import re

__all__ = ["escape_controls", "escape_surrogates", "needs_quoting", "quote_name"]

# Cc (C0, DEL, C1), the backslash, "</" and lone surrogates (undecodable bytes
# that os.fsdecode turned into U+DC80..U+DCFF, or any other unpaired surrogate).
_SUSPICIOUS = re.compile("[\x00-\x1f\x7f-\x9f\\\\\ud800-\udfff]|</")

# What a JSON string literal must or (by our rule) does escape.
_ESCAPED = re.compile('[\x00-\x1f\x7f-\x9f"\\\\\ud800-\udfff]')
_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    "\b": "\\b",
    "\f": "\\f",
}


# What breaks a line (control characters, Cc) or cannot be encoded (lone surrogates).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")

# What cannot be encoded as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT_ESCAPES.get(char)
    return short if short is not None else f"\\u{ord(char):04x}"


def needs_quoting(name: str) -> bool:
    """True when ``name`` must be written as a JSON string literal (see :func:`quote_name`)."""
    return name.startswith('"') or name.endswith("@") or _SUSPICIOUS.search(name) is not None


def quote_name(name: str) -> str:
    """Render a name or path for the model: verbatim, or a JSON string literal.

    Quoted when the name contains a control character (Unicode category Cc:
    U+0000–U+001F, DEL and the C1 range U+0080–U+009F), a backslash, ``</``,
    a lone surrogate, starts with ``"`` or ends with ``@``. The literal uses
    ``\\"``, ``\\\\``, ``\\n``, ``\\t``, ``\\r``, ``\\b``, ``\\f`` and lowercase
    ``\\uxxxx`` for every other control character and for surrogates; other
    non-ASCII characters (format characters such as U+202E included, which
    are category Cf, not Cc) are kept as they are. Every ``</`` is then written
    ``<\\/`` — still valid JSON, so ``json.loads`` gives the name back, with
    one exception JSON cannot avoid: a lone high surrogate directly before a
    lone low one reads back as the astral character the two would pair to
    (names from ``os.fsdecode`` hold only low ones, U+DC80–U+DCFF).
    """
    if not needs_quoting(name):
        return name
    return '"' + _ESCAPED.sub(_escape, name).replace("</", "<\\/") + '"'


def escape_controls(text: str) -> str:
    """``text`` with control characters and lone surrogates JSON-escaped.

    For sentences that echo a path or an argument name the model chose (error
    messages, the edit confirmation): always one line, always valid UTF-8.
    ``\\n``, ``\\t``, ``\\r``, ``\\b``, ``\\f`` and lowercase ``\\uxxxx``
    (an undecodable byte from the OS reads ``\\udcXX``, as in a quoted list
    entry); everything else is untouched, so an ordinary message is unchanged
    and applying it twice changes nothing more.
    """
    return _CONTROL.sub(_escape, text)


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its lowercase ``\\uxxxx`` escape.

    For output that must be valid UTF-8 (JSON lines, JSON-RPC messages):
    the escape is the spelling the name rule uses in listings, so the model
    can send it back; everything else is untouched.
    """
    return _SURROGATE.sub(_escape, text)
