"""``MemoryFileSystem``: a complete dsh-fs backend over an in-memory tree.

The tree is one flat dict keyed by *physical* absolute paths (no symlink in
any parent segment), so a resolved ``target_key`` is looked up in O(1). Every
node is immutable except a directory's set of child names; a mutation builds a
new node and commits it with one dict assignment after its last ``await``, so
a reader never sees a partial write and a cancelled write changes nothing.
"""

from __future__ import annotations

import errno
import functools
import itertools
import os
import posixpath
from collections.abc import AsyncIterator, Mapping

from anyio.lowlevel import checkpoint, checkpoint_if_cancelled
from dsh_fs import (
    EditGuard,
    EntryType,
    FileSystem,
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
from dsh_fs.locks import TargetLocks
from dsh_fs.preconditions import (
    check_edit,
    check_write,
    not_directory,
    not_found,
    not_regular,
    parent_not_directory,
)
from dsh_fs.streaming import TextStream
from dsh_fs.text import (
    apply_edit,
    decode_previous,
    decode_text,
    encode_text,
    written_text,
)

STREAM_CHUNK_BYTES = 64 * 1024
"""``stream_text`` decodes this many stored bytes per chunk."""
MAX_SYMLINK_HOPS = 40
"""Following more symlinks than this while resolving one path is a loop (like Linux ``ELOOP``)."""
RESOLVED_CACHE_SIZE = 1024
"""``resolve`` remembers at most this many ``(cwd, path)`` results (then starts over)."""

def _walk_failure(verb: str, display: str, exc: OSError) -> FsError:
    """A failed walk of the tree, as the local backend words it."""
    if exc.errno == errno.ENOTDIR:
        return parent_not_directory(verb, display)
    return FsError.cannot(verb, display, str(exc.strerror), FsErrorCode.FS_IO_ERROR)


class _File:
    __slots__ = ("data", "info")

    def __init__(self, data: bytes, version: str) -> None:
        self.data = data
        self.info = FsInfo(version, "file", len(data))


class _Dir:
    __slots__ = ("children", "info")

    def __init__(self, version: str) -> None:
        self.children: dict[str, None] = {}
        """Child names, an insertion-ordered set; the nodes live in the flat dict."""
        self.info = FsInfo(version, "directory", None)


class _Link:
    __slots__ = ("info", "target")

    def __init__(self, target: str, version: str) -> None:
        self.target = target
        self.info = FsPathInfo(version, "symlink", None)


class _Other:
    __slots__ = ("info",)

    def __init__(self, version: str) -> None:
        self.info = FsInfo(version, "other", None)


_Node = _File | _Dir | _Link | _Other


def _os_error(code: int, path: str) -> OSError:
    return OSError(code, os.strerror(code), path)


def _join(parent: str, name: str) -> str:
    return parent + name if parent == "/" else parent + "/" + name


def _parent(path: str) -> str:
    return path.rpartition("/")[0] or "/"


def _absolute(path: str, base: str) -> str:
    """``path`` joined to ``base`` and normalized lexically; a leading ``//`` becomes ``/``."""
    joined = path if path.startswith("/") else _join(base, path)
    if "//" not in joined and "/." not in joined and not joined.endswith("/"):
        return joined  # no empty, "." or ".." segment: already normal
    norm = posixpath.normpath(joined)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return norm


@functools.lru_cache(maxsize=64)
def _base(cwd: str, default: str) -> str:
    """A call's ``cwd`` made absolute (cached: a session passes the same one on every call)."""
    return _absolute(cwd, default)


class _StoredBytes:
    """The stored bytes of one file as a :class:`dsh_fs.streaming.ByteSource`."""

    __slots__ = ("_data", "_position")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._position = 0

    @property
    def at_end(self) -> bool:
        return self._position >= len(self._data)

    def readinto(self, buffer: memoryview) -> int:
        start = self._position
        stop = min(len(self._data), start + len(buffer))
        buffer[: stop - start] = self._data[start:stop]
        self._position = stop
        return stop - start

    def close(self) -> None:
        self._data = b""


class MemoryFileSystem(FileSystem):
    """A complete in-memory backend: directories, files, symlinks and "other" entries.

    ``files`` seeds the tree with ``{path: text or bytes}`` (text is stored as
    UTF-8; relative paths are relative to ``cwd``; parent directories are
    implied). ``cwd`` (``None`` means ``/``) is created when missing. It is a
    resolution default, not a boundary.

    Besides the eight primitives it offers synchronous out-of-band helpers for
    tests (``put_bytes``, ``put_text``, ``get_bytes``, ``mkdir``, ``remove``,
    ``add_symlink``, ``add_other``, ``names``, ``files``): they change the tree
    the way another process would, bypass the per-target locks and raise
    ``OSError`` subclasses (``FileNotFoundError``, ``FileExistsError`` …) like
    the ``os`` module. Each change gives the touched node a new version.
    """

    def __init__(
        self, cwd: str | None = "/", files: Mapping[str, str | bytes] | None = None
    ) -> None:
        self._clock = itertools.count(1)
        self._nodes: dict[str, _Node] = {"/": _Dir(self._tick())}
        self._links = 0
        self._locks = TargetLocks()
        self._resolved: dict[tuple[str | None, str], FsTarget] = {}
        """``(cwd, path)`` → the target ``resolve`` gave, for existing entries while no symlink
        exists: then the target is a pure function of the two strings (its key is its display
        path, the lexical normal form) and stays right as long as its entry exists. An agent
        resolves the same few paths over and over; this skips the normalization."""
        self._cwd = _absolute(cwd or "/", "/")
        self.mkdir(self._cwd)
        if files:
            for path, content in files.items():
                if isinstance(content, str):
                    self.put_text(path, content)
                else:
                    self.put_bytes(path, content)

    @property
    def cwd(self) -> str:
        """The default directory relative paths resolve against."""
        return self._cwd

    def __repr__(self) -> str:
        return f"MemoryFileSystem(cwd={self._cwd!r}, nodes={len(self._nodes)})"

    # ------------------------------------------------------------------ tree

    def _tick(self) -> str:
        return str(next(self._clock))

    def _walk(self, path: str, *, follow_final: bool = True) -> tuple[str, _Node | None]:
        """The physical path of an absolute normalized ``path`` and its node (``None`` if absent).

        Symlinks in parent segments are always followed, the final one only
        with ``follow_final``; a missing segment ends the lookup and the rest
        is appended as is (like a non-strict ``realpath``). Raises ``OSError``
        ``ENOTDIR`` when a parent segment is not a directory and ``ELOOP`` on a
        symlink loop.
        """
        nodes = self._nodes
        if not self._links:
            node = nodes.get(path)
            if node is not None:
                return path, node
            ancestor = path
            while True:
                ancestor = _parent(ancestor)
                found = nodes.get(ancestor)
                if found is not None:
                    if type(found) is not _Dir:
                        raise _os_error(errno.ENOTDIR, path)
                    return path, None
        stack = [part for part in reversed(path.split("/")) if part]
        cur = "/"
        cur_node: _Node | None = nodes["/"]
        hops = 0
        while stack:
            name = stack.pop()
            if name == ".":
                continue
            if cur_node is not None and type(cur_node) is not _Dir:
                raise _os_error(errno.ENOTDIR, path)
            if name == "..":
                cur = _parent(cur)
                cur_node = nodes.get(cur)
                continue
            nxt = _join(cur, name)
            if cur_node is None:
                cur = nxt
                continue
            node = nodes.get(nxt)
            if type(node) is _Link and (stack or follow_final):
                hops += 1
                if hops > MAX_SYMLINK_HOPS:
                    raise _os_error(errno.ELOOP, path)
                target = node.target
                stack.extend(part for part in reversed(target.split("/")) if part)
                if target.startswith("/"):
                    cur, cur_node = "/", nodes["/"]
                continue
            cur, cur_node = nxt, node
        return cur, cur_node

    def _lookup(self, key: str) -> tuple[str, _Node | None]:
        """``_walk`` with the O(1) fast path: a key present as a non-link is physical already."""
        node = self._nodes.get(key)
        if node is not None and type(node) is not _Link:
            return key, node
        return self._walk(key)

    def _touch_dir(self, directory: _Dir) -> None:
        directory.info = FsInfo(self._tick(), "directory", None)

    def _ensure_dirs(self, path: str) -> None:
        """Create physical directory ``path`` and its missing ancestors."""
        nodes = self._nodes
        missing: list[str] = []
        cur = path
        while True:
            node = nodes.get(cur)
            if node is not None:
                if type(node) is not _Dir:
                    raise _os_error(errno.ENOTDIR, path)
                break
            missing.append(cur)
            cur = _parent(cur)
        for new in reversed(missing):
            self._attach(new, _Dir(self._tick()))

    def _attach(self, path: str, node: _Node) -> None:
        """Store ``node`` at physical ``path`` whose parent directory exists."""
        nodes = self._nodes
        previous = nodes.get(path)
        nodes[path] = node
        if type(node) is _Link:
            self._links += 1
        if previous is None:
            parent_path, _, name = path.rpartition("/")
            parent = nodes[parent_path or "/"]
            assert type(parent) is _Dir
            parent.children[name] = None
            self._touch_dir(parent)
        elif type(previous) is _Link:
            self._links -= 1

    def _detach(self, path: str) -> None:
        """Remove physical ``path`` and, for a directory, everything below it."""
        nodes = self._nodes
        node = nodes.pop(path)
        if type(node) is _Link:
            self._links -= 1
        elif type(node) is _Dir:
            for name in list(node.children):
                self._detach(_join(path, name))
        parent_path, _, name = path.rpartition("/")
        parent = nodes.get(parent_path or "/")
        if type(parent) is _Dir:
            parent.children.pop(name, None)
            self._touch_dir(parent)

    def _store_file(self, path: str, data: bytes) -> _File:
        """Commit ``data`` at physical ``path`` (parents created); one assignment for a replace."""
        node = _File(data, self._tick())
        previous = self._nodes.get(path)
        if type(previous) is _File:
            self._nodes[path] = node
        else:
            self._ensure_dirs(_parent(path))
            self._attach(path, node)
        return node

    # --------------------------------------------------------------- helpers

    def _abs(self, path: str) -> str:
        return _absolute(path, self._cwd)

    def _new_entry_path(self, path: str) -> str:
        """Physical path for a new entry at ``path``: parents created, must not exist."""
        absolute = self._abs(path)
        parent, node = self._walk(_parent(absolute))
        if node is None:
            self._ensure_dirs(parent)
        elif type(node) is not _Dir:
            raise _os_error(errno.ENOTDIR, path)
        physical = _join(parent, posixpath.basename(absolute))
        if physical in self._nodes:
            raise _os_error(errno.EEXIST, path)
        return physical

    def put_bytes(self, path: str, data: bytes) -> None:
        """Create or replace a regular file with exactly ``data`` (parents created).

        A final symlink is followed, like ``open(path, "wb")``.
        """
        absolute = self._abs(path)
        if absolute == "/":
            raise _os_error(errno.EISDIR, path)
        physical, node = self._walk(absolute)
        if node is not None and type(node) is not _File:
            raise _os_error(errno.EISDIR if type(node) is _Dir else errno.EEXIST, path)
        self._store_file(physical, bytes(data))

    def put_text(self, path: str, text: str) -> None:
        """``put_bytes`` of ``text`` encoded as UTF-8."""
        self.put_bytes(path, text.encode("utf-8"))

    def get_bytes(self, path: str) -> bytes | None:
        """The stored bytes of a regular file (symlinks followed), or ``None``."""
        try:
            _, node = self._walk(self._abs(path))
        except OSError:
            return None
        return node.data if type(node) is _File else None

    def mkdir(self, path: str) -> None:
        """Create a directory and its parents; an existing directory is fine."""
        physical, node = self._walk(self._abs(path))
        if node is None:
            self._ensure_dirs(physical)
        elif type(node) is not _Dir:
            raise _os_error(errno.EEXIST, path)

    def remove(self, path: str, *, recursive: bool = False) -> None:
        """Remove a file, symlink (not its target), other entry or directory.

        A non-empty directory needs ``recursive=True``.
        """
        physical, node = self._walk(self._abs(path), follow_final=False)
        if node is None:
            raise _os_error(errno.ENOENT, path)
        if physical == "/":
            raise _os_error(errno.EBUSY, path)
        if type(node) is _Dir and node.children and not recursive:
            raise _os_error(errno.ENOTEMPTY, path)
        self._detach(physical)

    def add_symlink(self, path: str, target: str) -> None:
        """Create a symlink at ``path`` pointing to ``target`` (relative or absolute, as given)."""
        self._attach(self._new_entry_path(path), _Link(target, self._tick()))

    def add_other(self, path: str) -> None:
        """Create an entry that is neither file nor directory (stands for a FIFO, a socket …)."""
        self._attach(self._new_entry_path(path), _Other(self._tick()))

    def names(self, path: str = ".") -> list[str]:
        """The sorted child names of a directory (symlinks followed)."""
        _, node = self._walk(self._abs(path))
        if node is None:
            raise _os_error(errno.ENOENT, path)
        if type(node) is not _Dir:
            raise _os_error(errno.ENOTDIR, path)
        return sorted(node.children)

    def files(self) -> dict[str, bytes]:
        """Every regular file by physical path, sorted: a snapshot for assertions."""
        return {
            path: node.data for path, node in sorted(self._nodes.items()) if type(node) is _File
        }

    # ------------------------------------------------------------ primitives

    def _display(self, path: str, cwd: str | None) -> str:
        if not path or path.isspace():
            raise FsError("file_path must be a non-empty string", FsErrorCode.FS_NOT_FOUND)
        base = self._cwd if cwd is None else _base(cwd, self._cwd)
        return _absolute(path, base)

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        await checkpoint_if_cancelled()
        if not self._links:
            target = self._resolved.get((cwd, path))
            if target is not None and target.target_key in self._nodes:
                return target
        display = self._display(path, cwd)
        try:
            key, node = self._walk(display)
        except OSError as exc:
            raise _walk_failure("resolve", display, exc) from exc
        target = FsTarget(key, display)
        if node is not None and not self._links:
            resolved = self._resolved
            if len(resolved) >= RESOLVED_CACHE_SIZE:
                resolved.clear()
            resolved[cwd, path] = target
        return target

    def _follow(self, target: FsTarget, verb: str) -> tuple[str, _Node | None]:
        """The target's physical path and node; a loop is ``FS_IO_ERROR``, a blocked path absent."""
        try:
            return self._lookup(target.target_key)
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                return target.target_key, None
            raise _walk_failure(verb, target.display_path, exc) from exc

    async def stat(self, target: FsTarget) -> FsInfo | None:
        await checkpoint_if_cancelled()
        node = self._nodes.get(target.target_key)
        if node is None or type(node) is _Link:
            node = self._follow(target, "stat")[1]
            if node is None:
                return None
        if isinstance(node, _Link):  # unreachable: _walk follows a final link
            return None
        return node.info

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        await checkpoint_if_cancelled()
        display = self._display(path, cwd)
        try:
            _, node = self._walk(display, follow_final=False)
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                return None
            raise _walk_failure("stat", display, exc) from exc
        if node is None:
            return None
        if type(node) is _Link:
            return node.info
        info = node.info
        return FsPathInfo(info.version, info.type, info.size)

    def _file_data(self, target: FsTarget) -> bytes:
        node = self._nodes.get(target.target_key)
        if type(node) is _File:
            return node.data
        node = self._follow(target, "read")[1]
        if node is None:
            raise not_found("read", target.display_path)
        if type(node) is not _File:
            raise not_regular("read", target.display_path)
        return node.data

    async def read_text(self, target: FsTarget) -> str:
        await checkpoint_if_cancelled()
        return decode_text(self._file_data(target), "read", target.display_path)

    def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        """Chunks of ``STREAM_CHUNK_BYTES`` stored bytes, with ``skip_lines`` (no thread)."""
        return TextStream(
            lambda: _StoredBytes(self._file_data(target)),
            target.display_path,
            chunk_bytes=STREAM_CHUNK_BYTES,
        )

    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        await checkpoint_if_cancelled()
        display = target.display_path
        physical, node = self._follow(target, "list")
        if node is None:
            raise not_found("list", display)
        if type(node) is not _Dir:
            raise not_directory("list", display)
        nodes = self._nodes
        entries: list[FsDirEntry] = []
        for name in node.children:
            key = _join(physical, name)
            child = nodes.get(key)
            if child is None:
                continue
            if type(child) is _Link:
                try:
                    key, child = self._walk(key)
                except OSError:
                    child = None
            kind: EntryType
            info: FsInfo | None
            if child is None or isinstance(child, _Link):
                kind, info = "other", None
            else:
                info = child.info
                kind = info.type
            entry_target = FsTarget(key, _join(display, name))
            if stat and info is not None:
                entries.append(FsDirEntry(name, kind, entry_target, info.version, info.size))
            else:
                entries.append(FsDirEntry(name, kind, entry_target))
        return entries

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        display = target.display_path
        data = encode_text(content, "write", display)
        key = target.target_key
        async with self._locks.hold(key):
            await checkpoint()
            # Nothing below awaits: the checks and the commit are one atomic step.
            try:
                physical, node = self._lookup(key)
            except OSError as exc:
                raise _walk_failure("write", display, exc) from exc
            check_write(display, None if node is None else _state(node), expected)
            before = decode_previous(node.data) if isinstance(node, _File) else None
            try:
                stored = self._store_file(physical, data)
            except OSError as exc:
                raise parent_not_directory("write", display) from exc
        return FsWriteOutcome(
            "create" if node is None else "update",
            stored.info.version,
            before,
            written_text(content),
        )

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        display = target.display_path
        key = target.target_key
        async with self._locks.hold(key):
            await checkpoint()
            # Nothing below awaits: the checks and the commit are one atomic step.
            physical, node = self._follow(target, "edit")
            check_edit(display, None if node is None else _state(node), expected)
            assert isinstance(node, _File)  # check_edit refused anything else
            applied = apply_edit(node.data, edit, display)
            stored = self._store_file(physical, applied.data)
        return FsEditOutcome(
            stored.info.version, applied.before, applied.after, applied.replacements
        )


def _state(node: _Node) -> tuple[EntryType, str]:
    """What the shared preconditions look at: the node's ``(type, version)``."""
    kind = node.info.type
    return ("other" if kind == "symlink" else kind), node.info.version
