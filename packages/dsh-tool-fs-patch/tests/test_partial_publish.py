"""A batch that fails while publishing (a full disk) says which files changed."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from dsh_fs import FsBatchError, FsChange, FsDeleteOutcome, FsErrorCode, FsWriteOutcome
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import TOOLS, ToolFs
from dsh_tool_fs_patch import APPLY_PATCH

pytestmark = pytest.mark.anyio


class DiskFullAfterOne(MemoryFileSystem):
    """Publishes the first change of a batch, then fails as a full disk would."""

    async def apply_changes(
        self, changes: Sequence[FsChange]
    ) -> list[FsWriteOutcome | FsDeleteOutcome]:
        await super().apply_changes(changes[:1])
        path = changes[1].target.display_path
        message = f'cannot write "{path}": No space left on device'
        raise FsBatchError(message, FsErrorCode.FS_IO_ERROR, applied=1)


async def test_a_failure_while_publishing_names_what_changed_and_what_did_not() -> None:
    fs = DiskFullAfterOne(cwd="/w", files={"/w/b.txt": "b\n"})
    toolfs = ToolFs(fs, tools=(*TOOLS, APPLY_PATCH))
    text = "\n".join(
        [
            "*** Begin Patch",
            "*** Add File: a.txt",
            "+a",
            "*** Update File: b.txt",
            "-b",
            "+B",
            "*** End Patch",
        ]
    )
    result = await toolfs.execute("apply_patch", {"input": text})
    assert result.text == (
        'Error: cannot write "/w/b.txt": No space left on device (the patch was applied in '
        'part: changed "a.txt"; not changed "b.txt")'
    )
    assert result.error is not None and result.error.code == "FS_IO_ERROR"
    assert fs.get_bytes("/w/a.txt") == b"a\n"
    assert fs.get_bytes("/w/b.txt") == b"b\n"
