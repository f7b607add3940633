"""Argument validation: decoded JSON in, typed arguments or one exact message out.

Two stages, before any filesystem call (SPEC 5.4). Shape and types first:
not an object, the first unknown key (in the arguments' order), the first
missing required key and the first wrong type (both in parameter order).
Then the value rules. The messages are ours, never a library's, because the
model reads them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .config import ToolFsConfig

Kind: TypeAlias = Literal["string", "integer", "boolean"]


class ToolArgumentError(ValueError):
    """Arguments that do not fit a tool's schema. ``str(err)`` is the model-facing message."""

    code = "INVALID_ARGUMENTS"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


# The typed arguments are plain slotted records, like the host's other per-call
# objects: a frozen dataclass pays an ``object.__setattr__`` per field on every
# construction, and nothing changes them once built.


@dataclass(slots=True)
class ListArgs:
    path: str = "."
    offset: int = 1


@dataclass(slots=True)
class ReadArgs:
    file_path: str
    offset: int
    limit: int


@dataclass(slots=True)
class WriteArgs:
    file_path: str
    content: str


@dataclass(slots=True)
class EditArgs:
    file_path: str
    old_string: str
    new_string: str
    replace_all: bool = False


ToolArgs: TypeAlias = ListArgs | ReadArgs | WriteArgs | EditArgs

# (name, kind, required) in the parameter order of SPEC 5.3.
PARAMETERS: dict[str, tuple[tuple[str, Kind, bool], ...]] = {
    "list": (("path", "string", False), ("offset", "integer", False)),
    "read": (
        ("file_path", "string", True),
        ("offset", "integer", False),
        ("limit", "integer", False),
    ),
    "write": (("file_path", "string", True), ("content", "string", True)),
    "edit": (
        ("file_path", "string", True),
        ("old_string", "string", True),
        ("new_string", "string", True),
        ("replace_all", "boolean", False),
    ),
}


def _typed(kind: Kind, value: Any) -> tuple[bool, Any]:
    """``(True, converted)`` when ``value`` is a JSON value of ``kind``."""
    if kind == "string":
        return isinstance(value, str), value
    if kind == "boolean":
        return isinstance(value, bool), value
    if isinstance(value, bool):
        return False, value
    if isinstance(value, int):
        return True, value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return True, int(value)
    return False, value


# Per tool, computed once: the names it accepts and the names it requires.
_KNOWN: dict[str, frozenset[str]] = {
    tool: frozenset(name for name, _, _ in parameters) for tool, parameters in PARAMETERS.items()
}
_REQUIRED: dict[str, tuple[str, ...]] = {
    tool: tuple(name for name, _, required in parameters if required)
    for tool, parameters in PARAMETERS.items()
}


def check_shape(tool: str, args: Any) -> dict[str, Any]:
    """Stage one: the object, its keys and their JSON types. Returns the present values.

    ``null`` for an optional key counts as absent; ``null`` for a required
    key is a wrong type.
    """
    if not isinstance(args, Mapping):
        raise ToolArgumentError("arguments must be a JSON object")
    known = _KNOWN[tool]
    if not known.issuperset(args):
        unknown = next(key for key in args if key not in known)
        raise ToolArgumentError(f'unknown argument "{unknown}"')
    for name in _REQUIRED[tool]:
        if name not in args:
            raise ToolArgumentError(f"{name} is required")
    values: dict[str, Any] = {}
    for name, kind, required in PARAMETERS[tool]:
        if name not in args:
            continue
        value = args[name]
        if value is None and not required:
            continue
        ok, converted = _typed(kind, value)
        if not ok:
            article = "an" if kind == "integer" else "a"
            raise ToolArgumentError(f"{name} must be {article} {kind}")
        values[name] = converted
    return values


def _non_blank(value: str) -> bool:
    return bool(value.strip())


def _file_path(values: dict[str, Any]) -> str:
    file_path: str = values["file_path"]
    if not _non_blank(file_path):
        raise ToolArgumentError("file_path must be a non-empty string")
    return file_path


def _list_args(values: dict[str, Any], config: ToolFsConfig) -> ListArgs:
    path = values.get("path")
    if path is not None and not _non_blank(path):
        raise ToolArgumentError("path must be a non-empty string when given")
    offset = values.get("offset", 1)
    if offset < 1:
        raise ToolArgumentError("offset must be a positive integer")
    return ListArgs("." if path is None else path, offset)


def _read_args(values: dict[str, Any], config: ToolFsConfig) -> ReadArgs:
    file_path = _file_path(values)
    offset = values.get("offset", 1)
    if offset < 1:
        raise ToolArgumentError("offset must be a positive integer")
    limit = values.get("limit", config.read_limit)
    if limit < 1:
        raise ToolArgumentError("limit must be a positive integer")
    if limit > config.read_limit:
        raise ToolArgumentError(f"limit must be less than or equal to {config.read_limit}")
    return ReadArgs(file_path, offset, limit)


