"""The ``dsh-fs`` command: the tools from a shell, over JSON lines, and over MCP.

Four subcommands share one way of assembling the stack (``--backend``,
``--plugin``, ``--no-policy``): ``tools`` prints the definitions in a wire
format, ``call`` runs one tool call, ``session`` runs many calls over JSON
lines with one observation owner, ``mcp`` serves the tools to an MCP client
over stdio. The three that run tools also take the workspace options:
``--cwd`` is the workspace, ``--allow`` / ``--allow-read`` add roots,
``--read-only`` forbids writes, ``--allow-anywhere`` turns containment off.

Exit codes: 0 success, 1 the tool call failed (``call`` only), 2 bad usage
(unknown subcommand, option, tool, backend or plugin; arguments that are not
valid JSON; a workspace directory that is not one; the MCP SDK missing). Logs
go to stderr, results to stdout, and stdout is always UTF-8 whatever the locale.

Undecodable file names (lone surrogates in Python strings) never crash the
output. In JSON output a lone surrogate is written as its ``\\udcxx`` escape,
so every line stays valid UTF-8 JSON and ``json.loads`` gives back the very
string the tool produced (a backend maps it back to the original bytes). In
plain text (``call`` without ``--json``) a surrogate that stands for an
undecodable byte is written as that byte, as ``ls`` would, and any other lone
surrogate as a ``\\udxxx`` escape.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import platform
import re
import sys
from collections.abc import AsyncIterable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Any, BinaryIO

import anyio
from dsh_fs import (
    BACKENDS_GROUP,
    PLUGINS_GROUP,
    EntryPointNotFound,
    FileSystem,
    FsError,
    WorkspaceOptionsUnsupported,
    installed_names,
)
from dsh_fs.workspace import CWD_ROOT, RootsOption

from .config import ToolFsConfig, ToolFsConfigError
from .formats import FORMATS, tools_document
from .host import Session, ToolFs, ToolResult
from .names import escape_surrogates
from .tools import TOOLS_GROUP, UnknownToolError, installed_tool_names

logger = logging.getLogger("dsh_tool_fs.cli")

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2

DEFAULT_BACKEND = "local"
DEFAULT_POLICY_PLUGIN = "policy"
HOST_BACKEND = "local"
"""The backend whose paths are this machine's: its workspace directories are checked here."""

REQUEST_ERROR_NAME = "SessionRequestError"
REQUEST_ERROR_CODE = "INVALID_REQUEST"
"""``error.name`` and ``error.code`` of the line answering a malformed session request."""

MCP_INSTALL_HINT = (
    'the MCP server needs the optional "mcp" dependency: pip install "dsh-tool-fs[mcp]"'
)
MCP_SDK_TOO_OLD = 'the MCP server needs mcp>=2.3: pip install -U "dsh-tool-fs[mcp]"'
MCP_ON_A_TERMINAL = (
    "dsh-fs mcp: serving MCP on stdio (JSON-RPC on stdin and stdout); an MCP client starts "
    "this command itself, see https://github.com/dsh-fs/dsh-fs/blob/main/docs/using/mcp-server.md "
    "(Ctrl-C stops it)"
)
"""The one stderr line of ``dsh-fs mcp`` started by hand, with stdin a terminal."""

_SURROGATE = re.compile("[\ud800-\udfff]")


class UsageError(Exception):
    """Bad usage found after argument parsing: reported on stderr, exit code 2."""

    def line(self, command: str) -> str:
        """The one stderr line reporting it."""
        return f"dsh-fs {command}: error: {self}"


class WorkspaceError(UsageError):
    """A workspace option the command cannot start with: ``dsh-fs: --cwd "<dir>": …``."""

    def line(self, command: str) -> str:
        return f"dsh-fs: {self}"


# -- output ---------------------------------------------------------------------------------


def json_line(obj: Any) -> str:
    """``obj`` as one line of JSON, non-ASCII kept, lone surrogates escaped (valid UTF-8)."""
    return escape_surrogates(json.dumps(obj, ensure_ascii=False))


