"""The four subcommands and :func:`main`, the console script."""

from __future__ import annotations

import argparse
import io
import json
import logging
import sys
from collections.abc import AsyncIterable, Sequence
from functools import partial
from typing import Any, BinaryIO

import anyio

from ..formats import tools_document
from ..names import escape_surrogates
from .output import encode_plain, json_line, silence_stdout, write
from .parser import build_parser
from .session import answer, json_problem, run_session_lines
from .stack import HOST_BACKEND, build_stack, roots_stack, start_backend
from .usage import EXIT_INTERRUPTED, EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, UsageError
from .version import installed_version

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
        print(exc.line(), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``dsh-fs tools | head``): not our failure.
        silence_stdout()
        return EXIT_OK


def run_tools(args: argparse.Namespace, stdout: BinaryIO) -> int:
    toolfs = build_stack(args).toolfs
    document = tools_document(
        toolfs.definitions, toolfs.prompt_sections, args.format, builtins=args.builtins
    )
    text = json.dumps(document, ensure_ascii=False, indent=2)
    write(stdout, escape_surrogates(text).encode() + b"\n")
    return EXIT_OK


def parse_call_arguments(raw: str) -> Any:
    """The decoded ``ARGS`` of ``call``; not JSON → :class:`UsageError` (exit 2).

    Valid JSON that is not an object is passed on: the tool reports
    ``arguments must be a JSON object`` like any other argument error (exit 1).
    """
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"ARGS is not valid JSON: {json_problem(exc)}") from exc


def run_call(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> int:
    raw = args.args
    if raw == "-":
        data = stdin.read()
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError("ARGS read from stdin is not valid UTF-8") from exc
    arguments = parse_call_arguments(raw)
    stack = build_stack(args)  # refuses a tool it does not offer, before opening a root
    start_backend(stack.toolfs, args)
    call = partial(stack.toolfs.execute, args.tool, arguments, session=stack.session())
    result = anyio.run(call)
    if args.json:
        write(stdout, json_line(answer(result, brief=args.brief)).encode() + b"\n")
    else:
        write(stdout, encode_plain(result.text) + b"\n")
    return EXIT_TOOL_ERROR if result.is_error else EXIT_OK


def run_session(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> int:
    stack = build_stack(args)
    start_backend(stack.toolfs, args)
    session = stack.session()
    # Read so that Ctrl-C ends a wait for the next line at once (:mod:`..stdin_lines`).
    lines: AsyncIterable[bytes] = _lines_of(stdin)

    async def serve() -> None:
        await run_session_lines(stack.toolfs, session, lines, stdout, brief=args.brief)

    anyio.run(serve)
    return EXIT_OK


def _lines_of(stdin: BinaryIO) -> AsyncIterable[bytes]:
    """The lines of ``stdin``: from its descriptor, interruptibly, when it has one."""
    from ..stdin_lines import InterruptibleLines  # for session only: start-up stays lean

    try:
        fd = stdin.fileno()
    except (OSError, ValueError):  # an in-memory stream (a closed stdin, a test's)
        return anyio.wrap_file(stdin)
    return InterruptibleLines(fd)


def run_mcp(args: argparse.Namespace) -> int:
    try:
        from .. import mcp_server  # the optional SDK: imported only to serve
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in ("mcp", "mcp_types"):
            raise
        if isinstance(exc, ModuleNotFoundError):
            raise UsageError(MCP_INSTALL_HINT) from exc
        # The SDK is there but predates the low-level API used here.
        raise UsageError(f"{MCP_SDK_TOO_OLD} (installed: mcp {installed_version('mcp')})") from exc
    from .http_options import http_options, serve_over_http  # socket & co.: for mcp only

    http = http_options(args) if args.http is not None else None
    if args.client_roots and args.backend != HOST_BACKEND:
        raise UsageError(
            "--client-roots: the client's roots are directories of this machine: "
            f"not with --backend {args.backend}"
        )
    stack = build_stack(args)
    client_roots = roots_stack(args) if args.client_roots else None
    start_backend(stack.toolfs, args)
    cwd = stack.workspace.session_cwd
    if http is not None:
        return serve_over_http(
            stack.toolfs, http, cwd=cwd, client_roots=client_roots, idle_timeout=args.idle_timeout
        )
    if sys.stdin is not None and sys.stdin.isatty():
        print(MCP_ON_A_TERMINAL, file=sys.stderr, flush=True)
    anyio.run(partial(mcp_server.serve_stdio, stack.toolfs, cwd=cwd, client_roots=client_roots))
    return EXIT_OK
