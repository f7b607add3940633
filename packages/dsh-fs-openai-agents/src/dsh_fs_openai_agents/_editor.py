"""``DshFsEditor``: the Agents SDK's ``ApplyPatchEditor`` on dsh-fs's ``apply_patch`` engine."""

from __future__ import annotations

from typing import Any

from agents import ApplyPatchTool, RunContextWrapper
from agents.editor import ApplyPatchOperation, ApplyPatchResult
from dsh_tool_fs import Session, ToolFs
from dsh_tool_fs_patch import apply_file_operation

from ._session import SessionChoice, session_of

__all__ = ["DshFsEditor", "apply_patch_tool"]


class DshFsEditor:
    """The SDK's built-in apply-patch tool, executed by ``dsh-tool-fs-patch``.

    Each operation the model sends (``create_file``, ``update_file`` with its
    per-file V4A diff and optional ``move_to``, ``delete_file``) runs through
    ``toolfs``'s ``apply_patch`` tool in the conversation's session: contained
    to the workspace, all or nothing, bytes kept, and under the policy (an
    update or a delete needs the file read first). The result's ``output`` is
    the tool's text — Codex's summary (``M app.py``) or ``Error: …`` — and its
    ``status`` is ``failed`` for an error, so the run goes on either way.

    ``toolfs`` must offer ``apply_patch`` (``dsh-tool-fs-patch`` installed;
    ``ToolFs.from_entry_points`` finds it). ``session`` as for
    :func:`~dsh_fs_openai_agents.dsh_fs_function_tools`: a ``Session``, or a function of
    the run context (the operation's ``ctx_wrapper``).
    """

    def __init__(self, toolfs: ToolFs, *, session: SessionChoice | None = None) -> None:
        self.toolfs = toolfs
        self._session: SessionChoice = Session() if session is None else session

    async def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await self._apply(operation)

    async def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await self._apply(operation)

    async def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await self._apply(operation)

    def session_for(self, ctx: RunContextWrapper[Any] | None) -> Session:
        """The session of an operation made in the run context ``ctx``."""
        return session_of(self._session, ctx)

    async def _apply(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        session = self.session_for(operation.ctx_wrapper)
        result = await apply_file_operation(self.toolfs, operation, session=session)
        if result.is_error:
            return ApplyPatchResult(status="failed", output=result.text)
        return ApplyPatchResult(status="completed", output=result.text)


def apply_patch_tool(
    toolfs: ToolFs, *, session: SessionChoice | None = None, **options: Any
) -> ApplyPatchTool:
    """The SDK's ``ApplyPatchTool`` with a :class:`DshFsEditor` (``options``: the tool's own,
    such as ``needs_approval``)."""
    return ApplyPatchTool(editor=DshFsEditor(toolfs, session=session), **options)
