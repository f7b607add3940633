"""What the MCP server keeps per client (``dsh_tool_fs.mcp_clients``), without the SDK."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import ToolFs
from dsh_tool_fs.mcp_clients import Clients, paths_of_roots


def test_each_key_is_one_client_with_its_own_session() -> None:
    clients = Clients(cwd="/w")
    first, again, other = clients.get("a"), clients.get("a"), clients.get("b")
    assert first is again
    assert first.session is not other.session
    assert first.session.cwd == "/w"


def test_a_dropped_client_comes_back_with_a_new_session() -> None:
    clients = Clients(cwd=None)
    session = clients.get("a").session
    clients.drop("a")
    assert len(clients) == 0
    assert clients.get("a").session is not session


def test_a_client_idle_past_the_timeout_is_forgotten_but_not_one_in_flight() -> None:
    clients = Clients(cwd=None, idle_timeout=10)
    clients.get("idle")
    clients.get("busy")
    clients.begin("busy")
    start = clients.get("idle").idle_since
    clients.expire(now=start + 5)
    assert len(clients) == 2
    clients.expire(now=start + 11)
    assert clients.known("idle") is None
    assert clients.known("busy") is not None
    clients.end("busy")
    clients.expire(now=clients.get("busy").idle_since + 11)
    assert len(clients) == 0


def test_the_roots_are_the_local_file_uris_that_are_directories(tmp_path: Path) -> None:
    (tmp_path / "a b").mkdir()
    (tmp_path / "file.txt").write_text("x")
    uris = [
        (tmp_path / "a b").as_uri(),
        "https://example.com/repo",
        "file://otherhost/srv",
        (tmp_path / "missing").as_uri(),
        (tmp_path / "file.txt").as_uri(),
        (tmp_path / "a b").as_uri(),
        f"file://localhost{tmp_path}",
    ]
    assert paths_of_roots(uris) == [str(tmp_path / "a b"), str(tmp_path)]


def test_a_client_builds_a_host_only_when_its_roots_change() -> None:
    built: list[tuple[str, ...]] = []

    def build(roots: Sequence[str]) -> ToolFs:
        built.append(tuple(roots))
        return ToolFs(MemoryFileSystem(cwd=roots[0]))

    client = Clients(cwd=None).get(None)
    cwds = []
    first = client.use_roots(["/p", "/q"], build)
    cwds.append(client.session.cwd)
    assert client.use_roots(["/p", "/q"], build) is first
    assert client.use_roots([], build) is None
    cwds.append(client.session.cwd)
    assert cwds == ["/p", None]
    assert built == [("/p", "/q")]


def test_a_fresh_client_is_never_kept() -> None:
    clients = Clients(cwd="/w")
    one, two = clients.fresh(), clients.fresh()
    assert one.session is not two.session
    assert len(clients) == 0