def encode_plain(text: str) -> bytes:
    """UTF-8 for a terminal: an undecodable byte (``\\udc80``-``\\udcff``) is written back raw."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        pass
    out = bytearray()
    for part in re.split("([\ud800-\udfff])", text):
        if len(part) == 1 and _SURROGATE.match(part):
            code = ord(part)
            out += bytes([code - 0xDC00]) if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}".encode()
        else:
            out += part.encode("utf-8")
    return bytes(out)


def _write(stream: BinaryIO, data: bytes) -> None:
    stream.write(data)
    stream.flush()


# -- the parser -----------------------------------------------------------------------------

_TOP_EPILOG = """\
examples:
  dsh-fs tools --format openai
  dsh-fs call list '{"path": "src"}'
  dsh-fs call read '{"file_path": "README.md", "limit": 20}'
  printf '%s\\n' '{"tool": "read", "args": {"file_path": "a.txt"}}' | dsh-fs session
  dsh-fs mcp --cwd /path/to/project

Run "dsh-fs <command> --help" for the details of one command.
"""

_TOOLS_EPILOG = """\
Prints one JSON object: {"tools": [...], "instructions": "..."}.
"instructions" is the tool guidance (the prompt sections joined by a blank
line), ready for a system prompt. Tool items depend on --format:
  raw               name, description, parameters (JSON Schema), concurrency_safe
  openai            OpenAI Chat Completions:
                    {"type": "function", "function": {name, description, parameters}}
  openai-responses  OpenAI Responses API:
                    {"type": "function", name, description, parameters, "strict": false}
  anthropic         name, description, input_schema
  mcp               name, title, description, inputSchema, annotations

example:
  dsh-fs tools --format anthropic > tools.json
"""

_CALL_EPILOG = """\
Prints the result text the model would see; with --json, the whole result as
one JSON object with the keys is_error, text, value, error and meta.
ARGS is a JSON object (default {}); "-" reads it from stdin.

Each call is its own session: under the default policy a write or edit
cannot rely on a read made by an earlier "dsh-fs call" (use "dsh-fs session"
for that). Creating a new file works. Paths outside the workspace (--cwd and
the --allow roots) are refused.

exit status: 0 success, 1 the tool reported an error, 2 bad usage
(including ARGS that are not valid JSON).

examples:
  dsh-fs call list '{"path": "packages"}'
  dsh-fs call read '{"file_path": "README.md", "offset": 1, "limit": 20}' --json
  dsh-fs call write '{"file_path": "notes/todo.txt", "content": "ship it\\n"}'
  echo '{"file_path": "big.txt", "content": "..."}' | dsh-fs call write -
"""

_SESSION_EPILOG = """\
Reads one request per stdin line, {"tool": "<name>", "args": {...}} ("args"
may be omitted for {}), runs the calls one after another and writes one JSON
line per request, flushed at once, with the keys of "call --json": is_error,
text, value, error, meta. Blank lines are skipped; end of input ends the
session with status 0.

The whole session is one observation owner: a read authorizes later writes
and edits of that file in the same session. A malformed request (not UTF-8,
not JSON, not an object, no "tool", an unknown key) is answered with an
error line whose error.name is "SessionRequestError" and error.code
"INVALID_REQUEST", and the session goes on.

example:
  printf '%s\\n' \\
    '{"tool": "read", "args": {"file_path": "a.txt"}}' \\
    '{"tool": "edit", "args": {"file_path": "a.txt", "old_string": "x", "new_string": "y"}}' \\
    | dsh-fs session --cwd /path/to/project
"""

_MCP_EPILOG = """\
Serves the tools (list, read, write, edit, and every installed tool such as
glob and grep; --tools chooses) to an MCP client over stdio (JSON-RPC on
stdin/stdout; logs on stderr). The tools carry the same JSON Schemas as
"dsh-fs tools", the tool guidance is the server's instructions, a failed call
is text content with isError set. One client connection is one observation
owner. Needs the optional dependency: pip install "dsh-tool-fs[mcp]".

