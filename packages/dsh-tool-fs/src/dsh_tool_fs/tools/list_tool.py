"""The ``list`` tool: the direct children of one directory, one page at a time.

Seam calls, and nothing more: ``resolve``, one ``list_dir(stat=False)``. No
``stat`` and no ``fs_observed``: seeing a name is not reading a file.
"""

from __future__ import annotations

from pydantic import Field

from ..arguments import Integer, NonBlank, ToolArguments, without_default
from ..definitions import PromptSection, ToolAnnotations
from ..execution import Execution
from ..list_render import ListPage, build_list_page, list_value, render_list
from ..spec import ToolOutput, ToolSpec


class ListArgs(ToolArguments):
    """The arguments of ``list``."""

    path: NonBlank = Field(
        default=".",
        description=(
            "Directory to list, absolute or relative to the session workspace. "
            "Defaults to the session workspace."
        ),
        json_schema_extra=without_default,
    )
    offset: Integer = Field(
        default=1,
        ge=1,
        description="1-based number of the first entry to show. Defaults to 1.",
    )


async def run_list(ex: Execution, args: ListArgs) -> ListPage:
    target = await ex.resolve(args.path)
    ex.step("list")
    entries = await ex.fs.list_dir(target, stat=False)
    return build_list_page(
        entries,
        display_path=target.display_path,
        offset=args.offset,
        max_entries=ex.config.list_max_entries,
    )


def render(args: ListArgs, page: ListPage) -> ToolOutput:
    return ToolOutput(render_list(page), list_value(page))


LIST = ToolSpec(
    name="list",
    title="List directory",
    arguments=ListArgs,
    description=(
        "List the direct children of one directory with their types: directories first, "
        "then files, then other entries, each group in alphabetical order. Directories end "
        "with /, other entries with @. Shows up to {list_max_entries} entries per page; the "
        "footer gives the complete count and, when more remain, the offset to continue with."
    ),
    prompt=PromptSection(
        "tool:list",
        99,
        "Use the list tool — not shell ls — to see what a directory contains. It returns the "
        "direct children of one directory, files and subdirectories alike, and defaults to the "
        "session workspace, so it is the first step for orienting in an unfamiliar project. "
        "When a result is capped, continue with the offset named in its footer.",
    ),
    annotations=ToolAnnotations(read_only=True),
    concurrency_safe=True,
    body=run_list,
    render=render,
)
