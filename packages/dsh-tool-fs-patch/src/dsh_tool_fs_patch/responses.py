"""One file operation at a time: the Responses API's built-in ``apply_patch`` and editors.

The Responses API's built-in tool (``{"type": "apply_patch"}``) does not send
a whole patch: each ``apply_patch_call`` item carries one operation —
``create_file`` (``path``, ``diff``: the new file's lines, each prefixed with
``+``), ``update_file`` (``path``, ``diff``: the chunks of one file, without
the ``*** Begin Patch`` envelope, optionally ``move_to``) or ``delete_file``
(``path``). :func:`apply_file_operation` runs one such operation through the
very same engine, host and session as the ``apply_patch`` tool (so
containment, the policy, the observations, the byte rules and the messages
are the tool's), and :func:`execute_apply_patch_call` wraps it for a
Responses item: an ``apply_patch_call`` in, the ``apply_patch_call_output``
item to append to the next request's input out.

The operation's diff is checked on its own first (every line must belong
to it: a line that would end it, such as ``*** Delete File: x``, is refused),
then the operation runs as the one-operation patch it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from dsh_tool_fs import Session, ToolFs, ToolResult

from .grammar import (
    ADD,
    BEGIN,
    DELETE,
    END,
    MOVE_TO,
    UPDATE,
    PatchSyntaxError,
    parse_add_body,
    parse_update_body,
    patch_lines,
    trim,
)

__all__ = ["FileOperation", "apply_file_operation", "execute_apply_patch_call"]

OperationType = Literal["create_file", "update_file", "delete_file"]
_TYPES = ("create_file", "update_file", "delete_file")


@dataclass(frozen=True, slots=True)
class FileOperation:
    """One operation of the Responses ``apply_patch`` tool (and of an Agents SDK editor)."""

    type: OperationType
    path: str
    diff: str = ""
    move_to: str | None = None

    @classmethod
    def of(cls, operation: Any) -> FileOperation:
        """From a Responses operation: a mapping, or an object with the same attributes
        (the ``openai`` SDK's ``OperationCreateFile`` …, an Agents SDK operation)."""
        if isinstance(operation, FileOperation):
            return operation
        get = operation.get if isinstance(operation, Mapping) else _attribute(operation)
        kind = get("type")
        if kind not in _TYPES:
            raise ValueError(f"operation type must be one of {', '.join(_TYPES)}, not {kind!r}")
        path, diff, move_to = get("path"), get("diff"), get("move_to")
        if not isinstance(path, str) or (diff is not None and not isinstance(diff, str)):
            raise ValueError("operation path and diff must be strings")
        if move_to is not None and not isinstance(move_to, str):
            raise ValueError("operation move_to must be a string")
        return cls(kind, path, diff or "", move_to)

    def patch(self) -> str:
        """The one-operation patch this operation is, checked line by line first
        (:class:`~dsh_tool_fs_patch.grammar.PatchSyntaxError` with the message)."""
        _check_path(self.path)
        if self.type == "delete_file":
            return f"{BEGIN}\n{DELETE}{self.path}\n{END}"
        lines = patch_lines(self.diff)
        if self.type == "create_file":
            _, used = parse_add_body(lines)
            if used < len(lines):
                raise PatchSyntaxError(
                    f"Unexpected line found in added file: '{lines[used]}'. Every line of a "
                    "new file should start with '+'",
                    used + 1,
                )
            return "\n".join([BEGIN, ADD + self.path, *lines, END])
        head = [UPDATE + self.path]
        if self.move_to is not None:
            _check_path(self.move_to)
            head.append(MOVE_TO + self.move_to)
        chunks, used = parse_update_body(lines, 1)
        if used < len(lines):
            raise PatchSyntaxError(
                f"Unexpected line found in update hunk: '{lines[used]}'. Every line should "
                "start with ' ' (context line), '+' (added line), or '-' (removed line)",
                used + 1,
            )
        if not chunks:
            raise PatchSyntaxError(f"Update file hunk for path '{self.path}' is empty", 1)
        return "\n".join([BEGIN, *head, *lines, END])


def _attribute(operation: Any) -> Any:
    return lambda name: getattr(operation, name, None)


def _check_path(path: str) -> None:
    """A path a patch line can carry unchanged: one line, not blank, not padded."""
    if not path or "\n" in path or "\r" in path or trim(path) != path:
        raise PatchSyntaxError(f"invalid path {path!r}: a path is one line, not blank or padded")


async def apply_file_operation(
    toolfs: ToolFs,
    operation: FileOperation | Mapping[str, Any] | Any,
    *,
    session: Session | None = None,
    cancel: anyio.Event | None = None,
) -> ToolResult:
    """Apply one file operation (``create_file`` / ``update_file`` / ``delete_file``)
    through ``toolfs``'s ``apply_patch`` tool, in ``session``; never raises for a failure.

    ``toolfs`` must offer ``apply_patch`` (:data:`dsh_tool_fs_patch.APPLY_PATCH`, or the
    installed entry point with ``ToolFs.from_entry_points``). The result is the tool's:
    ``text`` Codex's summary (``A <path>`` …) or ``Error: <message>``, ``value`` and
    ``meta`` as for a whole patch.
    """
    try:
        patch = FileOperation.of(operation).patch()
    except (PatchSyntaxError, ValueError) as exc:
        return ToolResult.failure(str(exc), "ToolArgumentError", "INVALID_ARGUMENTS")
    return await toolfs.execute("apply_patch", {"input": patch}, session=session, cancel=cancel)


async def execute_apply_patch_call(
    toolfs: ToolFs,
    item: Mapping[str, Any] | Any,
    *,
    session: Session | None = None,
    cancel: anyio.Event | None = None,
) -> dict[str, Any]:
    """Execute a Responses ``apply_patch_call`` item; the ``apply_patch_call_output`` item.

    ``item`` is the output item as the API returned it: a dict, or the ``openai``
    SDK's ``ResponseApplyPatchToolCall``. The answer is ``{"type":
    "apply_patch_call_output", "call_id", "status": "completed" | "failed",
    "output"}``, ready to append to the next request's ``input``.
    """
    data = item.model_dump() if hasattr(item, "model_dump") else item
    if not isinstance(data, Mapping) or data.get("type") != "apply_patch_call":
        raise ValueError("not an apply_patch_call item")
    result = await apply_file_operation(
        toolfs, data.get("operation"), session=session, cancel=cancel
    )
    return {
        "type": "apply_patch_call_output",
        "call_id": data["call_id"],
        "status": "failed" if result.is_error else "completed",
        "output": result.text,
    }