The workspace is what the model can reach: --cwd (default: the directory the
client starts the server in) and each --allow DIR, with everything beneath
them; reads and listings may also reach each --allow-read DIR. Anything else
-- an absolute path, "..", a symlink leading out -- is refused with "outside
the workspace". --read-only refuses every write and edit, --allow-anywhere
turns containment off. A directory that does not exist stops the server at
start-up (exit 2, one line on stderr).

example client configuration (Claude Desktop, Cursor, ...):
  {"mcpServers": {"dsh-fs": {"command": "dsh-fs",
                             "args": ["mcp", "--cwd", "/path/to/project",
                                      "--allow-read", "/path/to/docs"]}}}

a workspace on another machine, over SSH (pip install dsh-fs-sftp; see
docs/using/remote-workspaces.md):
  dsh-fs mcp --backend sftp --cwd sftp://agent@sandbox.example:22/home/agent/app \
             --ssh-key ~/.ssh/agent_ed25519 --known-hosts ~/.ssh/known_hosts
The server must be reachable at start-up (else exit 2, one line on stderr).
"""

_WORKSPACE_HELP = """\
the workspace: only paths beneath --cwd or an --allow root can be
read or written, and beneath an --allow-read root read; absolute paths, "..",
symlinks and /proc links that leave them are refused"""


def _workspace_options() -> argparse.ArgumentParser:
    options = argparse.ArgumentParser(add_help=False)
    group = options.add_argument_group("workspace options", _WORKSPACE_HELP)
    group.add_argument(
        "--cwd",
        metavar="DIR",
        help="the workspace: relative paths resolve against DIR, and the model can read and "
        "write beneath it (default: the current directory)",
    )
    group.add_argument(
        "--allow",
        metavar="DIR",
        action="append",
        default=[],
        help="also allow reading and writing beneath DIR (repeatable)",
    )
    group.add_argument(
        "--allow-read",
        metavar="DIR",
        action="append",
        default=[],
        help="also allow reading and listing, never writing, beneath DIR (repeatable)",
    )
    group.add_argument(
        "--read-only",
        action="store_true",
        help="refuse every write and edit",
    )
    group.add_argument(
        "--allow-anywhere",
        action="store_true",
        help="turn containment off: every path this process can reach (not with --allow)",
    )
    return options


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("stack options")
    group.add_argument(
        "--backend",
        metavar="NAME",
        default=DEFAULT_BACKEND,
        help=f'storage backend, any installed {BACKENDS_GROUP} entry point (default: "local")',
    )
    group.add_argument(
        "--backend-option",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a keyword for the backend's constructor, VALUE as JSON or else a string "
        "(repeatable; e.g. --backend-option connect_timeout=5, known_hosts=null)",
    )
    group.add_argument(
        "--ssh-key",
        metavar="FILE",
        help="--backend sftp: the private key to log in with (default: ssh-agent, ~/.ssh/id_*)",
    )
    group.add_argument(
        "--known-hosts",
        metavar="FILE",
        help="--backend sftp: the known_hosts file the server's key must be in "
        "(default: ~/.ssh/known_hosts)",
    )
    group.add_argument(
        "--no-policy",
        action="store_true",
        help='do not load the "policy" plugin (writes and edits become unguarded)',
    )
    group.add_argument(
        "--plugin",
        metavar="NAME",
        action="append",
        default=[],
        help=f"also load this installed {PLUGINS_GROUP} plugin (repeatable)",
    )
    group.add_argument(
        "--tools",
        metavar="NAME[,NAME...]",
        help="offer only these tools (default: every installed tool, e.g. list,read,glob,grep)",
    )
    group.add_argument(
        "--config",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a ToolFsConfig limit, e.g. list_max_entries=50 (repeatable)",
    )
    group.add_argument(
        "--log-level",
        metavar="LEVEL",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="stderr log level: DEBUG, INFO, WARNING (default) or ERROR",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    """The ``dsh-fs`` argument parser (subcommands tools, call, session, mcp)."""
    common = _common_options()
    runs_tools = [common, _workspace_options()]
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="dsh-fs",
        description="Model-facing filesystem tools (list, read, write, edit) for LLM agents.",
        epilog=_TOP_EPILOG,
        formatter_class=fmt,
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="show the version of every installed layer, backend and plugin, and exit",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    tools = commands.add_parser(
        "tools",
        parents=[common],
        help="print the tool definitions and guidance as JSON",
        description="Print the tool definitions and the tool guidance as JSON.",
        epilog=_TOOLS_EPILOG,
        formatter_class=fmt,
    )
    tools.add_argument(
        "--format",
        choices=FORMATS,
        default="raw",
        help="tool item format (default: raw)",
    )
    # ``tools`` runs no tool: it takes no workspace option, and builds the backend contained
    # to the current directory.
    tools.set_defaults(cwd=None, allow=[], allow_read=[], read_only=False, allow_anywhere=False)

    call = commands.add_parser(
        "call",
        parents=runs_tools,
        help="run one tool call",
        description="Run one tool call and print its result.",
        epilog=_CALL_EPILOG,
        formatter_class=fmt,
    )
    call.add_argument("tool", metavar="TOOL", help='tool name, e.g. read ("dsh-fs tools": all)')
    call.add_argument(
        "args",
        metavar="ARGS",
        nargs="?",
        default="{}",
        help='the arguments as a JSON object (default {}); "-" reads them from stdin',
    )
    call.add_argument(
        "--json",
        action="store_true",
        help="print the whole result as one JSON object",
    )

    commands.add_parser(
        "session",
        parents=runs_tools,
        help="run tool calls from JSON lines on stdin, one session",
        description="Run tool calls read as JSON lines from stdin, as one session.",
        epilog=_SESSION_EPILOG,
        formatter_class=fmt,
    )
    commands.add_parser(
        "mcp",
        parents=runs_tools,
        help="serve the tools to an MCP client over stdio",
        description="Serve the tools over MCP (stdio transport).",
        epilog=_MCP_EPILOG,
        formatter_class=fmt,
    )
    return parser


# -- assembling the stack -------------------------------------------------------------------


def workspace(args: argparse.Namespace) -> str | None:
    """``--cwd`` made absolute, or ``None`` for the backend's own default.

    A URL (``sftp://user@host/path``) and any directory of a backend other
    than the local one is the backend's to read, as it is.
    """
    if args.cwd is None:
        return None
    return os.path.abspath(args.cwd) if args.backend == HOST_BACKEND else str(args.cwd)


@dataclass(frozen=True, slots=True)
class WorkspaceOptions:
    """The workspace options as the backend constructor's keywords."""

    roots: RootsOption = CWD_ROOT
    read_only_roots: tuple[str, ...] = ()
    read_only: bool = False


def workspace_options(args: argparse.Namespace) -> WorkspaceOptions:
    """The backend's roots from ``--allow``, ``--allow-read``, ``--read-only`` and
    ``--allow-anywhere`` (directories made absolute against the current directory).

    The read-write roots are the backend's cwd (``"."``: roots resolve against
    it) and each ``--allow``. With the local backend (:data:`HOST_BACKEND`)
    every directory, ``--cwd`` included, must be an existing directory on this
    machine, else :class:`WorkspaceError` names the first that is not; another
    backend checks them in its own namespace when it is built.
    """
    if args.allow_anywhere and (args.allow or args.allow_read):
        raise WorkspaceError("--allow-anywhere turns containment off: it takes no --allow(-read)")
    if args.backend == HOST_BACKEND:
        named = [("--cwd", args.cwd)] if args.cwd is not None else []
        named += [("--allow", d) for d in args.allow]
        named += [("--allow-read", d) for d in args.allow_read]
        for option, directory in named:
            if not os.path.isdir(directory):
                raise WorkspaceError(f'{option} "{directory}": not a directory')
    if args.allow_anywhere:
        return WorkspaceOptions(roots=None, read_only=args.read_only)
    # Another backend's directories are in its own namespace: a relative one
    # resolves against its cwd, there.
    here: Callable[[str], str] = os.path.abspath if args.backend == HOST_BACKEND else str
    allowed = tuple(map(here, args.allow))
    return WorkspaceOptions(
        roots=(".", *allowed) if allowed else CWD_ROOT,
        read_only_roots=tuple(map(here, args.allow_read)),
        read_only=args.read_only,
    )


def session_cwd(args: argparse.Namespace) -> str | None:
    """The cwd of the tool calls: ``--cwd`` as a path, ``None`` (the backend's) for a URL."""
    cwd = workspace(args)
    return None if cwd is not None and "://" in cwd else cwd


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backend constructor's further keywords: ``--backend-option KEY=VALUE`` (VALUE
    parsed as JSON when it is JSON, else kept as a string), ``--ssh-key`` (``ssh_key``) and
    ``--known-hosts`` (``known_hosts``)."""
    options: dict[str, Any] = {}
    for item in args.backend_option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise UsageError(f'--backend-option expects KEY=VALUE, got "{item}"')
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    if args.ssh_key is not None:
        options["ssh_key"] = args.ssh_key
    if args.known_hosts is not None:
        options["known_hosts"] = args.known_hosts
    return options


def start_backend(toolfs: ToolFs, args: argparse.Namespace) -> None:
    """Reach the backend's storage before the first call (a remote backend connects): a
    server that cannot be reached is a start-up error, one line, exit 2. A backend
    without a ``connect`` of its own (the local one) has nothing to reach: no event
    loop is started for it."""
    if type(toolfs.fs).connect is FileSystem.connect:
        return
    try:
        anyio.run(toolfs.fs.connect)
    except FsError as exc:
        raise WorkspaceError(f'--cwd "{args.cwd}": {exc}') from exc
    except ValueError as exc:  # a root the backend rejects, in its own namespace
        raise WorkspaceError(f'--backend "{args.backend}": {exc}') from exc


def plugin_names(args: argparse.Namespace, installed: Sequence[str]) -> list[str]:
    """Plugins to load, in order: the policy (unless ``--no-policy``), then ``--plugin``.

    The policy is loaded by default only when installed (a warning says the
    tools then run unguarded); a plugin named with ``--plugin`` must be
    installed. ``--no-policy`` drops only the default: ``--plugin policy``
    still loads it.
    """
    names: list[str] = []
    if not args.no_policy:
        if DEFAULT_POLICY_PLUGIN in installed:
            names.append(DEFAULT_POLICY_PLUGIN)
        else:
            logger.warning(
                'the "%s" plugin is not installed: writes and edits are unguarded',
                DEFAULT_POLICY_PLUGIN,
            )
    for name in args.plugin:
        if name not in installed:
            raise UsageError(
                f'unknown plugin "{name}" (installed {PLUGINS_GROUP}: {_names(installed)})'
            )
        if name not in names:
            names.append(name)
    return names


def build_toolfs(args: argparse.Namespace) -> ToolFs:
    """The host for the stack the options describe, found through entry points."""
    backends = installed_names(BACKENDS_GROUP)
    if args.backend not in backends:
        raise UsageError(
            f'unknown backend "{args.backend}" (installed {BACKENDS_GROUP}: {_names(backends)})'
        )
    options = workspace_options(args)
    plugins = plugin_names(args, installed_names(PLUGINS_GROUP))
    config = parse_config(args.config)
    tools = None if args.tools is None else [name.strip() for name in args.tools.split(",")]
    if args.command == "call":  # one call needs one tool: import no other tool's module
        tools = called_tools(args.tool, tools)
    try:
        return ToolFs.from_entry_points(
            backend=args.backend,
            plugins=tuple(plugins),
            cwd=workspace(args),
            config=config,
            roots=options.roots,
            read_only_roots=options.read_only_roots,
            read_only=options.read_only,
            tools=tools,
            backend_options=backend_options(args),
        )
    except UnknownToolError as exc:
        raise UsageError(f"--tools: {exc}") from exc
    except (EntryPointNotFound, WorkspaceOptionsUnsupported) as exc:
        raise UsageError(str(exc)) from exc
    except TypeError as exc:  # an option the backend does not take
        raise UsageError(f'--backend "{args.backend}": {exc}') from exc
    except ValueError as exc:  # a root the backend rejects, in its own namespace
        raise WorkspaceError(f'--backend "{args.backend}": {exc}') from exc


def called_tools(tool: str, chosen: list[str] | None) -> list[str] | None:
    """The tools ``call`` offers: only the one it calls, when that one is offered (no other
    tool's module is imported); else the choice as given, which the host then refuses."""
    installed = installed_tool_names()
    if chosen is not None and not set(chosen) <= set(installed):
        return chosen  # --tools names a tool that is not installed: a usage error
    offered = installed if chosen is None else chosen
    return [tool] if tool in offered else chosen


def parse_config(items: Sequence[str]) -> ToolFsConfig:
    """``--config KEY=VALUE`` items (snake_case or camelCase keys) as a :class:`ToolFsConfig`."""
    values: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f'--config expects KEY=VALUE, got "{item}"')
        try:
            values[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            values[key.strip()] = value
    try:
        return ToolFsConfig.model_validate(values)
    except ToolFsConfigError as exc:  # named as typed; an unknown key gets the valid ones
        keys = f" (keys: {', '.join(ToolFsConfig.aliases())})" if exc.unknown_key else ""
        raise UsageError(f"--config: {exc.as_typed()}{keys}") from exc


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) or "none"


