"""``ToolFsConfig``: the listing and reading limits of the four tools."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel


class ToolFsConfig(BaseModel):
    """Limits of the tools, immutable once built.

    Keys are snake_case; the camelCase aliases of the source documents
    (``listMaxEntries`` …) are accepted too. Every value must be a positive
    integer — a boolean is not, an integral float such as ``2.0`` is accepted
    as ``2`` — else construction fails with a ``ValueError`` (pydantic's
    ``ValidationError``) whose message contains
    ``tool-fs: <alias> must be a positive integer``. Unknown keys are refused.
    """

    model_config = ConfigDict(
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
    )

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

    @field_validator("*", mode="before")
    @classmethod
    def _positive_integer(cls, value: Any, info: ValidationInfo) -> int:
        alias = to_camel(info.field_name or "")
        if isinstance(value, bool):
            raise ValueError(f"tool-fs: {alias} must be a positive integer")
        if isinstance(value, float):
            if not math.isfinite(value) or not value.is_integer():
                raise ValueError(f"tool-fs: {alias} must be a positive integer")
            value = int(value)
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"tool-fs: {alias} must be a positive integer")
        return value
