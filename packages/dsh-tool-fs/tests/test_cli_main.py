"""``dsh_tool_fs.cli.main`` in-process: exit codes, help, and sessions on the memory backend.

The subprocess tests in ``tests-integration/`` run the real command; these
cover the many small cases quickly (no interpreter start-up per case).

Kept as one file: every case goes through the one ``dsh_fs`` fixture (an
in-process run of ``main`` with its captured output), and the cases read as
one catalogue of what the command answers.
"""

from __future__ import annotations

import importlib.metadata as md
import io
import json
import platform
import sys
import types
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import dsh_tool_fs
import pytest
from dsh_fs import BACKENDS_GROUP
from dsh_fs import entry_points as entry_points_module
from dsh_tool_fs.cli import main
from dsh_tool_fs_search.fast_path import native_status


class Run:
    """One in-process ``dsh-fs`` run: exit status, stdout bytes, stderr text."""

    def __init__(self, status: int, stdout: bytes, stderr: bytes) -> None:
        self.status = status
        self.stdout = stdout
        self.stderr = stderr.decode()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.decode().splitlines()]


@pytest.fixture
def dsh_fs(capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch) -> Any:
    def run(*argv: str, stdin: bytes = b"") -> Run:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        status = main(list(argv))
        captured = capsysbinary.readouterr()
        return Run(status, captured.out, captured.err)

    return run


def requests(*items: Any) -> bytes:
    return "".join(json.dumps(item) + "\n" for item in items).encode()


MEMORY = ("--backend", "memory", "--cwd", "/w")
DISTRIBUTIONS = (
    "dsh-fs",
    "dsh-fs-local",
    "dsh-fs-memory",
    "dsh-fs-policy",
    "dsh-fs-sftp",
    "dsh-tool-fs",
    "dsh-tool-fs-search",
    "dsh-tool-fs-editor",
    "dsh-tool-fs-patch",
)


@pytest.mark.parametrize("command", ["tools", "call", "session", "mcp"])
def test_each_subcommand_explains_itself_with_an_example(dsh_fs: Any, command: str) -> None:
    run = dsh_fs(command, "--help")
    assert run.status == 0
    assert f"usage: dsh-fs {command}".encode() in run.stdout
    assert b"example" in run.stdout


def test_mcp_help_says_what_the_workspace_is(dsh_fs: Any) -> None:
    text = dsh_fs("mcp", "--help").stdout.decode()
    assert "The workspace is what the model can reach: --cwd" in text
    for option in ("--allow DIR", "--allow-read DIR", "--read-only", "--allow-anywhere"):
        assert option in text
    assert '"--allow-read", "/path/to/docs"]' in text  # the client configuration example


def test_top_level_help_lists_the_subcommands(dsh_fs: Any) -> None:
    run = dsh_fs("--help")
    assert run.status == 0
    for command in (b"tools", b"call", b"session", b"mcp"):
        assert command in run.stdout


def installed_version(distribution: str) -> str:
    try:
        return md.version(distribution)
    except md.PackageNotFoundError:  # mcp: an optional dependency
        return "unknown"


