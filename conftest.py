"""Repository-wide pytest options and fixtures, and the documentation as tests.

``--long`` turns on the long stress and fuzz profiles (marked ``long``); the
default run stays within the CI budget.

``anyio_backend`` is the one fixture that says which event loop the async
tests run on: every ``@pytest.mark.anyio`` test of every package, the
conformance kit included, runs once on asyncio and once on trio. (anyio's
own default is parametrised too, but over a list that differs between anyio
releases: 4.5 lists trio even when it is not installed, recent releases only
the installed backends; this one says exactly which.) A test that is about
one event loop on purpose overrides it next to the test and says why.

Every fenced block of ``README.md`` and of the docs (``docs/using/``,
``docs/extending/``, ``docs/maintaining/``; not the generated ``docs/reference/``)
is a test, run by Sybil. The convention, for doc authors in
``docs/maintaining/writing-docs.md``:

- ``python``: executed; the blocks of one document share one namespace, in order.
- ``bash`` / ``sh``: a script, run with ``bash -euo pipefail`` (``sh -e``); it must
  exit 0. Its output is not compared.
- ``console``: a transcript. Each ``$ `` line (with its ``\\``-continued lines) runs
  in a fresh ``bash -o pipefail``, stdout and stderr together; the lines up to the
  next ``$ `` are its output, compared exactly (none shown = it prints nothing),
  and it must exit 0 (show a failure with ``; echo "exit $?"``).
- ``json``: parsed; an ``mcpServers`` configuration is started as an MCP client
  would start it and must serve the four tools.
- ``toml``: parsed.
- ``text``: not run (output, diagrams).
- Any other fence, or one without a language, fails: say what it is.

All blocks of one document run in one scratch directory, ``<tmp>/project``: the
current directory of the Python blocks and the shells, with the workspace's
``dsh-fs`` first on ``PATH``; ``tempfile`` creates its directories beside it. In
compared output the scratch directory is written ``/path/to/project``, and in a
configuration's arguments ``/absolute/path/to/project`` stands for it.

``<!-- skip: next -->`` (or ``skip: start`` … ``skip: end``, with ``if(…)``
conditions) is Sybil's own skip directive. ``FRAMEWORK`` names the agent
framework of the hatch environment the docs run in (``pydantic-ai``,
``openai-agents``, ``langchain``; ``None`` in the default one): a framework's
page and its section of ``docs/using/clients.md`` run in its own environment.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from sybil import Document, Example, Region, Sybil
from sybil.integration.pytest import SybilItem
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent
DOCS_DIR = ROOT / "docs"  # using/, extending/, maintaining/: the docs, run as tests
REFERENCE_DIR = DOCS_DIR / "reference"  # generated (scripts/reference.py): not run
SHOWN_WORKSPACE = "/path/to/project"  # how compared output spells the scratch directory
CONFIG_WORKSPACE = "/absolute/path/to/project"  # the placeholder of client configurations
SHELL_TIMEOUT = 120
KNOWN_LANGUAGES = {"python", "bash", "sh", "console", "json", "toml", "text"}
TOOL_NAMES = [
    "list",
    "read",
    "write",
    "edit",
    "apply_patch",
    "glob",
    "grep",
    "memory",
    "str_replace_based_edit_tool",
]


# -- the long profile ---------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="run the long stress/fuzz profiles (tests marked 'long')",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long profile: run with --long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


# -- the event loops ---------------------------------------------------------------------------


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return cast(str, request.param)


# -- what `dsh-fs tools` offers here -------------------------------------------------------------


@pytest.fixture(scope="session")
def dsh_fs_tools_names() -> list[str]:
    """The tool names ``dsh-fs tools`` prints in this environment: every installed tool.

    The framework adapters' tests compare the tools their framework offers with it.
    """
    printed = subprocess.run(
        [sys.executable, "-m", "dsh_tool_fs.cli", "tools"], check=True, capture_output=True
    )
    return [tool["name"] for tool in json.loads(printed.stdout)["tools"]]


# -- the scratch directory of one document --------------------------------------------------------


@pytest.fixture(scope="module")
def doc_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``<tmp>/project``: cwd, ``tempfile``'s parent and ``dsh-fs`` on ``PATH`` for one document."""
    base = tmp_path_factory.mktemp("doc")
    workspace = Path(os.path.realpath(base)) / "project"
    workspace.mkdir()
    saved_cwd, saved_path, saved_tempdir = os.getcwd(), os.environ.get("PATH"), tempfile.tempdir
    os.chdir(workspace)
    own_bin = os.path.dirname(sys.executable)
    if _framework() is not None:
        # A framework env's own dsh-fs has no mcp extra: the server is the one on PATH.
        others = [p for p in (saved_path or "").split(os.pathsep) if p and p != own_bin]
        os.environ["PATH"] = os.pathsep.join([*others, own_bin])
    else:
        os.environ["PATH"] = os.pathsep.join([own_bin, saved_path or ""])
    tempfile.tempdir = str(base)
    if shutil.which("dsh-fs") is None:  # a framework env has no server of its own
        pytest.fail(
            'no dsh-fs on PATH: run PATH="$PATH:$(python3 -m hatch env find default)/bin" '
            f"python3 -m hatch run {_framework()}:test"
        )
    try:
        yield workspace
    finally:
        os.chdir(saved_cwd)
        if saved_path is None:
            del os.environ["PATH"]
        else:
            os.environ["PATH"] = saved_path
        tempfile.tempdir = saved_tempdir


