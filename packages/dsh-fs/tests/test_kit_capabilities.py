"""The kit's capability flags: a backend without a capability declares it, and the kit
never asks its scratch for it — the tests that need it are skipped, naming the flag,
and every other test still runs.

The stranger's view again: a ``FileSystemContract`` subclass in its own test file,
run by ``pytest`` in a child process, over a memory scratch whose ``symlink``,
``make_other`` and ``hard_link`` fail the test if they are ever called.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import dsh_fs.testing
import pytest

FLAGS = ("supports_symlinks", "supports_special_files", "supports_hard_links")


def run_stranger_suite(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    suite = tmp_path / "test_stranger_backend.py"
    suite.write_text(textwrap.dedent(body))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", str(suite)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_backend_without_symlinks_special_files_or_hard_links_runs_the_rest_of_the_kit(
    tmp_path: Path,
) -> None:
    run = run_stranger_suite(
        tmp_path,
        """
        import pytest

        from dsh_fs.testing import FileSystemContract
        from dsh_fs_memory import MemoryScratch


        class PlainScratch(MemoryScratch):
            def symlink(self, path, target):
                pytest.fail(f"the kit called symlink({path!r}, {target!r})")

            def make_other(self, path):
                pytest.fail(f"the kit called make_other({path!r})")

            def hard_link(self, path, existing):
                pytest.fail(f"the kit called hard_link({path!r}, {existing!r})")


        class TestPlainBackend(FileSystemContract):
            supports_symlinks = False
            supports_special_files = False
            supports_hard_links = False

            @pytest.fixture
            def scratch(self):
                return PlainScratch()
        """,
    )
    out = run.stdout
    assert run.returncode == 0, out[-3000:]
    summary = out.strip().splitlines()[-1]
    counts = dict(
        (kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|skipped|failed|error)", summary)
    )
    assert counts.keys() == {"passed", "skipped"}, summary
    assert counts["passed"] > 3 * counts["skipped"], summary
    reasons = set(re.findall(r"the backend declares (\w+) = False", out))
    assert reasons == set(FLAGS)
    skip_lines = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert skip_lines
    assert all("the backend declares" in line for line in skip_lines), skip_lines


@pytest.mark.parametrize("flag", FLAGS)
def test_every_flag_is_on_by_default(flag: str) -> None:
    assert getattr(dsh_fs.testing.FileSystemContract, flag) is True


def test_every_kit_module_has_its_asserts_rewritten() -> None:
    kit = [
        module
        for name, module in sys.modules.items()
        if name.startswith("dsh_fs.testing._") and name != "dsh_fs.testing._assert_rewrite"
    ]
    assert len(kit) >= 9
    for module in kit:
        assert type(module.__loader__).__name__ == "AssertionRewritingHook", module.__name__
