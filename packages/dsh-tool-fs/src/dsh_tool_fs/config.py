"""``ToolFsConfig``: the listing, reading, search and view limits of the tools, a pydantic model."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Annotated, Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from .json_types import Integer

__all__ = ["ToolFsConfig", "ToolFsConfigError"]

LARGEST = 2**31 - 1
"""The largest value of any key (2147483647): larger is a typo, never a limit anyone means."""

PositiveInteger = Annotated[Integer, Field(gt=0, le=LARGEST)]
"""A positive integer up to :data:`LARGEST`: never a boolean or a string; an integral float
is one."""


class ToolFsConfigError(ValueError):
    """A refused config: ``str(err)`` names the camelCase alias, :meth:`as_typed` the key given."""

    def __init__(self, template: str, key: str, *, alias: str | None = None) -> None:
        self.template, self.key = template, key
        self.unknown_key = alias is None
        """True when ``key`` is not a key of the config."""
        super().__init__(template.format(key=alias or key))

    def as_typed(self) -> str:
        """The message naming the key as the caller wrote it (``read_limit`` or ``readLimit``)."""
        return self.template.format(key=self.key)


class ToolFsConfig(BaseModel, frozen=True):
    """Limits of the tools, immutable once built.

    Keys are snake_case; :meth:`model_validate` and the constructor also accept
    the camelCase aliases of the source documents (``listMaxEntries`` …).
    Every value must be a positive integer up to 2147483647 — a boolean is
    not, an integral float such as ``2.0`` is accepted as ``2`` — else
    construction fails with a :class:`ToolFsConfigError` (a ``ValueError``)
    whose message is ``tool-fs: <alias> must be a positive integer`` (or
    ``… must be at most 2147483647``). Unknown keys are refused
    (``unknown config key "<key>"``).
    """

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    list_max_entries: PositiveInteger = 200
    """Most entries on one ``list`` page."""
    read_limit: PositiveInteger = 2000
    """Default and maximum ``limit`` of one ``read``."""
    read_max_line_length: PositiveInteger = 2000
    """Characters kept per line before truncation."""
    read_max_bytes: PositiveInteger = 51200
    """Byte cap of the selected lines of one ``read``."""
    read_stream_min_size: PositiveInteger = 10485760
    """``grep`` streams files of at least this size, or of unknown size (``read`` streams all)."""
    glob_max_results: PositiveInteger = 100
    """Most paths on one ``glob`` page."""
    grep_max_matches: PositiveInteger = 100
    """Most matches on one ``grep`` page."""
    search_time_limit: PositiveInteger = 30
    """Seconds a ``glob`` or ``grep`` walk may run before it reports what it found."""
    editor_max_characters: PositiveInteger = 16000
    """Most characters of file text one text editor or memory ``view`` shows (Anthropic's
    ``max_characters``); a longer view is cut with a note on how to see the rest."""

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            _refuse(exc)

    @classmethod
    def model_validate(cls, obj: Any, **options: Any) -> ToolFsConfig:
        """A config from a mapping whose keys are snake_case names or camelCase aliases."""
        if options:
            raise TypeError(f"ToolFsConfig.model_validate takes no options, got {sorted(options)}")
        # Through the constructor: pydantic would wrap the error it raises in a ValidationError.
        return cls(**obj)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        # Assignment fails as it did when the config was a frozen dataclass.
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    @classmethod
    def aliases(cls) -> dict[str, str]:
        """The camelCase alias of each key, in declaration order."""
        return {name: to_camel(name) for name in cls.model_fields}


def _refuse(exc: ValidationError) -> NoReturn:
    """The first error of ``exc`` as :class:`ToolFsConfigError`, with the messages of the docs."""
    error = exc.errors()[0]
    key = str(error["loc"][0])
    if error["type"] == "extra_forbidden":
        raise ToolFsConfigError('unknown config key "{key}"', key) from None
    alias = to_camel(key)  # the key as given is the name or the alias: both give the alias
    if error["type"] == "less_than_equal":
        template = f"tool-fs: {{key}} must be at most {LARGEST}"
        raise ToolFsConfigError(template, key, alias=alias) from None
    raise ToolFsConfigError("tool-fs: {key} must be a positive integer", key, alias=alias) from None
