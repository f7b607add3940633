"""Contract of ``move``: one rename, parents made, a destination replaced only when allowed.

Every refusal leaves both paths exactly as they were and nothing beside them.
"""

from __future__ import annotations

import pytest

from .._errors import FsErrorCode
from .._filesystem import FileSystem
from .._types import AtVersion, EntryGuard, FsMoveOutcome, MoveGuard, NotAFile
from ._base import ContractBase, requires
from ._delete_contract import build_tree, tree_is_whole
from ._expect import expect_fs_error, under, version_of
from ._scratch import Scratch

STALE = FsErrorCode.FS_STALE_VERSION


async def move(
    fs: FileSystem,
    source: str,
    destination: str,
    *,
    replace: bool = False,
    expected: MoveGuard | None = None,
) -> FsMoveOutcome:
    """``fs.move`` of two paths relative to the backend's cwd."""
    return await fs.move(
        await fs.resolve(source), await fs.resolve(destination), replace=replace, expected=expected
    )


class MoveContract(ContractBase):
    """``move``: files, directories and links; replacing, type clashes, guards, the root."""

    # -- what moves ---------------------------------------------------------------

    @pytest.mark.anyio
    async def test_move_renames_a_file_and_reports_the_version_stat_gives(
        self, scratch: Scratch
    ) -> None:
        scratch.put("a.txt", b"content\r\n")
        outcome = await move(scratch.fs, "a.txt", "b.txt")
        assert (outcome.type, outcome.replaced) == ("file", False)
        assert outcome.version == await version_of(scratch.fs, "b.txt")
        assert scratch.names() == ["b.txt"]
        assert scratch.get("b.txt") == b"content\r\n"

    @pytest.mark.anyio
    async def test_move_creates_the_missing_parents_of_the_destination(
        self, scratch: Scratch
    ) -> None:
        scratch.put("a.txt", b"a\n")
        await move(scratch.fs, "a.txt", "x/y/z/a.txt")
        assert scratch.get("x/y/z/a.txt") == b"a\n"
        assert (scratch.names(), scratch.names("x/y")) == (["x"], ["z"])

    @pytest.mark.anyio
    async def test_move_takes_a_whole_directory_along(self, scratch: Scratch) -> None:
        build_tree(scratch)
        outcome = await move(scratch.fs, "t", "moved/t")
        assert (outcome.type, outcome.replaced) == ("directory", False)
        assert scratch.names() == ["moved"]
        assert scratch.names("moved/t") == ["a.txt", "empty", "sub"]
        assert scratch.get("moved/t/sub/b.txt") == b"b\n"

    @pytest.mark.anyio
    @requires("supports_symlinks")
    async def test_move_of_a_link_moves_the_link_not_its_target(self, scratch: Scratch) -> None:
        build_tree(scratch)
        scratch.symlink("link", "t")
        outcome = await move(scratch.fs, "link", "renamed")
        assert (outcome.type, outcome.replaced) == ("symlink", False)
        link = await scratch.fs.lstat("renamed")
        assert link is not None and link.type == "symlink"
        assert scratch.names() == ["renamed", "t"]
        tree_is_whole(scratch)

    @pytest.mark.anyio
    @requires("supports_special_files")
    async def test_move_of_an_entry_that_is_neither_file_nor_directory(
        self, scratch: Scratch
    ) -> None:
        scratch.make_other("fifo")
        outcome = await move(scratch.fs, "fifo", "d/fifo")
        assert outcome.type == "other"
        assert (scratch.names(), scratch.names("d")) == (["d"], ["fifo"])

    @pytest.mark.anyio
    async def test_move_of_a_missing_source_is_not_found(self, scratch: Scratch) -> None:
        await expect_fs_error(
            move(scratch.fs, "missing.txt", "b.txt"),
            FsErrorCode.FS_NOT_FOUND,
            f'cannot move "{under(scratch.root, "missing.txt")}": not found',
        )
        assert scratch.names() == []

    # -- an existing destination --------------------------------------------------

    @pytest.mark.anyio
    @pytest.mark.parametrize("what", ["file", "directory"])
    async def test_an_existing_destination_is_not_replaced_unless_allowed(
        self, scratch: Scratch, what: str
    ) -> None:
        scratch.put("a.txt", b"a\n")
        if what == "file":
            scratch.put("b", b"b\n")
        else:
            scratch.mkdir("b")
        await expect_fs_error(
            move(scratch.fs, "a.txt", "b"),
            FsErrorCode.FS_ALREADY_EXISTS,
            f'cannot move to "{under(scratch.root, "b")}": already exists',
        )
        assert scratch.get("a.txt") == b"a\n"
        assert scratch.get("b") == (b"b\n" if what == "file" else None)
        assert scratch.names() == ["a.txt", "b"]

    @pytest.mark.anyio
    async def test_replace_puts_the_source_in_place_of_a_file(self, scratch: Scratch) -> None:
        scratch.put("a.txt", b"new\n")
        scratch.put("b.txt", b"old, and longer\n")
        outcome = await move(scratch.fs, "a.txt", "b.txt", replace=True)
        assert (outcome.type, outcome.replaced) == ("file", True)
        assert outcome.version == await version_of(scratch.fs, "b.txt")
        assert scratch.names() == ["b.txt"]
        assert scratch.get("b.txt") == b"new\n"

    @pytest.mark.anyio
    async def test_replace_puts_a_directory_in_place_of_an_empty_one(
        self, scratch: Scratch
    ) -> None:
        build_tree(scratch)
        scratch.mkdir("dest")
        outcome = await move(scratch.fs, "t", "dest", replace=True)
        assert (outcome.type, outcome.replaced) == ("directory", True)
        assert scratch.names() == ["dest"]
        assert scratch.names("dest") == ["a.txt", "empty", "sub"]

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("source", "destination", "code", "reason"),
        [
            ("t", "full", FsErrorCode.FS_NOT_EMPTY, "directory not empty"),
            ("t", "f.txt", FsErrorCode.FS_NOT_DIRECTORY, "not a directory"),
            ("f.txt", "full", FsErrorCode.FS_NOT_REGULAR_FILE, "not a regular file"),
            ("f.txt", "t/empty", FsErrorCode.FS_NOT_REGULAR_FILE, "not a regular file"),
        ],
        ids=["dir-onto-full-dir", "dir-onto-file", "file-onto-full-dir", "file-onto-empty-dir"],
    )
    async def test_a_type_clash_with_the_destination_is_refused_and_changes_nothing(
        self, scratch: Scratch, source: str, destination: str, code: FsErrorCode, reason: str
    ) -> None:
        build_tree(scratch)
        scratch.put("f.txt", b"f\n")
        scratch.put("full/x.txt", b"x\n")
        await expect_fs_error(
            move(scratch.fs, source, destination, replace=True),
            code,
            f'cannot move to "{under(scratch.root, destination)}": {reason}',
        )
        tree_is_whole(scratch)
        assert scratch.names() == ["f.txt", "full", "t"]
        assert (scratch.get("f.txt"), scratch.names("full")) == (b"f\n", ["x.txt"])

    @pytest.mark.anyio
    @pytest.mark.parametrize("into", ["t/sub/t", "t/new/t"])
    async def test_a_directory_cannot_move_into_itself(self, scratch: Scratch, into: str) -> None:
        build_tree(scratch)
        await expect_fs_error(
            move(scratch.fs, "t", into),
            FsErrorCode.FS_IO_ERROR,
            f'cannot move "{under(scratch.root, "t")}": a directory cannot move into itself',
        )
        tree_is_whole(scratch)
        assert scratch.names() == ["t"]

    @pytest.mark.anyio
    async def test_a_destination_below_a_file_is_refused(self, scratch: Scratch) -> None:
        scratch.put("a.txt", b"a\n")
        scratch.mkdir("d")
        destination = await scratch.fs.resolve("d/a.txt")
        scratch.remove("d")
        scratch.put("d", b"now a file\n")
        reason = "a parent path segment is not a directory"
        await expect_fs_error(
            scratch.fs.move(await scratch.fs.resolve("a.txt"), destination),
            FsErrorCode.FS_NOT_FOUND,
            f'cannot move to "{destination.display_path}": {reason}',
        )
        assert (scratch.get("a.txt"), scratch.get("d")) == (b"a\n", b"now a file\n")

    # -- guards ---------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_a_source_at_its_version_and_a_destination_at_its_version_move(
        self, scratch: Scratch
    ) -> None:
        scratch.put("a.txt", b"a\n")
        scratch.put("b.txt", b"bb\n")
        guard = MoveGuard(
            AtVersion(await version_of(scratch.fs, "a.txt")),
            AtVersion(await version_of(scratch.fs, "b.txt")),
        )
        outcome = await move(scratch.fs, "a.txt", "b.txt", replace=True, expected=guard)
        assert outcome.replaced
        assert scratch.names() == ["b.txt"]
        assert scratch.get("b.txt") == b"a\n"

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("change", "reason"),
        [("rewrite", "file changed since it was read"), ("remove", "file no longer exists")],
    )
    async def test_a_source_changed_since_it_was_read_is_stale(
        self, scratch: Scratch, change: str, reason: str
    ) -> None:
        scratch.put("a.txt", b"seen\n")
        guard = MoveGuard(source=AtVersion(await version_of(scratch.fs, "a.txt")))
        if change == "rewrite":
            scratch.put("a.txt", b"changed behind the model's back\n")
        else:
            scratch.remove("a.txt")
        await expect_fs_error(
            move(scratch.fs, "a.txt", "b.txt", expected=guard),
            STALE,
            f'cannot move "{under(scratch.root, "a.txt")}": {reason}',
        )
        assert scratch.names() == (["a.txt"] if change == "rewrite" else [])

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("change", "reason"),
        [("rewrite", "file changed since it was read"), ("remove", "file no longer exists")],
    )
    async def test_a_destination_changed_since_it_was_read_is_stale(
        self, scratch: Scratch, change: str, reason: str
    ) -> None:
        scratch.put("a.txt", b"a\n")
        scratch.put("b.txt", b"seen\n")
        guard = MoveGuard(destination=AtVersion(await version_of(scratch.fs, "b.txt")))
        if change == "rewrite":
            scratch.put("b.txt", b"changed behind the model's back\n")
        else:
            scratch.remove("b.txt")
        await expect_fs_error(
            move(scratch.fs, "a.txt", "b.txt", replace=True, expected=guard),
            STALE,
            f'cannot move to "{under(scratch.root, "b.txt")}": {reason}',
        )
        assert scratch.get("a.txt") == b"a\n"
        if change == "rewrite":
            assert scratch.get("b.txt") == b"changed behind the model's back\n"

    @pytest.mark.anyio
    async def test_an_unread_source_file_is_refused(self, scratch: Scratch) -> None:
        scratch.put("a.txt", b"never read\n")
        await expect_fs_error(
            move(scratch.fs, "a.txt", "b.txt", expected=MoveGuard(source=NotAFile())),
            FsErrorCode.FS_NOT_OBSERVED,
            f'cannot move "{under(scratch.root, "a.txt")}" without reading it first',
        )
        assert scratch.names() == ["a.txt"]

    @pytest.mark.anyio
    async def test_an_unread_destination_file_is_never_overwritten(self, scratch: Scratch) -> None:
        scratch.put("a.txt", b"a\n")
        scratch.put("b.txt", b"never read\n")
        guard = MoveGuard(destination=NotAFile())
        await expect_fs_error(
            move(scratch.fs, "a.txt", "b.txt", replace=True, expected=guard),
            FsErrorCode.FS_NOT_OBSERVED,
            f'cannot overwrite existing "{under(scratch.root, "b.txt")}" without reading it first',
        )
        assert (scratch.get("a.txt"), scratch.get("b.txt")) == (b"a\n", b"never read\n")

    @pytest.mark.anyio
    @pytest.mark.parametrize("destination", ["absent", "empty directory"])
    async def test_unread_directories_and_absent_destinations_need_no_reading(
        self, scratch: Scratch, destination: str
    ) -> None:
        build_tree(scratch)
        if destination == "empty directory":
            scratch.mkdir("dest")
        unread: EntryGuard = NotAFile()
        await move(scratch.fs, "t", "dest", replace=True, expected=MoveGuard(unread, unread))
        assert scratch.names() == ["dest"]
        assert scratch.names("dest") == ["a.txt", "empty", "sub"]

    # -- the workspace root -----------------------------------------------------------

    @pytest.mark.anyio
    async def test_the_workspace_root_is_never_moved_or_replaced(self, scratch: Scratch) -> None:
        scratch.put("d/f.txt", b"f\n")
        root = scratch.root
        await expect_fs_error(
            move(scratch.fs, ".", "d/root"),
            FsErrorCode.FS_PERMISSION_DENIED,
            f'cannot move "{root}": it is a workspace root',
        )
        await expect_fs_error(
            move(scratch.fs, "d", root, replace=True),
            FsErrorCode.FS_PERMISSION_DENIED,
            f'cannot move to "{root}": it is a workspace root',
        )
        assert (scratch.names(), scratch.names("d")) == (["d"], ["f.txt"])
