"""Workspace containment (SPEC 3.3, 6) through every surface a user reaches the tools by.

Kept as one file: one table of calls, run through all four surfaces.

One table of calls, run through four surfaces: the Python API
(``ToolFs.from_entry_points(...).execute``), ``dsh-fs call`` (one process per
call), ``dsh-fs session`` (one process, JSON lines) and ``dsh-fs mcp`` (one
server, the official MCP client). Each scenario is a set of workspace
options with the calls it answers and the exact texts; every tool meets
every escape, and what worked inside the workspace still works.

The tree, under one temporary ``base`` (realpathed)::

    ws/                     the workspace (--cwd)
      inside.txt            "inside"
      sub/f.txt             "sub"
      link_in      -> inside.txt                        (relative, stays inside)
      link_in_abs  -> <base>/ws/inside.txt              (absolute, stays inside)
      link_out     -> ../outside/secret.txt             (leaves)
      linkdir_out  -> ../outside                        (a parent that leaves)
      dangling_out -> ../outside/missing.txt            (leaves, to nothing)
      proc_link    -> /proc/self/root/<base>/ws/inside.txt   (a magic link back in)
    outside/secret.txt      "secret"
    ws-old/secret.txt       "old secret"  (shares the workspace's string prefix)
    lib/lib.txt             for --allow
    docs/doc.txt            for --allow-read

Nothing outside the read-write roots may change: each scenario compares the
whole tree outside ``ws`` (and ``lib``) before and after its calls.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from dsh_tool_fs import Session, ToolFs
from mcp import ClientSession, StdioServerParameters, stdio_client

TIMEOUT = 60
TOOLS = ("list", "read", "write", "edit")
OUTSIDE = "FS_OUTSIDE_WORKSPACE"
READ_ONLY = "FS_READ_ONLY"


# -- the tree -------------------------------------------------------------------------------


def build_tree(base: Path) -> Path:
    """The tree of the module docstring; returns the workspace."""
    ws = base / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "inside.txt").write_text("inside\n")
    (ws / "sub/f.txt").write_text("sub\n")
    for name in ("outside", "ws-old", "lib", "docs"):
        (base / name).mkdir()
    (base / "outside/secret.txt").write_text("secret\n")
    (base / "ws-old/secret.txt").write_text("old secret\n")
    (base / "lib/lib.txt").write_text("lib\n")
    (base / "docs/doc.txt").write_text("doc\n")
    links = {
        "link_in": "inside.txt",
        "link_in_abs": f"{ws}/inside.txt",
        "link_out": "../outside/secret.txt",
        "linkdir_out": "../outside",
        "dangling_out": "../outside/missing.txt",
        "proc_link": f"/proc/self/root{ws}/inside.txt",
    }
    for name, target in links.items():
        (ws / name).symlink_to(target)
    return ws


def snapshot(base: Path, *skip: str) -> dict[str, str]:
    """Every path under ``base`` but the skipped top-level names: file bytes, link targets."""
    state: dict[str, str] = {}
    for root, dirs, files in os.walk(base):
        rel_root = os.path.relpath(root, base)
        if rel_root.split(os.sep)[0] in skip:
            continue
        for name in [*dirs, *files]:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, base)
            if rel.split(os.sep)[0] in skip:
                continue
            if os.path.islink(path):
                state[rel] = "-> " + os.readlink(path)
            elif os.path.isfile(path):
                state[rel] = Path(path).read_text()
            else:
                state[rel] = "dir"
    return state


# -- the table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One tool call and its exact answer (``starts``: the text's beginning only)."""

    tool: str
    args: dict[str, Any]
    text: str
    code: str | None = None
    starts: bool = False
    one_process_each: bool = True
    """Whether ``dsh-fs call`` runs it too (see :func:`contained_calls`)."""


@dataclass(frozen=True)
class Outcome:
    is_error: bool
    text: str
    code: str | None
    """``None`` on success, and on the MCP surface (it sends the text and ``isError`` only)."""


def args_for(tool: str, path: str) -> dict[str, Any]:
    if tool == "list":
        return {"path": path}
    if tool == "read":
        return {"file_path": path}
    if tool == "write":
        return {"file_path": path, "content": "pwned\n"}
    return {"file_path": path, "old_string": "secret", "new_string": "pwned"}