def test_version_names_every_layer_backend_and_plugin_with_its_distribution(
    dsh_fs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A third-party backend and plugin, installed as importlib.metadata finds them.
    info = tmp_path / "dsh_fs_bucket-1.4.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-fs-bucket\nVersion: 1.4.2\n")
    (info / "entry_points.txt").write_text(
        "[dsh_fs.backends]\nbucket = dsh_fs_bucket:Bucket\n"
        "[dsh_fs.plugins]\naudit = dsh_fs_bucket:Audit\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    run = dsh_fs("--version")
    assert run.status == 0
    ours = {dist: md.version(dist) for dist in DISTRIBUTIONS}
    libs = ("anyio", "pluggy", "pydantic", "mcp")
    libraries = ", ".join(f"{lib} {installed_version(lib)}" for lib in libs)
    assert run.stdout.decode().splitlines() == [
        f"dsh-fs {dsh_tool_fs.__version__}",
        f"  layer dsh-tool-fs {ours['dsh-tool-fs']}",
        f"  layer dsh-fs {ours['dsh-fs']}",
        "  backend bucket: dsh-fs-bucket 1.4.2",
        f"  backend local: dsh-fs-local {ours['dsh-fs-local']}",
        f"  backend memory: dsh-fs-memory {ours['dsh-fs-memory']}",
        f"  backend sftp: dsh-fs-sftp {ours['dsh-fs-sftp']}",
        "  plugin audit: dsh-fs-bucket 1.4.2",
        f"  plugin policy: dsh-fs-policy {ours['dsh-fs-policy']}",
        f"  tool apply_patch: dsh-tool-fs-patch {ours['dsh-tool-fs-patch']}",
        f"  tool glob: dsh-tool-fs-search {ours['dsh-tool-fs-search']}",
        f"  tool grep: dsh-tool-fs-search {ours['dsh-tool-fs-search']}",
        f"  tool memory: dsh-tool-fs-editor {ours['dsh-tool-fs-editor']}",
        f"  tool str_replace_based_edit_tool: dsh-tool-fs-editor {ours['dsh-tool-fs-editor']}",
        f"  with {libraries} on Python {platform.python_version()}",
        f"  search fast path: {native_status()}",
    ]
    assert run.stderr == ""


def test_version_says_why_search_has_no_fast_path(
    dsh_fs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_FS_SEARCH_NATIVE", "0")
    run = dsh_fs("--version")
    assert run.stdout.decode().splitlines()[-1] == (
        "  search fast path: off (DSH_FS_SEARCH_NATIVE=0)"
    )


def test_no_subcommand_is_bad_usage(dsh_fs: Any) -> None:
    run = dsh_fs()
    assert run.status == 2
    assert "the following arguments are required: COMMAND" in run.stderr


def test_an_unknown_format_is_bad_usage(dsh_fs: Any) -> None:
    run = dsh_fs("tools", "--format", "yaml")
    assert run.status == 2
    assert "invalid choice: 'yaml'" in run.stderr


def test_an_unknown_tool_is_bad_usage(dsh_fs: Any) -> None:
    run = dsh_fs("call", "bash", "{}", *MEMORY, "--tools", "list,read,write,edit")
    assert run.status == 2
    assert run.stdout == b""
    assert run.stderr == 'dsh-fs: unknown tool "bash" (tools: list, read, write, edit)\n'


def test_tools_chooses_the_offered_tools_and_refuses_an_unknown_one(dsh_fs: Any) -> None:
    listed = dsh_fs("tools", "--tools", "read, list")
    assert listed.status == 0
    assert [t["name"] for t in json.loads(listed.stdout)["tools"]] == ["list", "read"]
    run = dsh_fs("session", *MEMORY, "--tools", "read,bash")
    assert run.status == 2
    assert run.stdout == b""
    assert run.stderr.startswith('dsh-fs: --tools: unknown tool "bash" (installed: ')
    assert run.stderr.count("\n") == 1


def test_an_unknown_backend_is_bad_usage(dsh_fs: Any) -> None:
    run = dsh_fs("session", "--backend", "s3")
    assert run.status == 2
    assert run.stderr.startswith('dsh-fs: unknown backend "s3" (installed ')


def test_an_unknown_plugin_is_bad_usage(dsh_fs: Any) -> None:
    run = dsh_fs("call", "list", "{}", "--plugin", "audit", *MEMORY)
    assert run.status == 2
    assert 'unknown plugin "audit"' in run.stderr


def test_call_of_json_that_is_not_an_object_is_a_tool_error(dsh_fs: Any) -> None:
    run = dsh_fs("call", "read", '["a.txt"]', *MEMORY)
    assert run.status == 1
    assert run.stdout == b"Error: arguments must be a JSON object\n"


def test_call_json_of_a_failure_carries_the_error_and_exits_1(dsh_fs: Any) -> None:
    run = dsh_fs("call", "read", '{"file_path": "a.txt"}', "--json", *MEMORY)
    assert run.status == 1
    assert run.lines() == [
        {
            "is_error": True,
            "text": 'Error: cannot read "/w/a.txt": not found',
            "value": None,
            "error": {
                "message": 'cannot read "/w/a.txt": not found',
                "name": "FsError",
                "code": "FS_NOT_FOUND",
            },
            "meta": None,
        }
    ]


def test_call_reads_its_arguments_from_stdin_with_a_dash(dsh_fs: Any) -> None:
    stdin = json.dumps({"file_path": "big.txt", "content": "x\n" * 1000}).encode()
    run = dsh_fs("call", "write", "-", "--json", *MEMORY, stdin=stdin)
    assert run.status == 0
    assert run.lines()[0]["value"]["operation"] == "create"


def test_call_with_invalid_utf8_on_stdin_is_bad_usage(dsh_fs: Any) -> None:
    run = dsh_fs("call", "write", "-", *MEMORY, stdin=b'{"file_path": "\xff"}')
    assert run.status == 2
    assert run.stderr == "dsh-fs: ARGS read from stdin is not valid UTF-8\n"


def test_a_bad_config_value_is_bad_usage(dsh_fs: Any) -> None:
    run = dsh_fs("tools", "--config", "readLimit=0")
    assert run.status == 2
    assert run.stderr == ("dsh-fs: --config: tool-fs: readLimit must be a positive integer\n")


def test_tools_reflect_the_config(dsh_fs: Any) -> None:
    run = dsh_fs("tools", "--config", "read_limit=7")
    assert run.status == 0
    read = json.loads(run.stdout)["tools"][1]
    assert read["parameters"]["properties"]["limit"]["default"] == 7


def test_a_session_on_the_memory_backend_keeps_its_observations(dsh_fs: Any) -> None:
    stdin = requests(
        {"tool": "write", "args": {"file_path": "a.txt", "content": "one\n"}},
        {"tool": "write", "args": {"file_path": "a.txt", "content": "two\n"}},
        {"tool": "edit", "args": {"file_path": "a.txt", "old_string": "two", "new_string": "3"}},
        {"tool": "read", "args": {"file_path": "/w/a.txt"}},
    )
    run = dsh_fs("session", *MEMORY, stdin=stdin)
    assert run.status == 0
    created, updated, edited, read = run.lines()
    assert created["value"]["operation"] == "create"
    assert updated["value"]["operation"] == "update"  # its own create counts as an observation
    assert edited["is_error"] is False
    assert read["value"]["lines"] == [{"number": 1, "text": "3"}]


def test_a_session_passes_tool_errors_through_as_result_lines(dsh_fs: Any) -> None:
    stdin = requests({"tool": "bash", "args": {}}, {"tool": "read", "args": {"file_path": 3}})
    run = dsh_fs("session", *MEMORY, stdin=stdin)
    assert run.status == 0
    unknown, wrong = run.lines()
    assert unknown["error"] == {
        "message": 'unknown tool "bash"',
        "name": "ToolNotFoundError",
        "code": "UNKNOWN_TOOL",
    }
    assert wrong["text"] == "Error: file_path must be a string"
    assert wrong["error"]["code"] == "INVALID_ARGUMENTS"


def test_a_session_applies_config_limits(dsh_fs: Any) -> None:
    writes = [
        {"tool": "write", "args": {"file_path": name, "content": ""}} for name in ("a", "b", "c")
    ]
    stdin = requests(*writes, {"tool": "list"})
    run = dsh_fs("session", *MEMORY, "--config", "list_max_entries=2", stdin=stdin)
    assert run.lines()[-1]["text"].endswith(
        "a\nb\n\n(Showing entries 1-2 of 3: 0 directories, 3 files. Use offset=3 to continue.)"
        "\n</content>"
    )


def test_a_session_with_no_input_prints_nothing(dsh_fs: Any) -> None:
    run = dsh_fs("session", *MEMORY)
    assert (run.status, run.stdout) == (0, b"")


def test_mcp_without_the_sdk_says_how_to_install_it(
    dsh_fs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.delitem(sys.modules, "dsh_tool_fs.mcp_server", raising=False)
    monkeypatch.delattr(dsh_tool_fs, "mcp_server", raising=False)
    run = dsh_fs("mcp", *MEMORY)
    assert run.status == 2
    assert run.stdout == b""
    assert run.stderr == (
        'dsh-fs: the MCP server needs the optional "mcp" dependency: '
        'pip install "dsh-tool-fs[mcp]"\n'
    )


def test_mcp_with_an_old_sdk_says_which_version_it_needs(
    dsh_fs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("mcp", reason="an installed but old SDK: needs the mcp extra")
    old_server = types.ModuleType("mcp.server")  # no ServerRequestContext: the 1.x layout
    monkeypatch.setitem(sys.modules, "mcp.server", old_server)
    monkeypatch.delitem(sys.modules, "dsh_tool_fs.mcp_server", raising=False)
    monkeypatch.delattr(dsh_tool_fs, "mcp_server", raising=False)
    run = dsh_fs("mcp", *MEMORY)
    assert run.status == 2
    assert run.stderr.startswith(
        'dsh-fs: the MCP server needs mcp>=2.3: pip install -U "dsh-tool-fs[mcp]" (installed: mcp '
    )


# -- the backend and the workspace options ----------------------------------------------------


def picky_backend(
    cwd: str | None = None, *, roots: Any, read_only_roots: Any, read_only: bool
) -> Any:
    """A backend that rejects every root, as a backend does for one missing in its namespace."""
    raise ValueError(f"root {cwd!r} is not a directory")


def old_backend(cwd: str | None = None) -> Any:
    """A backend from before the workspace options: it would run uncontained."""
    raise AssertionError("never built")


@pytest.fixture
def odd_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("odd_backends")
    module.picky = picky_backend  # type: ignore[attr-defined]
    module.old = old_backend  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "odd_backends", module)
    points = [EntryPoint(name, f"odd_backends:{name}", BACKENDS_GROUP) for name in ("picky", "old")]
    monkeypatch.setattr(
        entry_points_module,
        "entry_points",
        lambda *, group: [ep for ep in points if ep.group == group],
    )


@pytest.mark.usefixtures("odd_backends")
def test_a_backend_that_rejects_a_root_is_one_usage_line(dsh_fs: Any) -> None:
    run = dsh_fs("call", "list", "{}", "--backend", "picky", "--cwd", "/w")
    assert (run.status, run.stdout) == (2, b"")
    assert run.stderr == "dsh-fs: --backend \"picky\": root '/w' is not a directory\n"


@pytest.mark.usefixtures("odd_backends")
def test_a_backend_without_workspace_options_is_one_usage_line(dsh_fs: Any) -> None:
    run = dsh_fs("session", "--backend", "old", "--no-policy")
    assert (run.status, run.stdout) == (2, b"")
    assert run.stderr == (
        'dsh-fs: dsh_fs.backends entry point "old" does not take the '
        "workspace options (roots, read_only_roots, read_only)\n"
    )


def test_a_missing_cwd_is_one_line_before_anything_runs(dsh_fs: Any, tmp_path: Any) -> None:
    missing = tmp_path / "nope"
    run = dsh_fs("session", "--cwd", str(missing), stdin=requests({"tool": "list"}))
    assert (run.status, run.stdout) == (2, b"")
    assert run.stderr == f'dsh-fs: --cwd "{missing}": does not exist\n'


@pytest.mark.usefixtures("odd_backends")
@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (
            ["call", "nosuch", "{}", "--tools", "list,read"],
            'dsh-fs: unknown tool "nosuch" (tools: list, read)',
        ),
        (
            ["session", "--tools", "read,nosuch"],
            'dsh-fs: --tools: unknown tool "nosuch" (installed: ',
        ),
    ],
    ids=["call", "tools"],
)
def test_an_unknown_tool_is_refused_before_the_backend_is_built(
    dsh_fs: Any, argv: list[str], error: str
) -> None:
    # "picky" rejects every root when it is built: its error would mean the roots were opened.
    run = dsh_fs(*argv, "--backend", "picky", "--cwd", "/w")
    assert (run.status, run.stdout) == (2, b"")
    assert run.stderr.startswith(error)
    assert run.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["call", "nosuch", "{}"], 'dsh-fs: unknown tool "nosuch" (tools: list, '),
        (
            ["session", "--tools", "read,nosuch"],
            'dsh-fs: --tools: unknown tool "nosuch" (installed: list, ',
        ),
    ],
    ids=["call", "tools"],
)
def test_an_unknown_tool_is_the_error_reported_before_a_missing_cwd(
    dsh_fs: Any, tmp_path: Any, argv: list[str], error: str
) -> None:
    run = dsh_fs(*argv, "--cwd", str(tmp_path / "nope"))
    assert (run.status, run.stdout) == (2, b"")
    assert run.stderr.startswith(error)


