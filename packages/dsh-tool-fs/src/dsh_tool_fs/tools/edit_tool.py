"""The ``edit`` tool: literal replacement inside one existing text file.

Seam calls (SPEC 5.5): ``resolve``, ``fs_edit_intent`` (no ``stat``),
``edit_text``, ``fs_observed`` with the outcome's version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from dsh_fs import FsEditOutcome, FsEditRequest

from ..arguments import Argument, ArgumentCheck
from ..definitions import PromptSection, ToolAnnotations
from ..diff_meta import diff_meta
from ..execution import Execution
from ..mutation_render import edit_value, render_edit
from ..spec import ToolOutput, ToolSpec


@dataclass(frozen=True, slots=True)
class EditArgs:
    file_path: Annotated[
        str,
        Argument("File to edit, absolute or relative to the session workspace.", not_blank=True),
    ]
    old_string: Annotated[
        str, Argument("The literal text to replace; must not be empty.", not_empty=True)
    ]
    new_string: Annotated[
        str,
        Argument(
            "The literal replacement text; must differ from old_string. An empty "
            "string deletes the match."
        ),
    ]
    replace_all: Annotated[
        bool,
        Argument(
            "Replace every occurrence instead of requiring exactly one. Defaults to false.",
            default=False,
        ),
    ]


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


def _old_and_new_differ(args: EditArgs) -> bool:
    return args.old_string != args.new_string


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
    checks=(ArgumentCheck("old_string and new_string must differ", _old_and_new_differ),),
)
