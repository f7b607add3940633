"""The LangChain tests' fixtures (the asyncio loop, a project, its stack); they share their
scripted chat model through :mod:`dsh_fs_langchain_doubles`.

pytest runs with ``--import-mode=importlib``, which puts no test directory on
``sys.path``: this conftest puts this one there, so the tests can import it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from dsh_tool_fs import ToolFs

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from dsh_fs_langchain_doubles import CRLF_BEFORE  # noqa: E402 (the path above first)


@pytest.fixture
def anyio_backend() -> str:
    """LangGraph's agent loop runs on asyncio only."""
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
