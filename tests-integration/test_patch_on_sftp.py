"""apply_patch over SFTP: a workspace served by a real sshd is patched as a local one is —
bytes kept, all or nothing, the policy's read first."""

from __future__ import annotations

import pytest
from dsh_fs_policy import FsPolicy
from dsh_fs_sftp.testing import SftpScratch, sftp_scratch, sshd
from dsh_tool_fs import TOOLS, Session, ToolFs
from dsh_tool_fs_patch import APPLY_PATCH

__all__ = ["sftp_scratch", "sshd"]

pytestmark = pytest.mark.anyio


async def test_a_patch_over_sftp_keeps_bytes_and_is_all_or_nothing(
    sftp_scratch: SftpScratch,
) -> None:
    scratch = sftp_scratch
    scratch.put("w.txt", b"\xef\xbb\xbfalpha\r\nbeta\r\ngamma")
    scratch.put("b.txt", b"b\n")
    toolfs = ToolFs(scratch.fs, plugins=[FsPolicy()], tools=(*TOOLS, APPLY_PATCH))
    session = Session(scratch.root)
    for name in ("w.txt", "b.txt"):
        read = await toolfs.execute("read", {"file_path": name}, session=session)
        assert not read.is_error, read.text

    failing = "\n".join(
        [
            "*** Begin Patch",
            "*** Update File: w.txt",
            "-beta",
            "+BETA",
            "*** Update File: b.txt",
            "-missing",
            "+x",
            "*** End Patch",
        ]
    )
    result = await toolfs.execute("apply_patch", {"input": failing}, session=session)
    assert result.text == "Error: Failed to find expected lines in b.txt:\\nmissing"
    assert scratch.get("w.txt") == b"\xef\xbb\xbfalpha\r\nbeta\r\ngamma"

    working = "\n".join(
        [
            "*** Begin Patch",
            "*** Update File: w.txt",
            "-beta",
            "+BETA",
            "+beta2",
            "*** Add File: new/n.txt",
            "+n",
            "*** End Patch",
        ]
    )
    result = await toolfs.execute("apply_patch", {"input": working}, session=session)
    assert result.text == "Success. Updated the following files:\nA new/n.txt\nM w.txt"
    assert scratch.get("w.txt") == b"\xef\xbb\xbfalpha\r\nBETA\r\nbeta2\r\ngamma"
    assert scratch.get("new/n.txt") == b"n\n"
