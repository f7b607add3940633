"""Workspace containment of ``delete`` and ``move``: both paths, both parents.

The tree is the containment contract's (``build_containment_tree``: ``ws/``
is the workspace, ``outside/``, ``ws-old/`` and ``lib/`` are not). A target
outside is made two ways, because ``resolve`` already refuses one and every
primitive must refuse it again: resolved by a second backend over the same
tree with containment off, or resolved inside and then its parent ``ws/d``
swapped for a link to ``../outside``. After each refusal the outside tree
and the workspace are exactly as they were.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from .._errors import FsErrorCode
from .._types import (
    AtVersion,
    DeleteChange,
    FsChange,
    FsTarget,
    MoveGuard,
    NotAFile,
    WriteChange,
)
from ._base import requires
from ._containment_contract import ContainmentScenes, outside_state
from ._expect import expect_fs_error, under
from ._scratch import Scratch

OUTSIDE = FsErrorCode.FS_OUTSIDE_WORKSPACE
READ_ONLY = FsErrorCode.FS_READ_ONLY
ESCAPES = [
    "../outside/secret.txt",
    "../outside/dir",
    "../outside/missing.txt",
    "../ws-old/secret.txt",
    "..",
]
"""Paths that lie outside ``ws``, relative to it."""


class EntryContainmentContract(ContainmentScenes):
    """``delete`` and ``move`` refuse every path outside, before any other answer."""

    async def escaped(self, scratch: Scratch, path: str) -> FsTarget:
        """``path`` resolved against ``ws`` by a backend with containment off."""
        return await scratch.backend(under(scratch.root, "ws"), roots=None).resolve(path)

    async def refused(
        self, scratch: Scratch, call: Awaitable[object], code: FsErrorCode, message: str
    ) -> None:
        """Exactly this refusal; the outside tree and the workspace's files as they were."""
        before = scratch.names("ws"), scratch.get("ws/inside.txt")
        await super().refused(scratch, call, code, message)
        after = scratch.names("ws"), scratch.get("ws/inside.txt")
        assert after == before, "a refused call changed the workspace"

    # -- outside ----------------------------------------------------------------------

    @pytest.mark.anyio
    @pytest.mark.parametrize("path", ESCAPES)
    @pytest.mark.parametrize("guard", ["none", "read", "unread"])
    async def test_delete_of_a_target_outside_is_refused(
        self, scratch: Scratch, path: str, guard: str
    ) -> None:
        """Outside wins over not found, not empty and every guard."""
        fs = self.workspace(scratch)
        target = await self.escaped(scratch, path)
        expected = {"none": None, "read": AtVersion("v"), "unread": NotAFile()}[guard]
        await self.refused(
            scratch,
            fs.delete(target, recursive=True, expected=expected),
            OUTSIDE,
            f'cannot delete "{target.display_path}": outside the workspace',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("path", ESCAPES)
    async def test_move_from_outside_is_refused(self, scratch: Scratch, path: str) -> None:
        fs = self.workspace(scratch)
        source = await self.escaped(scratch, path)
        await self.refused(
            scratch,
            fs.move(source, await fs.resolve("taken.txt"), replace=True),
            OUTSIDE,
            f'cannot move "{source.display_path}": outside the workspace',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("path", ESCAPES)
    async def test_move_to_outside_is_refused_and_the_source_stays(
        self, scratch: Scratch, path: str
    ) -> None:
        fs = self.workspace(scratch)
        destination = await self.escaped(scratch, path)
        await self.refused(
            scratch,
            fs.move(await fs.resolve("inside.txt"), destination, replace=True),
            OUTSIDE,
            f'cannot move to "{destination.display_path}": outside the workspace',
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["secret.txt", "missing.txt", "dir"])
    async def test_a_parent_swapped_for_a_link_out_is_refused_by_both(
        self, scratch: Scratch, name: str
    ) -> None:
        fs = self.workspace(scratch)
        target = await self.swapped(scratch, fs, name)
        inside = await fs.resolve("inside.txt")
        p = target.display_path
        calls: list[tuple[Callable[[], Awaitable[object]], str]] = [
            (
                lambda: fs.delete(target, recursive=True),
                f'cannot delete "{p}": outside the workspace',
            ),
            (
                lambda: fs.move(target, inside, replace=True),
                f'cannot move "{p}": outside the workspace',
            ),
            (
                lambda: fs.move(inside, target, replace=True),
                f'cannot move to "{p}": outside the workspace',
            ),
        ]
        for call, message in calls:
            await self.refused(scratch, call(), OUTSIDE, message)

    @pytest.mark.anyio
    @requires("supports_symlinks")
    async def test_a_link_that_leads_out_is_removed_as_itself(self, scratch: Scratch) -> None:
        """The link lies inside; removing it never touches what it points to."""
        fs = self.workspace(scratch)
        target = await fs.resolve("link")
        scratch.symlink("ws/link", "../outside/dir")
        before = outside_state(scratch)
        await fs.delete(target, recursive=True)
        assert scratch.names("ws") == ["inside.txt", "sub"]
        assert outside_state(scratch) == before

    @pytest.mark.anyio
    @pytest.mark.parametrize("where", ["outside", "read-only root"])
    async def test_a_batch_with_one_change_outside_the_writable_workspace_changes_nothing(
        self, scratch: Scratch, where: str
    ) -> None:
        lib = under(scratch.root, "lib")
        fs = self.workspace(scratch, read_only_roots=[lib])
        if where == "outside":
            target = await self.escaped(scratch, "../outside/secret.txt")
            code, reason = OUTSIDE, "outside the workspace"
        else:
            target = await fs.resolve(f"{lib}/doc.txt")
            code, reason = READ_ONLY, "read-only workspace"
        changes: list[FsChange] = [
            WriteChange(await fs.resolve("inside.txt"), "changed\n"),
            DeleteChange(await fs.resolve("sub/f.txt")),
            DeleteChange(target),
        ]
        await self.refused(
            scratch,
            fs.apply_changes(changes),
            code,
            f'cannot delete "{target.display_path}": {reason}',
        )
        assert (scratch.names("ws/sub"), scratch.names("lib")) == (["f.txt"], ["doc.txt"])

    # -- read-only ----------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_a_read_only_root_is_neither_deleted_from_nor_moved_from_or_to(
        self, scratch: Scratch
    ) -> None:
        lib = under(scratch.root, "lib")
        fs = self.workspace(scratch, read_only_roots=[lib])
        doc, new = await fs.resolve(f"{lib}/doc.txt"), await fs.resolve(f"{lib}/new.txt")
        inside = await fs.resolve("inside.txt")
        refusals: list[tuple[Awaitable[object], str]] = [
            (fs.delete(doc), f'cannot delete "{doc.display_path}"'),
            (fs.delete(await fs.resolve(lib), recursive=True), f'cannot delete "{lib}"'),
            (fs.move(doc, await fs.resolve("doc.txt")), f'cannot move "{doc.display_path}"'),
            (fs.move(inside, new), f'cannot move to "{new.display_path}"'),
            (fs.move(inside, doc, replace=True), f'cannot move to "{doc.display_path}"'),
        ]
        for call, prefix in refusals:
            await self.refused(scratch, call, READ_ONLY, f"{prefix}: read-only workspace")
        assert scratch.names("lib") == ["doc.txt"]

    @pytest.mark.anyio
    async def test_read_only_true_refuses_every_delete_and_move(self, scratch: Scratch) -> None:
        fs = self.workspace(scratch, read_only=True)
        inside, sub = await fs.resolve("inside.txt"), await fs.resolve("sub")
        missing = await fs.resolve("missing.txt")
        refusals: list[tuple[Awaitable[object], str]] = [
            (fs.delete(inside), f'cannot delete "{inside.display_path}"'),
            (fs.delete(sub, recursive=True), f'cannot delete "{sub.display_path}"'),
            (fs.delete(missing), f'cannot delete "{missing.display_path}"'),
            (fs.move(inside, missing), f'cannot move "{inside.display_path}"'),
        ]
        for call, prefix in refusals:
            await self.refused(scratch, call, READ_ONLY, f"{prefix}: read-only workspace")
        assert scratch.names("ws/sub") == ["f.txt"]

    @pytest.mark.anyio
    async def test_outside_wins_over_read_only(self, scratch: Scratch) -> None:
        fs = self.workspace(scratch, read_only=True)
        secret = await self.escaped(scratch, "../outside/secret.txt")
        inside = await fs.resolve("inside.txt")
        await self.refused(
            scratch,
            fs.delete(secret),
            OUTSIDE,
            f'cannot delete "{secret.display_path}": outside the workspace',
        )
        await self.refused(
            scratch,
            fs.move(inside, secret, replace=True),
            OUTSIDE,
            f'cannot move to "{secret.display_path}": outside the workspace',
        )

    @pytest.mark.anyio
    async def test_moves_between_two_roots_work(self, scratch: Scratch) -> None:
        root = scratch.root
        fs = self.workspace(scratch, roots=[f"{root}/ws", f"{root}/lib"])
        await fs.move(await fs.resolve("inside.txt"), await fs.resolve(f"{root}/lib/inside.txt"))
        await fs.move(await fs.resolve(f"{root}/lib/doc.txt"), await fs.resolve("sub/doc.txt"))
        assert scratch.names("lib") == ["inside.txt"]
        assert scratch.names("ws/sub") == ["doc.txt", "f.txt"]
        await expect_fs_error(
            fs.delete(await fs.resolve(f"{root}/lib"), recursive=True),
            FsErrorCode.FS_PERMISSION_DENIED,
            f'cannot delete "{root}/lib": it is a workspace root',
        )

    @pytest.mark.anyio
    async def test_a_guard_still_applies_inside(self, scratch: Scratch) -> None:
        """Containment is only the first answer: inside, the guards speak."""
        fs = self.workspace(scratch)
        inside = await fs.resolve("inside.txt")
        await self.refused(
            scratch,
            fs.move(inside, await fs.resolve("sub/new.txt"), expected=MoveGuard(NotAFile())),
            FsErrorCode.FS_NOT_OBSERVED,
            f'cannot move "{inside.display_path}" without reading it first',
        )
