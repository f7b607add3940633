"""The storage under ``MemoryFileSystem``: what a real backend gets from its OS or service.

``Tree`` is one flat dict from *physical* paths (no symlink in any parent
segment) to nodes, with the version clock and the per-target locks that
every view of one tree shares. ``OutOfBand`` is the test side of it:
synchronous methods that change the tree the way another process would. The
backend proper — the walk where containment is enforced and the eight
primitives — is ``_memory.py``; removing and moving entries is ``_entries.py``.
"""

from __future__ import annotations

import errno
import io
import itertools
import os
import posixpath
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

from dsh_fs import FsInfo, PathType
from dsh_fs.locks import TargetLocks


@dataclass(eq=False, slots=True)
class Node:
    """One entry: ``data`` of a file, ``link`` of a symlink, ``children`` of a directory
    (names in insertion order; the nodes live in the flat dict)."""

    type: PathType
    version: str
    data: bytes = b""
    link: str = ""
    children: dict[str, None] = field(default_factory=dict)
    modified_ns: int = field(default_factory=time.time_ns)
    """Set when the node is made; a mutation makes a new file node."""

    @property
    def size(self) -> int | None:
        """Bytes for a file; ``None`` for every other type, as in the local backend."""
        return len(self.data) if self.type == "file" else None

    def info(self) -> FsInfo:
        assert self.type != "symlink"  # a symlink is always followed or reported by lstat
        return FsInfo(self.version, self.type, self.size, self.modified_ns)


def os_error(code: int, path: str) -> OSError:
    """The ``OSError`` subclass ``os`` raises for ``code`` (``FileNotFoundError`` …)."""
    return OSError(code, os.strerror(code), path)


class Tree:
    """The nodes, the version clock and the locks: what every view of one tree shares."""

    def __init__(self) -> None:
        self._clock = itertools.count(1)
        self.nodes = {"/": Node("directory", self.tick())}
        self.locks = TargetLocks()

    def tick(self) -> str:
        """The next version: one counter for every node, so no version ever comes back."""
        return str(next(self._clock))

    def put(self, path: str, node: Node) -> None:
        """Store ``node`` at physical ``path``, creating missing parent directories."""
        if path not in self.nodes:
            parent, name = posixpath.split(path)
            self.make_dirs(parent)
            self.nodes[parent].children[name] = None
            self.nodes[parent].version = self.tick()
        self.nodes[path] = node

    def make_dirs(self, path: str) -> None:
        """Create physical directory ``path`` and its missing ancestors."""
        node = self.nodes.get(path)
        if node is None:
            self.put(path, Node("directory", self.tick()))
        elif node.type != "directory":
            raise os_error(errno.ENOTDIR, path)

    def detach(self, path: str) -> None:
        """Remove physical ``path`` and, for a directory, everything below it."""
        parent, name = posixpath.split(path)
        del self.nodes[parent].children[name]
        self.nodes[parent].version = self.tick()
        for key in self.subtree(path):
            del self.nodes[key]

    def subtree(self, path: str) -> list[str]:
        """Physical ``path`` and every path below it, parents before children."""
        return sorted(key for key in self.nodes if key == path or key.startswith(path + "/"))

    def rename(self, source: str, destination: str) -> None:
        """Move the entry at physical ``source``, with everything below it, to ``destination``
        (absent; missing parents are created). The moved entry gets a new version."""
        moved = {key: self.nodes[key] for key in self.subtree(source)}
        self.detach(source)
        node = moved.pop(source)
        node.version = self.tick()
        self.put(destination, node)
        for key, child in moved.items():
            self.nodes[destination + key[len(source) :]] = child

    def snapshot(self) -> Callable[[], None]:
        """A function that puts every node, child list and version back as they are now."""
        nodes = dict(self.nodes)
        states = [(node, dict(node.children), node.version) for node in nodes.values()]

        def restore() -> None:
            self.nodes.clear()
            self.nodes.update(nodes)
            for node, children, version in states:
                node.children, node.version = children, version

        return restore


