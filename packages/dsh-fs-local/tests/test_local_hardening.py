"""Hardening against a second local user and against the model alone (issue 19).

Kept as one file: one test per finding of the issue, sharing the two-user fixtures.

The agent runs as user A, a shell tool (or any other local process) as user
B, and both share a writable workspace, as docs/using/security.md recommends. CI
runs as root: the test makes the two users on the fly (numeric ids, which
is all the kernel needs to run a process as a user) and runs each step in a
forked child that dropped to one of them (the ``as_user`` fixture). Every
check runs on asyncio and trio: the child runs its event loop with the
test's ``anyio_backend``.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import struct
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from dsh_fs import FsEditRequest, FsError, FsErrorCode
from dsh_fs.testing import Scratch
from dsh_fs_local import LocalFileSystem
from dsh_fs_local._openat2 import kernel_has_openat2

AsUser = Callable[..., Any]
"""The ``as_user`` fixture: ``as_user(fn, uid, gid, groups=())`` runs ``fn`` as that user."""
A, B = 61001, 61002
"""Two local users: the agent (A) and another process sharing the workspace (B)."""
TEAM = 61010
"""A group both belong to."""


def content(path: str) -> str:
    with open(path) as file:
        return file.read()


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def in_child(
    backend: str, call: Callable[[LocalFileSystem], Awaitable[Any]], cwd: Path
) -> Callable[[], Any]:
    """A child-side function: run ``call`` on a backend contained to ``cwd``."""

    def run() -> Any:
        async def main() -> Any:
            fs = LocalFileSystem(cwd=str(cwd))
            with anyio.fail_after(20):
                return await call(fs)

        return anyio.run(main, backend=backend)

    return run


def change(verb: str, name: str, text: str) -> Callable[[LocalFileSystem], Awaitable[str]]:
    """A write of ``text`` or an edit of ``OLD`` into it; returns what the backend did."""

    async def call(fs: LocalFileSystem) -> str:
        target = await fs.resolve(name)
        if verb == "write":
            return (await fs.write_text(target, text)).operation
        outcome = await fs.edit_text(target, FsEditRequest("OLD", text))
        return f"{outcome.replacements} replaced"

    return call


@pytest.fixture
def shared(reachable_dir: Path) -> Path:
    """A workspace both users may write (mode 0777, no sticky bit)."""
    path = reachable_dir / "shared"
    path.mkdir()
    path.chmod(0o777)
    return path


# -- 1. set-user-ID never changes hands ----------------------------------------------------------


@pytest.mark.parametrize("verb", ["write", "edit"])
@pytest.mark.parametrize("mode", [0o4777, 0o2777, 0o6777], ids=oct)
def test_a_change_by_another_user_drops_the_set_id_bits(
    as_user: AsUser, shared: Path, anyio_backend: str, verb: str, mode: int
) -> None:
    """B's set-id program, rewritten by A, becomes A's file: without the set-id bits
    (issue 19: it became mode 4777 owned by A, a program that runs as A for B)."""
    tool = shared / "tool"
    tool.write_text("#!/bin/sh\necho OLD\n")
    os.chown(tool, B, B)
    tool.chmod(mode)
    done = as_user(in_child(anyio_backend, change(verb, "tool", "model bytes"), shared), A, A)
    assert done in ("update", "1 replaced")
    info = os.stat(tool)
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (A, 0o777)
    assert "model bytes" in tool.read_text()


def test_the_owner_of_a_set_id_file_keeps_its_bits(
    as_user: AsUser, shared: Path, anyio_backend: str
) -> None:
    """The rule is about hands: A's own set-id file stays set-id after A's write."""
    tool = shared / "tool"
    tool.write_text("old\n")
    os.chown(tool, A, A)
    tool.chmod(0o4755)
    assert as_user(in_child(anyio_backend, change("write", "tool", "new\n"), shared), A, A) == (
        "update"
    )
    assert (os.stat(tool).st_uid, mode_of(tool)) == (A, 0o4755)


@pytest.mark.anyio
async def test_a_hard_linked_set_id_file_replaced_by_rename_loses_its_set_id_bits(
    tmp_path: Path,
) -> None:
    """Under containment a hard-linked file is replaced by a new file; that file is not
    the program its other names run, so it gets no set-id bits (issue 19: as root, a
    link to a setuid-root program became a ``4755 root`` file with the model's bytes)."""
    workspace, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    program = elsewhere / "program"
    program.write_text("trusted\n")
    program.chmod(0o4755)
    os.link(program, workspace / "program")
    fs = LocalFileSystem(cwd=str(workspace))
    await fs.write_text(await fs.resolve("program"), "model bytes\n")
    assert mode_of(workspace / "program") == 0o755
    assert (mode_of(program), program.read_text()) == (0o4755, "trusted\n")


# -- 4a. the group is kept on its own ------------------------------------------------------------


@pytest.mark.parametrize("verb", ["write", "edit"])
def test_a_change_by_a_group_member_keeps_the_group(
    as_user: AsUser, shared: Path, anyio_backend: str, verb: str
) -> None:
    """``B:team 0660`` rewritten by A (a member of team) stays in team, so B still reads it
    (issue 19: the one combined ``fchown`` failed and the file became ``A:A``)."""
    notes = shared / "notes.txt"
    notes.write_text("OLD\n")
    os.chown(notes, B, TEAM)
    notes.chmod(0o660)
    assert as_user(
        in_child(anyio_backend, change(verb, "notes.txt", "new"), shared), A, A, [TEAM]
    ) in ("update", "1 replaced")
    info = os.stat(notes)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (A, TEAM, 0o660)

    async def read(fs: LocalFileSystem) -> str:
        return await fs.read_text(await fs.resolve("notes.txt"))

    assert as_user(in_child(anyio_backend, read, shared), B, B, [TEAM]).startswith("new")


@pytest.mark.parametrize("mode", [0o2770, 0o2750], ids=oct)
def test_a_set_group_id_file_keeps_its_bit_when_owner_and_group_are_kept(
    as_user: AsUser, shared: Path, anyio_backend: str, mode: int
) -> None:
    tool = shared / "tool"
    tool.write_text("old\n")
    os.chown(tool, A, TEAM)
    tool.chmod(mode)
    as_user(in_child(anyio_backend, change("write", "tool", "new\n"), shared), A, A, [TEAM])
    info = os.stat(tool)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (A, TEAM, mode)


# -- 4b. extended attributes and POSIX ACLs ------------------------------------------------------

ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
NO_ID = 0xFFFFFFFF


def acl_blob(*entries: tuple[int, int, int]) -> bytes:
    """The kernel's ``system.posix_acl_access`` value: version 2, then (tag, perm, id)."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)


def set_acl_or_skip(path: Path, blob: bytes) -> None:
    try:
        os.setxattr(path, "system.posix_acl_access", blob)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            pytest.skip(f"the filesystem of {path.parent} refuses POSIX ACLs ({exc})")
        raise


@pytest.mark.anyio
@pytest.mark.parametrize("verb", ["write", "edit"])
async def test_user_xattrs_and_the_access_acl_are_kept(scratch: Scratch, verb: str) -> None:
    """Issue 19: every write or edit dropped them."""
    path = Path(scratch.root) / "f.txt"
    path.write_text("OLD\n")
    path.chmod(0o640)
    os.setxattr(path, "user.origin", b"https://example.org/f.txt")
    os.setxattr(path, "user.empty", b"")
    acl = acl_blob(
        (ACL_USER_OBJ, 6, NO_ID),
        (ACL_USER, 4, B),
        (ACL_GROUP_OBJ, 4, NO_ID),
        (ACL_MASK, 4, NO_ID),
        (ACL_OTHER, 0, NO_ID),
    )
    set_acl_or_skip(path, acl)
    await change(verb, "f.txt", "new\n")(scratch.fs)  # type: ignore[arg-type]
    assert "new" in path.read_text()
    assert os.getxattr(path, "user.origin") == b"https://example.org/f.txt"
    assert os.getxattr(path, "user.empty") == b""
    assert os.getxattr(path, "system.posix_acl_access") == acl
    assert mode_of(path) == 0o640


@pytest.mark.anyio
async def test_an_xattr_that_cannot_be_copied_is_logged_and_the_write_succeeds(
    scratch: Scratch, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = Path(scratch.root) / "f.txt"
    path.write_text("old\n")
    os.setxattr(path, "user.kept", b"1")
    os.setxattr(path, "user.refused", b"2")
    real = os.setxattr

    def setxattr(target: Any, name: str, value: bytes, *args: Any, **kwargs: Any) -> None:
        if name == "user.refused":
            raise OSError(errno.E2BIG, os.strerror(errno.E2BIG))
        real(target, name, value, *args, **kwargs)

    monkeypatch.setattr(os, "setxattr", setxattr)
    with caplog.at_level(logging.WARNING, logger="dsh_fs_local"):
        outcome = await scratch.fs.write_text(await scratch.fs.resolve("f.txt"), "new\n")
    assert outcome.operation == "update"
    assert path.read_text() == "new\n"
    assert os.getxattr(path, "user.kept") == b"1"
    assert os.listxattr(path) == ["user.kept"]
    assert [r.getMessage() for r in caplog.records] == [
        f"extended attribute user.refused of {str(path)!r} not kept: "
        "[Errno 7] Argument list too long"
    ]


# -- 4c. the sweep removes only our own dead temporaries -----------------------------------------


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


@pytest.mark.anyio
async def test_the_sweep_removes_only_our_own_regular_temporaries(tmp_path: Path) -> None:
    """Names of the temporary pattern from a dead process: only the regular file owned
    by the backend's user goes (issue 19: a user's files named like one went too)."""
    pid = dead_pid()
    root = tmp_path
    ours = root / f".a.txt.dsh-{pid}-00000001.tmp"
    ours.write_text("crash leftover")
    directory = root / f".a.txt.dsh-{pid}-00000002.tmp"
    directory.mkdir()
    (directory / "keep.txt").write_text("inside\n")
    link = root / f".a.txt.dsh-{pid}-00000003.tmp"
    link.symlink_to("a.txt")
    fifo = root / f".a.txt.dsh-{pid}-00000004.tmp"
    os.mkfifo(fifo)
    kept = ["a.txt", directory.name, link.name, fifo.name]
    if os.geteuid() == 0:
        foreign = root / f".a.txt.dsh-{pid}-00000005.tmp"
        foreign.write_text("B's own file\n")
        foreign.chmod(0o444)
        os.chown(foreign, B, B)
        kept.append(foreign.name)
    fs = LocalFileSystem(cwd=str(root))
    await fs.write_text(await fs.resolve("a.txt"), "x\n")
    assert sorted(os.listdir(root)) == sorted(kept)


def test_the_sweep_leaves_another_users_temporaries(
    as_user: AsUser, shared: Path, anyio_backend: str
) -> None:
    """As user A, a dead process's temporary that belongs to B stays (it is not ours)."""
    pid = dead_pid()
    theirs = shared / f".a.txt.dsh-{pid}-0000000a.tmp"
    theirs.write_text("B's\n")
    os.chown(theirs, B, B)
    as_user(in_child(anyio_backend, change("write", "a.txt", "x\n"), shared), A, A)
    assert sorted(os.listdir(shared)) == sorted(["a.txt", theirs.name])


