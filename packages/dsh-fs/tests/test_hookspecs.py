"""The ``fs_*`` event catalogue: pluggy specs, first-result and ordering semantics."""

from __future__ import annotations

import inspect
from typing import Any

import pluggy
import pytest
from dsh_fs import (
    CreateIfAbsent,
    EditGuard,
    FsError,
    FsErrorCode,
    FsHookSpecs,
    FsTarget,
    ReplaceIfVersion,
    WriteIntent,
    hookimpl,
    hookspec,
    make_plugin_manager,
)
from dsh_fs import hookspecs as hookspecs_module

TARGET = FsTarget("/w/a.txt", "/w/a.txt")


class Abstains:
    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> WriteIntent | None:
        return None

    @hookimpl
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> EditGuard | None:
        return None


class Creates:
    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> WriteIntent | None:
        return CreateIfAbsent()


class Replaces:
    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> WriteIntent | None:
        return ReplaceIfVersion("v1")


class ReplacesFirst:
    @hookimpl(tryfirst=True)
    def fs_write_intent(self, target: FsTarget, actor: Any) -> WriteIntent | None:
        return ReplaceIfVersion("first")


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[FsTarget, str, Any]] = []

    @hookimpl
    def fs_observed(self, target: FsTarget, version: str, actor: Any) -> None:
        self.seen.append((target, version, actor))


def test_plugin_manager_uses_the_dsh_fs_project_and_knows_the_three_hooks() -> None:
    pm = make_plugin_manager()
    assert pm.project_name == hookspecs_module.PROJECT_NAME == "dsh_fs"
    for name in ("fs_write_intent", "fs_edit_intent", "fs_observed"):
        assert getattr(pm.hook, name).spec is not None


def test_markers_belong_to_the_dsh_fs_project() -> None:
    assert isinstance(hookspec, pluggy.HookspecMarker)
    assert isinstance(hookimpl, pluggy.HookimplMarker)
    assert hookspec.project_name == hookimpl.project_name == "dsh_fs"


def test_every_hook_spec_documents_itself() -> None:
    hooks = [name for name in vars(FsHookSpecs) if name.startswith("fs_")]
    assert sorted(hooks) == [
        "fs_delete_intent",
        "fs_edit_intent",
        "fs_move_intent",
        "fs_observed",
        "fs_write_intent",
    ]
    for name in hooks:
        assert (inspect.getdoc(getattr(FsHookSpecs, name)) or "").strip(), name


def test_intent_hooks_are_firstresult_and_observed_is_broadcast() -> None:
    pm = make_plugin_manager()
    firstresult = {}
    names = ("fs_write_intent", "fs_edit_intent", "fs_delete_intent", "fs_move_intent")
    for name in (*names, "fs_observed"):
        spec = getattr(pm.hook, name).spec
        assert spec is not None
        firstresult[name] = spec.opts["firstresult"]
    assert firstresult == {**dict.fromkeys(names, True), "fs_observed": False}


def test_write_intent_without_plugins_is_none() -> None:
    pm = make_plugin_manager()
    assert pm.hook.fs_write_intent(target=TARGET, actor=None) is None
    assert pm.hook.fs_edit_intent(target=TARGET, actor=None) is None


def test_write_intent_skips_abstaining_plugins() -> None:
    pm = make_plugin_manager()
    pm.register(Creates())
    pm.register(Abstains())  # registered last, asked first, abstains
    assert pm.hook.fs_write_intent(target=TARGET, actor=None) == CreateIfAbsent()


def test_first_non_none_result_wins_and_later_plugins_are_not_asked() -> None:
    pm = make_plugin_manager()
    pm.register(Creates())
    pm.register(Replaces())  # most recently registered: asked first
    assert pm.hook.fs_write_intent(target=TARGET, actor=None) == ReplaceIfVersion("v1")


def test_tryfirst_plugin_decides_wherever_it_is_registered() -> None:
    pm = make_plugin_manager()
    pm.register(ReplacesFirst())
    pm.register(Creates())
    pm.register(Replaces())
    assert pm.hook.fs_write_intent(target=TARGET, actor=None) == ReplaceIfVersion("first")


def test_intent_hook_may_refuse_by_raising_fs_error() -> None:
    class Refuses:
        @hookimpl
        def fs_edit_intent(self, target: FsTarget, actor: Any) -> EditGuard | None:
            raise FsError(
                f'edit requires reading "{target.display_path}" first',
                FsErrorCode.FS_NOT_OBSERVED,
            )

    pm = make_plugin_manager()
    pm.register(Refuses())
    with pytest.raises(FsError) as caught:
        pm.hook.fs_edit_intent(target=TARGET, actor=None)
    assert caught.value.code is FsErrorCode.FS_NOT_OBSERVED


def test_observed_reaches_every_plugin() -> None:
    pm = make_plugin_manager()
    first, second = Recorder(), Recorder()
    pm.register(first)
    pm.register(second)
    actor = object()
    assert pm.hook.fs_observed(target=TARGET, version="v7", actor=actor) == []
    assert first.seen == second.seen == [(TARGET, "v7", actor)]


def test_implementation_with_an_unknown_argument_is_refused() -> None:
    class Wrong:
        @hookimpl
        def fs_observed(self, target: FsTarget, when: str) -> None:
            pass

    pm = make_plugin_manager()
    with pytest.raises(pluggy.PluginValidationError):
        pm.register(Wrong())


def test_unregistering_a_plugin_stops_its_answers() -> None:
    pm = make_plugin_manager()
    plugin = Creates()
    pm.register(plugin)
    pm.unregister(plugin)
    assert pm.hook.fs_write_intent(target=TARGET, actor=None) is None