def _write_args(values: dict[str, Any], config: ToolFsConfig) -> WriteArgs:
    return WriteArgs(_file_path(values), values["content"])


def _edit_args(values: dict[str, Any], config: ToolFsConfig) -> EditArgs:
    file_path = _file_path(values)
    if values["old_string"] == "":
        raise ToolArgumentError("old_string must be a non-empty string")
    if values["old_string"] == values["new_string"]:
        raise ToolArgumentError("old_string and new_string must differ")
    return EditArgs(
        file_path, values["old_string"], values["new_string"], values.get("replace_all", False)
    )


# Stage two, per tool: the value rules, in the order SPEC 5.4 gives them.
_VALUE_RULES: dict[str, Callable[[dict[str, Any], ToolFsConfig], ToolArgs]] = {
    "list": _list_args,
    "read": _read_args,
    "write": _write_args,
    "edit": _edit_args,
}


def two_stages(tool: str, args: Any, config: ToolFsConfig) -> ToolArgs:
    """Both stages for ``tool``, without the fast path; raises :class:`ToolArgumentError`.

    For a caller that has already tried :data:`PLAIN_ARGUMENTS` (the host).
    """
    return _VALUE_RULES[tool](check_shape(tool, args), config)


def validate_arguments(tool: str, args: Any, config: ToolFsConfig) -> ToolArgs:
    """Both stages for ``tool``; raises :class:`ToolArgumentError` with the exact message."""
    if type(args) is dict:
        plain = PLAIN_ARGUMENTS[tool](args, config)
        if plain is not None:
            return plain
    return two_stages(tool, args, config)


# The fast path. Nearly every call a model makes is a plain ``dict`` whose
# values already have exactly the right built-in types and pass every value
# rule; for those the two stages above amount to a handful of checks, which
# the functions below make directly. They only ever accept: anything unusual —
# an unknown or missing key, a wrong type, an integral float, a subclass of
# ``str`` or ``int``, a value rule broken — returns ``None``, and the two
# stages decide, with their exact messages. ``test_arguments_fast_path.py``
# checks on random inputs that both paths agree.

_READ_KEYS = _KNOWN["read"]
_LIST_KEYS = _KNOWN["list"]
_WRITE_KEYS = _KNOWN["write"]
_EDIT_KEYS = _KNOWN["edit"]


def _plain_read(args: dict[str, Any], config: ToolFsConfig) -> ReadArgs | None:
    file_path = args.get("file_path")
    if type(file_path) is not str or not file_path.strip():
        return None
    if len(args) == 1:  # the usual call: a path, the default window
        return ReadArgs(file_path, 1, config.read_limit)
    if not _READ_KEYS.issuperset(args):
        return None
    offset = args.get("offset")
    if offset is None:
        offset = 1
    elif type(offset) is not int or offset < 1:
        return None
    limit = args.get("limit")
    if limit is None:
        limit = config.read_limit
    elif type(limit) is not int or not 1 <= limit <= config.read_limit:
        return None
    return ReadArgs(file_path, offset, limit)


def _plain_list(args: dict[str, Any], config: ToolFsConfig) -> ListArgs | None:
    if not _LIST_KEYS.issuperset(args):
        return None
    path = args.get("path")
    if path is None:
        path = "."
    elif type(path) is not str or not path.strip():
        return None
    offset = args.get("offset")
    if offset is None:
        offset = 1
    elif type(offset) is not int or offset < 1:
        return None
    return ListArgs(path, offset)


def _plain_write(args: dict[str, Any], config: ToolFsConfig) -> WriteArgs | None:
    file_path = args.get("file_path")
    content = args.get("content")
    if (
        type(file_path) is not str
        or type(content) is not str
        or not _WRITE_KEYS.issuperset(args)
        or not file_path.strip()
    ):
        return None
    return WriteArgs(file_path, content)


def _plain_edit(args: dict[str, Any], config: ToolFsConfig) -> EditArgs | None:
    file_path = args.get("file_path")
    old_string = args.get("old_string")
    new_string = args.get("new_string")
    replace_all = args.get("replace_all")
    if replace_all is None:
        replace_all = False
    if (
        type(file_path) is not str
        or type(old_string) is not str
        or type(new_string) is not str
        or type(replace_all) is not bool
        or not _EDIT_KEYS.issuperset(args)
        or not file_path.strip()
        or old_string == ""
        or old_string == new_string
    ):
        return None
    return EditArgs(file_path, old_string, new_string, replace_all)


PLAIN_ARGUMENTS: dict[str, Callable[[dict[str, Any], ToolFsConfig], ToolArgs | None]] = {
    "list": _plain_list,
    "read": _plain_read,
    "write": _plain_write,
    "edit": _plain_edit,
}
"""Per tool, the fast path alone: the typed arguments of plain valid ones, else ``None``."""