# -- one form for every usage error, each naming what is wrong ---------------------------------


def test_an_argparse_error_has_the_form_of_every_usage_error(dsh_fs: Any) -> None:
    run = dsh_fs("call", "list", "--bogus")
    assert run.status == 2
    assert run.stderr == 'dsh-fs: unrecognized arguments: --bogus (see "dsh-fs --help")\n'


def test_a_config_value_with_spaces_is_refused(dsh_fs: Any) -> None:
    run = dsh_fs("tools", "--config", "read_limit= 10")
    assert run.status == 2
    assert run.stderr == (
        'dsh-fs: --config expects KEY=VALUE with no spaces around "=", got "read_limit= 10"\n'
    )


def test_a_config_value_past_the_largest_is_refused(dsh_fs: Any) -> None:
    run = dsh_fs("tools", "--config", "read_limit=99999999999999999999")
    assert run.status == 2
    assert run.stderr == "dsh-fs: --config: tool-fs: read_limit must be at most 2147483647\n"


def test_an_unknown_backend_option_is_named(dsh_fs: Any) -> None:
    run = dsh_fs("call", "list", *MEMORY, "--backend-option", "colour=blue")
    assert run.status == 2
    assert run.stderr == (
        'dsh-fs: --backend-option colour: the "memory" backend has no option "colour" '
        "(its options: files)\n"
    )


