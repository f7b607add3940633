"""An RE2 pattern as an ``rg`` regular expression that matches *at least* where RE2 does.

The native ``grep`` uses ``rg --files-with-matches`` to list the files worth
reading, then searches them exactly as the seam path does (the seam's read,
RE2, the shared page builder). So ``rg``'s pattern needs only to be a
**superset**: every line on which the search's RE2 pattern matches must
hold a match of ``rg``'s pattern in the bytes ``rg`` sees. It may match
more (a file listed for nothing costs one read); it must never match less.

What ``rg`` sees differs from what RE2 sees in three ways, and the
translation covers each:

* ``rg`` runs with ``--text --encoding=none``: the file's raw bytes. The seam
  strips a leading UTF-8 byte-order mark and reads a ``\\r\\n`` line end (or a
  final ``\\r``) as ``\\n``. So ``^`` and ``\\A`` become "a line start, then
  maybe a BOM" and ``$`` and ``\\z`` "maybe a ``\\r``, then a line end".
  ``\\A`` and ``\\z`` widen to any line (the seam scans a streamed file in
  chunks of whole lines, each its own text).
* The classes whose meaning differs between the engines are spelled out:
  RE2's ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII, the Rust engine's are
  Unicode, so they are written as the explicit ASCII classes and ``rg``'s
  ASCII word boundary ``(?-u:\\b)``. Unicode classes (``\\pL``,
  ``\\p{Greek}``), whose tables may be of another Unicode version, become
  ``.`` (any character), and a bracket class holding one becomes ``.``.
* Case folding: under ``(?i)`` or ``ignore_case`` a non-ASCII literal, a
  class with a non-ASCII bound and any negated class become ``.`` (folding
  tables of two Unicode versions may disagree; a negation of a folded class
  would turn that into a miss). ASCII letters fold alike in both (``k``
  also to the Kelvin sign, ``s`` to the long s).

Every character of the result outside the syntax is written as an escape
(``\\x{..}``), so no character of the pattern can take one of ``rg``'s own
meanings (``&&``, ``--`` or ``~~`` in a class, a NUL in an argument).
Greediness (``*?``, ``(?U)``) does not change *whether* a line matches and
is dropped; capture groups become non-capturing. A construct this module
does not translate (``\\C``, ``\\Q…\\E``, an octal escape) gives ``None``:
the native path then declines and the seam path answers. ``rg`` refusing
the result (a repetition past its size limit, a ``\\n``) is a failed run,
and the seam path answers too.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["rg_regex"]

_LINE_START: Final = r"(?:^\x{FEFF}?)"
_LINE_END: Final = r"(?:\r?$)"
_ANY: Final = "."
_PERL: Final = {"d": "0-9", "w": "0-9A-Za-z_", "s": r"\t\n\f\r "}
_ESCAPED_CHARS: Final = {"a": 7, "f": 12, "t": 9, "n": 10, "r": 13, "v": 11}
_POSIX: Final = frozenset(
    [
        "alnum",
        "alpha",
        "ascii",
        "blank",
        "cntrl",
        "digit",
        "graph",
        "lower",
        "print",
        "punct",
        "space",
        "upper",
        "word",
        "xdigit",
    ]
)
_REPEAT: Final = re.compile(r"\{(\d+)(?:(,)(\d*))?\}")
_FLAGS: Final = re.compile(r"\(\?([imsU]*)(?:-([imsU]*))?([:)])")
_NAMED: Final = re.compile(r"\(\?P?<[A-Za-z0-9_]+>")


class _Unsupported(Exception):
    """A construct the translation does not cover (the native path declines)."""


def _char(code: int) -> str:
    """One character as ``rg`` reads it literally, outside or inside a class."""
    if code < 128 and chr(code).isalnum():
        return chr(code)
    if 0xD800 <= code <= 0xDFFF:
        raise _Unsupported("a lone surrogate")
    return f"\\x{{{code:X}}}"


class _Class:
    """A bracket class being read: its ``rg`` items, and whether it must widen to ``.``."""

    __slots__ = ("items", "negated", "widen")

    def __init__(self, negated: bool) -> None:
        self.negated = negated
        self.items: list[str] = []
        self.widen = False


class _Translator:
    def __init__(self, pattern: str, ignore_case: bool) -> None:
        self.p = pattern
        self.at = 0
        self.ci = ignore_case

    def peek(self, offset: int = 0) -> str:
        at = self.at + offset
        return self.p[at] if at < len(self.p) else ""

    # -- regex := alternatives ------------------------------------------------

    def alternation(self, depth: int) -> str:
        saved = self.ci
        branches = [self.concat(depth)]
        while self.peek() == "|":
            self.at += 1
            branches.append(self.concat(depth))
        self.ci = saved  # a (?i) inside a group ends with the group
        return "|".join(branches)

    def concat(self, depth: int) -> str:
        out: list[str] = []
        while self.at < len(self.p):
            c = self.peek()
            if c == "|":
                break
            if c == ")":
                if depth == 0:
                    raise _Unsupported("an unbalanced )")
                break
            atom = self.atom(depth)
            out.append(atom + self.quantifiers() if atom else atom)
        return "".join(out)

    def quantifiers(self) -> str:
        out = ""
        while True:
            c = self.peek()
            if c in ("*", "+", "?"):
                self.at += 1
                out += c
            elif c == "{" and (m := _REPEAT.match(self.p, self.at)):
                self.at = m.end()
                low, comma, high = m.group(1), m.group(2), m.group(3)
                out += "{" + low + ("," + high if comma else "") + "}"
            else:
                return out
            if self.peek() == "?":  # lazy: whether a line matches is the same
                self.at += 1

    # -- atoms ---------------------------------------------------------------

    def atom(self, depth: int) -> str:
        c = self.peek()
        if c == "(":
            return self.group(depth)
        if c == "[":
            return self.bracket()
        self.at += 1
        if c == ".":
            return _ANY
        if c == "^":
            return _LINE_START
        if c == "$":
            return _LINE_END
        if c == "\\":
            return self.escape()
        return self.literal(ord(c))

    def literal(self, code: int) -> str:
        if self.ci and code >= 128:
            return _ANY
        return _char(code)

    def group(self, depth: int) -> str:
        flags = _FLAGS.match(self.p, self.at)
        if flags:
            on, off, end = flags.group(1), flags.group(2) or "", flags.group(3)
            self.at = flags.end()
            spelled = ("i" if "i" in on else "") + ("-i" if "i" in off else "")
            if end == ")":  # (?flags): to the end of the enclosing group
                if "i" in on:
                    self.ci = True  # (?-i) keeps what was: widening is always safe
                return f"(?{spelled})" if spelled else ""
            saved = self.ci
            if "i" in on:
                self.ci = True
            inner = self.alternation(depth + 1)
            self.ci = saved
            self.close()
            return f"(?{spelled}:{inner})" if spelled else f"(?:{inner})"
        named = _NAMED.match(self.p, self.at)
        if named:
            self.at = named.end()
        elif self.p.startswith("(?:", self.at):
            self.at += 3
        elif self.p.startswith("(?", self.at):
            raise _Unsupported("a group form")
        else:
            self.at += 1
        inner = self.alternation(depth + 1)
        self.close()
        return f"(?:{inner})"

    def close(self) -> None:
        if self.peek() != ")":
            raise _Unsupported("an unclosed group")
        self.at += 1

    def escape(self) -> str:
        c = self.peek()
        if not c:
            raise _Unsupported("a trailing backslash")
        self.at += 1
        if c in _PERL:
            return f"[{_PERL[c]}]"
        if c.lower() in _PERL:  # \D \W \S
            return _ANY if self.ci else f"[^{_PERL[c.lower()]}]"
        if c in ("A",):
            return _LINE_START
        if c == "z":
            return _LINE_END
        if c in ("b", "B"):
            return f"(?-u:\\{c})"
        if c in ("p", "P"):
            self.unicode_class()
            return _ANY
        return self.literal(self.char_escape(c))

    def char_escape(self, c: str) -> int:
        """The character of ``\\c`` (the backslash and ``c`` read already)."""
        if c in _ESCAPED_CHARS:
            return _ESCAPED_CHARS[c]
        if c == "x":
            if self.peek() == "{":
                end = self.p.find("}", self.at)
                digits = self.p[self.at + 1 : end] if end > 0 else ""
                self.at = end + 1
            else:
                digits = self.p[self.at : self.at + 2]
                self.at += 2
            try:
                return int(digits, 16)
            except ValueError:
                raise _Unsupported("a hex escape") from None
        if c.isascii() and not c.isalnum():
            return ord(c)
        raise _Unsupported(f"the escape \\{c}")

    def unicode_class(self) -> None:
        """Skip the name of ``\\pN`` or ``\\p{Name}`` (the ``\\p`` read already)."""
        if self.peek() == "{":
            end = self.p.find("}", self.at)
            if end < 0:
                raise _Unsupported("an unclosed \\p{")
            self.at = end + 1
        elif self.peek():
            self.at += 1
        else:
            raise _Unsupported("a trailing \\p")

    # -- bracket classes -------------------------------------------------------

    def bracket(self) -> str:
        self.at += 1
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        cls = _Class(negated)
        first = True
        while True:
            c = self.peek()
            if not c:
                raise _Unsupported("an unclosed [")
            if c == "]" and not first:
                self.at += 1
                break
            first = False
            if c == "[" and self.peek(1) == ":":
                end = self.p.find(":]", self.at + 2)
                name = self.p[self.at + 2 : end] if end > 0 else ""
                if name.lstrip("^") in _POSIX:
                    self.at = end + 2
                    cls.widen |= name.startswith("^") and self.ci
                    cls.items.append(f"[:{name}:]")
                    continue
            low = self.class_char(cls)
            if low is None:
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.at += 1
                high = self.class_char(cls)
                if high is None:
                    raise _Unsupported("a range to a class")
                cls.widen |= self.ci and high >= 128
                cls.items.append(f"{_char(low)}-{_char(high)}")
            else:
                cls.widen |= self.ci and low >= 128
                cls.items.append(_char(low))
        if cls.widen or (cls.negated and self.ci):
            return _ANY
        return "[" + ("^" if cls.negated else "") + "".join(cls.items) + "]"

    def class_char(self, cls: _Class) -> int | None:
        """The next character of a class, or ``None`` when the item was a class of its own
        (``\\d``, ``\\W``, ``\\pL``: added to ``cls`` or widening it)."""
        c = self.peek()
        self.at += 1
        if c != "\\":
            return ord(c)
        e = self.peek()
        if not e:
            raise _Unsupported("a trailing backslash")
        self.at += 1
        if e in _PERL:
            cls.items.append(_PERL[e])
            return None
        if e.lower() in _PERL:
            cls.widen |= self.ci
            cls.items.append(f"[^{_PERL[e.lower()]}]")
            return None
        if e in ("p", "P"):
            self.unicode_class()
            cls.widen = True
            return None
        return self.char_escape(e)


def rg_regex(pattern: str, *, ignore_case: bool) -> bytes | None:
    """``rg``'s pattern for the RE2 ``pattern`` (compiled as ``grep`` compiles it: multi-line,
    never across a line), matching wherever it matches and maybe more; ``None`` when a
    construct is not translated (then ``rg`` is not asked)."""
    translator = _Translator(pattern, ignore_case)
    try:
        regex = translator.alternation(0)
    except _Unsupported:
        return None
    if translator.at != len(pattern):
        return None
    return regex.encode("ascii")
