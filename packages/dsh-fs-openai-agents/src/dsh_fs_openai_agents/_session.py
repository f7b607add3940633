"""Which ``Session`` a call runs in: one per conversation, or one the run's context names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents import RunContextWrapper
from dsh_tool_fs import Session

__all__ = ["SessionChoice", "session_of"]

SessionChoice = Session | Callable[[RunContextWrapper[Any]], Session]
"""A :class:`~dsh_tool_fs.Session`, or a function that picks one from the run's
context (``lambda ctx: ctx.context.session``)."""


def session_of(choice: SessionChoice, ctx: RunContextWrapper[Any] | None) -> Session:
    """The session of a call made in the run context ``ctx``."""
    if isinstance(choice, Session):
        return choice
    if ctx is None:
        raise ValueError("a session chosen from the run context needs the run context")
    return choice(ctx)
