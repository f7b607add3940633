"""The event catalogue: the ``fs_*`` hooks a tool host calls around the seam.

Plugins (such as ``dsh_fs_policy.FsPolicy``) are plain objects whose methods
carry ``@hookimpl``. Backends never see hooks: the host asks the intent hooks
before a mutation and announces observations after a success (and after a
read that found nothing: an observation of absence, ``version=None``).

``actor`` is opaque to ``dsh_fs``: it is the host's per-call execution object
(``dsh_tool_fs`` passes one with ``session`` and ``tool`` attributes).
"""

from __future__ import annotations

from typing import Any

import pluggy

from ._types import EditGuard, EntryGuard, FsTarget, MoveGuard, WriteIntent

PROJECT_NAME = "dsh_fs"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class FsHookSpecs:
    """The five ``fs_*`` events.

    Intent hooks are ``firstresult``: the first plugin to return something
    other than ``None`` decides, and no later plugin is asked. pluggy asks
    ``tryfirst`` implementations before the others (then the most recently
    registered first); ``FsPolicy`` marks its intent hooks ``tryfirst`` so it
    is the first decider wherever it is registered.
    """

    @hookspec(firstresult=True)
    def fs_write_intent(self, target: FsTarget, actor: Any) -> WriteIntent | None:
        """Decide the precondition of the next ``write_text`` of ``target``.

        Called before every ``write`` tool call, with no ``stat`` beforehand.
        Return ``CreateIfAbsent()``, ``ReplaceIfVersion(v)``, ``None`` (no
        opinion; if nobody has one the write is unconditional), or an
        awaitable of one of those (the host awaits it). Raise
        :class:`~dsh_fs.FsError` to refuse the write.
        """

    @hookspec(firstresult=True)
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> EditGuard | None:
        """Decide the guard of the next ``edit_text`` of ``target``.

        Return ``EditGuard(v)``, ``None`` (unguarded), or an awaitable of one
        of those; raise :class:`~dsh_fs.FsError` (for example
        ``FS_NOT_OBSERVED``) to refuse the edit.
        """

    @hookspec(firstresult=True)
    def fs_delete_intent(self, target: FsTarget, actor: Any) -> EntryGuard | None:
        """Decide the guard of the next ``delete`` of ``target``.

        Return ``AtVersion(v)`` (the entry must still be at ``v``),
        ``NotAFile()`` (unobserved: a directory or link may go, a regular
        file must be read first), ``None`` (unguarded), or an awaitable of one
        of those; raise :class:`~dsh_fs.FsError` to refuse the removal.
        """

    @hookspec(firstresult=True)
    def fs_move_intent(
        self, source: FsTarget, destination: FsTarget, actor: Any
    ) -> MoveGuard | None:
        """Decide the guards of the next ``move`` of ``source`` to ``destination``.

        Return a ``MoveGuard(source=…, destination=…)`` of entry guards (see
        :meth:`fs_delete_intent`; ``None`` on either side is unguarded),
        ``None`` (both unguarded), or an awaitable of one of those; raise
        :class:`~dsh_fs.FsError` to refuse the move.
        """

    @hookspec
    def fs_observed(self, target: FsTarget, version: str | None, actor: Any) -> None:
        """``actor`` has just seen ``target`` at ``version``, or seen it absent.

        Emitted after every successful read, write or edit (never after a
        list: seeing a name is not reading a file), with the version read or
        written. ``version`` is ``None`` after a read that found nothing there
        (``cannot read "<p>": not found``) and after a ``delete`` or a
        ``move`` for each path that no longer exists: the actor now knows the
        file does not exist, so a plugin may let it create the file
        (``FsPolicy`` answers ``CreateIfAbsent()`` next, which never
        overwrites a file that has appeared since). A moved entry's new path
        is observed at the version the move reports.
        Implementations must be synchronous, side-effect-only recorders; an
        exception from one fails the tool call that emitted it.
        """


def make_plugin_manager() -> pluggy.PluginManager:
    """A fresh plugin manager with the ``fs_*`` specs registered."""
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(FsHookSpecs)
    return pm
