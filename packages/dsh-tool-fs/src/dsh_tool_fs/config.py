"""``ToolFsConfig``: the listing, reading and search limits of the tools."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["ToolFsConfig"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFsConfig:
    """Limits of the tools, immutable once built.

    Keys are snake_case; :meth:`model_validate` also accepts the camelCase
    aliases of the source documents (``listMaxEntries`` …). Every value must be
    a positive integer — a boolean is not, an integral float such as ``2.0``
    is accepted as ``2`` — else construction fails with a ``ValueError`` whose
    message is ``tool-fs: <alias> must be a positive integer``. Unknown keys
    are refused (``unknown config key "<key>"``).
    """

    list_max_entries: int = 200
    """Most entries on one ``list`` page."""
    read_limit: int = 2000
    """Default and maximum ``limit`` of one ``read``."""
    read_max_line_length: int = 2000
    """Characters kept per line before truncation."""
    read_max_bytes: int = 51200
    """Byte cap of the selected lines of one ``read``."""
    read_stream_min_size: int = 10485760
    """Files of at least this size, or of unknown size, are streamed."""
    glob_max_results: int = 100
    """Most paths on one ``glob`` page."""
    grep_max_matches: int = 100
    """Most matching lines on one ``grep`` page."""
    search_time_limit: int = 30
    """Seconds a ``glob`` or ``grep`` walk may run before it stops and reports what it found."""

    def __post_init__(self) -> None:
        for field in fields(self):
            value = _positive_integer(getattr(self, field.name), _ALIASES[field.name])
            object.__setattr__(self, field.name, value)

    @classmethod
    def model_validate(cls, values: Mapping[str, Any]) -> ToolFsConfig:
        """A config from a mapping whose keys are snake_case names or camelCase aliases."""
        kwargs: dict[str, Any] = {}
        for key, value in values.items():
            name = _NAMES.get(key)
            if name is None:
                raise ValueError(f'unknown config key "{key}"')
            kwargs[name] = value
        return cls(**kwargs)

    def model_dump(self, *, by_alias: bool = False) -> dict[str, int]:
        """The values by snake_case name, or by camelCase alias."""
        return {
            _ALIASES[field.name] if by_alias else field.name: getattr(self, field.name)
            for field in fields(self)
        }


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.capitalize() for part in rest)


_ALIASES = {field.name: _camel(field.name) for field in fields(ToolFsConfig)}
_NAMES = {**{alias: name for name, alias in _ALIASES.items()}, **{n: n for n in _ALIASES}}


def _positive_integer(value: Any, alias: str) -> int:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"tool-fs: {alias} must be a positive integer")
    return value