# -- 5. openat2 EAGAIN ----------------------------------------------------------------------------

needs_openat2 = pytest.mark.skipif(
    not kernel_has_openat2(), reason="this kernel has no openat2: the walk is the only mode"
)


def dotdot_tree(root: Path) -> str:
    """``<deep>/node_modules/.bin/tool`` → ``../pkg/../pkg/bin/tool``: an inside link with
    ``..`` (npm's ``.bin`` links are like it), under 16 directories; its relative path."""
    modules = root.joinpath(*(f"d{i}" for i in range(16)), "node_modules")
    (modules / "pkg/bin").mkdir(parents=True)
    (modules / "pkg/bin/tool").write_text("#!/bin/sh\necho tool\n")
    (modules / ".bin").mkdir()
    (modules / ".bin/tool").symlink_to("../pkg/../pkg/bin/tool")
    return os.path.relpath(modules / ".bin/tool", root)


@needs_openat2
@pytest.mark.anyio
async def test_openat2_that_keeps_answering_eagain_is_answered_by_the_walk(
    scratch: Scratch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19: ``EAGAIN`` reached the model as "Resource temporarily unavailable"."""
    link = dotdot_tree(Path(scratch.root))
    fs = LocalFileSystem(cwd=scratch.root)
    calls: list[bytes] = []

    def busy(dir_fd: int, rel: bytes, flags: int) -> int:
        calls.append(rel)
        raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))

    monkeypatch.setattr(fs._reach, "_openat2", busy)
    target = await fs.resolve(link)
    assert await fs.read_text(target) == "#!/bin/sh\necho tool\n"
    outcome = await fs.write_text(target, "#!/bin/sh\necho new\n")
    assert outcome.operation == "update"
    assert content(target.target_key) == "#!/bin/sh\necho new\n"
    assert target.target_key.endswith("/node_modules/pkg/bin/tool")
    assert calls  # openat2 was asked first, and the walk answered


RENAMER = r"""
import os, sys
directory = sys.argv[1]
a, b = os.path.join(directory, "a"), os.path.join(directory, "b")
open(a, "w").close()
print("ready", flush=True)
while True:
    os.rename(a, b)
    os.rename(b, a)
"""


@needs_openat2
@pytest.mark.parametrize(
    "reads", [pytest.param(3000, id="ci"), pytest.param(50_000, id="long", marks=pytest.mark.long)]
)
def test_reads_through_a_dotdot_link_survive_renames_elsewhere(
    scratch: Scratch, tmp_path_factory: pytest.TempPathFactory, anyio_backend: str, reads: int
) -> None:
    """A process renaming files anywhere on the machine makes ``openat2`` answer
    ``EAGAIN`` for a ``..`` lookup: no read may fail (issue 19: 70 of 600 did)."""
    link = dotdot_tree(Path(scratch.root))
    elsewhere = tmp_path_factory.mktemp("renames")
    fs = scratch.fs

    async def read_many() -> list[str]:
        failures: list[str] = []
        for _ in range(reads):
            try:
                await fs.read_text(await fs.resolve(link))
            except FsError as err:
                failures.append(str(err))
        return failures

    renamer = subprocess.Popen(
        [sys.executable, "-c", RENAMER, str(elsewhere)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert renamer.stdout is not None and renamer.stdout.readline() == "ready\n"
        failures = anyio.run(read_many, backend=anyio_backend)
    finally:
        renamer.kill()
        renamer.wait()
    assert not failures, f"{len(failures)} of {reads} reads failed, e.g. {failures[0]}"


# -- 2. bounded memory under a changing file ------------------------------------------------------

GRANDCHILD = r"""
import json, os, resource, sys, traceback, anyio
from dsh_fs import FsError
from dsh_fs_local import LocalFileSystem
from dsh_tool_fs import ToolFs

pid = os.fork()  # ru_maxrss survives execve: a forked grandchild measures from its own size
if pid:
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))
"""
"""The start of a measuring child script; it defines ``async def main(*argv)`` next."""
RUN = r"""
try:  # main(*arguments), on the event loop named by the last one
    anyio.run(main, *sys.argv[1:-1], backend=sys.argv[-1])
    sys.stdout.flush()
    os._exit(0)
