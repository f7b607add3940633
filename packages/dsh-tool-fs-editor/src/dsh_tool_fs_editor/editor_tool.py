"""``str_replace_based_edit_tool``: Claude's text editor (``text_editor_20250728``).

Commands ``view``, ``create``, ``str_replace`` and ``insert``, with the
parameters, results and error texts of Anthropic's documentation and its
reference implementation, executed on the seam's guarantees (:mod:`.edits`,
:mod:`.views`): ``view`` is a read (an observation, any ``view_range``
included), ``str_replace`` is the ``edit`` tool's edit, ``insert`` a guarded
edit, ``create`` a ``CreateIfAbsent`` write. Where ours differ (the package
README): relative paths are allowed, tabs are never expanded, CRLF and BOM
are kept, writes are atomic, the workspace contains every path, and
``undo_edit`` does not exist.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from dsh_fs import FsError, FsErrorCode, FsTarget
from dsh_fs.preconditions import not_regular
from dsh_tool_fs import (
    Execution,
    Integer,
    NonBlank,
    PromptSection,
    ToolAnnotations,
    ToolArguments,
    ToolFsConfig,
    ToolOutput,
    ToolSpec,
)
from dsh_tool_fs.diff_meta import diff_meta
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from . import edits, views
from .texts import CLIPPED, clipped_note, lines_of, numbered, shown, snippet

__all__ = ["TEXT_EDITOR", "TextEditorArgs"]

NAME = "str_replace_based_edit_tool"
SNIPPET_LINES = 4
MAX_LINES = 999_999
"""The most lines a file ``view`` shows the numbers of (six digits), as the reference says."""
"""Lines of context around an edit in its snippet, as the reference shows them."""
_REVIEW = "Review the changes and make sure they are as expected. Edit the file again if necessary."
_REVIEW_INSERT = (
    "Review the changes and make sure they are as expected (correct indentation, no duplicate "
    "lines, etc). Edit the file again if necessary."
)


class TextEditorArgs(ToolArguments):
    """The arguments of the text editor: one ``command`` and the parameters it takes."""

    command: Literal["view", "create", "str_replace", "insert"] = Field(
        description="The command to run: view, create, str_replace or insert.",
    )
    path: NonBlank = Field(
        description="File or directory, absolute or relative to the session workspace.",
    )
    file_text: str | None = Field(
        default=None,
        description="create: the content of the new file.",
    )
    view_range: list[Integer] | None = Field(
        default=None,
        description=(
            "view of a file: [start_line, end_line], 1-based and inclusive; end_line -1 "
            "shows to the end of the file. Without it the whole file is shown."
        ),
    )
    old_str: str | None = Field(
        default=None,
        min_length=1,
        description="str_replace: the literal text to replace; it must occur exactly once.",
    )
    new_str: str | None = Field(
        default=None,
        description=(
            "str_replace: the replacement (empty or absent deletes old_str). insert: the text "
            "to insert, when insert_text is not given."
        ),
    )
    insert_line: Integer | None = Field(
        default=None,
        description="insert: the line after which the text goes; 0 inserts before the first line.",
    )
    insert_text: str | None = Field(
        default=None,
        description="insert: the text to insert.",
    )

    @model_validator(mode="after")
    def _parameters_of_the_command(self) -> Self:
        required_for(self, self.command)
        return self


def required_for(args: Any, command: str) -> None:
    """The reference's refusals of a command without its parameters, and of a malformed
    ``view_range`` (``Invalid `view_range`…``)."""
    needed = {
        "create": ("file_text",),
        "str_replace": ("old_str",),
        "insert": ("insert_line",),
        "rename": ("old_path", "new_path"),
    }.get(command, ())
    for name in needed:
        if getattr(args, name) is None:
            raise _invalid(f"Parameter `{name}` is required for command: {command}")
    if command == "insert" and args.insert_text is None and args.new_str is None:
        raise _invalid("Parameter `insert_text` is required for command: insert")
    view_range = getattr(args, "view_range", None)
    if command == "view" and view_range is not None:
        if len(view_range) != 2:
            raise _invalid("Invalid `view_range`. It should be a list of two integers.")
        start, end = view_range
        if end != -1 and end < start:
            raise _invalid(
                f"Invalid `view_range`: {view_range}. Its second element `{end}` should be "
                f"larger or equal than its first `{start}`"
            )


def _invalid(message: str) -> PydanticCustomError:
    return PydanticCustomError("command_parameters", message)


async def run_editor(ex: Execution, args: TextEditorArgs) -> ToolOutput:
    p = shown(args.path)
    target = await ex.resolve(args.path, args.command)
    try:
        if args.command == "view":
            return await view(ex, target, p, args.view_range)
        if args.command == "create":
            return await create(ex, target, args.path, args.file_text or "")
        if args.command == "str_replace":
            return await str_replace(ex, target, args.path, args.old_str or "", args.new_str or "")
        text = args.insert_text if args.insert_text is not None else args.new_str
        return await insert(ex, target, args.path, args.insert_line or 0, text or "")
    except FsError as exc:
        raise await _in_reference_words(ex, target, p, args, exc) from exc


_TREE_HEADER = (
    "Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:"
)


async def view(ex: Execution, target: FsTarget, p: str, view_range: list[int] | None) -> ToolOutput:
    """The text editor's ``view``: numbered lines of a file, or the tree of a directory."""
    info = await views.entry_of(ex, target)
    if info.type == "directory":
        if view_range is not None:
            raise FsError(
                "The `view_range` parameter is not allowed when `path` points to a directory.",
                FsErrorCode.FS_NOT_REGULAR_FILE,
            )
        return await _view_tree(ex, target, p)
    if info.type != "file":
        raise not_regular("view", p)
    header = f"Here's the result of running `cat -n` on {p}:"
    return await view_file(ex, target, p, info.version, view_range, header)


