"""A backend's held root descriptors must not outlive the backend.

Found at the merge of branch contain into surface: every ``LocalFileSystem``
holds an ``O_PATH`` descriptor per root until ``close()``, and a backend that
is simply dropped never releases them. A process that builds backends as it
goes (the test suite builds thousands) passes descriptor 1024, and every
``select()`` in it then fails (``filedescriptor out of range in select()``:
the fork-server and permission tests of the full run). Strict: remove the
mark with the fix (e.g. a ``weakref.finalize`` closing the roots).
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from dsh_fs_local import LocalFileSystem


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
@pytest.mark.xfail(strict=True, reason="dropped backends keep their root descriptors")
def test_a_dropped_backend_releases_its_root_descriptors(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    gc.collect()
    before = open_descriptors()
    for _ in range(50):
        LocalFileSystem(tmp_path, roots=[".", "lib"])
    gc.collect()
    assert open_descriptors() <= before


def test_close_releases_them(tmp_path: Path) -> None:
    gc.collect()
    before = open_descriptors()
    fs = LocalFileSystem(tmp_path)
    assert open_descriptors() == before + 1
    fs.close()
    assert open_descriptors() == before
