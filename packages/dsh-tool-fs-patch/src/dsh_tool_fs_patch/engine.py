"""The engine: plan a whole patch against the files as they are now, then publish it at once.

Planning, in this order, before anything is written (any failure: no file
changes, and the answer names the first failure):

1. every path is resolved (``Execution.resolve``: containment refusals come
   first) and refused if its workspace is read-only;
2. operation by operation, the policy is asked (an update needs its file
   observed: ``edit_guard``; a delete ``delete_guard``; a move ``move_guard``;
   an add ``write_intent``), the file is read (``stat``, ``read_text``,
   ``stat``: a file changing under the read is stale) and every chunk is
   located.

Then the changes go to ``FileSystem.apply_changes`` in one batch: the backend
takes every target's lock in one fixed order, checks every guard again under
them, and publishes each file atomically. Every write is guarded by the
version that was read, with or without a policy, so a change made behind the
patch is never overwritten. An update with a move is a write of the
destination and a removal of the source. After success every written file is
observed at its new version and every removed path as absent.

A file's BOM is found without reading raw bytes: ``read_text`` drops it and
``stat`` gives the size, so the file had one exactly when the size exceeds
the text's UTF-8 length by three (both stats report the same version, so
size and text are of one file).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from dsh_fs import (
    AtVersion,
    CreateIfAbsent,
    DeleteChange,
    EditGuard,
    EntryGuard,
    FsBatchError,
    FsChange,
    FsError,
    FsErrorCode,
    FsInfo,
    FsTarget,
    FsWriteOutcome,
    NotAFile,
    PathType,
    ReplaceIfVersion,
    WriteChange,
    WriteIntent,
)
from dsh_fs.preconditions import (
    check_delete,
    check_edit,
    check_move_destination,
    check_move_source,
    check_write,
    not_regular,
)
from dsh_fs.text import BOM
from dsh_tool_fs.diff_meta import diff_meta
from dsh_tool_fs.execution import Execution

from .grammar import AddFile, DeleteFile, Operation, UpdateFile
from .locate import LocateError, apply_chunks

__all__ = ["FileResult", "Patched", "apply_operations"]

Kind = Literal["add", "update", "delete", "move"]
_STALE = "file changed since it was read"


@dataclass(frozen=True, slots=True)
class FileResult:
    """What one operation did: ``path`` and ``new_path`` as written in the patch,
    ``version`` the file's new version (``None`` for a delete)."""

    operation: Kind
    path: str
    new_path: str | None
    version: str | None

    @property
    def shown_path(self) -> str:
        """The path of the summary line: the new path of a move."""
        return self.new_path or self.path

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "operation": self.operation,
            "new_path": self.new_path,
            "version": self.version,
        }


@dataclass(frozen=True, slots=True)
class Patched:
    """A patch applied: one :class:`FileResult` per operation, in patch order, and the
    diff hunks of every written file (``ToolResult.meta``'s ``diffs``)."""

    files: tuple[FileResult, ...]
    diffs: tuple[dict[str, Any], ...]


@dataclass(slots=True)
class _Plan:
    """One operation, planned: its changes (in publishing order) and what they are."""

    operation: Operation
    kind: Kind
    targets: list[FsTarget]
    changes: list[FsChange] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    """Per change, the path as written in the patch (for a partial failure)."""


async def apply_operations(ex: Execution, operations: Sequence[Operation]) -> Patched:
    """Apply ``operations`` all or nothing through ``ex`` (the engine of ``apply_patch``)."""
    plans = [await _resolve(ex, op) for op in operations]
    _refuse_twice(plans)
    for plan in plans:
        await _prepare(ex, plan)
    changes = [change for plan in plans for change in plan.changes]
    labels = [label for plan in plans for label in plan.labels]
    ex.step("apply_patch")
    try:
        outcomes = await ex.fs.apply_changes(changes)
    except FsBatchError as exc:
        done, rest = labels[: exc.applied], labels[exc.applied :]
        raise FsError(
            f"{exc.message} (the patch was applied in part: changed {_listed(done)};"
            f" not changed {_listed(rest)})",
            exc.code,
        ) from exc
    return _report(ex, plans, iter(outcomes))


def _listed(paths: list[str]) -> str:
    return ", ".join(f'"{p}"' for p in paths) if paths else "nothing"


async def _resolve(ex: Execution, op: Operation) -> _Plan:
    if isinstance(op, AddFile):
        target = await ex.resolve(op.path, "write")
        ex.refuse_read_only(target, "write")
        return _Plan(op, "add", [target])
    if isinstance(op, DeleteFile):
        target = await ex.resolve(op.path, "delete")
        ex.refuse_read_only(target, "delete")
        return _Plan(op, "delete", [target])
    if op.move_to is None:
        target = await ex.resolve(op.path, "edit")
        ex.refuse_read_only(target, "edit")
        return _Plan(op, "update", [target])
    source = await ex.resolve(op.path, "move")
    destination = await ex.resolve(op.move_to, "move to")
    ex.refuse_read_only(source, "move")
    ex.refuse_read_only(destination, "move to")
    if destination.target_key == source.target_key:  # a move onto itself is an update
        return _Plan(op, "update", [source])
    return _Plan(op, "move", [source, destination])


