"""Fork server of the reliability suite (run as a script by ``ForkServer``).

It imports the whole stack once, runs every tool once so that nothing is
imported lazily later (a child that dropped to ``nobody`` can no longer read
the interpreter's files under ``/root``), then serves requests: one JSON line
in, one JSON line out. Each request forks ``copies`` children that run a case
and report JSON lines through a pipe; the server kills a child with SIGKILL at
its deadline (``timeout``) or, for crash trials, ``kill_after_start`` seconds
after the child announced its first mutation.
"""

from __future__ import annotations

import contextlib
import grp
import json
import os
import pwd
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
from dsh_fs_local import LocalFileSystem
from dsh_fs_policy import FsPolicy
from dsh_reliability_kit import crash_content, crash_generation, generation_tag
from dsh_tool_fs import Session, ToolFs, ToolResult

Params = dict[str, Any]


class Channel:
    """The child's side of its report pipe: one JSON object per line."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, obj: object) -> None:
        data = json.dumps(obj).encode() + b"\n"
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]


def build_toolfs(params: Params) -> ToolFs:
    """The stack over the local backend, built directly.

    Not through entry points: a child that dropped to ``nobody`` cannot read
    the environment's ``site-packages`` under ``/root`` to find them.
    """
    plugins: list[object] = [FsPolicy()] if params.get("policy", True) else []
    # "uncontained": roots=None, where SPEC 3.1's in-place hard-link rewrite applies.
    backend = (
        LocalFileSystem(params["cwd"], roots=None)
        if params.get("uncontained")
        else LocalFileSystem(cwd=params["cwd"])
    )
    return ToolFs(backend, plugins=plugins, config=params.get("config"))


def result_dict(result: ToolResult, *, with_value: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"is_error": result.is_error, "text": result.text}
    if result.error is not None:
        out.update(code=result.error.code, message=result.error.message, name=result.error.name)
    if with_value:
        out["value"] = result.value
    return out


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def _reset_peak_rss() -> None:
    """Reset VmHWM: a forked child inherits the server's peak otherwise (Linux ≥ 4.0)."""
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


# -- cases ----------------------------------------------------------------------


async def case_tool_calls(params: Params, out: Channel) -> Any:
    """Run ``calls`` ([tool, args] pairs) in one session, each under ``fail_after(guard)``."""
    toolfs = build_toolfs(params)
    session = Session(cwd=params["cwd"])
    guard = float(params.get("guard", 2.0))
    with_value = bool(params.get("with_value", False))
    memory = bool(params.get("memory", False))
    if memory:
        _reset_peak_rss()
    rss_before = _status_kb("VmRSS")
    results: list[dict[str, Any]] = []
    for tool, args in params["calls"]:
        started = time.monotonic()
        try:
            with anyio.fail_after(guard):
                result = await toolfs.execute(tool, args, session=session)
        except TimeoutError:
            results.append({"timeout": True})
            continue
        item = result_dict(result, with_value=with_value)
        item["seconds"] = round(time.monotonic() - started, 3)
        results.append(item)
    report: dict[str, Any] = {"results": results}
    if memory:
        report["rss_before_kb"] = rss_before
        report["peak_kb"] = _status_kb("VmHWM")
    return report


async def case_crash_loop(params: Params, out: Channel) -> Any:
    """Observe the target, say ready, then write and edit it forever (until killed).

    With ``create`` the target is absent: the first call is a ``write`` that creates it.
    """
    toolfs = build_toolfs(params)
    session = Session(cwd=params["cwd"])
    path, size = params["path"], params["size"]
    if params.get("create"):
        gen: int | None = 0  # the file is absent: the first write creates it
    else:
        first = await toolfs.execute("read", {"file_path": path, "limit": 1}, session=session)
        if first.is_error or first.value is None:
            return {"error": first.text}
        gen = crash_generation(first.value["lines"][0]["text"].encode())
    if gen is None:
        return {"error": "no generation in the first line"}
    out.send({"ready": gen})
    step = int(params.get("first_step", 0))
    while True:
        nxt = gen + 1
        out.send({"start": nxt, "t": time.monotonic()})
        if step % 2 == 0:
            content = crash_content(nxt, size).decode()
            result = await toolfs.execute(
                "write", {"file_path": path, "content": content}, session=session
            )
        else:
            result = await toolfs.execute(
                "edit",
                {
                    "file_path": path,
                    "old_string": generation_tag(gen),
                    "new_string": generation_tag(nxt),
                    "replace_all": True,
                },
                session=session,
            )
        if result.is_error:
            return {"error": result.text}
        out.send({"done": nxt, "t": time.monotonic()})
        gen = nxt
        step += 1


