# One file over 400 lines: Beneath is one class, its walk and the lookups that fall back to it.
"""Reaching a path through held directory descriptors: workspace containment at the system call.

A target is inside the workspace when the file a system call reaches — after
every symlink, at the moment of that call — lies beneath a root. A path string
checked first and used afterwards cannot promise that (a directory swapped for
a symlink in between redirects the use), so nothing here checks a string and
then opens it. Like Go's ``os.Root``, :class:`Beneath` opens each root once, as an
``O_PATH`` directory descriptor held for the backend's lifetime, and reaches
every path relative to it:

* where the kernel has it, with one ``openat2(root_fd, rel, RESOLVE_BENEATH |
  RESOLVE_NO_MAGICLINKS)`` (:mod:`~dsh_fs_local._openat2`); on ``EXDEV``/``ELOOP``
  (an absolute link that points inside, a magic link, a loop) the walk below decides;
* otherwise (or to decide), with a walk one component at a time:
  ``open(name, O_PATH | O_NOFOLLOW | O_DIRECTORY, dir_fd=current)``; a symlink
  is read with ``readlink(name, dir_fd=current)`` and its text is walked in
  turn — relative from the current directory, absolute from the descriptor of
  the root that holds it — and ``..`` pops a descriptor the walk holds. A step
  that would leave every root, or a link on procfs that is a magic link
  (:mod:`~dsh_fs_local._magic_links`), raises :class:`Refused`; more than 40
  links raise ``ELOOP`` (a real loop stays an I/O error, ``FS_IO_ERROR``).

The mutations do not open the target by path either: :meth:`Beneath.locate`
hands them a :class:`~dsh_fs_local._reach.Spot` — the target's directory, held
open, and the final name in it — and they work with ``*at`` calls on that
descriptor (temporary file, rename, lock, ``fsync``, sweep).

Where the walk works, this module assumes this threat: whoever
races the backend renames and swaps names *inside* the workspace. A directory
moved out of the workspace by someone who may write outside is out of scope
(as for ``os.Root``): a descriptor already held follows its directory.
"""

from __future__ import annotations

import errno
import os
import stat as st
import weakref
from dataclasses import dataclass

from dsh_fs.workspace import Workspace

from ._magic_links import is_magic_link
from ._openat2 import DECIDED_BY_THE_WALK, OPENAT2, ResolutionMode, default_mode
from ._paths import fd_path
from ._reach import (
    DIRECTORY_PATH_FLAGS,
    LISTABLE_FLAGS,
    PATH_FLAGS,
    SEARCH_FLAGS,
    CreatedDirectories,
    Refused,
    Spot,
    count_link,
    lstat_in,
)

__all__ = ["Beneath"]


def _components(text: str) -> list[str]:
    return [part for part in text.split("/") if part and part != "."]


def _reopen_listable(path_fd: int) -> tuple[int, bool]:
    """A readable descriptor of the directory ``path_fd`` refers to, or a copy of it."""
    try:
        return os.open(".", LISTABLE_FLAGS, dir_fd=path_fd), True
    except PermissionError:
        return os.dup(path_fd), False