except BaseException:
    traceback.print_exc()
    sys.stderr.flush()
    os._exit(1)
"""

GROWN = (
    GRANDCHILD
    + r"""

async def main(path, grown):
    fs = LocalFileSystem(os.path.dirname(path))
    target = await fs.resolve(path)
    await fs.read_text(target)  # warm: imports, worker thread
    info = await fs.stat(target)  # what the read tool decides from: small
    os.truncate(path, int(grown))  # another process grows it (sparse) before the read
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        answer = len(await fs.read_text(target))
    except FsError as err:
        answer = str(err)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"size_at_stat": info.size, "answer": answer, "growth_kib": after - before}))
"""
    + RUN
)


@pytest.mark.parametrize("start", [b"", b"small text\n"], ids=["empty", "small"])
def test_a_file_grown_after_stat_is_not_read_whole(
    tmp_path: Path, run_python: Any, anyio_backend: str, start: bytes
) -> None:
    """Growing the file to 1 GiB between the read tool's ``stat`` and the read: the read
    decides from the size it opened, so it never allocates the 1 GiB (issue 19: +986 MiB
    of RSS for a read that returns at most 50 KiB)."""
    import json

    path = tmp_path / "flip.txt"
    path.write_bytes(start)
    done = run_python(GROWN, str(path), str(1 << 30), anyio_backend, timeout=120)
    result = json.loads(done.stdout)
    print(result)
    assert result["size_at_stat"] == len(start)
    assert result["answer"] == f'cannot read "{path}": binary file'
    assert result["growth_kib"] < 64 * 1024


FLIPPER = r"""
import os, sys, time
path, big = sys.argv[1], int(sys.argv[2])
print("ready", flush=True)
while True:
    os.truncate(path, 0)
    time.sleep(0.0001)
    os.truncate(path, big)
    time.sleep(0.0001)
