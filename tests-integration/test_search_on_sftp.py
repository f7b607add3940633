"""The search contract over SFTP: ``glob`` and ``grep`` through the seam on a workspace
served by a real sshd give the texts they give on the local and memory backends."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from dsh_fs_sftp.testing import SftpScratch, SshServer, sshd
from dsh_tool_fs_search.testing import SearchContract, SearchScratch

__all__ = ["sshd"]


class SftpSearchScratch(SftpScratch):
    """:class:`dsh_fs_sftp.testing.SftpScratch` plus modification times, set on the server's
    side (the search tree's times are whole seconds, which SFTP carries)."""

    def set_modified(self, path: str, modified_ns: int) -> None:
        os.utime(self.path(path), ns=(modified_ns, modified_ns), follow_symlinks=False)


@pytest.fixture
async def sftp_search_scratch(sshd: SshServer, tmp_path: Path) -> AsyncIterator[SftpSearchScratch]:
    scratch = SftpSearchScratch(sshd, tmp_path)
    try:
        yield scratch
    finally:
        await scratch.aclose()


class TestSearchOnSftp(SearchContract):
    @pytest.fixture
    def scratch(self, sftp_search_scratch: SftpSearchScratch) -> SearchScratch:
        return sftp_search_scratch
