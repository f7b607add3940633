"""Reaching a path through held directory descriptors: workspace containment at the system call.

A target is inside the workspace when the file a system call reaches — after
every symlink, at the moment of that call — lies beneath a root. A path string
checked first and used afterwards cannot promise that (a directory swapped for
a symlink in between redirects the use), so nothing here checks a string and
then opens it. Like Go's ``os.Root``, :class:`Beneath` opens each root once, as an
``O_PATH`` directory descriptor held for the backend's lifetime, and reaches
every path relative to it:

* where the kernel has it, with one ``openat2(root_fd, rel, RESOLVE_BENEATH |
  RESOLVE_NO_MAGICLINKS)`` (Linux ≥ 5.6, through ``ctypes``: the standard
  library has no binding). The kernel refuses ``..`` above the root, absolute
  paths and symlinks that leave it (``EXDEV``) and ``/proc`` magic links
  (``ELOOP``). It also refuses an absolute symlink that points *inside*, and a
  loop looks like a magic link; on ``EXDEV``/``ELOOP`` the walk below decides;
* otherwise (or to decide), with a walk one component at a time:
  ``open(name, O_PATH | O_NOFOLLOW | O_DIRECTORY, dir_fd=current)``; a symlink
  is read with ``readlink(name, dir_fd=current)`` and its text is walked in
  turn — relative from the current directory, absolute from the descriptor of
  the root that holds it — and ``..`` pops a descriptor the walk holds. A step
  that would leave every root, or a link on procfs that is a magic link, raises
  :class:`Refused`; more than 40 links raise ``ELOOP`` (a real loop stays an
  I/O error, ``FS_IO_ERROR``).

The mutations do not open the target by path either: :meth:`Beneath.locate`
hands them a :class:`Spot` — the target's directory, held open, and the final
name in it — and they work with ``*at`` calls on that descriptor (temporary
file, rename, lock, ``fsync``, sweep). :class:`Anywhere` is the same interface
without containment (``roots=None``): plain path lookups, as before.

Where the walk works, this module assumes this threat: whoever
races the backend renames and swaps names *inside* the workspace. A directory
moved out of the workspace by someone who may write outside is out of scope
(as for ``os.Root``): a descriptor already held follows its directory.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat as st
import struct
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from dsh_fs import FsError
from dsh_fs.workspace import Workspace, outside_workspace, read_only_workspace

__all__ = [
    "MAX_SYMLINKS",
    "Anywhere",
    "Beneath",
    "CreatedDirectories",
    "Reach",
    "Refused",
    "ResolutionMode",
    "Spot",
    "default_mode",
    "kernel_has_openat2",
]

MAX_SYMLINKS: Final = 40
"""Symlinks one resolution may follow before it fails ``ELOOP`` (Linux's own limit)."""

ResolutionMode = Literal["openat2", "walk"]
"""How :class:`Beneath` resolves: one ``openat2`` per lookup, or the component walk only."""

_O_PATH: Final = getattr(os, "O_PATH", 0)
_PATH_FLAGS: Final = _O_PATH | os.O_CLOEXEC
_SEARCH_FLAGS: Final = _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LISTABLE_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_PATH_DIR_FLAGS: Final = _O_PATH | os.O_DIRECTORY | os.O_CLOEXEC

_RESOLVE_NO_MAGICLINKS: Final = 0x02
_RESOLVE_BENEATH: Final = 0x08
_SYS_OPENAT2: Final = 437  # the unified syscall table: x86_64, aarch64 and the rest but alpha
_PROC_SUPER_MAGIC: Final = 0x9FA0
_PROC_FD: Final = "/proc/self/fd/"
_DECIDE: Final = frozenset({errno.EXDEV, errno.ELOOP, errno.EAGAIN})
"""``openat2`` errors that the walk decides: an inside absolute link, a magic link, a
loop, and a ``..`` lookup that a rename elsewhere kept failing (``EAGAIN``, retried first)."""
_EAGAIN_TRIES: Final = 4
"""``openat2`` calls made while it answers ``EAGAIN`` before the walk answers instead."""


class Refused(Exception):
    """The path may not be reached: it leaves every root, or (``outside=False``) the
    write it was reached for lands in a read-only root.

    Not an ``OSError``, so that no ``except OSError`` turns a refusal into
    "not found"; each primitive turns it into its own message with :meth:`error`.
    """

    def __init__(self, *, outside: bool = True) -> None:
        super().__init__("outside the workspace" if outside else "read-only workspace")
        self.outside = outside

    def error(self, verb: str, display_path: str) -> FsError:
        """``cannot <verb> "<p>": outside the workspace`` (or ``read-only workspace``)."""
        if self.outside:
            return outside_workspace(verb, display_path)
        return read_only_workspace(verb, display_path)


# ---------------------------------------------------------------------------
# The kernel's openat2, through ctypes


class _OpenHow(ctypes.Structure):
    """``struct open_how`` (``linux/openat2.h``): three ``__u64``."""

    _fields_ = [
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    ]


OpenAt2 = Callable[[int, bytes, int], int]
"""``openat2(dir_fd, rel, flags)`` beneath ``dir_fd`` without magic links; raises ``OSError``."""


def _bind_openat2() -> OpenAt2 | None:
    """The ``openat2`` binding, or ``None`` when this kernel (or its seccomp filter) lacks it."""
    if not sys.platform.startswith("linux") or not _O_PATH:
        return None
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    syscall.argtypes = [
        ctypes.c_long,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_void_p,
        ctypes.c_size_t,
    ]
    size = ctypes.sizeof(_OpenHow)
    hows: dict[int, _OpenHow] = {}
    resolve = _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS

    def openat2(dir_fd: int, rel: bytes, flags: int) -> int:
        how = hows.get(flags)
        if how is None:
            # One read-only struct per flag set, shared by every thread.
            how = hows[flags] = _OpenHow(flags, 0, resolve)
        # RESOLVE_BENEATH answers EAGAIN when any rename on the machine ran
        # during a ".." lookup: try again a few times, then let the walk decide.
        for _ in range(_EAGAIN_TRIES):
            fd: int = syscall(_SYS_OPENAT2, dir_fd, rel, ctypes.byref(how), size)
            if fd >= 0:
                return fd
            code = ctypes.get_errno()
            if code != errno.EAGAIN:
                break
        raise OSError(code, os.strerror(code))

    # Probe once: "." beneath "/" opens, ".." beneath it is EXDEV. Any other
    # answer (ENOSYS, EPERM from seccomp, another syscall at 437) means no.
    try:
        probe = os.open("/", _PATH_DIR_FLAGS)
    except OSError:
        return None
    try:
        os.close(openat2(probe, b".", _PATH_DIR_FLAGS))
        try:
            os.close(openat2(probe, b"..", _PATH_DIR_FLAGS))
        except OSError as exc:
            return openat2 if exc.errno == errno.EXDEV else None
        return None
    except OSError:
        return None
    finally:
        os.close(probe)


_OPENAT2: Final = _bind_openat2()


def kernel_has_openat2() -> bool:
    """Whether this process can use ``openat2`` with ``RESOLVE_BENEATH`` (probed at import)."""
    return _OPENAT2 is not None


def default_mode() -> ResolutionMode:
    """``"openat2"`` where the kernel has it, else ``"walk"``."""
    return "openat2" if _OPENAT2 is not None else "walk"


# ---------------------------------------------------------------------------
# Magic links (walk mode)


def _bind_fstatfs() -> Callable[[int], int | None]:
    """``f_type`` of the filesystem holding a descriptor (``fstatfs``), or ``None``."""
    try:
        fstatfs = ctypes.CDLL(None, use_errno=True).fstatfs
    except (OSError, AttributeError):
        return lambda fd: None
    fstatfs.restype = ctypes.c_int
    fstatfs.argtypes = [ctypes.c_int, ctypes.c_void_p]
    long_format = "l"  # f_type is the first member, a native long (__fsword_t)

    def f_type(fd: int) -> int | None:
        buffer = ctypes.create_string_buffer(256)  # > sizeof(struct statfs) everywhere
        if fstatfs(fd, buffer) != 0:
            return None
        value: int = struct.unpack_from(long_format, buffer.raw)[0]
        return value

    return f_type


_f_type: Final = _bind_fstatfs()


def _proc_device() -> int | None:
    try:
        return os.stat("/proc").st_dev
    except OSError:
        return None


_PROC_DEVICE: Final = _proc_device()


def _on_procfs(dir_fd: int) -> bool:
    kind = _f_type(dir_fd)
    if kind is not None:
        return kind == _PROC_SUPER_MAGIC
    return _PROC_DEVICE is not None and os.fstat(dir_fd).st_dev == _PROC_DEVICE


def _is_magic_link(dir_fd: int, text: str) -> bool:
    """Whether the link whose text is ``text``, in directory ``dir_fd``, is a procfs magic link.

    The ordinary links of procfs (``self`` → ``<pid>``, ``mounts`` →
    ``self/mounts``) are relative paths; the magic ones (``fd/N``, ``cwd``,
    ``root``, ``exe``, ``map_files/…``, ``ns/…``) read as an absolute path or
    as no path at all (``pipe:[123]``, ``anon_inode:[eventfd]``), and the kernel
    follows them to the object, not to that text.
    """
    if not text.startswith("/") and ":" not in text:
        return False
    return _on_procfs(dir_fd)


# ---------------------------------------------------------------------------
# What a lookup hands back


def _fd_path(fd: int) -> str | None:
    """The kernel's path of an open descriptor, or ``None`` (no ``/proc``, or unlinked)."""
    try:
        path = os.readlink(f"{_PROC_FD}{fd}")
    except OSError:
        return None
    if not path.startswith("/") or path.endswith(" (deleted)"):
        return None
    return path


@dataclass(slots=True)
class Spot:
    """Where a mutation works: the directory holding the target's final name, held open.

    ``dir_fd`` is owned by the spot (:meth:`close`). It is readable
    (``O_RDONLY``: it can be listed, locked and ``fsync``ed) when ``readable``,
    else an ``O_PATH`` descriptor that only serves ``*at`` calls (a directory
    this process may search but not read). ``name`` is not a symlink when the
    spot was made (``info`` is its ``lstat``, ``None`` when absent).
    """

    dir_fd: int
    dir_path: str
    name: str
    info: os.stat_result | None
    readable: bool

    @property
    def path(self) -> str:
        """The canonical path of the final name (what the workspace rule is asked about)."""
        return self.dir_path.rstrip("/") + "/" + self.name

    def close(self) -> None:
        os.close(self.dir_fd)


class CreatedDirectories:
    """The parent directories one write created, to remove them if the write fails.

    Each is kept as its parent's descriptor and its name, so the undo is an
    ``rmdir(name, dir_fd=parent)`` of exactly what was made, never a path lookup.
    """

    __slots__ = ("_made",)

    def __init__(self) -> None:
        self._made: list[tuple[int, str]] = []

    def __bool__(self) -> bool:
        return bool(self._made)

    def add(self, parent_fd: int, name: str) -> None:
        self._made.append((os.dup(parent_fd), name))

    def undo(self) -> None:
        """Remove them, innermost first, while they are still empty."""
        for parent_fd, name in reversed(self._made):
            try:
                os.rmdir(name, dir_fd=parent_fd)
            except OSError:
                break
        self.close()

    def close(self) -> None:
        for parent_fd, _ in self._made:
            os.close(parent_fd)
        self._made.clear()


class Reach(Protocol):
    """How the backend reaches a canonical absolute path: :class:`Beneath` or :class:`Anywhere`.

    Every method raises ``OSError`` for what the OS says and :class:`Refused`
    for what containment says; the primitive turns both into its ``FsError``.
    """

    @property
    def workspace(self) -> Workspace: ...

    def key_of(self, display_path: str) -> str:
        """The target key (realpath, stable across creation) of a normalized absolute path."""
        ...

    def open(self, path: str, flags: int) -> int:
        """A descriptor of ``path`` (a final symlink is followed unless ``O_NOFOLLOW``)."""
        ...

    def locate(self, path: str) -> Spot:
        """The :class:`Spot` of ``path``, a final symlink followed; ``FileNotFoundError`` when
        its directory is missing."""
        ...

    def make_directories(self, path: str, created: CreatedDirectories) -> Spot:
        """:meth:`locate`, creating the missing directories above ``path`` (into ``created``)."""
        ...

    def close(self) -> None: ...


def _retry(name: str, pending: list[str], links: int) -> int:
    """Queue ``name`` again after it changed type under the walk; the retries share
    the symlink budget, so a name that flips forever ends in ``ELOOP``."""
    links += 1
    if links > MAX_SYMLINKS:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
    pending.append(name)
    return links


def _components(text: str) -> list[str]:
    return [part for part in text.split("/") if part and part != "."]


def _reopen_listable(path_fd: int) -> tuple[int, bool]:
    """A readable descriptor of the directory ``path_fd`` refers to, or a copy of it."""
    try:
        return os.open(".", _LISTABLE_FLAGS, dir_fd=path_fd), True
    except PermissionError:
        return os.dup(path_fd), False


# ---------------------------------------------------------------------------
# Contained


@dataclass(frozen=True, slots=True)
class _HeldRoot:
    path: str
    parts: tuple[str, ...]
    fd: int

    @property
    def prefix(self) -> str:
        """What a path beneath the root starts with (``/`` for the root ``/``)."""
        return self.path.rstrip("/") + "/"


class _Walk:
    """One component walk in progress: a root and the descriptors opened below it."""

    __slots__ = ("fds", "names", "root")

    def __init__(self, root: _HeldRoot) -> None:
        self.root = root
        self.fds: list[int] = []
        self.names: list[str] = []

    @property
    def fd(self) -> int:
        return self.fds[-1] if self.fds else self.root.fd

    @property
    def path(self) -> str:
        if not self.names:
            return self.root.path
        return self.root.path.rstrip("/") + "/" + "/".join(self.names)

    def enter(self, fd: int, name: str) -> None:
        self.fds.append(fd)
        self.names.append(name)

    def up(self) -> None:
        os.close(self.fds.pop())
        self.names.pop()

    def jump(self, root: _HeldRoot) -> None:
        self.close()
        self.root = root

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()
        self.names.clear()


@dataclass(slots=True)
class _Arrival:
    """Where a walk ended: its position, the final name (``""``: the position itself),
    that name's ``lstat`` (``None``: absent) and, for a key, the missing remainder."""

    walk: _Walk
    name: str
    info: os.stat_result | None
    missing: list[str]


def _lstat_in(dir_fd: int, name: str) -> os.stat_result | None:
    """``lstat`` of ``name`` in the held directory ``dir_fd``; ``None`` when absent.

    On any other failure ``dir_fd`` is closed before the error propagates, so a
    caller building a :class:`Spot` from it leaks nothing.
    """
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except BaseException:
        os.close(dir_fd)
        raise


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


class Beneath:
    """The workspace held open: every lookup goes through the descriptor of a root.

    ``mode`` is ``"openat2"`` (the default where the kernel has it) or
    ``"walk"`` (the component walk alone, as on older kernels; the tests run
    both). Roots are opened once, here; :meth:`close` releases them.
    """

    def __init__(self, workspace: Workspace, mode: ResolutionMode | None = None) -> None:
        if workspace.roots is None:
            raise ValueError("Beneath needs roots (roots=None is Anywhere)")
        chosen = mode or default_mode()
        if chosen == "openat2" and _OPENAT2 is None:
            raise ValueError("this kernel has no openat2")
        self._openat2 = _OPENAT2 if chosen == "openat2" else None
        self.mode: ResolutionMode = chosen
        self._workspace = workspace
        held: dict[str, _HeldRoot] = {}
        try:
            for path in (*workspace.roots, *workspace.read_only_roots):
                if path not in held:
                    fd = os.open(path, _PATH_DIR_FLAGS)
                    held[path] = _HeldRoot(path, tuple(_components(path)), fd)
        except OSError:
            for root in held.values():
                os.close(root.fd)
            raise
        self._roots = held
        # The descriptors live as long as this object: a backend that is simply
        # dropped (the usual case) must not leak them.
        self._release = weakref.finalize(self, _close_all, [root.fd for root in held.values()])
        # Innermost first, with their prefixes: the lookup on every call.
        self._innermost_first = sorted(
            ((root.prefix, root) for root in held.values()), key=lambda pr: -len(pr[1].path)
        )

    @property
    def workspace(self) -> Workspace:
        return self._workspace

    def close(self) -> None:
        self._release()
        self._roots = {}
        self._innermost_first = []

    def root_descriptors(self) -> list[int]:
        """Copies (``dup``, owned by the caller) of the ``O_PATH`` descriptor of every root."""
        fds: list[int] = []
        try:
            for root in self._roots.values():
                fds.append(os.dup(root.fd))
        except OSError:
            _close_all(fds)
            raise
        return fds

    # -- finding the root -------------------------------------------------

    def _holding(self, path: str) -> _HeldRoot:
        """The innermost root that lexically holds the canonical ``path`` (the rule of
        :meth:`Workspace.root_of`, on the held roots); :class:`Refused` when none does."""
        for prefix, root in self._innermost_first:
            if path.startswith(prefix) or path == root.path:
                return root
        raise Refused()

    def _root_prefix(self, parts: list[str]) -> tuple[_HeldRoot, list[str]]:
        """The innermost root whose components begin ``parts`` (an absolute link's text)."""
        best: _HeldRoot | None = None
        for root in self._roots.values():
            n = len(root.parts)
            if parts[:n] == list(root.parts) and (best is None or n > len(best.parts)):
                best = root
        if best is None:
            raise Refused()
        return best, parts[len(best.parts) :]

    @staticmethod
    def _rel(path: str, root: _HeldRoot) -> bytes:
        rel = path[len(root.prefix) :]
        return os.fsencode(rel) if rel else b"."

    # -- the walk ---------------------------------------------------------

    def _walk(
        self,
        path: str,
        *,
        follow_final: bool,
        tolerate_missing: bool = False,
        created: CreatedDirectories | None = None,
    ) -> _Arrival:
        """Walk ``path`` from its root one component at a time, following links inside only.

        ``tolerate_missing`` (for keys) stops at the first missing or
        unsearchable directory and returns the rest as ``missing``;
        ``created`` (for writes) makes each missing directory instead —
        only where the workspace grants writes.
        """
        walk = _Walk(self._holding(path))
        pending = _components(path[len(walk.root.path) :])
        pending.reverse()
        links = 0
        try:
            while pending:
                name = pending.pop()
                if name == "..":
                    self._climb(walk, pending)
                    continue
                if not pending:
                    try:
                        info = os.stat(name, dir_fd=walk.fd, follow_symlinks=False)
                    except FileNotFoundError:
                        return _Arrival(walk, name, None, [])
                    except PermissionError:
                        if not tolerate_missing:
                            raise
                        return _Arrival(walk, name, None, [])
                    if follow_final and st.S_ISLNK(info.st_mode):
                        links = self._follow(walk, name, pending, links)
                        continue
                    return _Arrival(walk, name, info, [])
                try:
                    fd = os.open(name, _SEARCH_FLAGS, dir_fd=walk.fd)
                except FileNotFoundError:
                    if created is not None:
                        fd = self._make_directory(walk, name, created)
                    elif tolerate_missing:
                        return _Arrival(walk, name, None, pending[::-1])
                    else:
                        raise
                except PermissionError:
                    if not tolerate_missing:
                        raise
                    return _Arrival(walk, name, None, pending[::-1])
                except OSError as exc:
                    if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                        raise
                    info = os.stat(name, dir_fd=walk.fd, follow_symlinks=False)
                    if st.S_ISLNK(info.st_mode):
                        links = self._follow(walk, name, pending, links)
                    elif st.S_ISDIR(info.st_mode):
                        # A symlink a moment ago, a directory now (a swap): look again.
                        links = _retry(name, pending, links)
                    else:
                        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from exc
                    continue
                walk.enter(fd, name)
            return _Arrival(walk, "", None, [])
        except BaseException:
            walk.close()
            raise

    def _follow(self, walk: _Walk, name: str, pending: list[str], links: int) -> int:
        """Queue the text of the symlink ``name`` (in the walk's directory) in its place."""
        links += 1
        if links > MAX_SYMLINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        try:
            text = os.readlink(name, dir_fd=walk.fd)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
            # Not a symlink any more (swapped meanwhile): look at the name again.
            pending.append(name)
            return links
        if _is_magic_link(walk.fd, text):
            raise Refused()
        parts = _components(text)
        if text.startswith("/"):
            root, parts = self._root_prefix(parts)
            walk.jump(root)
        pending.extend(reversed(parts))
        return links

    def _climb(self, walk: _Walk, pending: list[str]) -> None:
        """``..``: pop a held directory; above a root, only into another root holding its parent."""
        if walk.fds:
            walk.up()
            return
        if walk.root.path == "/":
            return  # "/.." is "/"
        parent = os.path.dirname(walk.root.path)
        root = self._holding(parent)
        walk.jump(root)
        pending.extend(reversed(_components(parent[len(root.path) :])))

    def _make_directory(self, walk: _Walk, name: str, created: CreatedDirectories) -> int:
        path = walk.path.rstrip("/") + "/" + name
        if self._workspace.access(path) != "write":
            raise Refused(outside=self._workspace.access(path) is None)
        try:
            os.mkdir(name, 0o777, dir_fd=walk.fd)
        except FileExistsError:
            pass  # made meanwhile (by another writer): walk into it, or fail below
        else:
            created.add(walk.fd, name)
        return os.open(name, _SEARCH_FLAGS, dir_fd=walk.fd)

    # -- the lookups ------------------------------------------------------

    def key_of(self, display_path: str) -> str:
        """Realpath of ``display_path`` reached beneath its root; a missing rest is appended.

        One ``openat2`` and a ``readlink`` of its ``/proc/self/fd`` entry for an
        existing path; the parent's for a missing final name; the walk otherwise.
        """
        root = self._holding(display_path)
        if self._openat2 is not None:
            try:
                fd = self._openat2(root.fd, self._rel(display_path, root), _PATH_FLAGS)
            except OSError as exc:
                if exc.errno == errno.ENOENT:
                    key = self._key_of_missing(display_path, root)
                    if key is not None:
                        return key
                elif exc.errno not in _DECIDE and exc.errno != errno.EACCES:
                    raise
            else:
                try:
                    key = _fd_path(fd)
                finally:
                    os.close(fd)
                if key is not None:
                    return key
        arrival = self._walk(display_path, follow_final=True, tolerate_missing=True)
        try:
            base = arrival.walk.path
            rest = [arrival.name, *arrival.missing] if arrival.name else arrival.missing
            return "/".join([base.rstrip("/"), *rest]) if rest else base
        finally:
            arrival.walk.close()

    def _key_of_missing(self, display_path: str, root: _HeldRoot) -> str | None:
        """The key of a missing final name in an existing directory, or ``None`` (walk it)."""
        assert self._openat2 is not None
        parent, name = os.path.split(display_path)
        if not name or len(parent) < len(root.path):
            return None
        try:
            fd = self._openat2(root.fd, self._rel(parent, root), _PATH_DIR_FLAGS)
        except OSError:
            return None
        try:
            try:
                os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                base = _fd_path(fd)
                return None if base is None else base.rstrip("/") + "/" + name
            except OSError:
                return None
            return None  # there now (a dangling link, or just created): walk it
        finally:
            os.close(fd)

    def open(self, path: str, flags: int) -> int:
        root = self._holding(path)
        if self._openat2 is not None:
            try:
                return self._openat2(root.fd, self._rel(path, root), flags | os.O_CLOEXEC)
            except OSError as exc:
                if exc.errno not in _DECIDE:
                    raise
        arrival = self._walk(path, follow_final=not flags & os.O_NOFOLLOW)
        try:
            if not arrival.name:
                return os.open(".", flags | os.O_CLOEXEC, dir_fd=arrival.walk.fd)
            if arrival.info is None:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
            return os.open(
                arrival.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=arrival.walk.fd
            )
        finally:
            arrival.walk.close()

    def locate(self, path: str) -> Spot:
        root = self._holding(path)
        if path == root.path:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        parent, name = os.path.split(path)
        if self._openat2 is not None and len(parent) >= len(root.path):
            spot = self._locate_directly(root, parent, name)
            if spot is not None:
                return spot
        return self._spot_of(self._walk(path, follow_final=True))

    def _locate_directly(self, root: _HeldRoot, parent: str, name: str) -> Spot | None:
        """The spot through one ``openat2`` of the parent, or ``None`` when the walk must decide
        (a symlink on the way that ``openat2`` will not follow, or a final symlink)."""
        assert self._openat2 is not None
        rel = self._rel(parent, root)
        readable = True
        try:
            try:
                fd = self._openat2(root.fd, rel, _LISTABLE_FLAGS)
            except PermissionError:
                readable = False
                fd = self._openat2(root.fd, rel, _PATH_DIR_FLAGS)
        except OSError as exc:
            if exc.errno in _DECIDE:
                return None
            raise
        info = _lstat_in(fd, name)
        if info is not None and st.S_ISLNK(info.st_mode):
            os.close(fd)
            return None
        return Spot(fd, parent, name, info, readable)

    def _spot_of(self, arrival: _Arrival) -> Spot:
        walk = arrival.walk
        try:
            if not arrival.name:
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            fd, readable = _reopen_listable(walk.fd)
            return Spot(fd, walk.path, arrival.name, arrival.info, readable)
        finally:
            walk.close()

    def make_directories(self, path: str, created: CreatedDirectories) -> Spot:
        return self._spot_of(self._walk(path, follow_final=True, created=created))


# ---------------------------------------------------------------------------
# Not contained (roots=None)


def _followed_path(path: str) -> str | None:
    """Where the kernel's lookup of ``path`` leads (its realpath; a dangling link's
    target), or ``None`` for an object without a path (a pipe behind ``/dev/stdin``)."""
    try:
        fd = os.open(path, _PATH_FLAGS)
    except FileNotFoundError:
        return os.path.realpath(path)
    try:
        return _fd_path(fd)
    finally:
        os.close(fd)


class Anywhere:
    """Every path the process can reach (``roots=None``): plain lookups by path, as before."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    @property
    def workspace(self) -> Workspace:
        return self._workspace

    def close(self) -> None:
        pass

    def key_of(self, display_path: str) -> str:
        from ._paths import realpath_anywhere

        return realpath_anywhere(display_path)

    def open(self, path: str, flags: int) -> int:
        return os.open(path, flags | os.O_CLOEXEC)

    def locate(self, path: str) -> Spot:
        return self._locate(path, 0)

    def _locate(self, path: str, links: int) -> Spot:
        parent, name = os.path.split(path)
        if not name:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        readable = True
        try:
            fd = os.open(parent, _LISTABLE_FLAGS)
        except PermissionError:
            if not _O_PATH:
                raise
            readable = False
            fd = os.open(parent, _PATH_DIR_FLAGS)
        info = _lstat_in(fd, name)
        if info is not None and st.S_ISLNK(info.st_mode):
            if links >= MAX_SYMLINKS:
                os.close(fd)
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
            target = _followed_path(path)
            if target is not None:
                os.close(fd)
                return self._locate(target, links + 1)
            # An object without a path (``/dev/stdin`` on a pipe): the link itself,
            # which a mutation refuses as not a regular file.
        return Spot(fd, parent, name, info, readable)

    def make_directories(self, path: str, created: CreatedDirectories) -> Spot:
        missing: list[str] = []
        directory = os.path.dirname(path)
        while not os.path.isdir(directory):
            missing.append(directory)
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        for directory in reversed(missing):
            parent, name = os.path.split(directory)
            parent_fd = os.open(parent, _PATH_DIR_FLAGS if _O_PATH else _LISTABLE_FLAGS)
            try:
                try:
                    os.mkdir(name, 0o777, dir_fd=parent_fd)
                except FileExistsError:
                    continue
                created.add(parent_fd, name)
            finally:
                os.close(parent_fd)
        return self.locate(path)
