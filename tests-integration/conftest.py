"""Shared fixtures of the integration suite: the stack assembled from entry points.

``stack`` is what a user gets from ``ToolFs.from_entry_points(backend="local",
plugins=("policy",))``, over a fresh ``tmp_path`` workspace.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_tool_fs import ToolFs


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory (its realpath, so display paths are predictable)."""
    root = tmp_path / "ws"
    root.mkdir()
    return Path(str(root.resolve()))


@pytest.fixture
def stack(workspace: Path) -> ToolFs:
    """The local backend with the policy plugin, resolving relative paths in ``workspace``."""
    return ToolFs.from_entry_points(backend="local", plugins=("policy",), cwd=str(workspace))


@pytest.fixture
def bare_stack(workspace: Path) -> ToolFs:
    """The local backend without any plugin: writes and edits are unconditional."""
    return ToolFs.from_entry_points(backend="local", plugins=(), cwd=str(workspace))