def _workspace(example: Example) -> Path:
    workspace = example.namespace["doc_workspace"]
    assert isinstance(workspace, Path)
    return workspace


def _framework() -> str | None:
    """The agent framework of this hatch environment (``DSH_FS_DOCS_FRAMEWORK``), if any."""
    return os.environ.get("DSH_FS_DOCS_FRAMEWORK") or None


def _setup(namespace: dict[str, Any]) -> None:
    namespace["FRAMEWORK"] = _framework()


# -- bash / sh: scripts ---------------------------------------------------------------------------


def _run(command: list[str], cwd: Path, *, merge: bool) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge else subprocess.PIPE,
        text=True,
        errors="backslashreplace",
        timeout=SHELL_TIMEOUT,
    )


def evaluate_script(shell: list[str]) -> Callable[[Example], str | None]:
    def evaluate(example: Example) -> str | None:
        proc = _run([*shell, str(example.parsed)], _workspace(example), merge=True)
        if proc.returncode != 0:
            return f"the script exited {proc.returncode}; its output:\n{proc.stdout}"
        return None

    return evaluate


# -- console: transcripts -------------------------------------------------------------------------


def parse_transcript(text: str) -> list[tuple[str, str]]:
    """``[(command, expected output)]`` of a ``$ ``-prompted transcript."""
    steps: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            command = [line[2:]]
            while command[-1].endswith("\\") and i + 1 < len(lines):
                i += 1
                command.append(lines[i])
            steps.append(("\n".join(command), []))
        elif not steps:
            raise ValueError(f"a console block must start with a '$ ' prompt, not {line!r}")
        else:
            steps[-1][1].append(line)
        i += 1
    return [(command, "".join(f"{out}\n" for out in output)) for command, output in steps]


def evaluate_transcript(example: Example) -> str | None:
    workspace = _workspace(example)
    for command, expected in parse_transcript(str(example.parsed)):
        proc = _run(["bash", "-o", "pipefail", "-c", command], workspace, merge=True)
        actual = proc.stdout.replace(str(workspace), SHOWN_WORKSPACE)
        if proc.returncode != 0:
            return f"$ {command}\nexited {proc.returncode}; its output:\n{actual}"
        if actual != expected:
            return f"$ {command}\nexpected:\n{expected}got:\n{actual}"
    return None


