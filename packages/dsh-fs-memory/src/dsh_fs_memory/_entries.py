"""Removing and moving entries: ``delete``, ``move`` and ``apply_changes`` of ``MemoryFileSystem``.

Each call takes its targets' locks (sorted by target key, the one order every
caller shares), reaches one checkpoint, and then checks and commits without
another ``await``: a cancelled call changes nothing, and no observer sees a
move or a tree removal half done. An entry is found by its display path
without following a final symlink (as ``lstat`` does), so a link is removed
or moved as itself, never what it points to. The refusals are the seam's
(``dsh_fs.preconditions``, ``dsh_fs.workspace``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from anyio.lowlevel import checkpoint
from dsh_fs import (
    DeleteChange,
    EntryGuard,
    FileSystem,
    FsChange,
    FsDeleteOutcome,
    FsError,
    FsErrorCode,
    FsMoveOutcome,
    FsTarget,
    FsWriteOutcome,
    MoveGuard,
    PathType,
    WriteIntent,
)
from dsh_fs.preconditions import (
    MOVE_TO,
    check_delete,
    check_move_destination,
    check_move_source,
    not_directory,
    not_empty,
    not_regular,
    workspace_root,
)
from dsh_fs.workspace import Workspace, is_beneath, read_only_workspace

from ._tree import Node, Tree


class Entries(FileSystem, ABC):
    """``delete``, ``move`` and ``apply_changes`` over the tree; the walk is the backend's."""

    _tree: Tree
    _workspace: Workspace

    @abstractmethod
    def _reach(
        self, verb: str, key: str, display: str, *, follow: bool = True, blocked: bool = False
    ) -> tuple[str, Node | None]:
        """Walk ``key`` inside the workspace, refusing as ``verb`` words it."""

    @abstractmethod
    def _followed_version(self, display: str) -> str | None:
        """The version ``stat`` reports through every link of ``display``; ``None`` when
        that reaches nothing inside the workspace (a dangling link, one that leads out)."""

    @abstractmethod
    def _write_now(
        self, target: FsTarget, content: str, expected: WriteIntent | None
    ) -> FsWriteOutcome:
        """``write_text``'s checks and commit, without the lock or an ``await``."""

    # -- the primitives ----------------------------------------------------------

    async def delete(
        self, target: FsTarget, *, recursive: bool = False, expected: EntryGuard | None = None
    ) -> FsDeleteOutcome:
        async with self._tree.locks.hold(target.target_key):
            await checkpoint()
            return self._delete_now(target, recursive, expected)

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        *,
        replace: bool = False,
        expected: MoveGuard | None = None,
    ) -> FsMoveOutcome:
        async with self._tree.locks.hold_all([source.target_key, destination.target_key]):
            await checkpoint()
            return self._move_now(source, destination, replace, expected or MoveGuard())

    async def apply_changes(
        self, changes: Sequence[FsChange]
    ) -> list[FsWriteOutcome | FsDeleteOutcome]:
        """All or nothing, always: under every target's lock, the changes are checked and
        made in order without an ``await``; when one fails, the tree is put back as it
        was and that ``FsError`` is raised (so this backend never raises ``FsBatchError``)."""
        keys = [change.target.target_key for change in changes]
        if len(set(keys)) != len(keys):
            raise ValueError("apply_changes: two changes of one target")
        async with self._tree.locks.hold_all(keys):
            await checkpoint()
            # Nothing below awaits: the checks and the commits are one atomic step.
            restore = self._tree.snapshot()
            try:
                return [self._change_now(change) for change in changes]
            except BaseException:
                restore()
                raise

    def _change_now(self, change: FsChange) -> FsWriteOutcome | FsDeleteOutcome:
        if isinstance(change, DeleteChange):
            return self._delete_now(change.target, change.recursive, change.expected)
        return self._write_now(change.target, change.content, change.expected)

    # -- checks and commits, no await ----------------------------------------------

    def _entry(self, verb: str, display: str, *, blocked: bool = False) -> tuple[str, Node | None]:
        """The entry at ``display`` itself (a final link not followed)."""
        return self._reach(verb, display, display, follow=False, blocked=blocked)

    def _version(self, display: str, node: Node) -> str | None:
        """The version ``stat`` of ``display`` reports: a link's is what it leads to."""
        return self._followed_version(display) if node.type == "symlink" else node.version

    def _current(self, display: str, node: Node | None) -> tuple[PathType, str | None] | None:
        """What the guards look at: the entry's own type and the version ``stat`` reports."""
        return None if node is None else (node.type, self._version(display, node))

    def _refuse_change(self, verb: str, display: str, physical: str) -> None:
        """Outside, read-only, or a workspace root at or beneath the entry: the entry may
        not be removed, moved or replaced."""
        workspace = self._workspace
        workspace.check(verb, display, physical, write=True)
        writable = ("/",) if workspace.roots is None else workspace.roots
        if any(is_beneath(root, physical) for root in writable):
            raise workspace_root(verb, display)
        if workspace.contained and any(
            is_beneath(root, physical) for root in workspace.read_only_roots
        ):
            raise read_only_workspace(verb, display)

    def _delete_now(
        self, target: FsTarget, recursive: bool, expected: EntryGuard | None
    ) -> FsDeleteOutcome:
        display = target.display_path
        physical, node = self._entry("delete", display)
        self._refuse_change("delete", display, physical)
        check_delete(display, self._current(display, node), expected)
        assert node is not None  # check_delete refused an absent entry
        if node.children and not recursive:
            raise not_empty("delete", display)
        self._tree.detach(physical)
        return FsDeleteOutcome(node.type)

    def _move_now(
        self, source: FsTarget, destination: FsTarget, replace: bool, guard: MoveGuard
    ) -> FsMoveOutcome:
        src, dst = source.display_path, destination.display_path
        src_path, src_node = self._entry("move", src)
        dst_path, dst_node = self._entry(MOVE_TO, dst, blocked=True)
        self._refuse_change("move", src, src_path)
        self._refuse_change(MOVE_TO, dst, dst_path)
        check_move_source(src, self._current(src, src_node), guard.source)
        assert src_node is not None  # check_move_source refused an absent entry
        if src_node.type == "directory" and dst_path != src_path and is_beneath(dst_path, src_path):
            raise FsError.cannot(
                "move", src, "a directory cannot move into itself", FsErrorCode.FS_IO_ERROR
            )
        check_move_destination(
            dst, self._current(dst, dst_node), guard.destination, replace=replace
        )
        if dst_path == src_path:  # one entry by two names: renaming it onto itself does nothing
            return FsMoveOutcome(src_node.type, self._version(dst, src_node), replaced=False)
        if dst_node is not None:
            if src_node.type == "directory" and dst_node.type != "directory":
                raise not_directory(MOVE_TO, dst)
            if src_node.type != "directory" and dst_node.type == "directory":
                raise not_regular(MOVE_TO, dst)
            if dst_node.children:
                raise not_empty(MOVE_TO, dst)
            self._tree.detach(dst_path)
        self._tree.rename(src_path, dst_path)
        return FsMoveOutcome(
            src_node.type, self._version(dst, src_node), replaced=dst_node is not None
        )
