"""The search contract over SFTP: ``glob`` and ``grep`` through the seam on a workspace
served by a real sshd give the texts they give on the local and memory backends (the
search tree's modification times are whole seconds, which SFTP carries)."""

from __future__ import annotations

import pytest
from dsh_fs_sftp.testing import SftpScratch, sftp_scratch, sshd
from dsh_tool_fs_search.testing import SearchContract, SearchScratch

__all__ = ["sftp_scratch", "sshd"]


class TestSearchOnSftp(SearchContract):
    @pytest.fixture
    def scratch(self, sftp_scratch: SftpScratch) -> SearchScratch:
        return sftp_scratch