"""

FLIPPED_READS = (
    GRANDCHILD
    + r"""

async def main(path, reads):
    tools = ToolFs(LocalFileSystem(os.path.dirname(path)))
    await tools.execute("read", {"file_path": path})  # warm
    # A read that tries to allocate the file (4 GiB) fails with MemoryError under this
    # cap, even though a sparse file's zeros would not all be touched before it shrinks.
    with open("/proc/self/statm") as statm:
        used = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (used + (512 << 20), resource.RLIM_INFINITY))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    answers = {}
    for _ in range(int(reads)):
        result = await tools.execute("read", {"file_path": path})
        key = result.text.splitlines()[0].replace(path, "<p>") if result.is_error else "text"
        answers[key] = answers.get(key, 0) + 1
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"answers": answers, "growth_kib": after - before}))
"""
    + RUN
)


@pytest.mark.parametrize(
    "reads", [pytest.param(150, id="ci"), pytest.param(3000, id="long", marks=pytest.mark.long)]
)
def test_reads_of_a_file_flipping_between_empty_and_4_gib_stay_bounded(
    tmp_path: Path, run_python: Any, anyio_backend: str, reads: int
) -> None:
    """Another process flips a sparse file between 0 bytes and 4 GiB while the model reads
    it: every read answers (the text, or ``binary file``), none tries to allocate the
    file (issue 19: 68 of 300 tried 4 GiB)."""
    import json

    path = tmp_path / "flip.txt"
    path.write_bytes(b"")
    flipper = subprocess.Popen(
        [sys.executable, "-c", FLIPPER, str(path), str(4 << 30)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert flipper.stdout is not None and flipper.stdout.readline() == "ready\n"
        done = run_python(FLIPPED_READS, str(path), str(reads), anyio_backend, timeout=600)
    finally:
        flipper.kill()
        flipper.wait()
    result = json.loads(done.stdout)
    print(result)
    assert sum(result["answers"].values()) == reads
    assert set(result["answers"]) <= {"text", 'Error: cannot read "<p>": binary file'}
    assert result["growth_kib"] < 64 * 1024


# -- 6b. a huge previous content is not carried ----------------------------------------------------

OVERWRITE = (
    GRANDCHILD
    + r"""

