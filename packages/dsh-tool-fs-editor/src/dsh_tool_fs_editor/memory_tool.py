"""``memory``: Claude's memory tool (``memory_20250818``) on a directory the operator chooses.

Paths are ``/memories`` and what lies beneath it; they map onto the memory
directory — the host's tool option ``memory_dir`` (``ToolFs(tool_options=
{"memory_dir": ...})``, ``dsh-fs --memory-dir DIR``), by default ``memories``
in the session workspace — on whatever backend the host runs, and must stay
in it: a ``..`` segment, a path outside ``/memories`` and a link that leads
out of the memory directory are refused. The backend's workspace contains
the memory directory itself as it contains every path.

Commands and texts follow Anthropic's documentation of the memory tool:
``view``, ``create``, ``str_replace`` and ``insert`` as the text editor's
(:mod:`.editor_tool`, the same engine), ``delete`` (a file, or a directory
tree: ``delete(recursive=True)`` with the delete guard) and ``rename``
(``move`` with the move guard, never over an existing entry).
"""

from __future__ import annotations

from typing import Any, Literal, Self

from dsh_fs import FsError, FsErrorCode, FsTarget
from dsh_fs.preconditions import not_regular
from dsh_fs.workspace import is_beneath
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

from . import edits, views
from .editor_tool import _invalid, required_for, view_file
from .texts import human_size, lines_of, shown, snippet

__all__ = ["DEFAULT_MEMORY_DIR", "MEMORIES", "MEMORY", "MemoryArgs", "memory_relative"]

MEMORIES = "/memories"
"""The directory the model sees."""
DEFAULT_MEMORY_DIR = "memories"
"""The memory directory when the host names none: ``memories`` in the session workspace."""
_HIDDEN = "node_modules"


class MemoryArgs(ToolArguments):
    """The arguments of the memory tool: one ``command`` and the parameters it takes."""

    command: Literal["view", "create", "str_replace", "insert", "delete", "rename"] = Field(
        description="The command to run: view, create, str_replace, insert, delete or rename.",
    )
    path: NonBlank | None = Field(
        default=None,
        description="A path under /memories (every command but rename).",
    )
    file_text: str | None = Field(default=None, description="create: the content of the file.")
    view_range: list[Integer] | None = Field(
        default=None,
        description="view of a file: [start_line, end_line], 1-based; -1 ends at the last line.",
    )
    old_str: str | None = Field(
        default=None,
        min_length=1,
        description="str_replace: the literal text to replace; it must occur exactly once.",
    )
    new_str: str | None = Field(
        default=None,
        description=(
            "str_replace: the replacement (empty or absent deletes old_str). insert: the "
            "text, when insert_text is not given."
        ),
    )
    insert_line: Integer | None = Field(
        default=None,
        description="insert: the line after which the text goes; 0 inserts before the first line.",
    )
    insert_text: str | None = Field(default=None, description="insert: the text to insert.")
    old_path: NonBlank | None = Field(default=None, description="rename: the path to move.")
    new_path: NonBlank | None = Field(default=None, description="rename: its new path.")

    @model_validator(mode="after")
    def _parameters_of_the_command(self) -> Self:
        if self.command != "rename" and self.path is None:
            raise _invalid(f"Parameter `path` is required for command: {self.command}")
        required_for(self, self.command)
        return self


def memory_relative(path: str) -> str:
    """The path beneath the memory directory that ``path`` (``/memories/…``) names.

    ``/memories`` itself is ``""``; empty and ``.`` segments are dropped. A
    path outside ``/memories`` and a ``..`` segment are refused
    (``FS_OUTSIDE_WORKSPACE``) before anything is resolved.
    """
    if path != MEMORIES and not path.startswith(MEMORIES + "/"):
        raise FsError(
            f"Path must start with {MEMORIES}, got: {shown(path)}", FsErrorCode.FS_OUTSIDE_WORKSPACE
        )
    parts = [part for part in path[len(MEMORIES) :].split("/") if part not in ("", ".")]
    if ".." in parts:
        raise FsError(
            f"Path {shown(path)} would escape {MEMORIES} directory",
            FsErrorCode.FS_OUTSIDE_WORKSPACE,
        )
    return "/".join(parts)