def refused(tool: str, path: str, shown: str, why: str = "outside the workspace") -> Call:
    code = OUTSIDE if why == "outside the workspace" else READ_ONLY
    return Call(tool, args_for(tool, path), f'Error: cannot {tool} "{shown}": {why}', code)


def escapes(base: Path) -> list[tuple[str, str]]:
    """``(path the model sends, display path the refusal names)`` for every kind of escape."""
    ws = base / "ws"
    return [
        (f"{base}/outside/secret.txt", f"{base}/outside/secret.txt"),  # absolute
        ("../outside/secret.txt", f"{base}/outside/secret.txt"),  # ..
        ("sub/../../outside/secret.txt", f"{base}/outside/secret.txt"),
        ("link_out", f"{ws}/link_out"),  # a symlink leaving
        ("linkdir_out/secret.txt", f"{ws}/linkdir_out/secret.txt"),  # a symlinked parent
        ("dangling_out", f"{ws}/dangling_out"),  # a dangling link: nothing is created
        (f"{base}/ws-old/secret.txt", f"{base}/ws-old/secret.txt"),  # a prefix sibling
        ("../ws-old/secret.txt", f"{base}/ws-old/secret.txt"),
        (f"/proc/self/root{ws}/inside.txt", f"/proc/self/root{ws}/inside.txt"),  # magic links
        ("/proc/self/fd/0", "/proc/self/fd/0"),
        ("/proc/self/cwd/inside.txt", "/proc/self/cwd/inside.txt"),
        ("proc_link", f"{ws}/proc_link"),  # a link inside that goes through /proc
    ]


def read_of(path: str, first_line: str) -> str:
    """The start of a successful read of a one-line file."""
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n1: {first_line}\n"


def created(path: str) -> str:
    return f"<path>{path}</path>\n<type>file</type>\n<content>\nCreated file\n</content>"


@dataclass(frozen=True)
class Scenario:
    """Workspace options as the command line spells them and as Python passes them."""

    name: str
    argv: tuple[str, ...]
    options: Callable[[Path], dict[str, Any]]
    calls: Callable[[Path], list[Call]]
    changes_outside: Callable[[Path], dict[str, str]] = field(default=lambda base: {})


def contained_calls(base: Path) -> list[Call]:
    """Every tool meets every escape; then what works inside.

    ``dsh-fs call`` starts an interpreter per call (about half a second): it
    runs each escape with one tool, in turn, so that each tool still meets
    three kinds of escape there; the other surfaces run every pair.
    """
    ws = base / "ws"
    calls = [
        replace(refused(tool, path, shown), one_process_each=(i % len(TOOLS) == t))
        for i, (path, shown) in enumerate(escapes(base))
        for t, tool in enumerate(TOOLS)
    ]
    return [
        *calls,
        # Inside still works: relative, absolute, through links that stay inside.
        Call(
            "read", {"file_path": "inside.txt"}, read_of(f"{ws}/inside.txt", "inside"), starts=True
        ),
        Call(
            "read", {"file_path": f"{ws}/sub/f.txt"}, read_of(f"{ws}/sub/f.txt", "sub"), starts=True
        ),
        Call("read", {"file_path": "link_in"}, read_of(f"{ws}/link_in", "inside"), starts=True),
        Call(
            "read",
            {"file_path": "link_in_abs"},
            read_of(f"{ws}/link_in_abs", "inside"),
            starts=True,
        ),
        Call(
            "list",
            {"path": "sub"},
            f"<path>{ws}/sub</path>\n<type>directory</type>\n<content>\nf.txt\n",
            starts=True,
        ),
        Call(
            "write",
            {"file_path": "sub/new.txt", "content": "new\n"},
            created(f"{ws}/sub/new.txt"),
            starts=True,
        ),
        Call(
            "write",
            {"file_path": f"{ws}/made/deep.txt", "content": "d\n"},
            created(f"{ws}/made/deep.txt"),
            starts=True,
        ),
    ]


def allow_calls(base: Path) -> list[Call]:
    return [
        Call(
            "read",
            {"file_path": f"{base}/lib/lib.txt"},
            read_of(f"{base}/lib/lib.txt", "lib"),
            starts=True,
        ),
        Call(
            "write",
            {"file_path": "../lib/new.txt", "content": "n\n"},
            created(f"{base}/lib/new.txt"),
            starts=True,
        ),
        refused("read", f"{base}/outside/secret.txt", f"{base}/outside/secret.txt"),
        refused("write", "../lib-old/x.txt", f"{base}/lib-old/x.txt"),
    ]