class StoredBytes(io.BytesIO):
    """The stored bytes of one file as a :class:`dsh_fs.streaming.ByteSource`."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self._size = len(data)

    @property
    def at_end(self) -> bool:
        return self.tell() >= self._size


class OutOfBand(ABC):
    """The out-of-band helpers of ``MemoryFileSystem``, for tests.

    They change the tree the way another process would: no workspace, no
    locks, ``OSError`` like ``os``. Paths are relative to the backend's
    ``cwd`` or absolute; a final symlink is followed unless said.
    """

    _tree: Tree

    @abstractmethod
    def _physical(self, path: str, *, follow: bool = True) -> tuple[str, Node | None]:
        """The physical path ``path`` reaches outside any workspace, and its node."""

    def _new_entry(self, path: str, node: Node) -> None:
        """Attach a new ``node`` at ``path`` (parents created); an existing name is refused."""
        physical, found = self._physical(path, follow=False)
        if found is not None:
            raise os_error(errno.EEXIST, path)
        self._tree.put(physical, node)

    def put_bytes(self, path: str, data: bytes) -> None:
        """Create or replace a regular file with exactly ``data``, like ``open(path, "wb")``."""
        physical, node = self._physical(path)
        if node is not None and node.type == "directory":
            raise os_error(errno.EISDIR, path)
        if node is not None and node.type != "file":
            raise os_error(errno.EEXIST, path)
        self._tree.put(physical, Node("file", self._tree.tick(), bytes(data)))

    def put_text(self, path: str, text: str) -> None:
        """``put_bytes`` of ``text`` encoded as UTF-8."""
        self.put_bytes(path, text.encode("utf-8"))

    def get_bytes(self, path: str) -> bytes | None:
        """The stored bytes of a regular file, or ``None``."""
        try:
            _, node = self._physical(path)
        except OSError:
            return None
        return node.data if node is not None and node.type == "file" else None

    def mkdir(self, path: str) -> None:
        """Create a directory and its parents; an existing directory is fine."""
        physical, node = self._physical(path)
        if node is None:
            self._tree.make_dirs(physical)
        elif node.type != "directory":
            raise os_error(errno.EEXIST, path)

    def remove(self, path: str, *, recursive: bool = False) -> None:
        """Remove a file, symlink (not its target), other entry or directory (a non-empty
        one only with ``recursive=True``)."""
        physical, node = self._physical(path, follow=False)
        if node is None:
            raise os_error(errno.ENOENT, path)
        if physical == "/":
            raise os_error(errno.EBUSY, path)
        if node.children and not recursive:
            raise os_error(errno.ENOTEMPTY, path)
        self._tree.detach(physical)

    def set_modified_ns(self, path: str, modified_ns: int) -> None:
        """Set the modification time of an entry, like ``os.utime(path, ns=...)`` (its
        version moves on, as a local file's does)."""
        _, node = self._physical(path)
        if node is None:
            raise os_error(errno.ENOENT, path)
        node.modified_ns = modified_ns
        node.version = self._tree.tick()

    def add_symlink(self, path: str, target: str) -> None:
        """Create a symlink at ``path`` to ``target`` (relative or absolute, as given)."""
        self._new_entry(path, Node("symlink", self._tree.tick(), link=target))

    def add_other(self, path: str) -> None:
        """Create an entry that is neither file nor directory (a FIFO, a socket …)."""
        self._new_entry(path, Node("other", self._tree.tick()))

    def names(self, path: str = ".") -> list[str]:
        """The sorted child names of a directory."""
        _, node = self._physical(path)
        if node is None:
            raise os_error(errno.ENOENT, path)
        if node.type != "directory":
            raise os_error(errno.ENOTDIR, path)
        return sorted(node.children)

    def files(self) -> dict[str, bytes]:
        """Every regular file by physical path, sorted: a snapshot for assertions."""
        nodes = sorted(self._tree.nodes.items())
        return {path: node.data for path, node in nodes if node.type == "file"}
