"""The conformance kit run against the in-memory backend, exactly as a stranger would."""

from __future__ import annotations

import pytest
from dsh_fs.testing import FileSystemContract, Scratch
from dsh_fs_memory import MemoryScratch


class TestMemoryBackendConformance(FileSystemContract):
    supports_hard_links = False  # no inode sharing in the memory tree

    @pytest.fixture
    def scratch(self) -> Scratch:
        return MemoryScratch()