# -- the subcommands ------------------------------------------------------------------------


def run_tools(args: argparse.Namespace, stdout: BinaryIO) -> int:
    toolfs = build_toolfs(args)
    document = tools_document(toolfs.definitions, toolfs.prompt_sections, args.format)
    text = json.dumps(document, ensure_ascii=False, indent=2)
    _write(stdout, escape_surrogates(text).encode() + b"\n")
    return EXIT_OK


def parse_call_arguments(raw: str) -> Any:
    """The decoded ``ARGS`` of ``call``; not JSON → :class:`UsageError` (exit 2).

    Valid JSON that is not an object is passed on: the tool reports
    ``arguments must be a JSON object`` like any other argument error (exit 1).
    """
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"ARGS is not valid JSON: {_json_problem(exc)}") from exc


def run_call(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> int:
    raw = args.args
    if raw == "-":
        data = stdin.read()
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError("ARGS read from stdin is not valid UTF-8") from exc
    arguments = parse_call_arguments(raw)
    toolfs = build_toolfs(args)
    start_backend(toolfs, args)
    known = toolfs.tool_names
    if args.tool not in known:
        raise UsageError(f'unknown tool "{args.tool}" (tools: {_names(known)})')
    session = Session(cwd=session_cwd(args))
    result = anyio.run(partial(toolfs.execute, args.tool, arguments, session=session))
    if args.json:
        _write(stdout, json_line(result.to_dict()).encode() + b"\n")
    else:
        _write(stdout, encode_plain(result.text) + b"\n")
    return EXIT_TOOL_ERROR if result.is_error else EXIT_OK


def request_error(message: str) -> dict[str, Any]:
    """The line answering a malformed session request (same keys as a tool result)."""
    return {
        "is_error": True,
        "text": f"Error: {message}",
        "value": None,
        "error": {"message": message, "name": REQUEST_ERROR_NAME, "code": REQUEST_ERROR_CODE},
        "meta": None,
    }


def parse_request(line: bytes) -> tuple[str, Any]:
    """``(tool, args)`` of one session line, or ``ValueError`` with the model-facing message."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError("request is not valid UTF-8 text") from exc
    try:
        request = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"request is not valid JSON: {_json_problem(exc)}") from exc
    if not isinstance(request, dict):
        raise ValueError("request must be a JSON object")
    for key in request:
        if key not in ("tool", "args"):
            raise ValueError(f'unknown request key "{key}" (expected "tool" and "args")')
    if "tool" not in request:
        raise ValueError("tool is required")
    tool = request["tool"]
    if not isinstance(tool, str):
        raise ValueError("tool must be a string")
    return tool, request.get("args", {})


async def run_session_lines(
    toolfs: ToolFs, session: Session, lines: AsyncIterable[bytes], stdout: BinaryIO
) -> None:
    """Answer each non-blank line with one flushed JSON line, calls strictly in order."""
    async for line in lines:
        if not line.strip():
            continue
        try:
            tool, arguments = parse_request(line)
        except ValueError as exc:
            answer = request_error(str(exc))
        else:
            result: ToolResult = await toolfs.execute(tool, arguments, session=session)
            answer = result.to_dict()
        _write(stdout, json_line(answer).encode() + b"\n")


def run_session(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> int:
    toolfs = build_toolfs(args)
    start_backend(toolfs, args)
    session = Session(cwd=session_cwd(args))

    async def serve() -> None:
        await run_session_lines(toolfs, session, anyio.wrap_file(stdin), stdout)

    anyio.run(serve)
    return EXIT_OK


def run_mcp(args: argparse.Namespace) -> int:
    try:
        from . import mcp_server
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in ("mcp", "mcp_types"):
            raise
        if isinstance(exc, ModuleNotFoundError):
            raise UsageError(MCP_INSTALL_HINT) from exc
        # The SDK is there but predates the low-level API used here.
        raise UsageError(f"{MCP_SDK_TOO_OLD} (installed: mcp {_installed_version('mcp')})") from exc
    toolfs = build_toolfs(args)
    start_backend(toolfs, args)
    if sys.stdin is not None and sys.stdin.isatty():
        print(MCP_ON_A_TERMINAL, file=sys.stderr, flush=True)
    anyio.run(partial(mcp_server.serve_stdio, toolfs, cwd=session_cwd(args)))
    return EXIT_OK


def _installed_version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"


def version_report() -> str:
    """What ``dsh-fs --version`` prints: exactly what would run, for a bug report.

    The command's own version first (``dsh-fs <dsh-tool-fs version>``), then
    the two layers it always uses, then every installed backend, plugin and
    tool entry point with the distribution (and version) that declares it,
    then the runtime libraries and Python.
    """
    lines = [f"dsh-fs {_installed_version('dsh-tool-fs')}"]
    lines += [f"  layer {dist} {_installed_version(dist)}" for dist in ("dsh-tool-fs", "dsh-fs")]
    groups = (("backend", BACKENDS_GROUP), ("plugin", PLUGINS_GROUP), ("tool", TOOLS_GROUP))
    for kind, group in groups:
        found = sorted(entry_points(group=group), key=lambda ep: (ep.name, ep.value))
        for ep in found:
            dist = ep.dist
            origin = "unknown distribution" if dist is None else f"{dist.name} {dist.version}"
            lines.append(f"  {kind} {ep.name}: {origin}")
        if not found:
            lines.append(f"  {kind}: none installed")
    libraries = ", ".join(
        f"{lib} {_installed_version(lib)}" for lib in ("anyio", "pluggy", "pydantic", "mcp")
    )
    lines.append(f"  with {libraries} on Python {platform.python_version()}")
    return "\n".join(lines) + "\n"


class _VersionAction(argparse.Action):
    """``--version``: the report is built only when asked (it reads installed metadata)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        _write(sys.stdout.buffer, version_report().encode())
        parser.exit()


def _json_problem(exc: json.JSONDecodeError) -> str:
    return f"{exc.msg} (line {exc.lineno} column {exc.colno})"


# -- entry point ----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dsh-fs``; returns the exit status (the console script exits with it)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a parse error (2), already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, args.log_level),
        format="dsh-fs: %(levelname)s: %(name)s: %(message)s",
    )
    # A closed stdin (``dsh-fs session <&-``) reads as empty input.
    stdin: BinaryIO = sys.stdin.buffer if sys.stdin is not None else io.BytesIO()
    stdout: BinaryIO = sys.stdout.buffer
    try:
        if args.command == "tools":
            return run_tools(args, stdout)
        if args.command == "call":
            return run_call(args, stdin, stdout)
        if args.command == "session":
            return run_session(args, stdin, stdout)
        return run_mcp(args)
    except UsageError as exc:
        print(exc.line(args.command), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``dsh-fs tools | head``): not our failure.
        _silence_stdout()
        return EXIT_OK


def _silence_stdout() -> None:
    # Python flushes stdout again at exit; point it at /dev/null so that flush cannot fail.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
