"""The ``glob`` tool: the files beneath a directory whose paths match a glob, newest first.

Seam calls: ``resolve``, one ``stat``, the ignore files above the directory
(``resolve`` + ``read_text`` each), then per directory walked one
``list_dir(stat=True)`` and a ``read_text`` per ignore file in it. No
``fs_observed``: a file name seen is not a file read.
"""

from __future__ import annotations

from dsh_tool_fs import (
    Execution,
    Integer,
    NonBlank,
    PromptSection,
    ToolAnnotations,
    ToolArguments,
    ToolOutput,
    ToolSpec,
    without_default,
)
from pydantic import Field

from .fast_path import fast_path_for
from .glob_page import GlobPage, build_glob_page, glob_value, render_glob
from .globs import PathGlob
from .walk import Deadline, open_scope, walk_candidates

__all__ = ["GLOB", "GlobArgs", "run_glob"]

PATH_DESCRIPTION = (
    "Directory to search, absolute or relative to the session workspace. "
    "Defaults to the session workspace."
)


class GlobArgs(ToolArguments):
    """The arguments of ``glob``."""

    pattern: str = Field(
        min_length=1,
        description=(
            "Glob the file paths must match, relative to path: * and ? within a segment, "
            "** across segments, [abc], {a,b}. Without a / it matches file names at any "
            "depth (*.py); with one, whole paths (src/**/*.ts)."
        ),
    )
    path: NonBlank = Field(
        default=".",
        description=PATH_DESCRIPTION,
        json_schema_extra=without_default,
    )
    offset: Integer = Field(
        default=1,
        ge=1,
        description="1-based number of the first file to show. Defaults to 1.",
    )


async def run_glob(ex: Execution, args: GlobArgs) -> GlobPage:
    scope = await open_scope(ex, args.path, "glob")
    pattern = PathGlob.compile(args.pattern)
    cfg = ex.config
    deadline = Deadline(cfg.search_time_limit)
    # Only the files up to the page's end are put in order (and the count of all).
    first = args.offset - 1 + cfg.glob_max_results
    fast = fast_path_for(ex.fs)
    found = None
    if fast is not None:
        found = await fast.candidates(ex, scope, include=pattern, deadline=deadline, first=first)
    if found is None:
        found = await walk_candidates(ex, scope, include=pattern, deadline=deadline, first=first)
    await ex.advance(found.total, remaining=0, message=f"{found.total} files found")
    return build_glob_page(
        [candidate.path for candidate in found.files],
        display_path=scope.target.display_path,
        offset=args.offset,
        max_results=cfg.glob_max_results,
        max_bytes=cfg.read_max_bytes,
        stopped=found.stopped,
        time_limit=cfg.search_time_limit,
        total=found.total,
    )


def render(args: GlobArgs, page: GlobPage) -> ToolOutput:
    return ToolOutput(render_glob(page), glob_value(page))


GLOB = ToolSpec(
    name="glob",
    title="Find files",
    arguments=GlobArgs,
    description=(
        "Find files by glob pattern beneath a directory (default: the session workspace). "
        "Returns their paths relative to that directory, newest first, up to "
        "{glob_max_results} per page; the footer gives the total and, when more remain, the "
        "offset to continue with. Files ignored by .gitignore or .ignore and VCS directories "
        "are skipped, and symlinks are not followed."
    ),
    prompt=PromptSection(
        "tool:glob",
        103,
        "Use the glob tool — not shell find or ls -R — to find files by name or path pattern, "
        "such as **/*.py or src/**/test_*.ts. Results are newest first and skip what .gitignore "
        "excludes; to look inside an ignored directory, pass it as path.",
    ),
    annotations=ToolAnnotations(read_only=True),
    concurrency_safe=True,
    body=run_glob,
    render=render,
)