# -- json and toml ------------------------------------------------------------------------------

_served: dict[tuple[str, ...], str | None] = {}


async def _serves_the_tools(command: str, args: list[str]) -> str | None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command, args=args)
    with anyio.fail_after(SHELL_TIMEOUT):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            names = [tool.name for tool in (await client.list_tools()).tools]
    return None if names == TOOL_NAMES else f"the server offers {names}, not {TOOL_NAMES}"


def evaluate_json(example: Example) -> str | None:
    document = json.loads(str(example.parsed))
    if not isinstance(document, dict) or "mcpServers" not in document:
        return None
    workspace = str(_workspace(example))
    for name, server in document["mcpServers"].items():
        args = [workspace if arg == CONFIG_WORKSPACE else arg for arg in server.get("args", [])]
        command = shutil.which(server["command"])
        if command is None:
            return f"{name}: {server['command']!r} is not on PATH"
        key = (server["command"], *server.get("args", []))
        if key not in _served:
            _served[key] = anyio.run(_serves_the_tools, command, args)
        if _served[key] is not None:
            return f"{name}: {_served[key]}"
    return None


def evaluate_toml(example: Example) -> None:
    tomllib.loads(str(example.parsed))


# -- every fence is accounted for ----------------------------------------------------------------


class UnknownFenceParser:
    """Fails each fence whose language is missing or not one of ``KNOWN_LANGUAGES``."""

    lexer = RawFencedCodeBlockLexer(
        info_pattern=re.compile(r"(?P<info>[^\n]*)\n", re.MULTILINE),
        mapping={"info": "info", "source": "source"},
    )

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in self.lexer(document):
            info = str(region.lexemes["info"]).strip()
            if info.split(" ")[0] not in KNOWN_LANGUAGES:
                region.parsed = info
                region.evaluator = self.evaluate
                yield region

    @staticmethod
    def evaluate(example: Example) -> str:
        return (
            f"a fence with language {example.parsed!r}: use one of "
            f"{', '.join(sorted(KNOWN_LANGUAGES))} (see the convention in conftest.py)"
        )


DOCS = Sybil(
    parsers=[
        PythonCodeBlockParser(),
        CodeBlockParser("bash", evaluate_script(["bash", "-euo", "pipefail", "-c"])),
        CodeBlockParser("sh", evaluate_script(["sh", "-e", "-c"])),
        CodeBlockParser("console", evaluate_transcript),
        CodeBlockParser("json", evaluate_json),
        CodeBlockParser("toml", evaluate_toml),
        UnknownFenceParser(),
        SkipParser(),
    ],
    patterns=["*.md"],
    fixtures=["doc_workspace"],
    setup=_setup,
)
_collect_docs = DOCS.pytest()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A skipped doc block is reported at its ``.md`` file and line.

    Sybil's skip directive raises ``unittest.SkipTest``, which pytest turns
    into a skip raised from its own ``unittest.py``: the summary named that
    file instead of the document.
    """
    report = yield
    if report.skipped and isinstance(item, SybilItem) and isinstance(report.longrepr, tuple):
        _, _, reason = report.longrepr
        report.longrepr = (str(item.example.path), item.example.line, reason)
    return report


def is_doc(file_path: Path) -> bool:
    """README.md and every ``.md`` beneath docs/, except the generated docs/reference/.

    The package READMEs are their packages' own. docs/reference/ is written
    by scripts/reference.py and guarded by its own drift test; its json blocks
    are schemas, not configurations to start.
    """
    if file_path == ROOT / "README.md":
        return True
    return (
        file_path.suffix == ".md"
        and file_path.is_relative_to(DOCS_DIR)
        and not file_path.is_relative_to(REFERENCE_DIR)
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_doc(file_path):
        collector: pytest.Collector | None = _collect_docs(file_path, parent)
        return collector
    return None
