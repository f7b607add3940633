"""The real Codex ``apply_patch``, installed from npm, as the reference of the differential test.

The ``@openai/codex`` npm package ships Codex's native binary (in a platform
package such as ``@openai/codex-linux-x64``). The binary dispatches on its
first argument: ``codex --codex-run-as-apply-patch <patch>`` applies the
patch in the current directory, as the Codex agent itself runs it, printing
the summary on stdout (exit 0) or the failure on stderr (exit 1). It needs no
network and no login.

The version is pinned so that a new Codex release cannot change the
reference under the tests; a new one is adopted by changing
:data:`CODEX_VERSION` and running the differential test.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CODEX_VERSION", "CodexOutcome", "find_binary", "install_codex", "run_codex"]

CODEX_VERSION = "0.171.0"
INSTALL_TIMEOUT = 600


@dataclass(frozen=True)
class CodexOutcome:
    """What Codex did: its exit code, its stdout and stderr, and every file after it."""

    code: int
    stdout: str
    stderr: str
    files: dict[str, bytes]
    root: Path


def find_binary(prefix: Path) -> Path | None:
    """The native ``codex`` binary of an npm install under ``prefix``, if there is one."""
    found = sorted(prefix.glob("node_modules/@openai/*/vendor/*/bin/codex"))
    return found[0] if found else None


def install_codex(cache: Path) -> Path:
    """The binary of ``@openai/codex@CODEX_VERSION``, installed under ``cache`` once.

    Installed into a fresh directory beside ``cache`` and renamed into place, so a
    run interrupted mid-install leaves no half-installed cache behind. Raises
    ``RuntimeError`` (with npm's own words) when it cannot be installed.
    """
    binary = find_binary(cache)
    if binary is not None:
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed (it installs the reference Codex binary)")
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{cache.name}.", dir=cache.parent))
    try:
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund",
                 "--no-save", f"@openai/codex@{CODEX_VERSION}"],
                capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"npm install took more than {INSTALL_TIMEOUT} s") from None
        if done.returncode != 0:
            raise RuntimeError(f"npm install @openai/codex@{CODEX_VERSION} failed:\n{done.stderr}")
        if find_binary(staging) is None:
            raise RuntimeError(
                f"@openai/codex@{CODEX_VERSION} has no native binary for this platform"
            )
        with contextlib.suppress(OSError):  # installed meanwhile by another run: use that
            staging.rename(cache)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    binary = find_binary(cache)
    if binary is None:
        raise RuntimeError(f"no codex binary under {cache} after installing it")
    return binary


def run_codex(binary: Path, files: dict[str, bytes], patch: str, work: Path) -> CodexOutcome:
    """``patch`` applied by Codex in a new directory under ``work`` holding ``files``."""
    root = Path(tempfile.mkdtemp(prefix="codex-", dir=work))
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    home = root.parent / f"{root.name}-home"  # Codex reads nothing from the real home
    home.mkdir()
    done = subprocess.run(
        [str(binary), "--codex-run-as-apply-patch", patch],
        cwd=root,
        env={"HOME": str(home), "PATH": os.defpath},
        capture_output=True,
        timeout=30,
        check=False,
    )
    after: dict[str, bytes] = {}
    for directory, _, names in os.walk(root):
        for name in names:
            found = Path(directory, name)
            after[found.relative_to(root).as_posix()] = found.read_bytes()
    return CodexOutcome(
        done.returncode,
        done.stdout.decode("utf-8"),
        done.stderr.decode("utf-8"),
        after,
        root,
    )
