"""Contract of ``delete``: what goes, what stays, the guards and their messages.

Every test checks what is left with the scratch's own eyes (``names``,
``get``): the entry is gone or whole, its neighbours and a link's target are
untouched, and no temporary is left beside it.
"""

from __future__ import annotations

import pytest

from .._errors import FsErrorCode
from .._types import AtVersion, EntryGuard, FsDeleteOutcome, NotAFile
from ._base import ContractBase, requires
from ._expect import expect_fs_error, under, version_of
from ._scratch import Scratch

STALE = FsErrorCode.FS_STALE_VERSION


def build_tree(scratch: Scratch) -> None:
    """``t/``: a tree of files, a nested directory and an empty one::

    t/
    ├── a.txt
    ├── sub/
    │   └── b.txt
    └── empty/
    """
    scratch.put("t/a.txt", b"a\n")
    scratch.put("t/sub/b.txt", b"b\n")
    scratch.mkdir("t/empty")


def tree_is_whole(scratch: Scratch) -> None:
    """``t/`` is exactly as :func:`build_tree` made it."""
    assert (scratch.get("t/a.txt"), scratch.get("t/sub/b.txt")) == (b"a\n", b"b\n")
    assert scratch.names("t") == ["a.txt", "empty", "sub"]
    assert scratch.names("t/sub") == ["b.txt"]
    assert scratch.names("t/empty") == []


