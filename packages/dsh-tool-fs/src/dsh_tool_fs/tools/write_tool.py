"""The ``write`` tool: create a text file or replace all of it.

Seam calls, and nothing more: ``resolve``, ``fs_write_intent`` (no ``stat``),
``write_text``, ``fs_observed`` with the outcome's version.
"""

from __future__ import annotations

from dataclasses import dataclass

from dsh_fs import FsWriteOutcome
from pydantic import Field

from ..arguments import FilePath, ToolArguments
from ..definitions import PromptSection, ToolAnnotations
from ..diff_meta import diff_meta
from ..execution import Execution
from ..mutation_render import render_write, write_value
from ..spec import ToolOutput, ToolSpec


class WriteArgs(ToolArguments):
    """The arguments of ``write``."""

    file_path: FilePath = Field(
        description="File to write, absolute or relative to the session workspace.",
    )
    content: str = Field(description="The complete new UTF-8 text of the file.")


@dataclass(frozen=True, slots=True)
class Written:
    display_path: str
    outcome: FsWriteOutcome


async def run_write(ex: Execution, args: WriteArgs) -> Written:
    target = await ex.resolve(args.file_path)
    ex.step("write")
    intent = await ex.write_intent(target)
    ex.step("write")  # an event set while the intent was decided aborts the write
    outcome = await ex.fs.write_text(target, args.content, intent)
    ex.observed(target, outcome.version)
    return Written(target.display_path, outcome)


def render(args: WriteArgs, written: Written) -> ToolOutput:
    p, outcome = written.display_path, written.outcome
    return ToolOutput(
        render_write(p, outcome.operation),
        write_value(p, outcome.operation, outcome.before, outcome.after),
        diff_meta(args.file_path, outcome.before, outcome.after),
    )


WRITE = ToolSpec(
    name="write",
    title="Write file",
    arguments=WriteArgs,
    description=(
        "Create a UTF-8 text file or completely replace its contents; missing parent "
        "directories are created. Creating a new file needs no prior read, but under the "
        "default fs-policy overwriting an existing file requires having read it first in "
        "this session, and fails if it changed since. Prefer edit for targeted changes."
    ),
    prompt=PromptSection(
        "tool:write",
        101,
        "Use the write tool to create files or completely replace file contents. Existing "
        "files are overwritten, so read an existing file first (the default fs-policy requires "
        "it) and prefer edit for targeted changes.",
    ),
    annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=True),
    concurrency_safe=False,
    body=run_write,
    render=render,
)
