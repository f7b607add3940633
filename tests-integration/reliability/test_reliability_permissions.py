"""Permissions: what an unprivileged process may not touch, it cannot change.

CI runs as root, and root ignores permission bits, so every call here runs in
a child forked from the pre-imported fork server that dropped to
``nobody:nogroup`` (``setgroups([])``, ``setgid``, ``setuid``) before using the
stack. The tree lives under ``/tmp`` (``nobody`` must be able to reach it;
pytest's ``tmp_path`` is under a 0700 directory)::

    base/                 0755 root
      locked.txt          0600 root     nobody cannot read it
      secret/             0700 root     nobody cannot enter it
        s.txt             0644 root
      ro/                 0755 root     nobody cannot create files here
        pub.txt           0644 root
        shared.txt        0666 root     writable, but its directory is not
      blind/              0711 root     nobody may enter it but not list it
        f.txt             0644 root
      world/              0777 root     anybody may create and rename here
        rootfile.txt      0644 root     …but not overwrite root's file
        mine.txt          0444 nobody   …nor a read-only file, even one's own

Each row asserts ``FS_PERMISSION_DENIED`` with the exact one-line message
naming the path, and that the tree is byte-identical afterwards (checked as
root, ownership and modes included).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_reliability_kit import ForkServer, public_directory, snapshot_tree

NOBODY = 65534
NOGROUP = 65534


@pytest.fixture
def base() -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.fail("the permission suite needs root to build its tree (CI runs as root)")
    top = Path(public_directory())
    base = top / "base"
    base.mkdir(mode=0o755)

    def put(rel: str, data: bytes, mode: int, owner: int = 0) -> None:
        path = base / rel
        path.write_bytes(data)
        os.chmod(path, mode)
        os.chown(path, owner, owner)

    def directory(rel: str, mode: int) -> None:
        (base / rel).mkdir()
        os.chmod(base / rel, mode)

    put("locked.txt", b"secret\n", 0o600)
    directory("secret", 0o755)
    put("secret/s.txt", b"s\n", 0o644)
    os.chmod(base / "secret", 0o700)
    directory("ro", 0o755)
    put("ro/pub.txt", b"pub\n", 0o644)
    put("ro/shared.txt", b"shared\n", 0o666)
    directory("blind", 0o711)
    put("blind/f.txt", b"f\n", 0o644)
    directory("world", 0o777)
    put("world/rootfile.txt", b"root's\n", 0o644)
    put("world/mine.txt", b"mine\n", 0o444, owner=NOBODY)
    try:
        yield base
    finally:
        shutil.rmtree(top)


def _denied(verb: str, rel: str) -> str:
    return f'Error: cannot {verb} "{{base}}/{rel}": permission denied'


ROWS: list[Any] = [
    # (id, policy, calls before, call, expected text)
    (
        "read-unreadable-file",
        True,
        [],
        ("read", {"file_path": "locked.txt"}),
        _denied("read", "locked.txt"),
    ),
    (
        "read-streamed-unreadable-file",
        True,
        [],
        ("read", {"file_path": "locked.txt"}),
        _denied("read", "locked.txt"),
    ),
    (
        "read-file-in-unsearchable-directory",
        True,
        [],
        ("read", {"file_path": "secret/s.txt"}),
        _denied("read", "secret/s.txt"),
    ),
    (
        "list-unreadable-directory",
        True,
        [],
        ("list", {"path": "secret"}),
        _denied("list", "secret"),
    ),
    (
        "list-searchable-unreadable-directory",
        True,
        [("read", {"file_path": "blind/f.txt"})],
        ("list", {"path": "blind"}),
        _denied("list", "blind"),
    ),
    (
        "write-new-file-in-unsearchable-directory",
        True,
        [],
        ("write", {"file_path": "secret/new.txt", "content": "x"}),
        _denied("write", "secret/new.txt"),
    ),
    (
        "write-new-file-in-read-only-directory",
        True,
        [],
        ("write", {"file_path": "ro/new.txt", "content": "x"}),
        _denied("write", "ro/new.txt"),
    ),
    (
        "write-new-directories-in-read-only-directory",
        True,
        [],
        ("write", {"file_path": "ro/a/b/new.txt", "content": "x"}),
        _denied("write", "ro/a/b/new.txt"),
    ),
    (
        "write-read-only-file-after-read",
        True,
        [("read", {"file_path": "ro/pub.txt"})],
        ("write", {"file_path": "ro/pub.txt", "content": "x"}),
        _denied("write", "ro/pub.txt"),
    ),
    (
        "edit-read-only-file-after-read",
        True,
        [("read", {"file_path": "ro/pub.txt"})],
        ("edit", {"file_path": "ro/pub.txt", "old_string": "pub", "new_string": "x"}),
        _denied("edit", "ro/pub.txt"),
    ),
    (
        "edit-writable-file-in-read-only-directory",
        True,
        [("read", {"file_path": "ro/shared.txt"})],
        ("edit", {"file_path": "ro/shared.txt", "old_string": "shared", "new_string": "x"}),
        _denied("edit", "ro/shared.txt"),
    ),
    (
        "edit-unreadable-file-no-policy",
        False,
        [],
        ("edit", {"file_path": "locked.txt", "old_string": "secret", "new_string": "x"}),
        _denied("edit", "locked.txt"),
    ),
    (
        "write-unreadable-file-no-policy",
        False,
        [],
        ("write", {"file_path": "locked.txt", "content": "x"}),
        _denied("write", "locked.txt"),
    ),
    (
        "edit-file-in-unsearchable-directory-no-policy",
        False,
        [],
        ("edit", {"file_path": "secret/s.txt", "old_string": "s", "new_string": "x"}),
        _denied("edit", "secret/s.txt"),
    ),
    (
        "write-others-file-in-world-writable-directory",
        True,
        [("read", {"file_path": "world/rootfile.txt"})],
        ("write", {"file_path": "world/rootfile.txt", "content": "mine now\n"}),
        _denied("write", "world/rootfile.txt"),
    ),
    (
        "edit-others-file-in-world-writable-directory",
        True,
        [("read", {"file_path": "world/rootfile.txt"})],
        ("edit", {"file_path": "world/rootfile.txt", "old_string": "root's", "new_string": "x"}),
        _denied("edit", "world/rootfile.txt"),
    ),
    (
        "write-own-read-only-file",
        True,
        [("read", {"file_path": "world/mine.txt"})],
        ("write", {"file_path": "world/mine.txt", "content": "x\n"}),
        _denied("write", "world/mine.txt"),
    ),
    (
        "edit-own-read-only-file",
        True,
        [("read", {"file_path": "world/mine.txt"})],
        ("edit", {"file_path": "world/mine.txt", "old_string": "mine", "new_string": "x"}),
        _denied("edit", "world/mine.txt"),
    ),
]

KNOWN_DEFECTS: dict[str, str] = {}


def _param(row: Any) -> Any:
    reason = KNOWN_DEFECTS.get(row[0])
    marks = [] if reason is None else [pytest.mark.xfail(reason=reason, strict=True)]
    return pytest.param(*row[1:], id=row[0], marks=marks)


@pytest.mark.parametrize(("policy", "before", "call", "expect"), [_param(r) for r in ROWS])
def test_permission_denied_as_nobody_changes_nothing(
    forkserver: ForkServer,
    base: Path,
    request: pytest.FixtureRequest,
    policy: bool,
    before: list[tuple[str, dict[str, Any]]],
    call: tuple[str, dict[str, Any]],
    expect: str,
) -> None:
    streamed = "streamed" in request.node.callspec.id
    snapshot = snapshot_tree(base)
    params = {
        "cwd": str(base),
        "policy": policy,
        "config": {"read_stream_min_size": 1} if streamed else None,
        "calls": [*before, call],
    }
    result = forkserver.result("tool_calls", params, user="nobody", timeout=10.0)
    *earlier, last = result["results"]
    for item in earlier:
        assert not item["is_error"], item["text"]
    assert last["text"] == expect.replace("{base}", str(base))
    assert last["code"] == "FS_PERMISSION_DENIED"
    assert snapshot_tree(base) == snapshot


def test_the_child_really_runs_as_nobody(forkserver: ForkServer, base: Path) -> None:
    """Guards the suite itself: as nobody, the unreadable file is unreadable."""
    params = {"cwd": str(base), "calls": [["read", {"file_path": "ro/pub.txt"}]]}
    result = forkserver.result("tool_calls", params, user="nobody", timeout=10.0)
    assert not result["results"][0]["is_error"]
    as_root = forkserver.result(
        "tool_calls", {"cwd": str(base), "calls": [["read", {"file_path": "locked.txt"}]]}
    )
    assert not as_root["results"][0]["is_error"]