async def case_counter_loop(params: Params, out: Channel) -> Any:
    """``n`` increments of ``count=<n>`` by read→edit, retrying stale edits."""
    toolfs = build_toolfs(params)
    session = Session(cwd=params["cwd"])
    path, n = params["path"], params["n"]
    done = stale = 0
    while done < n:
        read = await toolfs.execute("read", {"file_path": path}, session=session)
        if read.is_error or read.value is None:
            return {"error": read.text}
        value = int(read.value["lines"][0]["text"].removeprefix("count="))
        edit = await toolfs.execute(
            "edit",
            {
                "file_path": path,
                "old_string": f"count={value}\n",
                "new_string": f"count={value + 1}\n",
            },
            session=session,
        )
        if not edit.is_error:
            done += 1
        elif edit.error is not None and edit.error.code == "FS_STALE_VERSION":
            stale += 1
        else:
            return {"error": edit.text}
    return {"done": done, "stale": stale}


CASES: dict[str, Callable[[Params, Channel], Awaitable[Any]]] = {
    "tool_calls": case_tool_calls,
    "crash_loop": case_crash_loop,
    "counter_loop": case_counter_loop,
}


# -- the server -----------------------------------------------------------------


def drop_to_nobody() -> None:
    nobody = pwd.getpwnam("nobody")
    gid = grp.getgrnam("nogroup").gr_gid if _has_group("nogroup") else nobody.pw_gid
    os.setgroups([])
    os.setgid(gid)
    os.setuid(nobody.pw_uid)


def _has_group(name: str) -> bool:
    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


def child_main(request: dict[str, Any], write_fd: int) -> None:
    channel = Channel(write_fd)
    code = 0
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 1)
        if request.get("blocking_stdin"):
            # A pipe whose writer stays open and silent: reading fd 0 would block.
            read_end, _write_end = os.pipe()
            os.dup2(read_end, 0)
        else:
            os.dup2(devnull, 0)
        fsize_limit = request.get("fsize_limit")
        if fsize_limit is not None:
            # Files may not grow beyond this: writes fail EFBIG like a full disk.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_limit, fsize_limit))
        if request.get("user") == "nobody":
            drop_to_nobody()
        case = CASES[request["case"]]
        params = request["params"]
        result = anyio.run(case, params, channel)
        channel.send({"result": result})
    except BaseException:
        code = 1
        with contextlib.suppress(BaseException):
            channel.send({"exception": traceback.format_exc()})
    os._exit(code)


def _watch_companions(watch: dict[str, Any], children: list[dict[str, Any]], now: float) -> None:
    """Kill a child ``extra`` seconds after its temporary/backup file appeared.

    The local backend names companions ``.<name>.dsh-<pid>-<hex>.tmp``, so the
    server sees the very moment a child is between creating its temporary file
    and renaming it: the kills that matter most.
    """
    pending = [
        c
        for c in children
        if c.get("started") and not c.get("companion_seen") and c["status"] is None
    ]
    if not pending:
        return
    try:
        names = os.listdir(watch["directory"])
    except OSError:
        return
    for child in pending:
        marker = f".dsh-{child['pid']}-"
        if any(marker in name for name in names):
            child["companion_seen"] = True
            child["kill_at"] = min(child["kill_at"], now + float(watch["extra"]))


