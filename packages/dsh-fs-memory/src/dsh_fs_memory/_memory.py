"""``MemoryFileSystem``: a complete dsh-fs backend over an in-memory tree.

It is also the template for a third-party backend; read it in this order:

1. **The tree** (``_Tree``): one flat dict from *physical* absolute paths
   (no symlink in any parent segment) to immutable nodes. A mutation builds
   a new node and commits it with one dict assignment after its last
   ``await``, so a reader never sees a partial write and a cancelled write
   changes nothing.
2. **The walk** (``MemoryFileSystem._walk``): how a path reaches a node,
   following symlinks, and where containment (SPEC 3.3) is enforced — it
   starts at a root and may never step into a directory outside the
   workspace, so an escaping link is refused even when a further link
   would lead back in.
3. **The eight primitives**: each walks its target again at the moment it
   touches it (a symlink swapped in after ``resolve`` is still refused),
   refuses before any other answer, then answers with the seam's shared
   rules: ``dsh_fs.preconditions`` (checks and messages), ``dsh_fs.text``
   (decoding, edits), ``dsh_fs.streaming`` (``stream_text``) and
   ``dsh_fs.locks`` (per-target serialization).
4. **Out-of-band helpers** for tests: they change the tree the way another
   process would, outside the workspace rule.
"""

from __future__ import annotations

import copy
import errno
import itertools
import os
import posixpath
from collections.abc import AsyncIterator, Iterable, Mapping

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
from dsh_fs.text import apply_edit, decode_previous, decode_text, encode_text, written_text
from dsh_fs.workspace import CWD_ROOT, RootsOption, Workspace, outside_workspace

STREAM_CHUNK_BYTES = 64 * 1024
"""``stream_text`` decodes this many stored bytes per chunk."""
MAX_SYMLINK_HOPS = 40
"""Following more symlinks than this while resolving one path is a loop (like Linux ``ELOOP``)."""

_EVERYWHERE = Workspace(roots=None)
"""The workspace of the out-of-band helpers: no containment."""


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


class _Other:
    __slots__ = ("info",)

    def __init__(self, version: str) -> None:
        self.info = FsInfo(version, "other", None)


class _Link:
    __slots__ = ("info", "target")

    def __init__(self, target: str, version: str) -> None:
        self.target = target
        self.info = FsPathInfo(version, "symlink", None)


_Entry = _File | _Dir | _Other
_Node = _Entry | _Link


class _Outside(Exception):
    """The walk would leave the workspace; each primitive turns it into its refusal."""


def _os_error(code: int, path: str) -> OSError:
    return OSError(code, os.strerror(code), path)


def _join(parent: str, name: str) -> str:
    return parent + name if parent == "/" else f"{parent}/{name}"


def _parent(path: str) -> str:
    return path.rpartition("/")[0] or "/"


def _absolute(path: str, base: str) -> str:
    """``path`` joined to ``base`` and normalized lexically; a leading ``//`` becomes ``/``."""
    return "/" + posixpath.normpath(posixpath.join(base, path)).lstrip("/")


def _names(path: str) -> list[str]:
    """The segments of ``path``; empty and ``.`` segments change nothing and are dropped."""
    return [name for name in path.split("/") if name not in ("", ".")]


def _walk_failure(verb: str, display: str, exc: OSError) -> FsError:
    """A failed walk, worded as the local backend words it."""
    if exc.errno == errno.ENOTDIR:
        return parent_not_directory(verb, display)
    return FsError.cannot(verb, display, str(exc.strerror), FsErrorCode.FS_IO_ERROR)


class _Tree:
    """The nodes, the version clock and the locks: what every view of one tree shares."""

    def __init__(self) -> None:
        self._clock = itertools.count(1)
        self.nodes: dict[str, _Node] = {"/": _Dir(self.tick())}
        self.locks = TargetLocks()

    def tick(self) -> str:
        """The next version: one counter for every node, so no version ever comes back."""
        return str(next(self._clock))

    def attach(self, path: str, node: _Node) -> None:
        """Store ``node`` at physical ``path``, whose parent directory exists."""
        if path not in self.nodes:
            parent = self.nodes[_parent(path)]
            assert isinstance(parent, _Dir)
            parent.children[path.rpartition("/")[2]] = None
            parent.info = FsInfo(self.tick(), "directory", None)
        self.nodes[path] = node

    def detach(self, path: str) -> None:
        """Remove physical ``path`` and, for a directory, everything below it."""
        node = self.nodes.pop(path)
        if isinstance(node, _Dir):
            for name in list(node.children):
                self.detach(_join(path, name))
        parent = self.nodes.get(_parent(path))
        if isinstance(parent, _Dir):
            parent.children.pop(path.rpartition("/")[2], None)
            parent.info = FsInfo(self.tick(), "directory", None)

    def make_dirs(self, path: str) -> None:
        """Create physical directory ``path`` and its missing ancestors."""
        missing: list[str] = []
        while path not in self.nodes:
            missing.append(path)
            path = _parent(path)
        if not isinstance(self.nodes[path], _Dir):
            raise _os_error(errno.ENOTDIR, path)
        for new in reversed(missing):
            self.attach(new, _Dir(self.tick()))

    def store_file(self, path: str, data: bytes) -> _File:
        """Commit ``data`` at physical ``path`` (parents created): one assignment for a replace."""
        node = _File(data, self.tick())
        if isinstance(self.nodes.get(path), _File):
            self.nodes[path] = node
        else:
            self.make_dirs(_parent(path))
            self.attach(path, node)
        return node


