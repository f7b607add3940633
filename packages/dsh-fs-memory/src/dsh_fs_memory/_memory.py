"""``MemoryFileSystem``: a complete dsh-fs backend over an in-memory tree.

It is also the template for a third-party backend. The storage is in
``_tree.py``, standing for what a real backend gets from its OS or service:
one flat dict from *physical* paths (no symlink in any parent segment) to
nodes, and the out-of-band helpers tests use. A mutation commits with one
dict assignment after its last ``await``, so a reader never sees a partial
write and a cancelled write changes nothing. ``_walk`` is where a path
reaches a node and where workspace containment is enforced. Every
primitive walks its target again when it touches it, refuses before any
other answer, and then answers with the seam's shared rules
(``dsh_fs.preconditions``, ``dsh_fs.text``, ``dsh_fs.streaming``,
``dsh_fs.locks``). Removing and moving entries, and batches, are in
``_entries.py``.
"""

from __future__ import annotations

import copy
import errno
import os
import posixpath
from collections.abc import AsyncIterator, Iterable, Mapping

from anyio.lowlevel import checkpoint, checkpoint_if_cancelled
from dsh_fs import (
    EditGuard,
    EntryType,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsWriteOutcome,
    WriteIntent,
)
from dsh_fs.preconditions import (
    check_edit,
    check_write,
    not_directory,
    not_found,
    not_regular,
    parent_not_directory,
)
from dsh_fs.streaming import TextStream
from dsh_fs.text import apply_edit, decode_previous, decode_text, encode_text, written_text
from dsh_fs.workspace import CWD_ROOT, RootsOption, Workspace, outside_workspace

from ._entries import Entries
from ._tree import Node, OutOfBand, StoredBytes, Tree, os_error

STREAM_CHUNK_BYTES = 64 * 1024
"""``stream_text`` decodes this many stored bytes per chunk."""
MAX_SYMLINK_HOPS = 40
"""Following more symlinks than this while resolving one path is a loop (like ``ELOOP``)."""

_EVERYWHERE = Workspace(roots=None)
"""The workspace of the out-of-band helpers and of the roots' own walk: no containment."""


class _Outside(Exception):
    """The walk would leave the workspace; each primitive turns it into its refusal."""


def _absolute(path: str, base: str) -> str:
    """``path`` joined to ``base`` and normalized lexically; a leading ``//`` becomes ``/``."""
    return "/" + posixpath.normpath(posixpath.join(base, path)).lstrip("/")


def _names(path: str) -> list[str]:
    """The segments of ``path``; empty and ``.`` segments change nothing and are dropped."""
    return [name for name in path.split("/") if name not in ("", ".")]


def _state(node: Node | None) -> tuple[EntryType, str] | None:
    """What the shared preconditions look at: ``(type, version)``, or ``None`` when absent."""
    return None if node is None else (node.info().type, node.version)


