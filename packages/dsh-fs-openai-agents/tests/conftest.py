"""The fixtures the Agents SDK tests share: the asyncio loop, a project, its stack."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_tool_fs import ToolFs

CRLF_BEFORE = b"DEBUG = True\r\nPORT = 8000\r\n"


@pytest.fixture
def anyio_backend() -> str:
    """The Agents SDK's run loop runs on asyncio only."""
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project holding ``app.py`` with Windows line endings."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_bytes(CRLF_BEFORE)
    return root


@pytest.fixture
def toolfs(project: Path) -> ToolFs:
    """The stack a user builds: the local backend contained to the project, the policy,
    every installed tool."""
    return ToolFs.from_entry_points(backend="local", cwd=str(project))
