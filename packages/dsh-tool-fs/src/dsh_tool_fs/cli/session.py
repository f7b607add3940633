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

from ..host import Session, ToolFs
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
            result = await toolfs.execute(tool, arguments, session=session)
            answer = result.to_dict()
        write(stdout, json_line(answer).encode() + b"\n")
