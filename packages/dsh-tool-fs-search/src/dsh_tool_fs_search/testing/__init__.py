"""The search contract: ``glob`` and ``grep`` over a backend, as pytest tests.

A backend runs it like the conformance kit of :mod:`dsh_fs.testing`, with
one fixture::

    from dsh_tool_fs_search.testing import SearchContract

    class TestSearchOnMyBackend(SearchContract):
        @pytest.fixture
        def scratch(self, tmp_path): return MySearchScratch(tmp_path)

``scratch`` returns a :class:`SearchScratch`: the kit's
:class:`dsh_fs.testing.Scratch` plus :meth:`SearchScratch.set_modified`, so
that the tree's modification times (the search order) are the same on every
backend. A scratch over :class:`dsh_fs.testing.DiskTree` (``LocalScratch``,
``SftpScratch``) and ``MemoryScratch`` have it already. The expected texts
are exact and the same for every backend: two backends that pass give the
same results on the same tree. The capability flags of
:class:`dsh_fs.testing.ContractBase` apply (a backend without symlinks or
special files builds the tree without them). Install the ``testing`` extra
(pytest).
"""

import pytest

# The contract's own asserts get pytest's detailed messages (registered before the import).
pytest.register_assert_rewrite("dsh_tool_fs_search.testing._contract")
pytest.register_assert_rewrite("dsh_tool_fs_search.testing._tree")

from ._contract import SearchContract  # noqa: E402
from ._tree import SEARCH_TREE_FILES, SearchScratch, build_search_tree  # noqa: E402

__all__ = ["SEARCH_TREE_FILES", "SearchContract", "SearchScratch", "build_search_tree"]