class MemoryFileSystem(Entries, OutOfBand):
    """A complete in-memory backend: directories, files, symlinks and "other" entries.

    ``files`` seeds the tree with ``{path: text or bytes}`` (text as UTF-8,
    relative to ``cwd``, parents implied); a missing ``cwd`` (``None``: ``/``)
    is created. ``roots``, ``read_only_roots`` and ``read_only`` are the
    workspace (default: ``cwd``); missing roots are created, one that is not a
    directory is a ``ValueError``; ``roots=None`` turns containment off. The
    synchronous out-of-band helpers (``OutOfBand``) change the tree the way
    another process would: no workspace, no locks, ``OSError`` like ``os``.
    """

    def __init__(
        self,
        cwd: str | None = "/",
        files: Mapping[str, str | bytes] | None = None,
        *,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str | os.PathLike[str]] = (),
        read_only: bool = False,
    ) -> None:
        self._tree = Tree()
        self._cwd = _absolute(cwd or "/", "/")
        for path, content in (files or {}).items():
            self.put_bytes(path, content.encode() if isinstance(content, str) else content)
        self._enter(self._cwd, roots, read_only_roots, read_only)

    def view(
        self,
        cwd: str,
        *,
        roots: RootsOption = CWD_ROOT,
        read_only_roots: Iterable[str | os.PathLike[str]] = (),
        read_only: bool = False,
    ) -> MemoryFileSystem:
        """Another backend over this same tree (nodes, versions and locks shared), with its
        own absolute ``cwd`` and workspace, the parameters as in the constructor."""
        other = copy.copy(self)
        other._enter(_absolute(cwd, "/"), roots, read_only_roots, read_only)
        return other

    def _enter(
        self,
        cwd: str,
        roots: RootsOption,
        read_only_roots: Iterable[str | os.PathLike[str]],
        read_only: bool,
    ) -> None:
        self._cwd = self._directory(cwd)
        self._workspace = Workspace.build(
            cwd, roots, read_only_roots, read_only, canonical=self._directory
        )

    def _directory(self, path: str) -> str:
        """The physical path of directory ``path``, created when missing; else ``ValueError``."""
        try:
            physical, node = self._walk(_absolute(path, "/"), _EVERYWHERE)
        except OSError as exc:
            raise ValueError(f"{path!r} is not a directory: {exc.strerror}") from exc
        if node is None:
            self._tree.make_dirs(physical)
        elif node.type != "directory":
            raise ValueError(f"{path!r} is not a directory")
        return physical

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def workspace(self) -> Workspace:
        return self._workspace

    def __repr__(self) -> str:
        return f"MemoryFileSystem(cwd={self._cwd!r}, roots={self._workspace.roots!r})"

    def _start(self, path: str, workspace: Workspace) -> tuple[str, list[str]]:
        """The innermost root that absolute ``path`` begins with, segment by segment
        (``/srv/app-old`` does not begin with ``/srv/app``), and the names after it."""
        names = _names(path)
        roots = ("/",) if workspace.roots is None else workspace.roots + workspace.read_only_roots
        inside = [root for root in roots if names[: len(_names(root))] == _names(root)]
        if not inside:
            raise _Outside(path)
        root = max(inside, key=lambda root: len(_names(root)))
        return root, names[len(_names(root)) :]

    def _walk(
        self, path: str, workspace: Workspace, *, follow: bool = True
    ) -> tuple[str, Node | None]:
        """The physical path an absolute ``path`` reaches, and its node (``None``: absent).

        Every symlink is followed (the final one only with ``follow``); an
        absolute target restarts at its root. A missing segment ends the
        lookup and the rest is appended as is, so a missing file's key is
        stable across its creation. Raises :class:`_Outside` when a step would
        enter a directory outside ``workspace`` (even if a further link would
        lead back in), ``OSError`` ``ENOTDIR`` when a parent segment is not a
        directory and ``ELOOP`` after :data:`MAX_SYMLINK_HOPS` links.
        """
        nodes = self._tree.nodes
        cur, names = self._start(path, workspace)
        node = nodes.get(cur)
        pending = names[::-1]  # a stack: the next name last
        hops = 0
        while pending:
            name = pending.pop()
            if node is not None and node.type != "directory":
                raise os_error(errno.ENOTDIR, path)
            if name == "..":
                cur = posixpath.dirname(cur)
                if workspace.access(cur) is None:
                    raise _Outside(path)
                node = nodes.get(cur)
                continue
            child = None if node is None else nodes.get(posixpath.join(cur, name))
            if child is not None and child.type == "symlink" and (follow or pending):
                hops += 1
                if hops > MAX_SYMLINK_HOPS:
                    raise os_error(errno.ELOOP, path)
                if child.link.startswith("/"):
                    cur, rest = self._start(child.link, workspace)
                    node = nodes.get(cur)
                else:
                    rest = _names(child.link)
                pending.extend(reversed(rest))
                continue
            cur, node = posixpath.join(cur, name), child
        return cur, node

    def _physical(self, path: str, *, follow: bool = True) -> tuple[str, Node | None]:
        """The out-of-band helpers' walk: relative to ``cwd``, through every workspace."""
        return self._walk(_absolute(path, self._cwd), _EVERYWHERE, follow=follow)

    def _reach(
        self, verb: str, key: str, display: str, *, follow: bool = True, blocked: bool = False
    ) -> tuple[str, Node | None]:
        """Walk ``key`` inside the workspace, refusing as the primitive ``verb`` words it.

        A parent segment that is not a directory means absent, or with
        ``blocked`` the refusal ``a parent path segment is not a directory``.
        """
        try:
            return self._walk(key, self._workspace, follow=follow)
        except _Outside:
            raise outside_workspace(verb, display) from None
        except OSError as exc:
            if exc.errno != errno.ENOTDIR:
                raise FsError.cannot(
                    verb, display, str(exc.strerror), FsErrorCode.FS_IO_ERROR
                ) from exc
            if blocked:
                raise parent_not_directory(verb, display) from exc
            return key, None

    def _followed_version(self, display: str) -> str | None:
        try:
            _, node = self._walk(display, self._workspace)
        except (_Outside, OSError):
            return None
        return None if node is None else node.version

    def _display(self, path: str, cwd: str | None) -> str:
        if not path or path.isspace():
            raise FsError("file_path must be a non-empty string", FsErrorCode.FS_NOT_FOUND)
        base = self._cwd if cwd is None else _absolute(cwd, self._cwd)
        display = _absolute(path, base)
        if "\0" in path or "\0" in base:  # before normalization: ".." could drop it
            raise FsError.cannot(
                "resolve", display, "path contains a NUL byte", FsErrorCode.FS_NOT_FOUND
            )
        return display

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        await checkpoint_if_cancelled()
        display = self._display(path, cwd)
        key, _ = self._reach("resolve", display, display, blocked=True)
        return FsTarget(key, display)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        await checkpoint_if_cancelled()
        # ``stat`` is the read tool's first step: its refusals speak as the read would.
        _, node = self._reach("read", target.target_key, target.display_path)
        return None if node is None else node.info()

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        await checkpoint_if_cancelled()
        display = self._display(path, cwd)
        _, node = self._reach("stat", display, display, follow=False)
        if node is None:
            return None
        return FsPathInfo(node.version, node.type, node.size, node.modified_ns)

    def _file_data(self, target: FsTarget) -> bytes:
        _, node = self._reach("read", target.target_key, target.display_path)
        if node is None:
            raise not_found("read", target.display_path)
        if node.type != "file":
            raise not_regular("read", target.display_path)
        return node.data

    async def read_text(self, target: FsTarget) -> str:
        await checkpoint_if_cancelled()
        return decode_text(self._file_data(target), "read", target.display_path)

    def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        """Chunks of ``STREAM_CHUNK_BYTES`` stored bytes, with ``skip_lines`` (no thread)."""
        return TextStream(
            lambda: StoredBytes(self._file_data(target)),
            target.display_path,
            chunk_bytes=STREAM_CHUNK_BYTES,
        )

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        await checkpoint_if_cancelled()
        display = target.display_path
        physical, node = self._reach("list", target.target_key, display)
        if node is None:
            raise not_found("list", display)
        if node.type != "directory":
            raise not_directory("list", display)
        entries: list[FsDirEntry] = []
        for name in node.children:
            key = posixpath.join(physical, name)
            child: Node | None = self._tree.nodes[key]
            link = child is not None and child.type == "symlink"
            if link:
                # "other" when it dangles, loops, is blocked or leaves the workspace;
                # an escaping link is never followed: its key stays its own path.
                try:
                    key, child = self._walk(key, self._workspace)
                except (_Outside, OSError):
                    child = None
            entry = FsTarget(key, posixpath.join(display, name))
            if child is None:
                entries.append(FsDirEntry(name, "other", entry, symlink=link))
            elif stat:
                info = child.info()
                entries.append(
                    FsDirEntry(
                        name, info.type, entry, info.version, info.size, info.modified_ns, link
                    )
                )
            else:
                entries.append(FsDirEntry(name, child.info().type, entry, symlink=link))
        return entries

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        async with self._tree.locks.hold(target.target_key):
            await checkpoint()
            return self._write_now(target, content, expected)

    def _write_now(
        self, target: FsTarget, content: str, expected: WriteIntent | None
    ) -> FsWriteOutcome:
        # Nothing here awaits: the checks and the commit are one atomic step.
        display = target.display_path
        physical, node = self._reach("write", target.target_key, display, blocked=True)
        self._workspace.check("write", display, physical, write=True)
        check_write(display, _state(node), expected)
        stored = Node("file", self._tree.tick(), encode_text(content, "write", display))
        before = None if node is None else decode_previous(node.data)
        self._tree.put(physical, stored)
        after = written_text(content)
        return FsWriteOutcome("create" if node is None else "update", stored.version, before, after)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        display = target.display_path
        async with self._tree.locks.hold(target.target_key):
            await checkpoint()
            # Nothing below awaits: the checks and the commit are one atomic step.
            physical, node = self._reach("edit", target.target_key, display)
            self._workspace.check("edit", display, physical, write=True)
            check_edit(display, _state(node), expected)
            assert node is not None  # check_edit refused an absent file
            applied = apply_edit(node.data, edit, display)
            stored = Node("file", self._tree.tick(), applied.data)
            self._tree.put(physical, stored)
        return FsEditOutcome(stored.version, applied.before, applied.after, applied.replacements)