@dataclass(frozen=True, slots=True)
class _HeldRoot:
    path: str
    fd: int


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
        if chosen == "openat2" and OPENAT2 is None:
            raise ValueError("this kernel has no openat2")
        self._openat2 = OPENAT2 if chosen == "openat2" else None
        self.mode: ResolutionMode = chosen
        self._workspace = workspace
        held: dict[str, _HeldRoot] = {}
        try:
            for path in (*workspace.roots, *workspace.read_only_roots):
                if path not in held:
                    fd = os.open(path, DIRECTORY_PATH_FLAGS)
                    held[path] = _HeldRoot(path, fd)
        except OSError:
            for root in held.values():
                os.close(root.fd)
            raise
        self._roots = held
        # The descriptors live as long as this object: a backend that is simply
        # dropped (the usual case) must not leak them.
        self._release = weakref.finalize(self, _close_all, [root.fd for root in held.values()])

    @property
    def workspace(self) -> Workspace:
        return self._workspace

    def close(self) -> None:
        self._release()
        self._roots = {}

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
        """The held root that holds the canonical ``path`` (the innermost, as
        :meth:`Workspace.root_of` says); :class:`Refused` when none does."""
        name = self._workspace.root_of(path)
        root = None if name is None else self._roots.get(name)
        if root is None:
            raise Refused()
        return root

    @staticmethod
    def _rel(path: str, root: _HeldRoot) -> bytes:
        rel = path[len(root.path) :].lstrip("/")
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
                    fd = os.open(name, SEARCH_FLAGS, dir_fd=walk.fd)
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
                        links = count_link(links)
                        pending.append(name)
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
        links = count_link(links)
        try:
            text = os.readlink(name, dir_fd=walk.fd)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
            # Not a symlink any more (swapped meanwhile): look at the name again.
            pending.append(name)
            return links
        if is_magic_link(walk.fd, text):
            raise Refused()
        if text.startswith("/"):
            self._jump(walk, "/" + "/".join(_components(text)), pending)
        else:
            pending.extend(reversed(_components(text)))
        return links

    def _climb(self, walk: _Walk, pending: list[str]) -> None:
        """``..``: pop a held directory; above a root, only into another root holding its parent."""
        if walk.fds:
            walk.up()
            return
        if walk.root.path == "/":
            return  # "/.." is "/"
        self._jump(walk, os.path.dirname(walk.root.path), pending)

    def _jump(self, walk: _Walk, path: str, pending: list[str]) -> None:
        """Go on from the canonical absolute ``path``: from the root that holds it."""
        root = self._holding(path)
        walk.jump(root)
        pending.extend(reversed(_components(path[len(root.path) :])))

    def _make_directory(self, walk: _Walk, name: str, created: CreatedDirectories) -> int:
        path = walk.path.rstrip("/") + "/" + name
        granted = self._workspace.access(path)
        if granted != "write":
            raise Refused(outside=granted is None)
        try:
            os.mkdir(name, 0o777, dir_fd=walk.fd)
        except FileExistsError:
            pass  # made meanwhile (by another writer): walk into it, or fail below
        else:
            created.add(walk.fd, name)
        return os.open(name, SEARCH_FLAGS, dir_fd=walk.fd)

    # -- the lookups ------------------------------------------------------

    def key_of(self, display_path: str) -> str:
        """Realpath of ``display_path`` reached beneath its root; a missing rest is appended.

        One ``openat2`` and a ``readlink`` of its ``/proc/self/fd`` entry for an
        existing path; the parent's for a missing final name; the walk otherwise.
        """
        root = self._holding(display_path)
        if self._openat2 is not None:
            try:
                fd = self._openat2(root.fd, self._rel(display_path, root), PATH_FLAGS)
            except OSError as exc:
                if exc.errno == errno.ENOENT:
                    key = self._key_of_missing(display_path, root)
                    if key is not None:
                        return key
                elif exc.errno not in DECIDED_BY_THE_WALK and exc.errno != errno.EACCES:
                    raise
            else:
                try:
                    key = fd_path(fd)
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
            fd = self._openat2(root.fd, self._rel(parent, root), DIRECTORY_PATH_FLAGS)
        except OSError:
            return None
        try:
            try:
                os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                base = fd_path(fd)
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
                if exc.errno not in DECIDED_BY_THE_WALK:
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

    def locate(self, path: str, *, follow_final: bool = True) -> Spot:
        root = self._holding(path)
        if path == root.path:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        parent, name = os.path.split(path)
        if self._openat2 is not None and len(parent) >= len(root.path):
            spot = self._locate_directly(root, parent, name, follow_final)
            if spot is not None:
                return spot
        return self._spot_of(self._walk(path, follow_final=follow_final))

    def _locate_directly(
        self, root: _HeldRoot, parent: str, name: str, follow_final: bool
    ) -> Spot | None:
        """The spot through one ``openat2`` of the parent, or ``None`` when the walk must decide
        (a symlink on the way that ``openat2`` will not follow, or a final symlink to follow)."""
        assert self._openat2 is not None
        rel = self._rel(parent, root)
        readable = True
        try:
            try:
                fd = self._openat2(root.fd, rel, LISTABLE_FLAGS)
            except PermissionError:
                readable = False
                fd = self._openat2(root.fd, rel, DIRECTORY_PATH_FLAGS)
        except OSError as exc:
            if exc.errno in DECIDED_BY_THE_WALK:
                return None
            raise
        if follow_final:
            info = lstat_in(fd, name)
            if info is not None and st.S_ISLNK(info.st_mode):
                os.close(fd)
                return None
        return Spot(fd, parent, name, readable)

    def _spot_of(self, arrival: _Arrival) -> Spot:
        walk = arrival.walk
        try:
            if not arrival.name:
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            fd, readable = _reopen_listable(walk.fd)
            return Spot(fd, walk.path, arrival.name, readable)
        finally:
            walk.close()

    def make_directories(
        self, path: str, created: CreatedDirectories, *, follow_final: bool = True
    ) -> Spot:
        return self._spot_of(self._walk(path, follow_final=follow_final, created=created))
