"""The ``edit`` tool: literal replacement inside one existing text file.

Seam calls, and nothing more: ``resolve``, ``fs_edit_intent`` (no ``stat``),
``edit_text``, ``fs_observed`` with the outcome's version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from dsh_fs import FsEditOutcome, FsEditRequest
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from ..arguments import FilePath, ToolArguments
from ..definitions import PromptSection, ToolAnnotations
from ..diff_meta import diff_meta
from ..execution import Execution
from ..mutation_render import edit_value, render_edit
from ..spec import ToolOutput, ToolSpec


class EditArgs(ToolArguments):
    """The arguments of ``edit``."""

    file_path: FilePath = Field(
        description="File to edit, absolute or relative to the session workspace.",
    )
    old_string: str = Field(
        min_length=1,
        description="The literal text to replace; must not be empty.",
    )
    new_string: str = Field(
        description=(
            "The literal replacement text; must differ from old_string. An empty "
            "string deletes the match."
        ),
    )
    replace_all: bool = Field(
        default=False,
        description="Replace every occurrence instead of requiring exactly one. Defaults to false.",
    )

    @model_validator(mode="after")
    def _old_and_new_differ(self) -> Self:
        if self.old_string == self.new_string:
            raise PydanticCustomError("differ", "old_string and new_string must differ")
        return self


@dataclass(frozen=True, slots=True)
class Edited:
    display_path: str
    outcome: FsEditOutcome


async def run_edit(ex: Execution, args: EditArgs) -> Edited:
    target = await ex.resolve(args.file_path)
    ex.step("edit")
    guard = await ex.edit_guard(target)
    ex.step("edit")  # an event set while the guard was decided aborts the edit
    request = FsEditRequest(args.old_string, args.new_string, args.replace_all)
    outcome = await ex.fs.edit_text(target, request, guard)
    ex.observed(target, outcome.version)
    return Edited(target.display_path, outcome)


def render(args: EditArgs, edited: Edited) -> ToolOutput:
    p, outcome = edited.display_path, edited.outcome
    return ToolOutput(
        render_edit(p, replace_all=args.replace_all),
        edit_value(p, outcome.before, outcome.after),
        diff_meta(args.file_path, outcome.before, outcome.after),
    )


EDIT = ToolSpec(
    name="edit",
    title="Edit file",
    arguments=EditArgs,
    description=(
        "Edit an existing UTF-8 text file by literal replacement of old_string with "
        "new_string (no regular expressions). old_string must match exactly once unless "
        "replace_all is true. Under the default fs-policy the file must have been read "
        "first in this session (any read window counts, as does an earlier write or edit) "
        "and must not have changed since."
    ),
    prompt=PromptSection(
        "tool:edit",
        102,
        "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces "
        "literal old_string with new_string; by default old_string must appear exactly once. "
        "If old_string appears multiple times, provide a more specific old_string or set "
        "replace_all to true. Read the file first (the default fs-policy requires it), unless "
        "you just created or edited it in this session.",
    ),
    annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=False),
    concurrency_safe=False,
    body=run_edit,
    render=render,
)