def allow_read_calls(base: Path) -> list[Call]:
    docs = f"{base}/docs"
    return [
        Call(
            "read", {"file_path": f"{docs}/doc.txt"}, read_of(f"{docs}/doc.txt", "doc"), starts=True
        ),
        Call(
            "list",
            {"path": "../docs"},
            f"<path>{docs}</path>\n<type>directory</type>\n<content>\ndoc.txt\n",
            starts=True,
        ),
        refused("write", f"{docs}/doc.txt", f"{docs}/doc.txt", "read-only workspace"),
        refused("write", "../docs/new.txt", f"{docs}/new.txt", "read-only workspace"),
        refused("write", f"{base}/outside/secret.txt", f"{base}/outside/secret.txt"),
        Call(
            "write",
            {"file_path": "new.txt", "content": "n\n"},
            created(f"{base}/ws/new.txt"),
            starts=True,
        ),
    ]


def read_only_calls(base: Path) -> list[Call]:
    ws = f"{base}/ws"
    return [
        Call(
            "read", {"file_path": "inside.txt"}, read_of(f"{ws}/inside.txt", "inside"), starts=True
        ),
        refused("write", "inside.txt", f"{ws}/inside.txt", "read-only workspace"),
        refused("write", "sub/new.txt", f"{ws}/sub/new.txt", "read-only workspace"),
        # Outside wins over read-only.
        refused("write", "../outside/secret.txt", f"{base}/outside/secret.txt"),
        refused("edit", "link_out", f"{ws}/link_out"),
    ]


def anywhere_calls(base: Path) -> list[Call]:
    secret = f"{base}/outside/secret.txt"
    return [
        Call("read", {"file_path": secret}, read_of(secret, "secret"), starts=True),
        Call(
            "read", {"file_path": "link_out"}, read_of(f"{base}/ws/link_out", "secret"), starts=True
        ),
        Call(
            "write",
            {"file_path": "../outside/new.txt", "content": "n\n"},
            created(f"{base}/outside/new.txt"),
            starts=True,
        ),
    ]


SCENARIOS = [
    Scenario("contained", (), lambda base: {}, contained_calls),
    Scenario(
        "allow",
        ("--allow", "<base>/lib"),
        lambda base: {"roots": [f"{base}/ws", f"{base}/lib"]},
        allow_calls,
    ),
    Scenario(
        "allow-read",
        ("--allow-read", "<base>/docs"),
        lambda base: {"read_only_roots": [f"{base}/docs"]},
        allow_read_calls,
    ),
    Scenario("read-only", ("--read-only",), lambda base: {"read_only": True}, read_only_calls),
    Scenario(
        "allow-anywhere",
        ("--allow-anywhere",),
        lambda base: {"roots": None},
        anywhere_calls,
        changes_outside=lambda base: {"outside/new.txt": "n\n"},
    ),
]


# -- the surfaces ---------------------------------------------------------------------------


def command(ws: Path, subcommand: Sequence[str], argv: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "dsh_tool_fs.cli", *subcommand, "--cwd", str(ws), *argv]


def outcome_of(result: dict[str, Any]) -> Outcome:
    error = result["error"]
    return Outcome(result["is_error"], result["text"], None if error is None else error["code"])


def through_api(ws: Path, scenario: Scenario, calls: list[Call]) -> list[Outcome]:
    toolfs = ToolFs.from_entry_points("local", ("policy",), str(ws), **scenario.options(ws.parent))
    session = Session(cwd=str(ws))

    async def run() -> list[Outcome]:
        results = [await toolfs.execute(c.tool, c.args, session=session) for c in calls]
        return [outcome_of(result.to_dict()) for result in results]

    return anyio.run(run)


def through_call(ws: Path, scenario: Scenario, calls: list[Call]) -> list[Outcome]:
    def one(call: Call) -> Outcome:
        argv = [*argv_of(scenario, ws), "--json"]
        proc = subprocess.run(
            command(ws, ["call", call.tool, json.dumps(call.args)], argv),
            capture_output=True,
            timeout=TIMEOUT,
        )
        assert proc.returncode == (1 if b'"is_error": true' in proc.stdout else 0), proc.stderr
        return outcome_of(json.loads(proc.stdout))

    # One process per call; two at a time (writes to one name stay in table order).
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, calls))


