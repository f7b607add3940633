"""Contract of ``list_dir`` (and ``list_dirs``, many at once) and its messages."""

from __future__ import annotations

import pytest

from .._errors import FsError, FsErrorCode
from .._types import EntryType, FsDirEntry
from ._base import ContractBase, requires
from ._expect import expect_fs_error, under
from ._scratch import Scratch


def build_listing_tree(
    scratch: Scratch, *, symlinks: bool = True, special_files: bool = True
) -> dict[str, EntryType]:
    """Build the tree the listing tests look at; return each child's expected type.

    root/
    └── d/
        ├── f.txt            (file, 5 bytes)
        ├── .hidden          (file, 0 bytes)
        ├── sub/             (directory, holds x.txt)
        ├── thing            (other; only with special_files)
        ├── to_sub -> sub    (symlink to a directory: "directory"; only with symlinks)
        ├── to_f -> f.txt    (symlink to a file: "file"; only with symlinks)
        └── broken -> nope   (broken symlink: "other"; only with symlinks)
    """
    scratch.put("d/f.txt", b"hello")
    scratch.put("d/.hidden", b"")
    scratch.put("d/sub/x.txt", b"x")
    types: dict[str, EntryType] = {"f.txt": "file", ".hidden": "file", "sub": "directory"}
    if special_files:
        scratch.make_other("d/thing")
        types["thing"] = "other"
    if symlinks:
        scratch.symlink("d/to_sub", "sub")
        scratch.symlink("d/to_f", "f.txt")
        scratch.symlink("d/broken", "nope")
        types.update({"to_sub": "directory", "to_f": "file", "broken": "other"})
    return types


