"""Fixtures of the dsh-fs-local tests: a scratch tree for the conformance kit,
and runners for the checks that need another process (an unprivileged user,
a memory measurement, a second writer, a process to kill).
"""

from __future__ import annotations

import codecs
import os
import pickle
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import dsh_fs
import dsh_fs_local
import pytest
from dsh_fs_local import _beneath
from dsh_fs_local._openat2 import ResolutionMode, kernel_has_openat2
from dsh_fs_local.testing import LocalScratch


@pytest.fixture
def cancel_from_worker() -> Callable[[anyio.CancelScope], None]:
    """Cancel ``scope`` from the worker thread its task waits on, and return once that
    worker sees the cancellation: a test cancels at a known step, never on a timer."""

    def cancel(scope: anyio.CancelScope) -> None:
        cancelled = anyio.from_thread.run_sync(anyio.get_cancelled_exc_class)
        anyio.from_thread.run_sync(scope.cancel)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                anyio.from_thread.check_cancelled()
            except cancelled:
                return
            time.sleep(0.001)
        raise AssertionError("the worker never saw the cancellation")

    return cancel


@pytest.fixture
def scratch(tmp_path: Path) -> LocalScratch:
    return LocalScratch(tmp_path)


@pytest.fixture(params=["openat2", "walk"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> ResolutionMode:
    """Each resolution mode in turn: ``openat2`` (where the kernel has it) and the walk alone.

    Set before a test builds its backend (``Beneath`` reads the default mode
    when it is made)."""
    chosen: ResolutionMode = request.param
    if chosen == "openat2" and not kernel_has_openat2():
        pytest.skip("this kernel has no openat2")
    monkeypatch.setattr(_beneath, "default_mode", lambda: chosen)
    return chosen


@pytest.fixture
def other_filesystem(tmp_path: Path) -> Iterator[str]:
    """A scratch directory on another filesystem than ``tmp_path`` (``/dev/shm``, a tmpfs),
    for moves across filesystems; skipped where there is none."""
    import shutil
    import tempfile

    shm = "/dev/shm"
    if not os.path.isdir(shm) or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no second filesystem here: /dev/shm is missing or on the test disk")
    path = os.path.realpath(tempfile.mkdtemp(prefix="dsh-fs-local-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def child_environment() -> dict[str, str]:
    """The environment of a child Python that imports this checkout's packages."""
    roots = [
        os.path.dirname(os.path.dirname(os.path.abspath(module.__file__ or "")))
        for module in (dsh_fs, dsh_fs_local)
    ]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*roots, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


RunPython = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def run_python() -> RunPython:
    """Run ``code`` in a fresh interpreter (``argv`` after it); fail on a non-zero exit."""

    def run(code: str, *argv: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-c", code, *argv],
            env=child_environment(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done

    return run


AsNobody = Callable[[Callable[[], Any]], Any]
AsUser = Callable[..., Any]
"""``as_user(fn, uid, gid, groups=())``: ``fn()`` in a forked child running as that user."""


def _run_as(fn: Callable[[], Any], uid: int, gid: int, groups: Iterable[int] = ()) -> Any:
    """Run ``fn`` in a forked child that dropped to ``uid``/``gid`` (and ``groups``)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(read_end)
        try:
            os.setgroups(list(groups))
            os.setgid(gid)
            os.setuid(uid)
            payload: tuple[bool, Any] = (True, fn())
        except BaseException as exc:
            payload = (False, exc)
        with os.fdopen(write_end, "wb") as out:
            pickle.dump(payload, out)
        os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + 30
    chunks: list[bytes] = []
    try:
        while True:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([read_end], [], [], max(remaining, 0))
            if not ready:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                pytest.fail("the unprivileged child did not finish within 30 s")
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
    os.waitpid(pid, 0)
    data = b"".join(chunks)
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value


@pytest.fixture
def as_nobody() -> Iterator[AsNobody]:
    """Run a function in a forked child that dropped to user ``nobody``; return its result.

    CI runs as root, which ignores permission bits, so a permission test must
    run its check unprivileged. The interpreter lives under ``/root``, which
    ``nobody`` cannot read, so the child is forked (modules already loaded)
    rather than started afresh. The result (or the exception) is pickled back.
    """
    if os.geteuid() != 0:

        def direct(fn: Callable[[], Any]) -> Any:
            return fn()

        yield direct
        return

    # The child cannot import anything from under /root: load lazily imported
    # modules the backend needs while still privileged.
    codecs.lookup("utf-8-sig")
    yield lambda fn: _run_as(fn, 65534, 65534)


@pytest.fixture
def as_user() -> AsUser:
    """Run a function as any user and groups, in a forked child (as ``as_nobody``).

    For the checks of a second local user sharing the workspace: as root,
    the test makes the users on the fly (plain numeric ids: the kernel needs
    no account to run a process as one) and drops to them in children.
    """
    if os.geteuid() != 0:
        pytest.skip("running a check as two different users needs root (CI runs as root)")
    codecs.lookup("utf-8-sig")
    return _run_as


@pytest.fixture
def reachable_dir() -> Iterator[Path]:
    """A scratch directory under /tmp that ``nobody`` can reach (0o755, removed after)."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="dsh-fs-local-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for child in path.rglob("*"):
            if not child.is_symlink():
                child.chmod(0o700)
        shutil.rmtree(path, ignore_errors=True)
