"""Each distribution installs on its own, pulling ``dsh-fs`` and nothing else of ours.

Builds a fresh virtual environment per distribution and runs a plain
``pip install packages/<dist>`` (dependencies come from the package index,
as for a user), then asks the environment what it got. The default run checks
the memory backend and the tool host (the two a newcomer installs first); the
other three run with ``--long``.
"""

from __future__ import annotations

import json
import subprocess
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OURS = {"dsh-fs", "dsh-fs-local", "dsh-fs-memory", "dsh-fs-policy", "dsh-tool-fs"}

PROBE = """
import importlib.metadata as md, json
names = sorted({(d.metadata["Name"] or "").lower() for d in md.distributions()})
groups = {g: sorted(e.name for e in md.entry_points(group=g))
          for g in ("dsh_fs.backends", "dsh_fs.plugins", "console_scripts")}
print(json.dumps({"names": names, "groups": groups}))
"""

CASES = [
    pytest.param(
        "dsh-fs-memory", {"dsh-fs", "dsh-fs-memory"}, ("dsh_fs.backends", "memory"), id="memory"
    ),
    pytest.param(
        "dsh-tool-fs", {"dsh-fs", "dsh-tool-fs"}, ("console_scripts", "dsh-fs"), id="tool-fs"
    ),
    pytest.param(
        "dsh-fs-local",
        {"dsh-fs", "dsh-fs-local"},
        ("dsh_fs.backends", "local"),
        id="local",
        marks=pytest.mark.long,
    ),
    pytest.param(
        "dsh-fs-policy",
        {"dsh-fs", "dsh-fs-policy"},
        ("dsh_fs.plugins", "policy"),
        id="policy",
        marks=pytest.mark.long,
    ),
    pytest.param("dsh-fs", {"dsh-fs"}, None, id="seam", marks=pytest.mark.long),
]


@pytest.mark.parametrize(("dist", "expected", "entry_point"), CASES)
def test_a_distribution_installs_alone_with_only_the_seam(
    tmp_path: Path, dist: str, expected: set[str], entry_point: tuple[str, str] | None
) -> None:
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-cache-dir",
         str(REPO / "packages" / dist)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert install.returncode == 0, install.stderr
    probe = subprocess.run(
        [str(python), "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    found = json.loads(probe.stdout)
    assert OURS & set(found["names"]) == expected
    if entry_point is not None:
        group, name = entry_point
        assert name in found["groups"][group]
    imported = subprocess.run(
        [str(python), "-c", f"import {dist.replace('-', '_')}"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert imported.returncode == 0, imported.stderr