class _StoredBytes:
    """The stored bytes of one file as a :class:`dsh_fs.streaming.ByteSource`."""

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
    implied). ``cwd`` (``None`` means ``/``) is created when missing.

    ``roots``, ``read_only_roots`` and ``read_only`` are the workspace of
    SPEC 3.3: by default ``cwd`` and everything beneath it. Missing roots are
    created as empty directories; one that exists but is not a directory
    fails with ``ValueError`` naming it. ``roots=None`` turns containment off.

    The synchronous out-of-band helpers (``put_bytes``, ``put_text``,
    ``get_bytes``, ``mkdir``, ``remove``, ``add_symlink``, ``add_other``,
    ``names``, ``files``) change the tree the way another process would:
    they ignore the workspace and the locks and raise ``OSError`` subclasses
    like the ``os`` module. Each change gives the touched node a new version.
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
        self._tree = _Tree()
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
        own ``cwd`` and workspace: an absolute ``cwd``, the parameters as in the constructor."""
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
            if node is None:
                self._tree.make_dirs(physical)
        except OSError as exc:
            raise ValueError(f"{path!r} is not a directory: {exc.strerror}") from exc
        if node is not None and not isinstance(node, _Dir):
            raise ValueError(f"{path!r} is not a directory")
        return physical

    @property
    def cwd(self) -> str:
        """The default directory relative paths resolve against."""
        return self._cwd

    @property
    def workspace(self) -> Workspace:
        """The roots this backend may read and write (canonical paths)."""
        return self._workspace

    def __repr__(self) -> str:
        return f"MemoryFileSystem(cwd={self._cwd!r}, roots={self._workspace.roots!r})"

    # ------------------------------------------------------------------ walk

    def _start(self, path: str, workspace: Workspace) -> tuple[str, list[str]]:
        """The root the walk of absolute ``path`` starts from, and the names after it.

        The root is the innermost one whose segments ``path`` begins with
        (compared by segment: ``/srv/app-old`` does not begin with
        ``/srv/app``); no such root means ``path`` is outside.
        """
        names = _names(path)
        roots = ("/",) if workspace.roots is None else workspace.roots + workspace.read_only_roots
        best: tuple[str, int] | None = None
        for root in roots:
            depth = len(_names(root))
            if names[:depth] == _names(root) and (best is None or depth > best[1]):
                best = (root, depth)
        if best is None:
            raise _Outside(path)
        return best[0], names[best[1] :]

    def _walk(self, path: str, workspace: Workspace) -> tuple[str, _Entry | None]:
        """The physical path an absolute ``path`` reaches, and its node (``None``: absent).

        Every symlink is followed; an absolute link target restarts the walk
        at its root. A missing segment
        ends the lookup and the rest is appended as is, so the key of a
        missing file is stable across its creation. Raises :class:`_Outside`
        when a step would enter a directory outside ``workspace``, ``OSError``
        ``ENOTDIR`` when a parent segment is not a directory and ``ELOOP``
        after :data:`MAX_SYMLINK_HOPS` links.
        """
        nodes = self._tree.nodes
        cur, names = self._start(path, workspace)
        node: _Node | None = nodes.get(cur)
        pending = names[::-1]  # a stack: the next name last
        hops = 0
        while pending:
            name = pending.pop()
            if node is not None and not isinstance(node, _Dir):
                raise _os_error(errno.ENOTDIR, path)
            if name == "..":
                cur = _parent(cur)
                if workspace.access(cur) is None:
                    raise _Outside(path)
                node = nodes.get(cur)
                continue
            child = None if node is None else nodes.get(_join(cur, name))
            if isinstance(child, _Link):
                hops += 1
                if hops > MAX_SYMLINK_HOPS:
                    raise _os_error(errno.ELOOP, path)
                if child.target.startswith("/"):
                    cur, rest = self._start(child.target, workspace)
                    node = nodes.get(cur)
                else:
                    rest = _names(child.target)
                pending.extend(reversed(rest))
                continue
            cur, node = _join(cur, name), child
        assert not isinstance(node, _Link)  # every link met was followed
        return cur, node

    def _walk_entry(self, path: str, workspace: Workspace) -> tuple[str, _Node | None]:
        """Like :meth:`_walk`, but a final symlink is returned itself (``lstat``, ``remove``)."""
        if not self._start(path, workspace)[1]:
            return self._walk(path, workspace)  # a root is a directory, never a link
        parent, node = self._walk(_parent(path), workspace)
        if node is not None and not isinstance(node, _Dir):
            raise _os_error(errno.ENOTDIR, path)
        physical = _join(parent, path.rpartition("/")[2])
        return physical, None if node is None else self._tree.nodes.get(physical)

    def _reach(
        self, verb: str, target: FsTarget, *, blocked_is_absent: bool = True
    ) -> tuple[str, _Entry | None]:
        """Walk ``target``'s key inside the workspace, as the primitive ``verb`` answers it.

        Outside → ``cannot <verb> "<p>": outside the workspace``; a symlink
        loop → ``FS_IO_ERROR``; a parent segment that is not a directory →
        absent (``blocked_is_absent``) or ``a parent path segment is not a
        directory``.
        """
        try:
            physical, node = self._walk(target.target_key, self._workspace)
        except _Outside:
            raise outside_workspace(verb, target.display_path) from None
        except OSError as exc:
            if exc.errno == errno.ENOTDIR and blocked_is_absent:
                return target.target_key, None
            raise _walk_failure(verb, target.display_path, exc) from exc
        return physical, node

    def _check_writable(self, verb: str, display: str, physical: str) -> None:
        self._workspace.check(verb, display, physical, write=True)

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

    # ------------------------------------------------------------ primitives

    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        await checkpoint_if_cancelled()
        display = self._display(path, cwd)
        key, _ = self._reach("resolve", FsTarget(display, display), blocked_is_absent=False)
        return FsTarget(key, display)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        await checkpoint_if_cancelled()
        # ``stat`` is the read tool's first step: its refusals speak as the read would.
        _, node = self._reach("read", target)
        return None if node is None else node.info

    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        await checkpoint_if_cancelled()
        display = self._display(path, cwd)
        try:
            _, node = self._walk_entry(display, self._workspace)
        except _Outside:
            raise outside_workspace("stat", display) from None
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                return None
            raise _walk_failure("stat", display, exc) from exc
        if node is None or isinstance(node, _Link):
            return None if node is None else node.info
        info = node.info
        return FsPathInfo(info.version, info.type, info.size)

    def _file_data(self, target: FsTarget) -> bytes:
        _, node = self._reach("read", target)
        if node is None:
            raise not_found("read", target.display_path)
        if not isinstance(node, _File):
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
        physical, node = self._reach("list", target)
        if node is None:
            raise not_found("list", display)
        if not isinstance(node, _Dir):
            raise not_directory("list", display)
        entries: list[FsDirEntry] = []
        for name in node.children:
            key = _join(physical, name)
            found = self._tree.nodes[key]
            key, child = self._listed_link(key) if isinstance(found, _Link) else (key, found)
            entry_target = FsTarget(key, _join(display, name))
            if child is None:
                entries.append(FsDirEntry(name, "other", entry_target))
            elif stat:
                info = child.info
                entries.append(FsDirEntry(name, info.type, entry_target, info.version, info.size))
            else:
                entries.append(FsDirEntry(name, child.info.type, entry_target))
        return entries

    def _listed_link(self, key: str) -> tuple[str, _Entry | None]:
        """Where a listed symlink leads, and its node; ``None`` (listed as ``other``) when
        it dangles, loops, is blocked or leaves the workspace. An escaping link is never
        followed: its key stays the link's own path."""
        try:
            return self._walk(key, self._workspace)
        except (_Outside, OSError):
            return key, None

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        display = target.display_path
        async with self._tree.locks.hold(target.target_key):
            await checkpoint()
            # Nothing below awaits: the checks and the commit are one atomic step.
            physical, node = self._reach("write", target, blocked_is_absent=False)
            self._check_writable("write", display, physical)
            check_write(display, _state(node), expected)
            data = encode_text(content, "write", display)
            before = decode_previous(node.data) if isinstance(node, _File) else None
            try:
                stored = self._tree.store_file(physical, data)
            except OSError as exc:
                raise parent_not_directory("write", display) from exc
        created = node is None
        after = written_text(content)
        return FsWriteOutcome("create" if created else "update", stored.info.version, before, after)

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        display = target.display_path
        async with self._tree.locks.hold(target.target_key):
            await checkpoint()
            # Nothing below awaits: the checks and the commit are one atomic step.
            physical, node = self._reach("edit", target)
            self._check_writable("edit", display, physical)
            check_edit(display, _state(node), expected)
            assert isinstance(node, _File)  # check_edit refused anything else
            applied = apply_edit(node.data, edit, display)
            stored = self._tree.store_file(physical, applied.data)
        return FsEditOutcome(
            stored.info.version, applied.before, applied.after, applied.replacements
        )

    # --------------------------------------------------- out-of-band helpers

    def _physical(self, path: str) -> tuple[str, _Entry | None]:
        return self._walk(_absolute(path, self._cwd), _EVERYWHERE)

    def _new_entry(self, path: str, node: _Node) -> None:
        """Attach a new ``node`` at ``path`` (parents created); an existing name is refused."""
        absolute = _absolute(path, self._cwd)
        parent, _ = self._walk(_parent(absolute), _EVERYWHERE)
        self._tree.make_dirs(parent)
        physical = _join(parent, absolute.rpartition("/")[2])
        if physical in self._tree.nodes:
            raise _os_error(errno.EEXIST, path)
        self._tree.attach(physical, node)

    def put_bytes(self, path: str, data: bytes) -> None:
        """Create or replace a regular file with exactly ``data`` (parents created).

        A final symlink is followed, like ``open(path, "wb")``.
        """
        physical, node = self._physical(path)
        if physical == "/" or isinstance(node, _Dir):
            raise _os_error(errno.EISDIR, path)
        if node is not None and not isinstance(node, _File):
            raise _os_error(errno.EEXIST, path)
        self._tree.store_file(physical, bytes(data))

    def put_text(self, path: str, text: str) -> None:
        """``put_bytes`` of ``text`` encoded as UTF-8."""
        self.put_bytes(path, text.encode("utf-8"))

    def get_bytes(self, path: str) -> bytes | None:
        """The stored bytes of a regular file (symlinks followed), or ``None``."""
        try:
            _, node = self._physical(path)
        except OSError:
            return None
        return node.data if isinstance(node, _File) else None

    def mkdir(self, path: str) -> None:
        """Create a directory and its parents; an existing directory is fine."""
        physical, node = self._physical(path)
        if node is None:
            self._tree.make_dirs(physical)
        elif not isinstance(node, _Dir):
            raise _os_error(errno.EEXIST, path)

    def remove(self, path: str, *, recursive: bool = False) -> None:
        """Remove a file, symlink (not its target), other entry or directory.

        A non-empty directory needs ``recursive=True``.
        """
        physical, node = self._walk_entry(_absolute(path, self._cwd), _EVERYWHERE)
        if node is None:
            raise _os_error(errno.ENOENT, path)
        if physical == "/":
            raise _os_error(errno.EBUSY, path)
        if isinstance(node, _Dir) and node.children and not recursive:
            raise _os_error(errno.ENOTEMPTY, path)
        self._tree.detach(physical)

    def add_symlink(self, path: str, target: str) -> None:
        """Create a symlink at ``path`` pointing to ``target`` (relative or absolute, as given)."""
        self._new_entry(path, _Link(target, self._tree.tick()))

    def add_other(self, path: str) -> None:
        """Create an entry that is neither file nor directory (stands for a FIFO, a socket …)."""
        self._new_entry(path, _Other(self._tree.tick()))

    def names(self, path: str = ".") -> list[str]:
        """The sorted child names of a directory (symlinks followed)."""
        _, node = self._physical(path)
        if node is None:
            raise _os_error(errno.ENOENT, path)
        if not isinstance(node, _Dir):
            raise _os_error(errno.ENOTDIR, path)
        return sorted(node.children)

    def files(self) -> dict[str, bytes]:
        """Every regular file by physical path, sorted: a snapshot for assertions."""
        nodes = sorted(self._tree.nodes.items())
        return {path: node.data for path, node in nodes if isinstance(node, _File)}


def _state(node: _Entry | None) -> tuple[EntryType, str] | None:
    """What the shared preconditions look at: the node's ``(type, version)``, or ``None``."""
    return None if node is None else (node.info.type, node.info.version)