def through_session(ws: Path, scenario: Scenario, calls: list[Call]) -> list[Outcome]:
    lines = "".join(json.dumps({"tool": c.tool, "args": c.args}) + "\n" for c in calls)
    proc = subprocess.run(
        command(ws, ["session"], argv_of(scenario, ws)),
        input=lines.encode(),
        capture_output=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr
    return [outcome_of(json.loads(line)) for line in proc.stdout.decode().splitlines()]


def through_mcp(ws: Path, scenario: Scenario, calls: list[Call]) -> list[Outcome]:
    full = command(ws, ["mcp"], argv_of(scenario, ws))
    env = {key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ}
    server = StdioServerParameters(command=full[0], args=full[1:], env=env)

    async def run() -> list[Outcome]:
        outcomes: list[Outcome] = []
        with anyio.fail_after(TIMEOUT):
            async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                for call in calls:
                    result = await client.call_tool(call.tool, call.args)
                    [content] = result.content
                    assert isinstance(content, types.TextContent)
                    outcomes.append(Outcome(result.is_error, content.text, None))
        return outcomes

    return anyio.run(run)


def argv_of(scenario: Scenario, ws: Path) -> list[str]:
    return [arg.replace("<base>", str(ws.parent)) for arg in scenario.argv]


SURFACES: dict[str, Callable[[Path, Scenario, list[Call]], list[Outcome]]] = {
    "api": through_api,
    "call": through_call,
    "session": through_session,
    "mcp": through_mcp,
}


# -- the tests ------------------------------------------------------------------------------


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return Path(os.path.realpath(tmp_path))


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_every_call_of_the_scenario_answers_exactly(
    base: Path, surface: str, scenario: Scenario
) -> None:
    ws = build_tree(base)
    calls = [c for c in scenario.calls(base) if surface != "call" or c.one_process_each]
    before = snapshot(base, "ws", "lib")
    outcomes = SURFACES[surface](ws, scenario, calls)

    def seen(call: Call, outcome: Outcome) -> tuple[Any, ...]:
        text = outcome.text[: len(call.text)] if call.starts else outcome.text
        code = call.code if surface == "mcp" else outcome.code  # MCP sends no code
        return (call.tool, call.args.get("file_path", call.args.get("path")), text, code)

    def wanted(call: Call) -> tuple[Any, ...]:
        return (call.tool, call.args.get("file_path", call.args.get("path")), call.text, call.code)

    assert [seen(c, o) for c, o in zip(calls, outcomes, strict=True)] == [wanted(c) for c in calls]
    assert [o.is_error for o in outcomes] == [c.code is not None for c in calls]
    assert snapshot(base, "ws", "lib") == before | scenario.changes_outside(base)
    assert not (base / "outside/missing.txt").exists()  # the dangling link made nothing


@pytest.mark.parametrize(
    ("subcommand", "option", "kind"),
    [
        (["call", "list", "{}"], "--cwd", "missing"),
        (["session"], "--cwd", "file"),
        (["mcp"], "--cwd", "missing"),
        (["mcp"], "--allow", "file"),
        (["call", "read", "{}"], "--allow", "missing"),
        (["session"], "--allow-read", "missing"),
        (["mcp"], "--allow-read", "file"),
    ],
)
def test_a_workspace_directory_that_is_none_stops_the_command_with_one_line(
    base: Path, subcommand: list[str], option: str, kind: str
) -> None:
    ws = build_tree(base)
    directory = str(base / "nope") if kind == "missing" else str(ws / "inside.txt")
    argv = [sys.executable, "-m", "dsh_tool_fs.cli", *subcommand, option, directory]
    if option != "--cwd":
        argv += ["--cwd", str(ws)]
    request = b'{"tool": "write", "args": {"file_path": "x.txt", "content": ""}}\n'
    proc = subprocess.run(argv, input=request, capture_output=True, timeout=TIMEOUT)
    assert (proc.returncode, proc.stdout) == (2, b"")
    problem = "does not exist" if kind == "missing" else "not a directory"
    assert proc.stderr.decode().splitlines() == [f'dsh-fs: {option} "{directory}": {problem}']
    assert not (ws / "x.txt").exists()