def serve_request(request: dict[str, Any]) -> dict[str, Any]:
    copies = int(request.get("copies", 1))
    timeout = float(request.get("timeout", 10.0))
    kill_after_start = request.get("kill_after_start")
    watch = request.get("kill_on_companion")
    size = request["params"].get("size")
    if isinstance(size, int):
        crash_content(0, size)  # build the template once, here: children inherit it
    children: list[dict[str, Any]] = []
    for _ in range(copies):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            child_main(request, write_fd)
        os.close(write_fd)
        children.append(
            {"pid": pid, "fd": read_fd, "buf": b"", "messages": [], "status": None, "kill_at": None}
        )
    deadline = time.monotonic() + timeout
    open_fds = {child["fd"]: child for child in children}
    while open_fds:
        now = time.monotonic()
        if watch is not None:
            _watch_companions(watch, children, now)
        for child in list(open_fds.values()):
            kill_at = child["kill_at"]
            if kill_at is not None and now >= kill_at and child["status"] is None:
                os.kill(child["pid"], signal.SIGKILL)
                child["status"] = "killed"
                child["killed_at"] = now
        if now >= deadline:
            for child in open_fds.values():
                if child["status"] is None:
                    os.kill(child["pid"], signal.SIGKILL)
                    child["status"] = "timeout"
        wake = [deadline] + [c["kill_at"] for c in open_fds.values() if c["kill_at"] is not None]
        wait = max(0.0, min(wake) - time.monotonic())
        if watch is not None:
            wait = min(wait, 0.0002)
        ready, _, _ = select.select(list(open_fds), [], [], wait)
        for fd in ready:
            child = open_fds[fd]
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                del open_fds[fd]
                os.close(fd)
                continue
            child["buf"] += chunk
            while b"\n" in child["buf"]:
                line, _, child["buf"] = child["buf"].partition(b"\n")
                message = json.loads(line)
                child["messages"].append(message)
                if "start" in message and kill_after_start is not None and child["kill_at"] is None:
                    child["kill_at"] = time.monotonic() + float(kill_after_start)
                    child["started"] = True
    reports = []
    for child in children:
        _, wait_status = os.waitpid(child["pid"], 0)
        status = child["status"] or "exited"
        reports.append(
            {
                "pid": child["pid"],
                "status": status,
                "rc": os.waitstatus_to_exitcode(wait_status),
                "messages": child["messages"],
                "killed_at": child.get("killed_at"),
                "companion_seen": bool(child.get("companion_seen")),
            }
        )
    return {"status": "ok", "children": reports}


async def warm_up(root: str) -> None:
    """Run every tool and the common failures once, so every lazy import happens now."""
    for plugins in (("policy",), ()):
        for config in (None, {"read_stream_min_size": 1}):
            toolfs = ToolFs.from_entry_points(
                backend="local", plugins=plugins, cwd=root, config=config
            )
            session = Session(cwd=root)
            calls: list[tuple[str, Any]] = [
                ("write", {"file_path": "d/a.txt", "content": "a\r\nb\r\n"}),
                ("read", {"file_path": "d/a.txt"}),
                ("read", {"file_path": "d/a.txt", "offset": 9}),
                ("edit", {"file_path": "d/a.txt", "old_string": "a", "new_string": "c"}),
                ("edit", {"file_path": "d/a.txt", "old_string": "zz", "new_string": "c"}),
                ("write", {"file_path": "d/a.txt", "content": "x\n"}),
                ("list", {"path": "d"}),
                ("list", {"path": "d/a.txt"}),
                ("read", {"file_path": "d"}),
                ("read", {"file_path": "missing"}),
                ("read", {"file_path": "d/a.txt/x"}),
                ("read", {"file_path": 1}),
                ("nope", {}),
            ]
            for tool, args in calls:
                await toolfs.execute(tool, args, session=session)
            shutil.rmtree(os.path.join(root, "d"))


def main() -> None:
    root = tempfile.mkdtemp(prefix="dsh-rel-warm-")
    try:
        anyio.run(warm_up, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out = sys.stdout.buffer
    out.write(json.dumps({"status": "ready", "pid": os.getpid()}).encode() + b"\n")
    out.flush()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            reply = serve_request(json.loads(line))
        except Exception:
            reply = {"status": "error", "traceback": traceback.format_exc()}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
