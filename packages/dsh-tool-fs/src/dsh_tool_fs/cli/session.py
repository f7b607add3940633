"""``dsh-fs session``'s protocol: one JSON request per stdin line, one JSON answer per request.

A request is ``{"tool": "<name>", "args": {...}}`` (``args`` may be left out
for ``{}``); the answer has the keys of ``call --json`` (``is_error``,
``text``, ``value``, ``error``, ``meta``), flushed at once. A malformed
request is answered with an error line of the same keys
(:data:`REQUEST_ERROR_NAME`, :data:`REQUEST_ERROR_CODE`) and the session
goes on. The whole session is one observation owner.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable
from typing import Any, BinaryIO

from ..host import Session, ToolFs, ToolResult
from .output import json_line, write

REQUEST_ERROR_NAME = "SessionRequestError"
REQUEST_ERROR_CODE = "INVALID_REQUEST"
"""``error.name`` and ``error.code`` of the line answering a malformed session request."""


def request_error(message: str) -> dict[str, Any]:
    """The line answering a malformed session request (same keys as a tool result)."""
    return {
        "is_error": True,
        "text": f"Error: {message}",
        "value": None,
        "error": {"message": message, "name": REQUEST_ERROR_NAME, "code": REQUEST_ERROR_CODE},
        "meta": None,
    }


def json_problem(exc: json.JSONDecodeError) -> str:
    """What is wrong with text that is not JSON, and where: ``<msg> (line <l> column <c>)``."""
    return f"{exc.msg} (line {exc.lineno} column {exc.colno})"


def parse_request(line: bytes) -> tuple[str, Any]:
    """``(tool, args)`` of one session line, or ``ValueError`` with the model-facing message."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError("request is not valid UTF-8 text") from exc
    try:
        request = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"request is not valid JSON: {json_problem(exc)}") from exc
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


def answer(result: ToolResult, *, brief: bool = False) -> dict[str, Any]:
    """The JSON form of ``result``; ``brief``: without the file contents a program may not
    want — a write's or an edit's ``value.before`` and ``value.after``, and ``meta``."""
    line = result.to_dict()
    if brief:
        value = line["value"]
        if isinstance(value, dict):
            line["value"] = {k: v for k, v in value.items() if k not in ("before", "after")}
        line["meta"] = None
    return line


async def run_session_lines(
    toolfs: ToolFs,
    session: Session,
    lines: AsyncIterable[bytes],
    stdout: BinaryIO,
    *,
    brief: bool = False,
) -> None:
    """Answer each non-blank line with one flushed JSON line, calls strictly in order
    (``brief``: as :func:`answer` says)."""
    async for line in lines:
        if not line.strip():
            continue
        try:
            tool, arguments = parse_request(line)
        except ValueError as exc:
            reply = request_error(str(exc))
        else:
            result = await toolfs.execute(tool, arguments, session=session)
            reply = answer(result, brief=brief)
        write(stdout, json_line(reply).encode() + b"\n")
