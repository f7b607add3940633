"""Finding backends and plugins by entry-point name."""

from __future__ import annotations

import json
import sys
import types
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from dsh_fs import (
    BACKENDS_GROUP,
    PLUGINS_GROUP,
    EntryPointNotFound,
    FileSystem,
    WorkspaceOptionsUnsupported,
    installed_names,
    load_backend,
    load_backend_factory,
    load_plugin,
    make_plugin_manager,
)
from dsh_fs import entry_points as entry_points_module
from dsh_fs.workspace import Workspace


def fake_entry_points(monkeypatch: pytest.MonkeyPatch, *points: EntryPoint) -> None:
    """Replace the installed entry points by ``points`` for one test."""

    def select(*, group: str) -> list[EntryPoint]:
        return [ep for ep in points if ep.group == group]

    monkeypatch.setattr(entry_points_module, "entry_points", select)


def test_group_names_are_the_documented_ones() -> None:
    assert (BACKENDS_GROUP, PLUGINS_GROUP) == ("dsh_fs.backends", "dsh_fs.plugins")


def test_the_memory_backend_is_installed_by_name() -> None:
    assert "memory" in installed_names(BACKENDS_GROUP)


def test_load_backend_builds_the_memory_backend_with_its_cwd() -> None:
    fs = load_backend("memory", cwd="/work")
    assert isinstance(fs, FileSystem)
    assert type(fs).__name__ == "MemoryFileSystem"


@pytest.mark.anyio
async def test_loaded_backend_resolves_against_the_given_cwd() -> None:
    fs = load_backend("memory", cwd="/work")
    target = await fs.resolve("a.txt")
    assert target.display_path == "/work/a.txt"


def test_unknown_backend_lists_the_installed_names() -> None:
    installed = ", ".join(installed_names(BACKENDS_GROUP))
    with pytest.raises(EntryPointNotFound) as caught:
        load_backend("no-such-backend")
    assert str(caught.value) == (
        f'no dsh_fs.backends entry point named "no-such-backend" (installed: {installed})'
    )
    assert isinstance(caught.value, LookupError)


def test_unknown_plugin_lists_the_installed_names() -> None:
    installed = ", ".join(installed_names(PLUGINS_GROUP)) or "none"
    with pytest.raises(EntryPointNotFound) as caught:
        load_plugin("no-such-plugin")
    assert str(caught.value) == (
        f'no dsh_fs.plugins entry point named "no-such-plugin" (installed: {installed})'
    )


def test_unknown_name_in_an_empty_group_says_none(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch)
    with pytest.raises(EntryPointNotFound) as caught:
        load_backend_factory("memory")
    assert str(caught.value) == 'no dsh_fs.backends entry point named "memory" (installed: none)'


def test_installed_names_are_sorted_and_unique(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(
        monkeypatch,
        EntryPoint("zeta", "json:loads", BACKENDS_GROUP),
        EntryPoint("alpha", "json:loads", BACKENDS_GROUP),
        EntryPoint("alpha", "json:dumps", BACKENDS_GROUP),
        EntryPoint("other", "json:loads", PLUGINS_GROUP),
    )
    assert installed_names(BACKENDS_GROUP) == ["alpha", "zeta"]
    assert installed_names(PLUGINS_GROUP) == ["other"]


def test_backend_factory_that_builds_no_filesystem_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_entry_points(monkeypatch, EntryPoint("bogus", "builtins:dict", BACKENDS_GROUP))
    with pytest.raises(TypeError, match='entry point "bogus" did not build a FileSystem'):
        load_backend("bogus")


def workspace_of(fs: FileSystem) -> Workspace:
    workspace = fs.workspace
    assert isinstance(workspace, Workspace)
    return workspace


def test_load_backend_passes_the_workspace_options() -> None:
    fs = load_backend(
        "memory", cwd="/w", roots=["/w", "/lib"], read_only_roots=["/docs"], read_only=True
    )
    assert workspace_of(fs) == Workspace(("/w", "/lib"), ("/docs",), read_only=True)
    assert workspace_of(load_backend("memory", cwd="/w")) == Workspace(("/w",))
    assert workspace_of(load_backend("memory", cwd="/w", roots=None)) == Workspace(None)


def test_a_backend_without_workspace_options_is_refused_before_it_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[object] = []
    module = types.ModuleType("old_backend")

    def factory(cwd: str | None = None) -> object:  # a backend from before SPEC 3.3
        built.append(cwd)
        return object()

    module.Factory = factory  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "old_backend", module)
    fake_entry_points(monkeypatch, EntryPoint("old", "old_backend:Factory", BACKENDS_GROUP))
    with pytest.raises(WorkspaceOptionsUnsupported) as caught:
        load_backend("old", cwd="/w")
    assert str(caught.value) == (
        'dsh_fs.backends entry point "old" does not take the workspace options '
        "(roots, read_only_roots, read_only)"
    )
    assert isinstance(caught.value, TypeError)
    assert built == []


def test_plugin_class_is_instantiated_and_other_objects_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_entry_points(
        monkeypatch,
        EntryPoint("a-class", "collections:OrderedDict", PLUGINS_GROUP),
        EntryPoint("a-module", "json", PLUGINS_GROUP),
        EntryPoint("a-function", "json:loads", PLUGINS_GROUP),
    )
    assert type(load_plugin("a-class")).__name__ == "OrderedDict"
    assert load_plugin("a-module") is json
    assert load_plugin("a-function") is json.loads


def test_sibling_distributions_declare_their_entry_points() -> None:
    assert {"local", "memory"} <= set(installed_names(BACKENDS_GROUP))
    assert "policy" in installed_names(PLUGINS_GROUP)


def test_local_backend_loads_by_name(tmp_path: Path) -> None:
    fs = load_backend("local", cwd=str(tmp_path))
    assert isinstance(fs, FileSystem)
    assert type(fs).__name__ == "LocalFileSystem"


def test_policy_plugin_loads_by_name_and_registers() -> None:
    plugin = load_plugin("policy")
    pm = make_plugin_manager()
    pm.register(plugin)
    impls = {impl.plugin_name for impl in pm.hook.fs_edit_intent.get_hookimpls()}
    assert impls == {pm.get_name(plugin)}