def test_a_missing_ssh_key_is_named_and_not_blamed_on_the_cwd(dsh_fs: Any, tmp_path: Path) -> None:
    key = tmp_path / "id_missing"
    run = dsh_fs(
        "call",
        "list",
        "--backend",
        "sftp",
        "--cwd",
        "sftp://a@127.0.0.1:1/x",
        "--ssh-key",
        str(key),
    )
    assert run.status == 2
    assert run.stderr == f'dsh-fs: --ssh-key "{key}": does not exist\n'


def test_an_sftp_url_as_a_local_cwd_says_which_backend_reads_it(dsh_fs: Any) -> None:
    run = dsh_fs("session", "--cwd", "sftp://agent@sandbox/app")
    assert run.status == 2
    assert run.stderr == (
        'dsh-fs: --cwd "sftp://agent@sandbox/app": a sftp:// URL needs --backend sftp\n'
    )


def test_help_does_not_count_the_tools(dsh_fs: Any) -> None:
    text = dsh_fs("--help").stdout.decode()
    assert "(list, read, write, edit)" not in text
    assert '"dsh-fs tools" lists them' in text


# -- --brief ----------------------------------------------------------------------------------


def test_a_brief_session_leaves_the_file_contents_out(dsh_fs: Any) -> None:
    write = {"tool": "write", "args": {"file_path": "a.txt", "content": "one\n"}}
    read = {"tool": "read", "args": {"file_path": "a.txt"}}
    edit = {"tool": "edit", "args": {"file_path": "a.txt", "old_string": "one", "new_string": "2"}}
    run = dsh_fs("session", *MEMORY, "--brief", stdin=requests(write, read, edit))
    wrote, seen, edited = run.lines()
    assert wrote["value"] == {"path": "/w/a.txt", "operation": "create"}
    assert seen["value"]["lines"] == [{"number": 1, "text": "one"}]  # a read's window stays
    assert edited["value"] == {"path": "/w/a.txt"}
    assert edited["meta"] is None
    assert edited["text"] == "The file /w/a.txt has been updated successfully."