class ListContract(ContractBase):
    """Listing: names, types through symlinks, targets, ``stat=True`` data, errors."""

    def listing_tree(self, scratch: Scratch) -> dict[str, EntryType]:
        """:func:`build_listing_tree` with what this backend supports."""
        return build_listing_tree(
            scratch, symlinks=self.supports_symlinks, special_files=self.supports_special_files
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("with_stat", [False, True])
    async def test_list_dir_gives_every_direct_child_with_its_type(
        self, scratch: Scratch, with_stat: bool
    ) -> None:
        types = self.listing_tree(scratch)
        entries = await scratch.fs.list_dir(await scratch.fs.resolve("d"), stat=with_stat)
        assert sorted(e.name for e in entries) == sorted(types)
        assert {e.name: e.type for e in entries} == types

    @pytest.mark.anyio
    @pytest.mark.parametrize("with_stat", [False, True])
    async def test_list_dir_marks_exactly_the_symlinks(
        self, scratch: Scratch, with_stat: bool
    ) -> None:
        """``FsDirEntry.symlink`` (what a tree walk relies on not to follow links)."""
        self.listing_tree(scratch)
        entries = await scratch.fs.list_dir(await scratch.fs.resolve("d"), stat=with_stat)
        links = {"to_sub", "to_f", "broken"} if self.supports_symlinks else set()
        assert {e.name for e in entries if e.symlink} == links

    @pytest.mark.anyio
    async def test_list_dir_entry_targets_are_the_parent_joined_with_the_name(
        self, scratch: Scratch
    ) -> None:
        self.listing_tree(scratch)
        parent = await scratch.fs.resolve("d")
        for entry in await scratch.fs.list_dir(parent):
            assert entry.target.display_path == under(parent.display_path, entry.name)
            assert entry.target == await scratch.fs.resolve(f"d/{entry.name}"), entry.name

    @pytest.mark.anyio
    async def test_list_dir_with_stat_gives_versions_and_file_sizes(self, scratch: Scratch) -> None:
        types = self.listing_tree(scratch)
        fs = scratch.fs
        entries = {e.name: e for e in await fs.list_dir(await fs.resolve("d"), stat=True)}
        for name in types.keys() - {"broken"}:
            info = await fs.stat(entries[name].target)
            assert info is not None, name
            assert entries[name].version == info.version, name
        assert entries["f.txt"].size == 5
        assert entries[".hidden"].size == 0
        if self.supports_symlinks:
            assert entries["to_f"].size == 5
            assert (entries["broken"].version, entries["broken"].size) == (None, None)

    @pytest.mark.anyio
    async def test_list_dir_of_an_empty_directory_is_empty(self, scratch: Scratch) -> None:
        scratch.mkdir("empty")
        assert await scratch.fs.list_dir(await scratch.fs.resolve("empty")) == []

    @pytest.mark.anyio
    async def test_list_dir_of_the_root_lists_its_children(self, scratch: Scratch) -> None:
        scratch.put("a.txt", b"a")
        scratch.mkdir("b")
        entries = await scratch.fs.list_dir(await scratch.fs.resolve("."))
        assert {e.name: e.type for e in entries} == {"a.txt": "file", "b": "directory"}

    @requires("supports_symlinks")
    @pytest.mark.anyio
    async def test_list_dir_follows_a_symlink_to_a_directory(self, scratch: Scratch) -> None:
        """
        root/
        ├── real/
        │   └── f.txt
        └── alias -> real
        """
        scratch.put("real/f.txt", b"f")
        scratch.symlink("alias", "real")
        alias = await scratch.fs.resolve("alias")
        (entry,) = await scratch.fs.list_dir(alias)
        assert (entry.name, entry.type) == ("f.txt", "file")
        assert entry.target.display_path == f"{alias.display_path}/f.txt"
        assert entry.target.target_key == (await scratch.fs.resolve("real/f.txt")).target_key

    @pytest.mark.anyio
    @pytest.mark.parametrize("path", ["absent", "broken", "absent/deeper"])
    async def test_list_dir_of_an_absent_directory_is_not_found(
        self, scratch: Scratch, path: str
    ) -> None:
        if path == "broken":
            self.require("supports_symlinks")
            scratch.symlink("broken", "missing")
        target = await scratch.fs.resolve(path)
        await expect_fs_error(
            scratch.fs.list_dir(target),
            FsErrorCode.FS_NOT_FOUND,
            f'cannot list "{target.display_path}": not found',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("path", ["f.txt", "thing", "to_f"])
    async def test_list_dir_of_something_else_is_not_a_directory(
        self, scratch: Scratch, path: str
    ) -> None:
        scratch.put("f.txt", b"f")
        if path == "thing":
            self.require("supports_special_files")
            scratch.make_other("thing")
        if path == "to_f":
            self.require("supports_symlinks")
            scratch.symlink("to_f", "f.txt")
        target = await scratch.fs.resolve(path)
        for with_stat in (False, True):
            await expect_fs_error(
                scratch.fs.list_dir(target, stat=with_stat),
                FsErrorCode.FS_NOT_DIRECTORY,
                f'cannot list "{target.display_path}": not a directory',
            )

    @pytest.mark.anyio
    @pytest.mark.parametrize("with_stat", [False, True])
    async def test_list_dirs_answers_each_target_as_list_dir_does_in_order(
        self, scratch: Scratch, with_stat: bool
    ) -> None:
        """Directories, an empty one, a missing one and a file, repeated past one batch: each
        answer is ``list_dir``'s (its entries, or its error as a value), in order."""
        self.listing_tree(scratch)
        scratch.mkdir("empty")
        fs = scratch.fs
        paths = ["d", "d/sub", "empty", "absent", "d/f.txt", "."] * 7
        targets = [await fs.resolve(path) for path in paths]
        listings = await fs.list_dirs(targets, stat=with_stat)
        assert len(listings) == len(targets)

        def key(entry: FsDirEntry) -> str:
            return entry.name

        for path, target, listing in zip(paths, targets, listings, strict=True):
            try:
                expected: list[FsDirEntry] | FsError = await fs.list_dir(target, stat=with_stat)
            except FsError as exc:
                expected = exc
            if isinstance(expected, FsError):
                assert isinstance(listing, FsError), path
                assert (listing.code, listing.message) == (expected.code, expected.message)
            else:
                assert not isinstance(listing, FsError), (path, listing)
                assert sorted(listing, key=key) == sorted(expected, key=key), path
        assert await fs.list_dirs([]) == []
