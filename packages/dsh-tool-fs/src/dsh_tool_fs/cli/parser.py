"""The ``dsh-fs`` argument parser: four subcommands, the stack and workspace options.

The help says what each command does, with an example; the guide
(``docs/using/cli.md``, :data:`GUIDE`) has the details.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from dsh_fs import BACKENDS_GROUP, PLUGINS_GROUP

from ..formats import FORMATS
from .output import write
from .version import version_report

DEFAULT_BACKEND = "local"
DOCS = "https://github.com/dsh-fs/dsh-fs/blob/main/docs/using"
GUIDE = f"{DOCS}/cli.md"

_TOP_EPILOG = f"""\
examples:
  dsh-fs tools --format openai
  dsh-fs call read '{{"file_path": "README.md", "limit": 20}}'
  printf '%s\\n' '{{"tool": "read", "args": {{"file_path": "a.txt"}}}}' | dsh-fs session
  dsh-fs mcp --cwd /path/to/project

Run "dsh-fs <command> --help" for one command; the guide:
{GUIDE}
"""

_TOOLS_EPILOG = f"""\
Prints one JSON object, {{"tools": [...], "instructions": "..."}}: the tool
definitions in the --format of an API, and the tool guidance for a system
prompt.

example:
  dsh-fs tools --format anthropic > tools.json

The formats: {GUIDE}#dsh-fs-tools
"""

_CALL_EPILOG = f"""\
Prints the result text the model would see (with --json, the whole result as
one JSON object). ARGS is a JSON object (default {{}}); "-" reads it from stdin.
Each call is its own session: a write or edit cannot rely on the read of an
earlier "dsh-fs call" (use "dsh-fs session" for that).

exit status: 0 success, 1 the tool reported an error, 2 bad usage.

examples:
  dsh-fs call read '{{"file_path": "README.md", "offset": 1, "limit": 20}}' --json
  echo '{{"file_path": "big.txt", "content": "..."}}' | dsh-fs call write -

More: {GUIDE}#dsh-fs-call
"""

_SESSION_EPILOG = f"""\
Reads one request per line, {{"tool": "<name>", "args": {{...}}}}, and answers each
with one JSON line with the keys of "call --json", in order. The session is
one observation owner: a read authorizes later writes and edits of that file.
A malformed request gets an error line and the session goes on; end of input
ends it (status 0).

example:
  printf '%s\\n' \\
    '{{"tool": "read", "args": {{"file_path": "a.txt"}}}}' \\
    '{{"tool": "edit", "args": {{"file_path": "a.txt", "old_string": "x", "new_string": "y"}}}}' \\
    | dsh-fs session --cwd /path/to/project

The protocol: {GUIDE}#dsh-fs-session
"""

_MCP_EPILOG = f"""\
Serves the tools to an MCP client over stdio (logs on stderr), or over
Streamable HTTP with --http; one client connection (over HTTP, one MCP
session) is one observation owner. Needs pip install "dsh-tool-fs[mcp]".

The workspace is what the model can reach: --cwd (default: the directory the
client starts the server in) and each --allow DIR, and for reading each
--allow-read DIR. A directory that does not exist stops the server at start-up.

example client configuration (Claude Desktop, Cursor, ...):
  {{"mcpServers": {{"dsh-fs": {{"command": "dsh-fs",
                             "args": ["mcp", "--cwd", "/path/to/project",
                                      "--allow-read", "/path/to/docs"]}}}}}}

inside a sandbox, over HTTP, with a bearer token:
  dsh-fs mcp --http 0.0.0.0:8765 --token-file /run/secrets/mcp-token --cwd /workspace

the workspace folders the client declares (MCP roots):
  {{"mcpServers": {{"dsh-fs": {{"command": "dsh-fs", "args": ["mcp", "--client-roots"]}}}}}}

a workspace on another machine, over SSH (pip install dsh-fs-sftp):
  dsh-fs mcp --backend sftp --cwd sftp://agent@sandbox.example:22/home/agent/app \\
             --ssh-key ~/.ssh/agent_ed25519 --known-hosts ~/.ssh/known_hosts

