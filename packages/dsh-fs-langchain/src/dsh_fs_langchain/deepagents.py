"""``DshFsBackend``: deepagents' ``BackendProtocol`` over any dsh-fs backend.

Each operation is one call of the host (:meth:`ToolFs.execute
<dsh_tool_fs.ToolFs.execute>`) in one session, turned into deepagents'
result type: the host's canonical value becomes the listing, the window or
the matches, and a refusal becomes the result's ``error``. So a deepagents
agent gets containment, atomic writes, line endings kept and the policy's
read-before-edit, and the model reads the host's exact ``Error: …`` text:
deepagents shows ``ls``/``read``/``glob``/``grep`` errors as ``Error:
<error>`` and ``write``/``edit``/``delete`` errors as they are, so the first
carry the host's message and the others its whole text.

``delete`` has no tool: it asks the policy for its guard (a file read at a
version is removed only at that version; a file never read is refused) and
removes the entry through ``fs.delete``, recursively, as deepagents asks.
"""

from __future__ import annotations

import posixpath
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

import anyio
from deepagents.backends.protocol import (
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileData,
    FileInfo,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from dsh_fs import FsError
from dsh_tool_fs import Execution, Session, ToolCall, ToolFs, ToolResult

__all__ = ["DshFsBackend"]

R = TypeVar("R")

_RE2_SPECIAL = frozenset("\\.^$|?*+()[]{}")


def literal_pattern(text: str) -> str:
    """An RE2 pattern matching ``text`` literally (deepagents' grep is a substring search)."""
    return "".join(f"\\{char}" if char in _RE2_SPECIAL else char for char in text)


def _message(result: ToolResult) -> str:
    """What deepagents prefixes with ``Error: `` so that the model reads ``result.text``."""
    assert result.error is not None
    return result.error.message


class DshFsBackend(BackendProtocol):
    """deepagents' file operations through ``toolfs``, in one conversation's ``session``.

    ``toolfs`` is the stack (backend, policy, tools): ``grep`` and ``glob``
    need the search tools (``dsh-tool-fs-search``, installed with the
    ``deepagents`` extra). Paths are the backend's own: deepagents hands
    absolute paths (``/home/me/project/app.py`` on the local backend), and
    one outside the workspace is refused. ``session`` is the conversation's
    (what the model has read; a new one by default). The async methods are
    the backend; each blocking one runs its async twin on an event loop of
    its own (use the agent's async API — ``ainvoke`` — with SFTP).
    """

    def __init__(self, toolfs: ToolFs, *, session: Session | None = None) -> None:
        self.toolfs = toolfs
        self.session = Session() if session is None else session

    async def _call(self, name: str, args: dict[str, Any]) -> ToolResult:
        return await self.toolfs.execute(name, args, session=self.session)

    # -- the async operations ------------------------------------------------------------

    async def als(self, path: str) -> LsResult:
        entries: list[FileInfo] = []
        while True:
            result = await self._call("list", {"path": path, "offset": len(entries) + 1})
            if result.is_error:
                return LsResult(error=_message(result))
            page = result.value or {}
            entries.extend(_entry(page["path"], entry) for entry in page["entries"])
            if not page["entries"] or len(entries) >= page["totalEntries"]:
                return LsResult(entries=entries)

    async def aread(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        if limit <= 0:
            return ReadResult(file_data=_text(""), no_lines_requested=True)
        window = {
            "file_path": file_path,
            "offset": max(offset, 0) + 1,
            "limit": min(limit, self.toolfs.config.read_limit),
        }
        result = await self._call("read", window)
        if result.is_error:
            return ReadResult(error=_message(result))
        page = result.value or {}
        lines = page["lines"]
        if not lines:
            return ReadResult(file_data=_text(""))
        first, last = lines[0]["number"], lines[-1]["number"]
        total = page.get("totalLines")
        return ReadResult(
            file_data=_text("\n".join(line["text"] for line in lines)),
            start_line=first,
            end_line=last,
            total_lines=total,
            next_offset=last if total is not None and last < total else None,
        )

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        result = await self._call("write", {"file_path": file_path, "content": content})
        if result.is_error:
            return WriteResult(error=result.text)
        return WriteResult(path=(result.value or {})["path"])

    async def aedit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> EditResult:
        args = {
            "file_path": file_path,
            "old_string": old_string,
            "new_string": new_string,
            "replace_all": replace_all,
        }
        result = await self._call("edit", args)
        if result.is_error:
            return EditResult(error=result.text)
        value = result.value or {}
        occurrences = value["before"].count(old_string) if replace_all else 1
        return EditResult(path=value["path"], occurrences=occurrences)

    async def agrep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
    ) -> GrepResult:
        args: dict[str, Any] = {"pattern": literal_pattern(pattern)}
        if path is not None:
            args["path"] = path
        if glob is not None:
            args["include"] = glob
        matches: list[GrepMatch] = []
        while True:
            result = await self._call("grep", {**args, "offset": len(matches) + 1})
            if result.is_error:
                return GrepResult(error=_message(result), matches=matches or None)
            page = result.value or {}
            matches.extend(
                GrepMatch(
                    path=posixpath.join(page["path"], m["path"]), line=m["line"], text=m["text"]
                )
                for m in page["matches"]
            )
            if max_count is not None and len(matches) > max_count:
                return GrepResult(matches=matches[:max_count], truncated=True)
            if not page["matches"] or len(matches) >= page["totalMatches"]:
                return GrepResult(matches=matches, truncated=bool(page.get("stopped")))

    async def aglob(self, pattern: str, path: str | None = None) -> GlobResult:
        args: dict[str, Any] = {"pattern": pattern}
        if path is not None:
            args["path"] = path
        files: list[FileInfo] = []
        while True:
            result = await self._call("glob", {**args, "offset": len(files) + 1})
            if result.is_error:
                return GlobResult(error=_message(result))
            page = result.value or {}
            files.extend(
                FileInfo(path=posixpath.join(page["path"], name), is_dir=False)
                for name in page["files"]
            )
            if not page["files"] or len(files) >= page["totalFiles"]:
                stopped = bool(page.get("stopped"))
                return GlobResult(
                    matches=files,
                    truncated=stopped,
                    truncation_reason="budget" if stopped else None,
                )

    async def adelete(self, file_path: str) -> DeleteResult:
        execution = Execution(
            fs=self.toolfs.fs,
            hook=self.toolfs.plugin_manager.hook,
            config=self.toolfs.config,
            actor=ToolCall(self.session, "delete"),
            cwd=self.session.cwd,
        )
        try:
            target = await execution.resolve(file_path)
            guard = await execution.delete_guard(target)
            execution.step("delete")
            await self.toolfs.fs.delete(target, recursive=True, expected=guard)
        except FsError as exc:
            return DeleteResult(error=ToolResult.from_fs_error(exc).text)
        execution.observed(target, None)
        return DeleteResult(path=target.display_path)

    # -- the blocking operations: each its async twin on a loop of its own --------------------

    def ls(self, path: str) -> LsResult:
        return _blocking(partial(self.als, path))

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        return _blocking(partial(self.aread, file_path, offset, limit))

    def write(self, file_path: str, content: str) -> WriteResult:
        return _blocking(partial(self.awrite, file_path, content))

    def edit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> EditResult:
        return _blocking(partial(self.aedit, file_path, old_string, new_string, replace_all))

    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
    ) -> GrepResult:
        return _blocking(partial(self.agrep, pattern, path, glob, max_count=max_count))

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        return _blocking(partial(self.aglob, pattern, path))

    def delete(self, file_path: str) -> DeleteResult:
        return _blocking(partial(self.adelete, file_path))


def _entry(directory: str, entry: dict[str, str]) -> FileInfo:
    """A listed entry as deepagents writes one: a directory's path ends with ``/``."""
    path = posixpath.join(directory, entry["name"])
    if entry["type"] == "directory":
        return FileInfo(path=f"{path}/", is_dir=True)
    return FileInfo(path=path, is_dir=False)


def _text(content: str) -> FileData:
    return FileData(content=content, encoding="utf-8")


def _blocking(call: Callable[[], Awaitable[R]]) -> R:
    async def run() -> R:
        return await call()

    return anyio.run(run)
