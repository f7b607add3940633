"""MemoryFileSystem runs the whole conformance kit, exactly as a third-party backend would."""

from __future__ import annotations

import pytest
from dsh_fs.testing import FileSystemContract, Scratch
from dsh_fs_memory import MemoryScratch


class TestMemoryConformance(FileSystemContract):
    @pytest.fixture
    def scratch(self) -> Scratch:
        return MemoryScratch()