The guides: {DOCS}/mcp-server.md
            {DOCS}/remote-workspaces.md
"""

TOKEN_VARIABLE = "DSH_FS_MCP_TOKEN"
_BRIEF_HELP = (
    "leave file contents out of the JSON results: a write's or an edit's value without "
    '"before" and "after", and no "meta" (the diff)'
)

_WORKSPACE_HELP = """\
the workspace: only paths beneath --cwd or an --allow root can be
read or written, and beneath an --allow-read root read; absolute paths, "..",
symlinks and /proc links that leave them are refused"""


def build_parser() -> argparse.ArgumentParser:
    """The ``dsh-fs`` argument parser (subcommands tools, call, session, mcp)."""
    common = _common_options()
    runs_tools = [common, _workspace_options()]
    fmt = argparse.RawDescriptionHelpFormatter
    parser = CommandParser(
        prog="dsh-fs",
        description="Model-facing filesystem tools for LLM agents: list, read, write, edit and "
        'every installed tool (glob and grep with dsh-tool-fs-search; "dsh-fs tools" lists them).',
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
    tools.add_argument(
        "--builtins",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="offer a tool as the API's built-in tool where it has one (default: in "
        "anthropic only; openai-responses: apply_patch)",
    )
    # ``tools`` runs no tool: it takes no workspace option, and builds the backend contained
    # to the current directory.
    tools.set_defaults(
        cwd=None, allow=[], allow_read=[], read_only=False, allow_anywhere=False, memory_dir=None
    )

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
    call.add_argument("--brief", action="store_true", help=_BRIEF_HELP)

    session = commands.add_parser(
        "session",
        parents=runs_tools,
        help="run tool calls from JSON lines on stdin, one session",
        description="Run tool calls read as JSON lines from stdin, as one session.",
        epilog=_SESSION_EPILOG,
        formatter_class=fmt,
    )
    session.add_argument("--brief", action="store_true", help=_BRIEF_HELP)
    mcp = commands.add_parser(
        "mcp",
        parents=runs_tools,
        help="serve the tools to an MCP client (stdio, or Streamable HTTP with --http)",
        description="Serve the tools over MCP: on stdio, or over Streamable HTTP with --http.",
        epilog=_MCP_EPILOG,
        formatter_class=fmt,
    )
    served = mcp.add_argument_group("MCP options")
    served.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST "
        "default 127.0.0.1; PORT 0 picks a free one); needs a token",
    )
    served.add_argument(
        "--token-file",
        metavar="FILE",
        help="--http: the bearer token every request must carry is FILE's content "
        f"(default: the {TOKEN_VARIABLE} environment variable)",
    )
    served.add_argument(
        "--no-auth",
        action="store_true",
        help="--http on a loopback address only: serve without a token",
    )
    served.add_argument(
        "--idle-timeout",
        metavar="SECONDS",
        type=float,
        default=1800.0,
        help="--http: end an MCP session after SECONDS with no request (default 1800)",
    )
    served.add_argument(
        "--client-roots",
        action="store_true",
        help="the workspace is the roots the MCP client declares (each read-write, the "
        "first the cwd), instead of --cwd and --allow",
    )
    return parser


class CommandParser(argparse.ArgumentParser):
    """argparse, reporting bad usage as every other usage error: one line, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f'dsh-fs: {message} (see "{self.prog} --help")\n')


def _workspace_options() -> CommandParser:
    options = CommandParser(add_help=False)
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
        "--memory-dir",
        metavar="DIR",
        help="the directory the memory tool's /memories is (default: memories beneath --cwd); "
        "it must lie inside the workspace",
    )
    group.add_argument(
        "--allow-anywhere",
        action="store_true",
        help="turn containment off: every path this process can reach (not with --allow)",
    )
    return options


def _common_options() -> CommandParser:
    common = CommandParser(add_help=False)
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
        write(sys.stdout.buffer, version_report().encode())
        parser.exit()
