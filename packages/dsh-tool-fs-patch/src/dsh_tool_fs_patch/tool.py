"""The ``apply_patch`` tool: one V4A patch, applied all or nothing.

Seam calls: ``resolve`` of every path; per operation the intent hook
(``fs_write_intent``, ``fs_edit_intent``, ``fs_delete_intent``,
``fs_move_intent``), ``stat`` / ``lstat``, and for an update ``read_text``
between two ``stat``; then one ``apply_changes``; then ``fs_observed`` per
written file (its new version) and per removed path (``None``).
"""

from __future__ import annotations

from typing import Self

from dsh_tool_fs import (
    Execution,
    PromptSection,
    ToolAnnotations,
    ToolArguments,
    ToolOutput,
    ToolSpec,
)
from dsh_tool_fs.names import escape_controls
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from .engine import Patched, apply_operations
from .grammar import PatchSyntaxError, parse_patch

__all__ = ["APPLY_PATCH", "NOTHING_TO_DO", "ApplyPatchArgs", "render_patched", "run_apply_patch"]

NOTHING_TO_DO = "No files were modified."
"""Codex's answer to a patch without operations."""


class ApplyPatchArgs(ToolArguments):
    """The arguments of ``apply_patch``: the whole patch (it is parsed as it is validated)."""

    input: str = Field(
        description=("The whole patch, from the line *** Begin Patch to the line *** End Patch."),
    )

    @model_validator(mode="after")
    def _parses(self) -> Self:
        try:
            operations = parse_patch(self.input)
        except PatchSyntaxError as exc:
            raise PydanticCustomError("patch", "{message}", {"message": str(exc)}) from None
        if not operations:
            raise PydanticCustomError("patch", NOTHING_TO_DO)
        return self


async def run_apply_patch(ex: Execution, args: ApplyPatchArgs) -> Patched:
    return await apply_operations(ex, parse_patch(args.input))


def render_patched(patched: Patched) -> ToolOutput:
    """Codex's summary (``A``, then ``M``, then ``D`` lines, paths as written in the patch),
    the canonical value and the diff hunks."""
    lines = ["Success. Updated the following files:"]
    for letter, kinds in (("A", ("add",)), ("M", ("update", "move")), ("D", ("delete",))):
        lines += [
            f"{letter} {escape_controls(f.shown_path)}"
            for f in patched.files
            if f.operation in kinds
        ]
    value = {"files": [f.to_dict() for f in patched.files]}
    return ToolOutput("\n".join(lines), value, {"diffs": list(patched.diffs)})


def _render(args: ApplyPatchArgs, patched: Patched) -> ToolOutput:
    return render_patched(patched)


_EXAMPLE = """*** Begin Patch
*** Add File: docs/notes.md
+# Notes
*** Update File: src/app.py
@@ def greet():
     name = ask()
-    print("Hi")
+    print(f"Hello, {name}!")
     return name
*** Delete File: old.txt
*** End Patch"""

APPLY_PATCH = ToolSpec(
    name="apply_patch",
    title="Apply patch",
    arguments=ApplyPatchArgs,
    description=(
        "Add, update, move and delete UTF-8 text files with one patch in the apply_patch "
        "(V4A) format, applied all or nothing: if any part fails, no file changes. Paths are "
        "relative to the session workspace. Under the default fs-policy a file you update, "
        "move, delete or overwrite must have been read first in this session and must not "
        "have changed since."
    ),
    prompt=PromptSection(
        "tool:apply_patch",
        105,
        "Use the apply_patch tool to change files with a patch: *** Begin Patch, then one "
        "section per file — *** Add File: <path> followed by the new lines, each prefixed "
        "with +; *** Delete File: <path>; or *** Update File: <path> (optionally followed by "
        "*** Move to: <new path>) and hunks, each introduced by @@ (optionally @@ followed by "
        "a line such as a class or function header that comes before the change), with 3 "
        "lines of unchanged context above and below each change prefixed by a space, removed "
        "lines by - and added lines by + — then *** End Patch. Use relative paths. Read a "
        "file before updating, moving or deleting it (the default fs-policy requires it). "
        "Example:\n" + _EXAMPLE,
    ),
    annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=False),
    concurrency_safe=False,
    body=run_apply_patch,
    render=_render,
    builtins={"openai-responses": {"type": "apply_patch"}},
)