async def view_file(
    ex: Execution,
    target: FsTarget,
    p: str,
    version: str,
    view_range: list[int] | None,
    header: str,
) -> ToolOutput:
    """``header``, then the numbered lines of ``view_range`` (default: all) of the file at
    ``version``, clipped to ``editor_max_characters`` with a note; an observation."""
    start, end = (1, None) if view_range is None else (view_range[0], view_range[1])
    end = None if end == -1 else end
    window = await views.read_window(ex, target, max(1, start), end)
    total = window.total_lines
    if view_range is not None:
        _check_range(view_range, total)
    if total > MAX_LINES:
        raise FsError(
            f"File {p} exceeds maximum line limit of 999,999 lines.",
            FsErrorCode.FS_TOO_LARGE,
        )
    ex.observed(target, version)
    lines, left_out = views.clip_lines(
        list(window.lines), ex.config.editor_max_characters, numbered
    )
    if left_out is None and window.capped:
        left_out = window.end + 1
    text = header + "\n" + "".join(f"{x}\n" for x in lines)
    if left_out is not None:
        text += clipped_note(left_out, end) + "\n"
    value = {
        "path": target.display_path,
        "lines": [{"number": n, "text": t} for n, t in window.lines[: len(lines)]],
        "totalLines": total,
    }
    return ToolOutput(text, value)


def _check_range(view_range: list[int], total: int) -> None:
    start, end = view_range
    if not 1 <= start <= total:
        raise FsError(
            f"Invalid `view_range`: {view_range}. Its first element `{start}` should be "
            f"within the range of lines of the file: {[1, total]}",
            FsErrorCode.FS_NOT_FOUND,
        )
    if end > total:
        raise FsError(
            f"Invalid `view_range`: {view_range}. Its second element `{end}` should be "
            f"smaller than the number of lines in the file: `{total}`",
            FsErrorCode.FS_NOT_FOUND,
        )


async def _view_tree(ex: Execution, target: FsTarget, p: str) -> ToolOutput:
    entries = await views.walk_tree(ex, target, skip=lambda name: name.startswith("."))
    base = p.rstrip("/") or "/"
    join = "" if base.endswith("/") else "/"
    rows = [p, *(f"{base}{join}{shown(e.relative)}" for e in entries)]
    lines, left_out = views.clip_lines(
        list(enumerate(rows)), ex.config.editor_max_characters, lambda _, row: row
    )
    text = _TREE_HEADER.format(path=p) + "\n" + "".join(f"{line}\n" for line in lines)
    if left_out is not None:
        text += CLIPPED.format(what="directory") + " View a subdirectory to see more.</NOTE>\n"
    value = {
        "path": target.display_path,
        "entries": [
            {"path": e.relative, "type": "directory" if e.directory else "file"} for e in entries
        ],
    }
    return ToolOutput(text, value)


async def create(ex: Execution, target: FsTarget, path: str, text: str) -> ToolOutput:
    changed = await edits.create_file(ex, target, text)
    return ToolOutput(
        f"File created successfully at: {shown(path)}",
        _change_value(target, changed),
        diff_meta(path, None, changed.after),
    )


