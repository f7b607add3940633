"""``FsPolicy``: observed-state, read-before-edit, version-guarded write/edit."""

from __future__ import annotations

import weakref
from collections.abc import Callable
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


def _forget(table: dict[int, Any], key: int) -> Callable[[weakref.ref[Any]], None]:
    """The callback that drops ``key`` from ``table`` once its owner is collected."""

    def forget(_: weakref.ref[Any]) -> None:
        table.pop(key, None)

    return forget


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
    Owners that cannot be weakly referenced (a plain string, say) are held in
    a strong map instead, cleared the same way.

    Weakly referenceable owners are told apart by identity: their map is
    keyed by ``id(owner)`` and holds one weak reference per owner, made when
    the owner first records something, whose callback removes the entry when
    the owner is collected (before its id can be reused). Looking an owner
    up therefore creates nothing, unlike a ``WeakKeyDictionary`` lookup,
    which makes a fresh weak reference on every call.
    """

    def __init__(self) -> None:
        self._weak: dict[int, tuple[weakref.ref[Any], dict[str, str]]] = {}
        self._strong: dict[Any, dict[str, str]] = {}

    def reset(self) -> None:
        """Forget every observation of every owner."""
        self._weak = {}
        self._strong = {}

    def owner_count(self) -> int:
        """How many owners currently hold observations (for tests and diagnostics)."""
        return len(self._weak) + len(self._strong)

    def observed_version(self, owner: Any, target_key: str) -> str | None:
        """The version ``owner`` last observed of ``target_key``, if any."""
        if owner is None:
            return None
        versions = self._versions(owner, create=False)
        return None if versions is None else versions.get(target_key)

    def _versions(self, owner: Any, *, create: bool) -> dict[str, str] | None:
        entry = self._weak.get(id(owner))
        if entry is not None:
            return entry[1]
        try:
            ref = weakref.ref(owner, _forget(self._weak, id(owner)))
        except TypeError:  # not weakly referenceable: keep it strongly
            versions = self._strong.get(owner)
            if versions is None and create:
                versions = self._strong[owner] = {}
            return versions
        if not create:
            return None
        versions = {}
        self._weak[id(owner)] = (ref, versions)
        return versions

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
        if owner is None:
            return
        entry = self._weak.get(id(owner))  # the usual case, inline: a session seen before
        if entry is not None:
            entry[1][target.target_key] = version
            return
        versions = self._versions(owner, create=True)
        assert versions is not None
        versions[target.target_key] = version