async def main(path):
    fs = LocalFileSystem(os.path.dirname(path))
    warm = await fs.resolve(os.path.join(os.path.dirname(path), "warm.txt"))
    await fs.write_text(warm, "warm\n")
    await fs.write_text(warm, "warm up\n")
    target = await fs.resolve(path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    outcome = await fs.write_text(target, "9 bytes.\n")
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"operation": outcome.operation, "before": outcome.before,
                      "growth_kib": after - before}))
"""
    + RUN
)


def test_overwriting_a_large_file_never_reads_it_whole(
    tmp_path: Path, run_python: Any, anyio_backend: str
) -> None:
    """Issue 19: overwriting a 123 MiB file with 9 bytes took 791 MiB and returned the
    whole old file as ``before``."""
    import json

    path = tmp_path / "big.txt"
    block = b"a line of an old, large text file\n" * 30_000
    with open(path, "wb") as out:
        for _ in range(100 * 1024 * 1024 // len(block)):
            out.write(block)
    done = run_python(OVERWRITE, str(path), anyio_backend, timeout=120)
    result = json.loads(done.stdout)
    print({k: v for k, v in result.items()})
    assert (result["operation"], result["before"]) == ("update", None)
    assert result["growth_kib"] < 16 * 1024
    assert path.read_bytes() == b"9 bytes.\n"


# -- 3. the model alone: an edit's growth is bounded -----------------------------------------------


@pytest.mark.anyio
async def test_an_amplifying_edit_is_refused_before_anything_is_built(scratch: Scratch) -> None:
    """Issue 19: 10,000 short lines and a 20 KiB ``new_string`` with ``replace_all`` made a
    190 MiB file (1.2 GiB of RSS, 11 s); at 25× the edit died with ``MemoryError``."""
    path = Path(scratch.root) / "f.txt"
    path.write_bytes(b"x\n" * 10_000)
    before = os.stat(path)
    target = await scratch.fs.resolve("f.txt")
    with pytest.raises(FsError) as caught:
        await scratch.fs.edit_text(
            target, FsEditRequest("x", "y" * (25 * 20 * 1024), replace_all=True)
        )
    assert caught.value.code is FsErrorCode.FS_TOO_LARGE
    assert str(caught.value) == (
        f'cannot edit "{path}": the edit would grow the file by '
        f"{10_000 * (25 * 20 * 1024 - 1)} bytes (limit 16777216)"
    )
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (
        before.st_ino,
        before.st_mtime_ns,
        before.st_size,
    )
    assert sorted(os.listdir(scratch.root)) == ["f.txt"]