async def str_replace(ex: Execution, target: FsTarget, path: str, old: str, new: str) -> ToolOutput:
    changed = await edits.replace_once(ex, target, old, new)
    p = shown(path)
    before = changed.before or ""
    line = before[: _common_prefix(before, changed.after)].count("\n")
    start = max(0, line - SNIPPET_LINES)
    stop = line + SNIPPET_LINES + new.count("\n") + 1
    text = (
        f"The file {p} has been edited. Here's the result of running `cat -n` on a snippet "
        f"of {p}:\n{snippet(lines_of(changed.after)[start:stop], start + 1)}\n{_REVIEW}"
    )
    return ToolOutput(
        text, _change_value(target, changed), diff_meta(path, changed.before, changed.after)
    )


async def insert(ex: Execution, target: FsTarget, path: str, line: int, new: str) -> ToolOutput:
    changed = await edits.insert_lines(ex, target, line, new)
    added = edits.count_lines(new if new.endswith("\n") else new + "\n")
    start = max(0, line - SNIPPET_LINES)
    stop = line + added + SNIPPET_LINES
    text = (
        f"The file {shown(path)} has been edited. Here's the result of running `cat -n` on a "
        f"snippet of the edited file:\n{snippet(lines_of(changed.after)[start:stop], start + 1)}\n"
        f"{_REVIEW_INSERT}"
    )
    return ToolOutput(
        text, _change_value(target, changed), diff_meta(path, changed.before, changed.after)
    )


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _change_value(target: FsTarget, changed: edits.Changed) -> dict[str, Any]:
    return {"path": target.display_path, "before": changed.before, "after": changed.after}


async def _in_reference_words(
    ex: Execution, target: FsTarget, p: str, args: TextEditorArgs, exc: FsError
) -> FsError:
    """A refusal in the reference implementation's words where it has some; ours otherwise."""
    code, command = exc.code, args.command
    if code == FsErrorCode.FS_NOT_FOUND and exc.message.endswith(": not found"):
        return FsError(f"The path {p} does not exist. Please provide a valid path.", code)
    if command == "create" and code in (
        FsErrorCode.FS_NOT_OBSERVED,
        FsErrorCode.FS_NOT_REGULAR_FILE,
    ):
        return FsError(
            f"File already exists at: {p}. Cannot overwrite files using command `create`.",
            FsErrorCode.FS_ALREADY_EXISTS,
        )
    if code == FsErrorCode.FS_NOT_REGULAR_FILE and command in ("str_replace", "insert"):
        info = await ex.fs.stat(target)
        if info is not None and info.type == "directory":
            return FsError(
                f"The path {p} is a directory and only the `view` command can be used on "
                "directories",
                code,
            )
    refusal = await edits.match_refusal(ex, target, p, args.old_str or "", exc, "lines {list}")
    return exc if refusal is None else refusal


async def _body(ex: Execution, args: TextEditorArgs) -> ToolOutput:
    try:
        return await run_editor(ex, args)
    except edits.InsertOutOfRange as out:
        raise edits.out_of_range(args.insert_line, out) from None


def _rendered(args: TextEditorArgs, output: ToolOutput) -> ToolOutput:
    return output


def _builtin(config: ToolFsConfig) -> dict[str, Any]:
    return {
        "type": "text_editor_20250728",
        "name": NAME,
        "max_characters": config.editor_max_characters,
    }


TEXT_EDITOR = ToolSpec(
    name=NAME,
    title="Text editor",
    arguments=TextEditorArgs,
    description=(
        "View, create and edit UTF-8 text files (Claude's text editor). view shows a file "
        "with line numbers (view_range [start, end] for part of it; at most "
        "{editor_max_characters} characters, with a note on how to see the rest) or lists a "
        "directory two levels deep; create makes a new file and never overwrites one; "
        "str_replace replaces old_str, which must occur exactly once, with new_str; insert "
        "adds insert_text after line insert_line (0: at the top). Under the default "
        "fs-policy a file must be viewed before str_replace or insert, and must not have "
        "changed since."
    ),
    prompt=PromptSection(
        "tool:str_replace_based_edit_tool",
        104,
        "Use the str_replace_based_edit_tool to view files and directories and to make "
        "targeted edits: view a file before you change it (the default fs-policy requires "
        "it), make old_str unique by including surrounding lines, and create only new files.",
    ),
    annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=False),
    concurrency_safe=False,
    body=_body,
    render=_rendered,
    builtins={"anthropic": _builtin},
)
