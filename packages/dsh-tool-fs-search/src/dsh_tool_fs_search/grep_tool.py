"""The ``grep`` tool: the lines of text files that match a regular expression, newest files first.

Seam calls: those of ``glob`` (:mod:`dsh_tool_fs_search.glob_tool`) to find
the files, then per file one ``read_text`` — or ``stream_text`` for a file of
at least ``read_stream_min_size`` bytes or of unknown size. No
``fs_observed``: a search result is not a read, so an edit still needs one.
"""

from __future__ import annotations

from typing import Self

from dsh_tool_fs import (
    Execution,
    Integer,
    NonBlank,
    PromptSection,
    ToolAnnotations,
    ToolArgumentError,
    ToolArguments,
    ToolOutput,
    ToolSpec,
    without_default,
)
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from .fast_path import fast_path_for
from .glob_tool import PATH_DESCRIPTION
from .globs import PathGlob
from .grep_page import GrepPage, GrepPageBuilder, grep_value, render_grep
from .lines import LineMatcher
from .search_files import search_files
from .walk import Deadline, open_scope, walk_candidates

__all__ = ["GREP", "GrepArgs", "run_grep"]


class GrepArgs(ToolArguments):
    """The arguments of ``grep``."""

    pattern: str = Field(
        min_length=1,
        description=(
            "Regular expression to search for, in RE2 syntax (no backreferences or "
            "lookaround). ^ and $ match at line starts and ends; a match never spans lines."
        ),
    )
    path: NonBlank = Field(
        default=".",
        description=PATH_DESCRIPTION.replace("Directory to search", "Directory or file to search"),
        json_schema_extra=without_default,
    )
    # "" stands for "not given" (a default is not validated; a given "" is refused).
    include: NonBlank = Field(
        default="",
        description=(
            "Glob the searched files' paths must match, as in the glob tool (*.py, "
            "src/**/*.{ts,tsx}). Defaults to every file."
        ),
        json_schema_extra=without_default,
    )
    ignore_case: bool = Field(
        default=False,
        description="Match letters case-insensitively. Defaults to false.",
    )
    offset: Integer = Field(
        default=1,
        ge=1,
        description="1-based number of the first match to show. Defaults to 1.",
    )

    @model_validator(mode="after")
    def _pattern_compiles(self) -> Self:
        # RE2 decides what a valid pattern is; its reason reaches the model as it says it.
        try:
            LineMatcher.compile(self.pattern, ignore_case=self.ignore_case)
        except ToolArgumentError as exc:
            raise PydanticCustomError("regex", "{message}", {"message": exc.message}) from None
        return self


async def run_grep(ex: Execution, args: GrepArgs) -> GrepPage:
    matcher = LineMatcher.compile(args.pattern, ignore_case=args.ignore_case)
    scope = await open_scope(ex, args.path, "grep")
    include = PathGlob.compile(args.include) if args.include else None
    cfg = ex.config
    deadline = Deadline(cfg.search_time_limit)
    page = GrepPageBuilder(
        offset=args.offset,
        max_matches=cfg.grep_max_matches,
        max_line_length=cfg.read_max_line_length,
        max_bytes=cfg.read_max_bytes,
    )
    fast = fast_path_for(ex.fs)
    complete = None
    if fast is not None:
        complete = await fast.grep(
            ex, scope, include=include, matcher=matcher, page=page, deadline=deadline
        )
    if complete is None:
        found = await walk_candidates(ex, scope, include=include, deadline=deadline)
        searched = await search_files(ex, found.files, matcher, page, deadline)
        complete = searched and not found.stopped
    return page.finish(
        scope.target.display_path, stopped=not complete, time_limit=cfg.search_time_limit
    )


def render(args: GrepArgs, page: GrepPage) -> ToolOutput:
    return ToolOutput(render_grep(page), grep_value(page))


GREP = ToolSpec(
    name="grep",
    title="Search file contents",
    arguments=GrepArgs,
    description=(
        "Search the contents of the text files beneath a directory (default: the session "
        "workspace), or of one file, for a regular expression. Returns the matching lines "
        "with their line numbers, grouped by file, newest files first, up to "
        "{grep_max_matches} matches per page; the footer gives the totals and, when more "
        "remain, the offset to continue with. include restricts the files by glob. Binary "
        "files, files ignored by .gitignore or .ignore and VCS directories are skipped, and "
        "symlinks are not followed."
    ),
    prompt=PromptSection(
        "tool:grep",
        104,
        "Use the grep tool — not shell grep or rg — to search file contents with a regular "
        "expression. It returns matching lines with line numbers, grouped by file; narrow it "
        "with path and include. A match is not a read: read the file before you edit it.",
    ),
    annotations=ToolAnnotations(read_only=True),
    concurrency_safe=True,
    body=run_grep,
    render=render,
)
