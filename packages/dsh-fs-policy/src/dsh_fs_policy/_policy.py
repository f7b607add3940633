"""``FsPolicy``: observed-state, read-before-edit, version-guarded write/edit."""

from __future__ import annotations

import weakref
from typing import Any

from dsh_fs import (
    AtVersion,
    CreateIfAbsent,
    EditGuard,
    EntryGuard,
    FsError,
    FsErrorCode,
    FsTarget,
    MoveGuard,
    NotAFile,
    ReplaceIfVersion,
    WriteIntent,
    hookimpl,
)
from dsh_fs.preconditions import not_found


class FsPolicy:
    """The default observation policy of the dsh filesystem tools.

    * **Owner.** ``owner = getattr(actor, "session", None)``. State is a weak
      map owner → {``target_key`` → version, or ``None`` for "seen absent"}:
      a discarded session frees its state. No owner → nothing is recorded
      and nothing is authorized.
    * ``fs_write_intent``: nothing recorded, or the target seen absent →
      ``CreateIfAbsent()`` (a create succeeds, an overwrite fails
      ``FS_NOT_OBSERVED`` in the backend); a recorded version ``v`` →
      ``ReplaceIfVersion(v)``.
    * ``fs_edit_intent``: a recorded ``v`` → ``EditGuard(v)``; seen absent →
      ``FsError`` ``FS_NOT_FOUND`` ``cannot edit "<display_path>": not found``;
      nothing recorded → ``FsError`` ``FS_NOT_OBSERVED``
      ``edit requires reading "<display_path>" first``.
    * ``fs_delete_intent``: a recorded ``v`` → ``AtVersion(v)``; otherwise
      ``NotAFile()``: a directory or a link may go unread, but a regular file
      fails ``FS_NOT_OBSERVED`` in the backend (``cannot delete "<p>"
      without reading it first``).
    * ``fs_move_intent``: the same entry guard for the source and for the
      destination (``MoveGuard``): a file moved, or overwritten by a move,
      must have been read at its current version.
    * ``fs_observed``: records ``version`` synchronously; a ``version`` of
      ``None`` (a read that found nothing) records that the target was seen
      absent, so the model can recreate a file deleted behind its back.

    The intent hooks are ``tryfirst``: the policy is the first decider
    wherever it is registered, so a later decider is never reached.

    State lives in the instance: a new instance starts empty, and
    :meth:`reset` (which ``dsh_tool_fs.ToolFs.unregister`` calls) drops it.
    The map is a :class:`weakref.WeakKeyDictionary`, so owners are told apart
    as dictionary keys are (by identity, unless the session class defines
    equality). An owner that cannot be weakly referenced or hashed (a plain
    string, a list) is treated like no owner: nothing is recorded for it and
    nothing is authorized — a state that could never be freed, or that two
    equal strings would silently share, is not an observation to rely on.
    """

    def __init__(self) -> None:
        self._observed: weakref.WeakKeyDictionary[Any, dict[str, str | None]] = (
            weakref.WeakKeyDictionary()
        )

    def reset(self) -> None:
        """Forget every observation of every owner."""
        self._observed = weakref.WeakKeyDictionary()

    def owner_count(self) -> int:
        """How many owners currently hold observations (for tests and diagnostics)."""
        return len(self._observed)

    def _records(self, owner: Any) -> dict[str, str | None]:
        try:
            return self._observed.get(owner) or {}
        except TypeError:  # None, or an owner that cannot be weakly referenced or hashed
            return {}

    def observed_version(self, owner: Any, target_key: str) -> str | None:
        """The version ``owner`` last observed of ``target_key``: ``None`` if it has
        observed none, or last saw the target absent (see :meth:`observed_absent`)."""
        return self._records(owner).get(target_key)

    def observed_absent(self, owner: Any, target_key: str) -> bool:
        """Whether ``owner``'s last observation of ``target_key`` found nothing there."""
        records = self._records(owner)
        return target_key in records and records[target_key] is None

    @hookimpl(tryfirst=True)
    def fs_write_intent(self, target: FsTarget, actor: Any) -> WriteIntent:
        version = self.observed_version(getattr(actor, "session", None), target.target_key)
        return CreateIfAbsent() if version is None else ReplaceIfVersion(version)

    @hookimpl(tryfirst=True)
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> EditGuard:
        records = self._records(getattr(actor, "session", None))
        if target.target_key not in records:
            raise FsError(
                f'edit requires reading "{target.display_path}" first',
                FsErrorCode.FS_NOT_OBSERVED,
            )
        version = records[target.target_key]
        if version is None:
            raise not_found("edit", target.display_path)
        return EditGuard(version)

    def _entry_guard(self, target: FsTarget, actor: Any) -> EntryGuard:
        version = self.observed_version(getattr(actor, "session", None), target.target_key)
        return NotAFile() if version is None else AtVersion(version)

    @hookimpl(tryfirst=True)
    def fs_delete_intent(self, target: FsTarget, actor: Any) -> EntryGuard:
        return self._entry_guard(target, actor)

    @hookimpl(tryfirst=True)
    def fs_move_intent(self, source: FsTarget, destination: FsTarget, actor: Any) -> MoveGuard:
        return MoveGuard(self._entry_guard(source, actor), self._entry_guard(destination, actor))

    @hookimpl
    def fs_observed(self, target: FsTarget, version: str | None, actor: Any) -> None:
        owner = getattr(actor, "session", None)
        try:
            versions = self._observed.setdefault(owner, {})
        except TypeError:  # None, or an owner that cannot be weakly referenced or hashed
            return
        versions[target.target_key] = version
