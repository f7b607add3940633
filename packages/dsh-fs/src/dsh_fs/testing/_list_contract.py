"""Contract of ``list_dir`` (SPEC 2.3, 3.1 list messages)."""

from __future__ import annotations

import pytest

from .._errors import FsErrorCode
from ._base import ContractBase
from ._expect import expect_fs_error, under
from ._scratch import Scratch


def build_listing_tree(scratch: Scratch) -> None:
    """The tree the listing tests look at.

    root/
    └── d/
        ├── f.txt            (file, 5 bytes)
        ├── .hidden          (file, 0 bytes)
        ├── sub/             (directory, holds x.txt)
        ├── thing            (other)
        ├── to_sub -> sub    (symlink to a directory: "directory")
        ├── to_f -> f.txt    (symlink to a file: "file")
        └── broken -> nope   (broken symlink: "other")
    """
    scratch.put("d/f.txt", b"hello")
    scratch.put("d/.hidden", b"")
    scratch.put("d/sub/x.txt", b"x")
    scratch.make_other("d/thing")
    scratch.symlink("d/to_sub", "sub")
    scratch.symlink("d/to_f", "f.txt")
    scratch.symlink("d/broken", "nope")


LISTING_TYPES = {
    "f.txt": "file",
    ".hidden": "file",
    "sub": "directory",
    "thing": "other",
    "to_sub": "directory",
    "to_f": "file",
    "broken": "other",
}


class ListContract(ContractBase):
    """Listing: names, types through symlinks, targets, ``stat=True`` data, errors."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("with_stat", [False, True])
    async def test_list_dir_gives_every_direct_child_with_its_type(
        self, scratch: Scratch, with_stat: bool
    ) -> None:
        build_listing_tree(scratch)
        entries = await scratch.fs.list_dir(await scratch.fs.resolve("d"), stat=with_stat)
        assert sorted(e.name for e in entries) == sorted(LISTING_TYPES)
        assert {e.name: e.type for e in entries} == LISTING_TYPES

    @pytest.mark.anyio
    async def test_list_dir_entry_targets_are_the_parent_joined_with_the_name(
        self, scratch: Scratch
    ) -> None:
        build_listing_tree(scratch)
        parent = await scratch.fs.resolve("d")
        for entry in await scratch.fs.list_dir(parent):
            assert entry.target.display_path == under(parent.display_path, entry.name)
            assert entry.target == await scratch.fs.resolve(f"d/{entry.name}"), entry.name

    @pytest.mark.anyio
    async def test_list_dir_with_stat_gives_versions_and_file_sizes(self, scratch: Scratch) -> None:
        build_listing_tree(scratch)
        fs = scratch.fs
        entries = {e.name: e for e in await fs.list_dir(await fs.resolve("d"), stat=True)}
        for name in ("f.txt", ".hidden", "sub", "to_sub", "to_f", "thing"):
            info = await fs.stat(entries[name].target)
            assert info is not None, name
            assert entries[name].version == info.version, name
        assert entries["f.txt"].size == 5
        assert entries[".hidden"].size == 0
        assert entries["to_f"].size == 5

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
        scratch.make_other("thing")
        scratch.symlink("to_f", "f.txt")
        target = await scratch.fs.resolve(path)
        for with_stat in (False, True):
            await expect_fs_error(
                scratch.fs.list_dir(target, stat=with_stat),
                FsErrorCode.FS_NOT_DIRECTORY,
                f'cannot list "{target.display_path}": not a directory',
            )
