"""Contract of ``resolve``, ``stat`` and ``lstat``."""

from __future__ import annotations

import anyio
import pytest

from .._errors import FsErrorCode
from .._types import FsEditRequest
from ._base import ContractBase, requires
from ._expect import expect_fs_error, under
from ._scratch import Scratch

NOT_FOUND = FsErrorCode.FS_NOT_FOUND


class ResolveContract(ContractBase):
    """``resolve``: relative, ``cwd``, absolute, normalization, identity, errors."""

    @pytest.mark.anyio
    async def test_relative_path_resolves_against_the_default_cwd(self, scratch: Scratch) -> None:
        target = await scratch.fs.resolve("a.txt")
        assert target.display_path == under(scratch.root, "a.txt")
        assert target == await scratch.fs.resolve(under(scratch.root, "a.txt"))

    @pytest.mark.anyio
    async def test_relative_path_resolves_against_the_cwd_argument(self, scratch: Scratch) -> None:
        scratch.mkdir("sub")
        target = await scratch.fs.resolve("a.txt", cwd=under(scratch.root, "sub"))
        assert target.display_path == under(scratch.root, "sub/a.txt")
        assert target.target_key == (await scratch.fs.resolve("sub/a.txt")).target_key

    @pytest.mark.anyio
    async def test_absolute_path_ignores_the_cwd_argument(self, scratch: Scratch) -> None:
        scratch.mkdir("sub")
        absolute = under(scratch.root, "a.txt")
        target = await scratch.fs.resolve(absolute, cwd=under(scratch.root, "sub"))
        assert target == await scratch.fs.resolve("a.txt")

    @pytest.mark.anyio
    @pytest.mark.parametrize("path", ["", " ", "\t", " \n\t "])
    async def test_empty_or_blank_path_is_not_found(self, scratch: Scratch, path: str) -> None:
        await expect_fs_error(
            scratch.fs.resolve(path), NOT_FOUND, "file_path must be a non-empty string"
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("spelling", ["a/../b.txt", "./b.txt", "a/./../b.txt", "a//../b.txt"])
    async def test_dot_segments_are_normalized_in_display_and_key(
        self, scratch: Scratch, spelling: str
    ) -> None:
        scratch.mkdir("a")
        scratch.put("b.txt", b"b\n")
        plain = await scratch.fs.resolve("b.txt")
        target = await scratch.fs.resolve(spelling)
        assert target.display_path == plain.display_path == under(scratch.root, "b.txt")
        assert target.target_key == plain.target_key

    @requires("supports_symlinks")
    @pytest.mark.anyio
    async def test_file_reached_through_a_symlink_has_the_key_of_the_file(
        self, scratch: Scratch
    ) -> None:
        """
        root/
        ├── real.txt
        └── link.txt -> real.txt
        """
        scratch.put("real.txt", b"x\n")
        scratch.symlink("link.txt", "real.txt")
        real = await scratch.fs.resolve("real.txt")
        link = await scratch.fs.resolve("link.txt")
        assert link.target_key == real.target_key
        assert link.display_path == under(scratch.root, "link.txt")

    @requires("supports_symlinks")
    @pytest.mark.anyio
    async def test_path_through_a_symlinked_directory_has_the_key_of_the_real_path(
        self, scratch: Scratch
    ) -> None:
        """
        root/
        ├── real/
        │   └── f.txt
        └── alias -> real
        """
        scratch.put("real/f.txt", b"x\n")
        scratch.symlink("alias", "real")
        for name in ("f.txt", "missing.txt"):
            via_alias = await scratch.fs.resolve(f"alias/{name}")
            direct = await scratch.fs.resolve(f"real/{name}")
            assert via_alias.target_key == direct.target_key
            assert via_alias.display_path == under(scratch.root, f"alias/{name}")

    @pytest.mark.anyio
    async def test_key_of_a_missing_file_is_stable_across_its_creation(
        self, scratch: Scratch
    ) -> None:
        before = await scratch.fs.resolve("new/deeper/file.txt")
        await scratch.fs.write_text(before, "hello\n")
        after = await scratch.fs.resolve("new/deeper/file.txt")
        assert after == before

    @pytest.mark.anyio
    @pytest.mark.parametrize("rel", ["f.txt/x", "f.txt/x/y.txt", "d/f.txt/x.txt"])
    async def test_path_under_a_regular_file_fails_to_resolve(
        self, scratch: Scratch, rel: str
    ) -> None:
        scratch.put("f.txt", b"file\n")
        scratch.put("d/f.txt", b"file\n")
        display = under(scratch.root, rel)
        await expect_fs_error(
            scratch.fs.resolve(rel),
            NOT_FOUND,
            f'cannot resolve "{display}": a parent path segment is not a directory',
        )


class StatContract(ContractBase):
    """``stat`` and ``lstat``: presence, type, size, symlinks, version movement."""

    @pytest.mark.anyio
    async def test_stat_of_an_absent_target_is_none(self, scratch: Scratch) -> None:
        assert await scratch.fs.stat(await scratch.fs.resolve("absent.txt")) is None
        assert await scratch.fs.stat(await scratch.fs.resolve("no/such/dir/f.txt")) is None

    @pytest.mark.anyio
    async def test_stat_of_a_target_whose_parent_became_a_file_is_none(
        self, scratch: Scratch
    ) -> None:
        target = await scratch.fs.resolve("p/x.txt")
        scratch.put("p", b"now a file\n")
        assert await scratch.fs.stat(target) is None

    @pytest.mark.anyio
    async def test_stat_reports_a_file_and_its_size_in_bytes(self, scratch: Scratch) -> None:
        scratch.put("f.txt", "héllo €\n".encode())
        info = await scratch.fs.stat(await scratch.fs.resolve("f.txt"))
        assert info is not None
        assert (info.type, info.size) == ("file", 11)
        assert isinstance(info.version, str)

    @pytest.mark.anyio
    async def test_stat_reports_an_empty_file_with_size_zero(self, scratch: Scratch) -> None:
        scratch.put("empty.txt", b"")
        info = await scratch.fs.stat(await scratch.fs.resolve("empty.txt"))
        assert info is not None
        assert (info.type, info.size) == ("file", 0)

    @pytest.mark.anyio
    async def test_stat_reports_a_directory(self, scratch: Scratch) -> None:
        scratch.mkdir("d")
        info = await scratch.fs.stat(await scratch.fs.resolve("d"))
        assert info is not None
        assert info.type == "directory"

    @requires("supports_special_files")
    @pytest.mark.anyio
    async def test_stat_reports_other_for_an_entry_that_is_neither(self, scratch: Scratch) -> None:
        scratch.make_other("thing")
        info = await scratch.fs.stat(await scratch.fs.resolve("thing"))
        assert info is not None
        assert info.type == "other"

    @requires("supports_symlinks")
    @pytest.mark.anyio
    async def test_stat_follows_symlinks(self, scratch: Scratch) -> None:
        """
        root/
        ├── real.txt        (5 bytes)
        ├── dir/
        ├── to_file -> real.txt
        ├── to_dir -> dir
        └── broken -> missing
        """
        scratch.put("real.txt", b"12345")
        scratch.mkdir("dir")
        scratch.symlink("to_file", "real.txt")
        scratch.symlink("to_dir", "dir")
        scratch.symlink("broken", "missing")
        fs = scratch.fs
        to_file = await fs.stat(await fs.resolve("to_file"))
        real = await fs.stat(await fs.resolve("real.txt"))
        to_dir = await fs.stat(await fs.resolve("to_dir"))
        assert to_file is not None and real is not None and to_dir is not None
        assert (to_file.type, to_file.size, to_file.version) == ("file", 5, real.version)
        assert to_dir.type == "directory"
        assert await fs.stat(await fs.resolve("broken")) is None

    @pytest.mark.anyio
    async def test_lstat_of_an_absent_path_is_none(self, scratch: Scratch) -> None:
        assert await scratch.fs.lstat("absent.txt") is None
        assert await scratch.fs.lstat("no/such/dir/f.txt") is None

    @requires("supports_symlinks")
    @pytest.mark.anyio
    async def test_lstat_reports_symlinks_without_following_them(self, scratch: Scratch) -> None:
        """
        root/
        ├── real.txt        (5 bytes)
        ├── dir/
        ├── thing           (other, with supports_special_files)
        ├── to_file -> real.txt
        ├── to_dir -> dir
        └── broken -> missing
        """
        expected = {
            "real.txt": "file",
            "dir": "directory",
            "to_file": "symlink",
            "to_dir": "symlink",
            "broken": "symlink",
        }
        scratch.put("real.txt", b"12345")
        scratch.mkdir("dir")
        if self.supports_special_files:
            scratch.make_other("thing")
            expected["thing"] = "other"
        scratch.symlink("to_file", "real.txt")
        scratch.symlink("to_dir", "dir")
        scratch.symlink("broken", "missing")
        types = {}
        for name in expected:
            info = await scratch.fs.lstat(name)
            assert info is not None, name
            types[name] = info.type
        assert types == expected
        real = await scratch.fs.lstat("real.txt")
        assert real is not None and real.size == 5

    @pytest.mark.anyio
    async def test_lstat_resolves_relative_to_cwd_and_takes_absolute_paths(
        self, scratch: Scratch
    ) -> None:
        scratch.put("sub/f.txt", b"abc")
        sub = under(scratch.root, "sub")
        relative = await scratch.fs.lstat("f.txt", cwd=sub)
        absolute = await scratch.fs.lstat(under(scratch.root, "sub/f.txt"), cwd="/")
        assert relative is not None and absolute is not None
        assert (relative.type, relative.size) == ("file", 3)
        assert relative == absolute
        assert await scratch.fs.lstat("f.txt") is None

    @pytest.mark.anyio
    async def test_version_is_unchanged_while_nothing_changes(self, scratch: Scratch) -> None:
        scratch.put("d/f.txt", b"same\n")
        fs = scratch.fs
        target = await fs.resolve("d/f.txt")
        first = await fs.stat(target)
        await fs.read_text(target)
        await fs.list_dir(await fs.resolve("d"), stat=True)
        second = await fs.stat(target)
        assert first is not None and second is not None
        assert second.version == first.version

    @pytest.mark.anyio
    async def test_version_moves_on_a_same_size_rewrite(self, scratch: Scratch) -> None:
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        first = await fs.write_text(target, "aaaa\n")
        second = await fs.write_text(target, "bbbb\n")
        third = await fs.edit_text(target, FsEditRequest("bbbb", "cccc"))
        versions = [first.version, second.version, third.version]
        assert len(set(versions)) == 3

    @pytest.mark.anyio
    async def test_version_moves_when_the_file_changes_behind_the_backend(
        self, scratch: Scratch
    ) -> None:
        scratch.put("f.txt", b"one\n")
        target = await scratch.fs.resolve("f.txt")
        before = await scratch.fs.stat(target)
        scratch.put("f.txt", b"a longer content\n")
        after = await scratch.fs.stat(target)
        assert before is not None and after is not None
        assert after.version != before.version
        assert after.size == len(b"a longer content\n")

    @pytest.mark.anyio
    async def test_version_moves_on_a_same_size_rewrite_behind_the_backend(
        self, scratch: Scratch
    ) -> None:
        """Rule 4: beyond the timestamp granularity, a same-size change is seen."""
        scratch.put("f.txt", b"AAAA\n")
        target = await scratch.fs.resolve("f.txt")
        before = await scratch.fs.stat(target)
        await anyio.sleep(self.timestamp_granularity + 0.05)
        scratch.put("f.txt", b"BBBB\n")
        after = await scratch.fs.stat(target)
        assert before is not None and after is not None
        assert after.version != before.version

    @pytest.mark.anyio
    async def test_write_and_edit_return_the_version_a_fresh_stat_reports(
        self, scratch: Scratch
    ) -> None:
        fs = scratch.fs
        target = await fs.resolve("f.txt")
        created = await fs.write_text(target, "one\n")
        info = await fs.stat(target)
        assert info is not None and info.version == created.version
        updated = await fs.write_text(target, "two\n")
        info = await fs.stat(target)
        assert info is not None and info.version == updated.version
        edited = await fs.edit_text(target, FsEditRequest("two", "three"))
        info = await fs.stat(target)
        assert info is not None and info.version == edited.version
        assert info.size == len(b"three\n")
