"""SftpFileSystem runs the whole conformance kit against a real sshd, on both loops."""

from __future__ import annotations

import pytest
from dsh_fs.testing import FileSystemContract, Scratch
from dsh_fs_sftp.testing import SftpScratch


class TestSftpConformance(FileSystemContract):
    @pytest.fixture
    def scratch(self, sftp_scratch: SftpScratch) -> Scratch:
        return sftp_scratch
