"""``FsPolicy``: observed-state, read-before-edit, version-guarded write/edit."""

from __future__ import annotations

import weakref
from typing import Any

from dsh_fs import (
    CreateIfAbsent,
    EditGuard,
    FsError,
    FsErrorCode,
    FsTarget,
    ReplaceIfVersion,
    WriteIntent,
    hookimpl,
)


class FsPolicy:
    """The default observation policy of the dsh filesystem tools.

    * **Owner.** ``owner = getattr(actor, "session", None)``. State is a weak
      map owner → {``target_key`` → version}: a discarded session frees its
      state. No owner → nothing is recorded and nothing is authorized.
    * ``fs_write_intent``: nothing recorded → ``CreateIfAbsent()`` (a create
      succeeds, an overwrite fails ``FS_NOT_OBSERVED`` in the backend); a
      recorded version ``v`` → ``ReplaceIfVersion(v)``.
    * ``fs_edit_intent``: a recorded ``v`` → ``EditGuard(v)``; otherwise
      ``FsError`` ``FS_NOT_OBSERVED`` ``edit requires reading "<display_path>" first``.
    * ``fs_observed``: records ``version`` synchronously.

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
        self._observed: weakref.WeakKeyDictionary[Any, dict[str, str]] = (
            weakref.WeakKeyDictionary()
        )

    def reset(self) -> None:
        """Forget every observation of every owner."""
        self._observed = weakref.WeakKeyDictionary()

    def owner_count(self) -> int:
        """How many owners currently hold observations (for tests and diagnostics)."""
        return len(self._observed)

    def observed_version(self, owner: Any, target_key: str) -> str | None:
        """The version ``owner`` last observed of ``target_key``, if any."""
        try:
            versions = self._observed.get(owner)
        except TypeError:  # None, or an owner that cannot be weakly referenced or hashed
            return None
        return None if versions is None else versions.get(target_key)

    @hookimpl(tryfirst=True)
    def fs_write_intent(self, target: FsTarget, actor: Any) -> WriteIntent:
        version = self.observed_version(getattr(actor, "session", None), target.target_key)
        return CreateIfAbsent() if version is None else ReplaceIfVersion(version)

    @hookimpl(tryfirst=True)
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> EditGuard:
        version = self.observed_version(getattr(actor, "session", None), target.target_key)
        if version is None:
            raise FsError(
                f'edit requires reading "{target.display_path}" first',
                FsErrorCode.FS_NOT_OBSERVED,
            )
        return EditGuard(version)

    @hookimpl
    def fs_observed(self, target: FsTarget, version: str, actor: Any) -> None:
        owner = getattr(actor, "session", None)
        try:
            versions = self._observed.setdefault(owner, {})
        except TypeError:  # None, or an owner that cannot be weakly referenced or hashed
            return
        versions[target.target_key] = version