async def memory_target(ex: Execution, path: str, verb: str) -> tuple[FsTarget, bool]:
    """The target of ``path`` in the memory directory, and whether it is that directory.

    Resolved by the backend (contained to its workspace), then required to lie
    beneath the resolved memory directory: a link that leads out is refused.
    """
    relative = memory_relative(path)
    root = await ex.resolve(str(ex.options.get("memory_dir", DEFAULT_MEMORY_DIR)), verb)
    if not relative:
        return root, True
    target = await ex.resolve(f"{root.display_path.rstrip('/')}/{relative}", verb)
    if not is_beneath(target.target_key, root.target_key):
        raise FsError(
            f"Path {shown(path)} would escape {MEMORIES} directory",
            FsErrorCode.FS_OUTSIDE_WORKSPACE,
        )
    return target, False


async def run_memory(ex: Execution, args: MemoryArgs) -> ToolOutput:
    if args.command == "rename":
        return await rename(ex, args.old_path or "", args.new_path or "")
    path = args.path or ""
    p = shown(path)
    target, is_root = await memory_target(ex, path, args.command)
    try:
        if args.command == "view":
            return await view(ex, target, p, args.view_range, is_root)
        if args.command == "create":
            changed = await edits.create_file(ex, target, args.file_text or "")
            return ToolOutput(
                f"File created successfully at: {p}",
                _value(target, changed),
                diff_meta(path, None, changed.after),
            )
        if args.command == "str_replace":
            return await str_replace(ex, target, path, args.old_str or "", args.new_str or "")
        if args.command == "insert":
            text = args.insert_text if args.insert_text is not None else args.new_str
            changed = await edits.insert_lines(ex, target, args.insert_line or 0, text or "")
            return ToolOutput(
                f"The file {p} has been edited.",
                _value(target, changed),
                diff_meta(path, changed.before, changed.after),
            )
        return await delete(ex, target, p, is_root)
    except edits.InsertOutOfRange as out:
        raise edits.out_of_range(args.insert_line, out) from None
    except FsError as exc:
        raise await _in_documented_words(ex, target, p, args, exc) from exc


async def view(
    ex: Execution, target: FsTarget, p: str, view_range: list[int] | None, is_root: bool
) -> ToolOutput:
    """A file's numbered lines, or a directory's tree with sizes (a missing memory
    directory is an empty one: nothing has been remembered yet)."""
    ex.step("stat")
    info = await ex.fs.stat(target)
    if info is None and is_root:
        return _tree(p, target, [])
    if info is None:
        ex.observed(target, None)
        raise FsError.cannot("view", p, "not found", FsErrorCode.FS_NOT_FOUND)
    if info.type == "directory":
        if view_range is not None:
            raise FsError(
                "The `view_range` parameter is not allowed when `path` points to a directory.",
                FsErrorCode.FS_NOT_REGULAR_FILE,
            )
        skip = lambda name: name.startswith(".") or name == _HIDDEN  # noqa: E731
        return _tree(p, target, await views.walk_tree(ex, target, skip=skip))
    if info.type != "file":
        raise not_regular("view", p)
    header = f"Here's the content of {p} with line numbers:"
    return await view_file(ex, target, p, info.version, view_range, header)


def _tree(p: str, target: FsTarget, entries: list[views.TreeEntry]) -> ToolOutput:
    base = p.rstrip("/") or "/"
    total = sum(e.size for e in entries if not e.directory)
    rows = [f"{human_size(total)}\t{p}"]
    for e in entries:
        slash = "/" if e.directory else ""
        rows.append(f"{human_size(e.size)}\t{base}/{shown(e.relative)}{slash}")
    text = (
        f"Here're the files and directories up to 2 levels deep in {p}, excluding hidden "
        "items and node_modules:\n" + "\n".join(rows)
    )
    value = {
        "path": target.display_path,
        "entries": [
            {"path": e.relative, "type": "directory" if e.directory else "file", "size": e.size}
            for e in entries
        ],
    }
    return ToolOutput(text, value)


async def str_replace(ex: Execution, target: FsTarget, path: str, old: str, new: str) -> ToolOutput:
    changed = await edits.replace_once(ex, target, old, new)
    before = changed.before or ""
    common = next(
        (i for i, (a, b) in enumerate(zip(before, changed.after, strict=False)) if a != b),
        min(len(before), len(changed.after)),
    )
    line = before[:common].count("\n")
    lines = lines_of(changed.after)
    start, stop = max(0, line - 2), min(len(lines), line + 3)
    text = (
        "The memory file has been edited. Here is the snippet showing the change (with line "
        f"numbers):\n{snippet(lines[start:stop], start + 1)}"
    )
    return ToolOutput(text, _value(target, changed), diff_meta(path, changed.before, changed.after))


