"""``Integer``: a JSON integer as the tools and their config read one."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BeforeValidator, Strict

__all__ = ["Integer"]


def _integral_float_as_int(value: Any) -> Any:
    # Strict integers refuse 2.0, lax ones also take "2" and True: JSON's 2.0 is the integer 2.
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


Integer = Annotated[int, BeforeValidator(_integral_float_as_int), Strict()]
"""A JSON integer: never a boolean, a string, NaN or an infinity; ``2.0`` is the integer ``2``."""
