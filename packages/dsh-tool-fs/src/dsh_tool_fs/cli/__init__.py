"""The ``dsh-fs`` command: the tools from a shell, over JSON lines, and over MCP.

Four subcommands share one way of assembling the stack (``--backend``,
``--plugin``, ``--no-policy``, ``--tools``, ``--config``): ``tools`` prints
the definitions in a wire format, ``call`` runs one tool call, ``session``
runs many calls over JSON lines with one observation owner, ``mcp`` serves
the tools to an MCP client over stdio. The three that run tools also take
the workspace options: ``--cwd`` is the workspace, ``--allow`` /
``--allow-read`` add roots, ``--read-only`` forbids writes,
``--allow-anywhere`` turns containment off. The guide is docs/using/cli.md.

Exit codes: 0 success, 1 the tool call failed (``call`` only), 2 bad usage
(unknown subcommand, option, tool, backend or plugin; arguments that are not
valid JSON; a workspace directory that is not one; the MCP SDK missing). Logs
go to stderr, results to stdout, and stdout is always UTF-8 whatever the
locale (:mod:`.output`).

The modules: :mod:`.parser` (the options and help), :mod:`.stack` (the host
from entry points, every name checked first), :mod:`.session` (the JSON-lines
protocol), :mod:`.output` (the encoding), :mod:`.version` (``--version``),
:mod:`.commands` (the subcommands and :func:`main`).
"""

from .commands import main, parse_call_arguments
from .output import encode_plain, json_line
from .parser import build_parser
from .session import REQUEST_ERROR_CODE, REQUEST_ERROR_NAME, parse_request, request_error
from .stack import (
    Stack,
    WorkspaceOptions,
    build_stack,
    parse_config,
    plugin_names,
    workspace,
    workspace_options,
)
from .usage import EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, UsageError, WorkspaceError
from .version import version_report

__all__ = [
    "EXIT_OK",
    "EXIT_TOOL_ERROR",
    "EXIT_USAGE",
    "REQUEST_ERROR_CODE",
    "REQUEST_ERROR_NAME",
    "Stack",
    "UsageError",
    "WorkspaceError",
    "WorkspaceOptions",
    "build_parser",
    "build_stack",
    "encode_plain",
    "json_line",
    "main",
    "parse_call_arguments",
    "parse_config",
    "parse_request",
    "plugin_names",
    "request_error",
    "version_report",
    "workspace",
    "workspace_options",
]
