"""The distributions' declared metadata is publishable and says what the stack is.

Fast, static checks over ``packages/*/pyproject.toml`` and the installed
metadata of the workspace. Building the artifacts, installing each layer
alone from them in a fresh environment and running the conformance kit
against the installed backends is the release check's job
(``scripts/release_check.py``), not this suite's.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]

# distribution -> (import name, the siblings it may depend on, the entry points it declares)
STACK: dict[str, tuple[str, set[str], set[tuple[str, str]]]] = {
    "dsh-fs": ("dsh_fs", set(), set()),
    "dsh-fs-local": ("dsh_fs_local", {"dsh-fs"}, {("dsh_fs.backends", "local")}),
    "dsh-fs-memory": ("dsh_fs_memory", {"dsh-fs"}, {("dsh_fs.backends", "memory")}),
    "dsh-fs-policy": ("dsh_fs_policy", {"dsh-fs"}, {("dsh_fs.plugins", "policy")}),
    "dsh-fs-sftp": ("dsh_fs_sftp", {"dsh-fs"}, {("dsh_fs.backends", "sftp")}),
    "dsh-tool-fs": ("dsh_tool_fs", {"dsh-fs"}, {("console_scripts", "dsh-fs")}),
    "dsh-tool-fs-search": (
        "dsh_tool_fs_search",
        {"dsh-fs", "dsh-tool-fs"},
        {("dsh_tool_fs.tools", "glob"), ("dsh_tool_fs.tools", "grep")},
    ),
    "dsh-tool-fs-editor": (
        "dsh_tool_fs_editor",
        {"dsh-fs", "dsh-tool-fs"},
        {("dsh_tool_fs.tools", "str_replace_based_edit_tool"), ("dsh_tool_fs.tools", "memory")},
    ),
}


def project(dist: str) -> dict[str, Any]:
    with (REPO / "packages" / dist / "pyproject.toml").open("rb") as f:
        table: dict[str, Any] = tomllib.load(f)["project"]
    return table


def all_requirements(table: dict[str, Any]) -> list[Requirement]:
    raw = list(table.get("dependencies", []))
    for extra in table.get("optional-dependencies", {}).values():
        raw += extra
    return [Requirement(r) for r in raw]


def compatible_range(version: str) -> str:
    """``>=X.Y,<X.(Y+1)``: the range a sibling at ``version`` is named with (0.x minor series)."""
    major, minor = Version(version).release[:2]
    return f">={major}.{minor},<{major}.{minor + 1}"


@pytest.mark.parametrize("dist", sorted(STACK))
def test_siblings_are_named_by_project_and_compatible_range(dist: str) -> None:
    _module, allowed, _entry = STACK[dist]
    requirements = all_requirements(project(dist))
    assert [r for r in requirements if r.url is not None] == [], "direct references"
    ours = {r.name: r for r in requirements if r.name in STACK}
    assert set(ours) <= allowed, f"{dist} may depend on {allowed or 'nothing'} of ours"
    for name, requirement in ours.items():
        wanted = compatible_range(md.version(name))
        assert requirement.specifier == SpecifierSet(wanted), (
            f"{dist} names {name} with {requirement.specifier}, expected {wanted}"
        )


@pytest.mark.parametrize("dist", sorted(STACK))
def test_the_version_has_one_source(dist: str) -> None:
    module, _allowed, _entry = STACK[dist]
    table = project(dist)
    assert "version" not in table
    assert table["dynamic"] == ["version"]
    assert md.version(dist) == importlib.import_module(module).__version__


def test_all_share_one_release_version() -> None:
    assert len({md.version(dist) for dist in STACK}) == 1


@pytest.mark.parametrize("dist", sorted(STACK))
def test_installed_metadata_carries_no_direct_reference(dist: str) -> None:
    requires = md.requires(dist) or []
    assert [r for r in requires if " @ " in r] == []


@pytest.mark.parametrize("dist", sorted(STACK))
def test_each_distribution_declares_its_entry_point(dist: str) -> None:
    _module, _allowed, entries = STACK[dist]
    declared = {(ep.group, ep.name) for ep in md.distribution(dist).entry_points}
    assert declared == entries


@pytest.mark.parametrize("dist", sorted(STACK))
def test_the_repository_and_each_distribution_carry_the_same_license(dist: str) -> None:
    root = (REPO / "LICENSE").read_text()
    assert root.startswith("MIT License\n")
    assert (REPO / "packages" / dist / "LICENSE").read_text() == root


def test_the_readme_links_every_changelog() -> None:
    readme = (REPO / "README.md").read_text()
    for changelog in sorted(REPO.glob("packages/*/CHANGELOG.md")):
        link = f"]({changelog.relative_to(REPO)})"
        assert link in readme, f"README.md does not link {changelog.relative_to(REPO)}"