async def delete(ex: Execution, target: FsTarget, p: str, is_root: bool) -> ToolOutput:
    """A file, a link or a directory tree, at once; the memory directory itself never."""
    if is_root:
        raise FsError(
            f"Cannot delete the {MEMORIES} directory itself", FsErrorCode.FS_PERMISSION_DENIED
        )
    ex.step("delete")
    guard = await ex.delete_guard(target)
    ex.step("delete")
    await ex.fs.delete(target, recursive=True, expected=guard)
    ex.observed(target, None)
    return ToolOutput(f"Successfully deleted {p}", {"path": target.display_path, "deleted": True})


async def rename(ex: Execution, old_path: str, new_path: str) -> ToolOutput:
    """Move an entry within the memory directory; an existing destination is never replaced."""
    old_p, new_p = shown(old_path), shown(new_path)
    source, source_is_root = await memory_target(ex, old_path, "move")
    destination, destination_is_root = await memory_target(ex, new_path, "move to")
    if source_is_root or destination_is_root:
        raise FsError(
            f"Cannot rename the {MEMORIES} directory itself", FsErrorCode.FS_PERMISSION_DENIED
        )
    try:
        ex.step("move")
        guard = await ex.move_guard(source, destination)
        ex.step("move")
        outcome = await ex.fs.move(source, destination, replace=False, expected=guard)
    except FsError as exc:
        if exc.code == FsErrorCode.FS_NOT_FOUND and exc.message.endswith(": not found"):
            raise FsError(f"The path {old_p} does not exist", exc.code) from exc
        if exc.code == FsErrorCode.FS_ALREADY_EXISTS:
            raise FsError(f"The destination {new_p} already exists", exc.code) from exc
        raise
    ex.observed(source, None)
    if outcome.version is not None:
        ex.observed(destination, outcome.version)
    value = {"old_path": source.display_path, "new_path": destination.display_path}
    return ToolOutput(f"Successfully renamed {old_p} to {new_p}", value)


def _value(target: FsTarget, changed: edits.Changed) -> dict[str, Any]:
    return {"path": target.display_path, "before": changed.before, "after": changed.after}


async def _in_documented_words(
    ex: Execution, target: FsTarget, p: str, args: MemoryArgs, exc: FsError
) -> FsError:
    """A refusal in the documentation's words where it has some; ours otherwise."""
    code, command = exc.code, args.command
    missing = code == FsErrorCode.FS_NOT_FOUND and exc.message.endswith(": not found")
    if command in ("view", "str_replace") and (
        missing or (command == "str_replace" and code == FsErrorCode.FS_NOT_REGULAR_FILE)
    ):
        return FsError(f"The path {p} does not exist. Please provide a valid path.", code)
    if command in ("insert", "delete") and (
        missing or (command == "insert" and code == FsErrorCode.FS_NOT_REGULAR_FILE)
    ):
        return FsError(f"The path {p} does not exist", code)
    if command == "create" and code in (
        FsErrorCode.FS_NOT_OBSERVED,
        FsErrorCode.FS_NOT_REGULAR_FILE,
    ):
        return FsError(f"File {p} already exists", FsErrorCode.FS_ALREADY_EXISTS)
    refusal = await edits.match_refusal(ex, target, p, args.old_str or "", exc, "lines: {joined}")
    return exc if refusal is None else refusal


def _rendered(args: MemoryArgs, output: ToolOutput) -> ToolOutput:
    return output


def _builtin(config: ToolFsConfig) -> dict[str, Any]:
    return {"type": "memory_20250818", "name": "memory"}


MEMORY = ToolSpec(
    name="memory",
    title="Memory",
    arguments=MemoryArgs,
    description=(
        "Your memory directory, /memories, kept between sessions (Claude's memory tool). "
        "view lists a directory two levels deep or shows a file with line numbers; create "
        "makes a new file; str_replace and insert edit one; delete removes a file or a "
        "directory tree; rename moves one (old_path, new_path) and never overwrites. Under "
        "the default fs-policy view a memory before you change it."
    ),
    prompt=PromptSection(
        "tool:memory",
        105,
        "Use the memory tool to keep what you learn in /memories between sessions: view the "
        "directory before you start, view a memory before you change it, and keep it "
        "up to date and organized.",
    ),
    annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=False),
    concurrency_safe=False,
    body=run_memory,
    render=_rendered,
    builtins={"anthropic": _builtin},
)
