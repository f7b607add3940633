"""Tools from other distributions: the ``dsh_tool_fs.tools`` entry points and a chosen subset."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from dsh_tool_fs import TOOLS, ToolFs, UnknownToolError, installed_tools
from dsh_tool_fs.tools import LIST

BUILT_IN = ["list", "read", "write", "edit"]

# A third-party tool distribution: one module with a ToolSpec, one entry point.
MODULE = """
from dsh_tool_fs.tools import LIST
from dataclasses import replace

PEEK = replace(LIST, name="peek", title="Peek")
"""


@pytest.fixture
def third_party(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``acme-tools`` installed as importlib.metadata finds it, declaring the tool ``peek``."""
    (tmp_path / "acme_tools.py").write_text(MODULE)
    info = tmp_path / "acme_tools-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-tools\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh_tool_fs.tools]\npeek = acme_tools:PEEK\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "acme_tools", raising=False)
    return info


def names(tools: object) -> list[str]:
    return [spec.name for spec in tools]  # type: ignore[attr-defined]


def test_installed_tools_are_the_built_in_ones_then_every_entry_point_by_name(
    third_party: Path,
) -> None:
    # dsh-tool-fs-search, -patch and -editor are installed in the workspace: their tools
    # are entry points too.
    installed = [*BUILT_IN, "apply_patch", "glob", "grep", "memory", "peek"]
    installed.append("str_replace_based_edit_tool")
    assert names(installed_tools()) == installed
    toolfs = ToolFs.from_entry_points(backend="memory", plugins=(), cwd="/w")
    assert [d.name for d in toolfs.definitions] == installed


def test_a_chosen_subset_keeps_the_tools_order(third_party: Path) -> None:
    assert names(installed_tools(["peek", "read"])) == ["read", "peek"]
    toolfs = ToolFs.from_entry_points(backend="memory", plugins=(), tools=["peek", "list"])
    assert [d.name for d in toolfs.definitions] == ["list", "peek"]
    assert [s.name for s in toolfs.prompt_sections] == ["tool:list", "tool:list"]


def test_an_unknown_tool_name_is_refused_naming_the_installed_ones() -> None:
    with pytest.raises(UnknownToolError) as caught:
        ToolFs.from_entry_points(backend="memory", plugins=(), tools=["read", "bash"])
    assert str(caught.value) == (
        'unknown tool "bash" (installed: list, read, write, edit, apply_patch, glob, grep, '
        "memory, str_replace_based_edit_tool)"
    )


def test_an_entry_point_that_is_not_a_tool_spec_of_its_name_is_refused(third_party: Path) -> None:
    (third_party / "entry_points.txt").write_text("[dsh_tool_fs.tools]\nother = acme_tools:PEEK\n")
    with pytest.raises(TypeError, match='"other" is not a ToolSpec of that name'):
        installed_tools()
    (third_party / "entry_points.txt").write_text("[dsh_tool_fs.tools]\nread = acme_tools:PEEK\n")
    with pytest.raises(ValueError, match='"read": that tool already exists'):
        installed_tools()


def test_tool_fs_alone_keeps_the_four_built_in_tools() -> None:
    from dsh_fs_memory import MemoryFileSystem

    assert TOOLS[0] is LIST
    assert [d.name for d in ToolFs(MemoryFileSystem()).definitions] == BUILT_IN
