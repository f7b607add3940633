"""``DiskTree``: the out-of-band half of a ``Scratch`` whose tree is a directory on this disk."""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["DiskTree"]


class DiskTree:
    """``root`` and every out-of-band method of :class:`Scratch`, with plain local calls.

    For a backend whose files live in a directory of this machine — the local
    backend, or a server started on it for the tests (SFTP on loopback): a
    subclass adds ``fs`` and ``backend``. The root is the realpath of the
    directory, so that display paths and target keys coincide for plain paths.
    """

    def __init__(self, root: Path | str) -> None:
        self._root = os.path.realpath(root)

    @property
    def root(self) -> str:
        return self._root

    def path(self, rel: str) -> str:
        return os.path.join(self._root, rel)

    def put(self, path: str, data: bytes) -> None:
        full = self._parent_made(path)
        with open(full, "wb") as out:
            out.write(data)

    def get(self, path: str) -> bytes | None:
        full = self.path(path)
        try:
            if not stat.S_ISREG(os.stat(full).st_mode):
                return None  # never open a FIFO or a device
            with open(full, "rb") as f:
                return f.read()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def mkdir(self, path: str) -> None:
        os.makedirs(self.path(path), exist_ok=True)

    def remove(self, path: str) -> None:
        full = self.path(path)
        if os.path.isdir(full) and not os.path.islink(full):
            os.rmdir(full)
        else:
            os.unlink(full)

    def symlink(self, path: str, target: str) -> None:
        os.symlink(target, self._parent_made(path))

    def make_other(self, path: str) -> None:
        os.mkfifo(self._parent_made(path))

    def hard_link(self, path: str, existing: str) -> None:
        """Give the file ``existing`` a second name ``path`` (both relative to the root)."""
        os.link(self.path(existing), self._parent_made(path))

    def names(self, path: str = ".") -> list[str]:
        return sorted(os.listdir(self.path(path)))

    def set_modified(self, path: str, modified_ns: int) -> None:
        """Set the modification (and access) time of ``path``, a link itself if it is one."""
        os.utime(self.path(path), ns=(modified_ns, modified_ns), follow_symlinks=False)

    def _parent_made(self, path: str) -> str:
        full = self.path(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        return full