def test_a_brief_call_leaves_the_file_contents_out(dsh_fs: Any) -> None:
    args = json.dumps({"file_path": "a.txt", "content": "x" * 100})
    run = dsh_fs("call", "write", args, *MEMORY, "--json", "--brief")
    result = json.loads(run.stdout)
    assert result["value"] == {"path": "/w/a.txt", "operation": "create"}
    assert result["meta"] is None


# -- dsh-fs mcp: what is refused at start-up --------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--http", "8765"],
            "--http needs a bearer token: --token-file FILE or the DSH_FS_MCP_TOKEN "
            "environment variable (or --no-auth on a loopback address)",
        ),
        (
            ["--http", "0.0.0.0:8765", "--no-auth"],
            "--no-auth is only allowed on a loopback address (127.0.0.1, ::1, localhost), "
            'not "0.0.0.0"',
        ),
        (
            ["--http", "host:port"],
            '--http expects [HOST:]PORT, e.g. 8765 or 0.0.0.0:8765, got "host:port"',
        ),
        (
            ["--http", "8765", "--token-file", "<missing>"],
            '--token-file "<missing>": does not exist',
        ),
        (
            ["--client-roots"],
            "--client-roots: the client's roots are directories of this machine: "
            "not with --backend memory",
        ),
    ],
)
def test_mcp_refuses_a_server_it_should_not_start(
    dsh_fs: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str], message: str
) -> None:
    pytest.importorskip("mcp", reason="needs the mcp extra")
    monkeypatch.delenv("DSH_FS_MCP_TOKEN", raising=False)
    missing = str(tmp_path / "no-token")
    argv = [missing if a == "<missing>" else a for a in argv]
    run = dsh_fs("mcp", *MEMORY, *argv)
    assert run.status == 2
    assert run.stderr == f"dsh-fs: {message.replace('<missing>', missing)}\n"
