"""The search contract on the local and the memory backend: same tree, same texts."""

from __future__ import annotations

import pytest
from dsh_tool_fs_search.testing import SearchContract, SearchScratch


class TestSearchOnLocal(SearchContract):
    @pytest.fixture
    def scratch(self, local_scratch: SearchScratch) -> SearchScratch:
        return local_scratch


class TestSearchOnMemory(SearchContract):
    supports_hard_links = False

    @pytest.fixture
    def scratch(self, memory_scratch: SearchScratch) -> SearchScratch:
        return memory_scratch