def _refuse_twice(plans: list[_Plan]) -> None:
    """``apply_changes`` takes one change per target: a patch touching a file twice is refused."""
    seen: set[str] = set()
    for plan in plans:
        for target in plan.targets:
            if target.target_key in seen:
                raise FsError(
                    f'cannot patch "{target.display_path}": the patch changes it more than once',
                    FsErrorCode.FS_AMBIGUOUS_EDIT,
                )
            seen.add(target.target_key)


async def _prepare(ex: Execution, plan: _Plan) -> None:
    op = plan.operation
    if isinstance(op, AddFile):
        target = plan.targets[0]
        intent = await ex.write_intent(target)
        info = await ex.fs.stat(target)
        current = None if info is None else (info.type, info.version)
        if intent is None:  # unguarded: still never overwrite a change made behind us
            intent = CreateIfAbsent() if info is None else ReplaceIfVersion(info.version)
        check_write(target.display_path, current, intent)
        plan.changes.append(WriteChange(target, op.content, intent))
        plan.labels.append(op.path)
    elif isinstance(op, DeleteFile):
        await _prepare_delete(ex, plan, op)
    else:
        await _prepare_update(ex, plan, op)


async def _prepare_delete(ex: Execution, plan: _Plan, op: DeleteFile) -> None:
    target = plan.targets[0]
    guard = await ex.delete_guard(target)
    link = await ex.fs.lstat(target.display_path)
    info = await ex.fs.stat(target) if link is not None else None
    current = None if link is None else (link.type, None if info is None else info.version)
    if guard is None and info is not None:
        guard = AtVersion(info.version)
    check_delete(target.display_path, current, guard)
    if link is not None and link.type == "directory":
        raise not_regular("delete", target.display_path)
    plan.changes.append(DeleteChange(target, guard))
    plan.labels.append(op.path)


async def _prepare_update(ex: Execution, plan: _Plan, op: UpdateFile) -> None:
    source = plan.targets[0]
    guard = await ex.edit_guard(source)
    move = None
    if plan.kind == "move":
        move = await ex.move_guard(source, plan.targets[1])
    info, text = await _read(ex, source, guard)
    try:
        new_text = apply_chunks(text, op.chunks, op.path)
    except LocateError as exc:
        raise FsError(str(exc), FsErrorCode.FS_EDIT_NOT_FOUND) from None
    bom = "\ufeff" if _has_bom(info, text) else ""
    if plan.kind == "update":
        plan.changes.append(WriteChange(source, bom + new_text, ReplaceIfVersion(info.version)))
        plan.labels.append(op.path)
        return
    destination = plan.targets[1]
    assert op.move_to is not None
    check_move_source(
        source.display_path, ("file", info.version), None if move is None else move.source
    )
    intent = await _destination_intent(ex, destination, None if move is None else move.destination)
    plan.changes.append(WriteChange(destination, bom + new_text, intent))
    plan.changes.append(DeleteChange(source, AtVersion(info.version)))
    plan.labels += [op.move_to, op.path]


async def _read(ex: Execution, target: FsTarget, guard: EditGuard | None) -> tuple[FsInfo, str]:
    """The file's text, read between two stats that agree (else it changed: stale)."""
    ex.step("read")
    info = await ex.fs.stat(target)
    check_edit(target.display_path, None if info is None else (info.type, info.version), guard)
    assert info is not None
    try:
        text = await ex.fs.read_text(target)
    except FsError as exc:  # binary, invalid UTF-8: worded for what the patch does
        raise FsError(exc.message.replace("cannot read ", "cannot edit ", 1), exc.code) from exc
    again = await ex.fs.stat(target)
    if again is None or again.version != info.version:
        raise FsError.cannot("edit", target.display_path, _STALE, FsErrorCode.FS_STALE_VERSION)
    return info, text


def _has_bom(info: FsInfo, text: str) -> bool:
    return info.size is not None and info.size - len(text.encode("utf-8")) == len(BOM)


async def _destination_intent(
    ex: Execution, destination: FsTarget, guard: EntryGuard | None
) -> WriteIntent:
    """The write intent of a move's destination: the policy's guard, else what is there now."""
    info = await ex.fs.stat(destination)
    if info is not None and info.type != "file":
        raise not_regular("move to", destination.display_path)
    current: tuple[PathType, str | None] | None = None if info is None else ("file", info.version)
    check_move_destination(destination.display_path, current, guard, replace=True)
    if isinstance(guard, AtVersion):
        return ReplaceIfVersion(guard.version)
    if isinstance(guard, NotAFile) or info is None:
        return CreateIfAbsent()
    return ReplaceIfVersion(info.version)


def _report(ex: Execution, plans: list[_Plan], outcomes: Any) -> Patched:
    """Observe what the batch did and describe it, operation by operation."""
    files: list[FileResult] = []
    diffs: list[dict[str, Any]] = []
    for plan in plans:
        version: str | None = None
        for change in plan.changes:
            outcome = next(outcomes)
            if isinstance(change, WriteChange):
                assert isinstance(outcome, FsWriteOutcome)
                ex.observed(change.target, outcome.version)
                version = outcome.version
                label = plan.labels[plan.changes.index(change)]
                hunks = diff_meta(label, outcome.before, outcome.after)["diffs"]
                diffs += cast(list[dict[str, Any]], hunks)
            else:
                ex.observed(change.target, None)
        op = plan.operation
        new_path = op.move_to if isinstance(op, UpdateFile) and plan.kind == "move" else None
        files.append(FileResult(plan.kind, op.path, new_path, version))
    return Patched(tuple(files), tuple(diffs))