class DeleteContract(ContractBase):
    """``delete``: a file, an empty directory, a tree only when asked, a link as itself."""

    # -- what goes --------------------------------------------------------------

    @pytest.mark.anyio
    async def test_delete_removes_a_file_and_reports_its_type(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"bye\n")
        scratch.put("keep.txt", b"stay\n")
        target = await scratch.fs.resolve("f.txt")
        assert await scratch.fs.delete(target) == FsDeleteOutcome("file")
        assert await scratch.fs.stat(target) is None
        assert scratch.names() == ["keep.txt"]
        assert scratch.get("keep.txt") == b"stay\n"

    @pytest.mark.anyio
    async def test_delete_removes_an_empty_directory(self, scratch: Scratch) -> None:
        scratch.mkdir("d/empty")
        outcome = await scratch.fs.delete(await scratch.fs.resolve("d/empty"))
        assert outcome == FsDeleteOutcome("directory")
        assert scratch.names("d") == []

    @pytest.mark.anyio
    async def test_delete_of_a_non_empty_directory_fails_and_leaves_it_whole(
        self, scratch: Scratch
    ) -> None:
        build_tree(scratch)
        await expect_fs_error(
            scratch.fs.delete(await scratch.fs.resolve("t")),
            FsErrorCode.FS_NOT_EMPTY,
            f'cannot delete "{under(scratch.root, "t")}": directory not empty',
        )
        tree_is_whole(scratch)
        assert scratch.names() == ["t"]

    @pytest.mark.anyio
    async def test_recursive_delete_removes_the_whole_tree_and_leaves_nothing_beside_it(
        self, scratch: Scratch
    ) -> None:
        build_tree(scratch)
        scratch.put("keep.txt", b"stay\n")
        target = await scratch.fs.resolve("t")
        outcome = await scratch.fs.delete(target, recursive=True)
        assert outcome == FsDeleteOutcome("directory")
        assert await scratch.fs.lstat("t") is None
        assert scratch.names() == ["keep.txt"], "the tree's temporary was left behind"

    @pytest.mark.anyio
    async def test_recursive_delete_of_a_file_removes_the_file(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"x\n")
        outcome = await scratch.fs.delete(await scratch.fs.resolve("f.txt"), recursive=True)
        assert outcome == FsDeleteOutcome("file")
        assert scratch.names() == []

    @pytest.mark.anyio
    async def test_delete_of_a_missing_entry_is_not_found(self, scratch: Scratch) -> None:
        target = await scratch.fs.resolve("d/missing.txt")
        for recursive in (False, True):
            await expect_fs_error(
                scratch.fs.delete(target, recursive=recursive),
                FsErrorCode.FS_NOT_FOUND,
                f'cannot delete "{target.display_path}": not found',
            )
        assert scratch.names() == []

    @pytest.mark.anyio
    async def test_delete_below_a_parent_that_became_a_file_is_not_found(
        self, scratch: Scratch
    ) -> None:
        scratch.mkdir("d")
        target = await scratch.fs.resolve("d/f.txt")
        scratch.remove("d")
        scratch.put("d", b"now a file\n")
        await expect_fs_error(
            scratch.fs.delete(target),
            FsErrorCode.FS_NOT_FOUND,
            f'cannot delete "{target.display_path}": not found',
        )
        assert scratch.get("d") == b"now a file\n"

    @pytest.mark.anyio
    @requires("supports_special_files")
    async def test_delete_removes_an_entry_that_is_neither_file_nor_directory(
        self, scratch: Scratch
    ) -> None:
        scratch.make_other("fifo")
        outcome = await scratch.fs.delete(await scratch.fs.resolve("fifo"))
        assert outcome == FsDeleteOutcome("other")
        assert scratch.names() == []

    # -- symlinks: the link itself, never its target ------------------------------

    @pytest.mark.anyio
    @requires("supports_symlinks")
    @pytest.mark.parametrize("recursive", [False, True])
    async def test_delete_of_a_link_to_a_file_removes_the_link_not_the_file(
        self, scratch: Scratch, recursive: bool
    ) -> None:
        scratch.put("f.txt", b"target\n")
        scratch.symlink("link", "f.txt")
        outcome = await scratch.fs.delete(await scratch.fs.resolve("link"), recursive=recursive)
        assert outcome == FsDeleteOutcome("symlink")
        assert scratch.names() == ["f.txt"]
        assert scratch.get("f.txt") == b"target\n"

    @pytest.mark.anyio
    @requires("supports_symlinks")
    @pytest.mark.parametrize("recursive", [False, True])
    async def test_delete_of_a_link_to_a_directory_removes_the_link_not_the_tree(
        self, scratch: Scratch, recursive: bool
    ) -> None:
        build_tree(scratch)
        scratch.symlink("link", "t")
        outcome = await scratch.fs.delete(await scratch.fs.resolve("link"), recursive=recursive)
        assert outcome == FsDeleteOutcome("symlink")
        assert scratch.names() == ["t"]
        tree_is_whole(scratch)

    @pytest.mark.anyio
    @requires("supports_symlinks")
    async def test_delete_of_a_dangling_link_removes_it(self, scratch: Scratch) -> None:
        scratch.symlink("dangling", "missing.txt")
        target = await scratch.fs.resolve("dangling")
        assert await scratch.fs.delete(target) == FsDeleteOutcome("symlink")
        assert scratch.names() == []

    @pytest.mark.anyio
    @requires("supports_symlinks")
    async def test_a_tree_holding_a_link_out_of_it_loses_the_link_not_its_target(
        self, scratch: Scratch
    ) -> None:
        scratch.put("kept/f.txt", b"kept\n")
        scratch.put("t/a.txt", b"a\n")
        scratch.symlink("t/to_kept", "../kept")
        scratch.symlink("t/to_file", "../kept/f.txt")
        await scratch.fs.delete(await scratch.fs.resolve("t"), recursive=True)
        assert scratch.names() == ["kept"]
        assert scratch.get("kept/f.txt") == b"kept\n"

    # -- guards -------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_delete_at_the_current_version_removes_the_file(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"seen\n")
        version = await version_of(scratch.fs, "f.txt")
        target = await scratch.fs.resolve("f.txt")
        assert await scratch.fs.delete(target, expected=AtVersion(version)) == FsDeleteOutcome(
            "file"
        )
        assert scratch.names() == []

    @pytest.mark.anyio
    async def test_delete_of_a_file_changed_since_it_was_read_is_stale(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"seen\n")
        version = await version_of(scratch.fs, "f.txt")
        scratch.put("f.txt", b"changed behind the model's back\n")
        target = await scratch.fs.resolve("f.txt")
        await expect_fs_error(
            scratch.fs.delete(target, expected=AtVersion(version)),
            STALE,
            f'cannot delete "{target.display_path}": file changed since it was read',
        )
        assert scratch.get("f.txt") == b"changed behind the model's back\n"
        assert scratch.names() == ["f.txt"]

    @pytest.mark.anyio
    async def test_delete_of_a_file_gone_since_it_was_read_is_stale(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"seen\n")
        version = await version_of(scratch.fs, "f.txt")
        scratch.remove("f.txt")
        target = await scratch.fs.resolve("f.txt")
        await expect_fs_error(
            scratch.fs.delete(target, expected=AtVersion(version)),
            STALE,
            f'cannot delete "{target.display_path}": file no longer exists',
        )

    @pytest.mark.anyio
    async def test_delete_of_an_unread_file_is_refused_and_keeps_it(self, scratch: Scratch) -> None:
        scratch.put("f.txt", b"never read\n")
        target = await scratch.fs.resolve("f.txt")
        for recursive in (False, True):
            await expect_fs_error(
                scratch.fs.delete(target, recursive=recursive, expected=NotAFile()),
                FsErrorCode.FS_NOT_OBSERVED,
                f'cannot delete "{target.display_path}" without reading it first',
            )
        assert scratch.get("f.txt") == b"never read\n"

    @pytest.mark.anyio
    async def test_an_unread_missing_entry_is_not_found(self, scratch: Scratch) -> None:
        target = await scratch.fs.resolve("missing.txt")
        await expect_fs_error(
            scratch.fs.delete(target, expected=NotAFile()),
            FsErrorCode.FS_NOT_FOUND,
            f'cannot delete "{target.display_path}": not found',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        "kind", ["empty directory", "other", "link to a file", "dangling link"]
    )
    async def test_an_entry_that_is_not_a_file_goes_unread(
        self, scratch: Scratch, kind: str
    ) -> None:
        scratch.put("f.txt", b"kept\n")
        if kind == "empty directory":
            scratch.mkdir("entry")
        elif kind == "other":
            self.require("supports_special_files")
            scratch.make_other("entry")
        else:
            self.require("supports_symlinks")
            scratch.symlink("entry", "f.txt" if kind == "link to a file" else "missing")
        await scratch.fs.delete(await scratch.fs.resolve("entry"), expected=NotAFile())
        assert scratch.names() == ["f.txt"]
        assert scratch.get("f.txt") == b"kept\n"

    @pytest.mark.anyio
    async def test_a_tree_at_its_version_goes_with_recursive(self, scratch: Scratch) -> None:
        build_tree(scratch)
        version = await version_of(scratch.fs, "t")
        guard: EntryGuard = AtVersion(version)
        await scratch.fs.delete(await scratch.fs.resolve("t"), recursive=True, expected=guard)
        assert scratch.names() == []

    @pytest.mark.anyio
    @requires("supports_symlinks")
    async def test_a_link_is_guarded_by_the_version_of_what_it_leads_to(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"target\n")
        scratch.symlink("link", "f.txt")
        version = await version_of(scratch.fs, "f.txt")
        target = await scratch.fs.resolve("link")
        scratch.put("f.txt", b"the target changed\n")
        await expect_fs_error(
            scratch.fs.delete(target, expected=AtVersion(version)),
            STALE,
            f'cannot delete "{target.display_path}": file changed since it was read',
        )
        fresh = await version_of(scratch.fs, "f.txt")
        await scratch.fs.delete(target, expected=AtVersion(fresh))
        assert scratch.names() == ["f.txt"]
        assert scratch.get("f.txt") == b"the target changed\n"

    # -- the workspace root ---------------------------------------------------------

    @pytest.mark.anyio
    @pytest.mark.parametrize("recursive", [False, True])
    async def test_the_workspace_root_is_never_deleted(
        self, scratch: Scratch, recursive: bool
    ) -> None:
        scratch.put("f.txt", b"kept\n")
        for path in (".", scratch.root):
            target = await scratch.fs.resolve(path)
            await expect_fs_error(
                scratch.fs.delete(target, recursive=recursive),
                FsErrorCode.FS_PERMISSION_DENIED,
                f'cannot delete "{target.display_path}": it is a workspace root',
            )
        assert scratch.names() == ["f.txt"]
