"""The ``dsh-fs`` command's parsing and output rules, without running a tool."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from dsh_fs.workspace import CWD_ROOT
from dsh_tool_fs.cli import (
    UsageError,
    WorkspaceError,
    WorkspaceOptions,
    build_parser,
    encode_plain,
    json_line,
    parse_call_arguments,
    parse_config,
    parse_request,
    plugin_names,
    request_error,
    workspace,
    workspace_options,
)


def test_call_defaults_to_the_local_backend_with_the_policy_and_no_arguments() -> None:
    args = build_parser().parse_args(["call", "list"])
    assert (args.command, args.tool, args.args) == ("call", "list", "{}")
    assert args.backend == "local"
    assert args.no_policy is False
    assert args.plugin == []
    assert args.cwd is None
    assert args.json is False
    assert args.config == []


def test_common_options_are_accepted_by_every_subcommand() -> None:
    parser = build_parser()
    for command in (["tools"], ["call", "read", "{}"], ["session"], ["mcp"]):
        argv = [*command, "--backend", "memory", "--no-policy"]
        argv += ["--plugin", "audit", "--plugin", "trace", "--config", "read_limit=5"]
        args = parser.parse_args(argv)
        assert (args.backend, args.no_policy) == ("memory", True)
        assert args.plugin == ["audit", "trace"]
        assert args.config == ["read_limit=5"]


def test_the_commands_that_run_tools_take_the_workspace_options() -> None:
    parser = build_parser()
    for command in (["call", "read", "{}"], ["session"], ["mcp"]):
        argv = [*command, "--cwd", "/w", "--allow", "/a", "--allow", "/b"]
        argv += ["--allow-read", "/r", "--read-only", "--allow-anywhere"]
        args = parser.parse_args(argv)
        assert (args.cwd, args.allow, args.allow_read) == ("/w", ["/a", "/b"], ["/r"])
        assert (args.read_only, args.allow_anywhere) == (True, True)
    tools = parser.parse_args(["tools"])  # runs no tool: the defaults, no option
    assert (tools.cwd, tools.allow, tools.allow_read, tools.read_only) == (None, [], [], False)
    with pytest.raises(SystemExit):
        parser.parse_args(["tools", "--cwd", "/w"])


def options_of(*argv: str) -> WorkspaceOptions:
    return workspace_options(build_parser().parse_args(["session", *argv]))


def test_workspace_options_become_the_backend_keywords(tmp_path: Path) -> None:
    a, r = tmp_path / "a", tmp_path / "r"
    a.mkdir()
    r.mkdir()
    assert options_of() == WorkspaceOptions(roots=CWD_ROOT, read_only_roots=(), read_only=False)
    assert options_of("--allow", str(a), "--allow-read", str(r), "--read-only") == (
        WorkspaceOptions(roots=(".", str(a)), read_only_roots=(str(r),), read_only=True)
    )
    assert options_of("--allow-anywhere", "--read-only") == WorkspaceOptions(None, (), True)


def test_relative_roots_are_made_absolute_against_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lib").mkdir()
    monkeypatch.chdir(tmp_path)
    options = options_of("--allow", "lib", "--allow-read", ".")
    assert options.roots == (".", str(tmp_path / "lib"))  # "." is the backend's cwd
    assert options.read_only_roots == (str(tmp_path),)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cwd", "<missing>"], '--cwd "<missing>": does not exist'),
        (["--cwd", "<file>"], '--cwd "<file>": not a directory'),
        (["--allow", "<missing>"], '--allow "<missing>": does not exist'),
        (["--allow-read", "<file>"], '--allow-read "<file>": not a directory'),
        (
            ["--allow-anywhere", "--allow", "<dir>"],
            "--allow-anywhere turns containment off: it takes no --allow(-read)",
        ),
    ],
)
def test_a_workspace_directory_that_is_none_is_refused_by_name(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    (tmp_path / "file").write_text("x\n")
    names = {"<missing>": str(tmp_path / "nope"), "<file>": str(tmp_path / "file")}
    names["<dir>"] = str(tmp_path)
    argv = [names.get(a, a) for a in argv]
    for placeholder, path in names.items():
        message = message.replace(placeholder, path)
    with pytest.raises(WorkspaceError) as caught:
        options_of(*argv)
    assert str(caught.value) == message
    assert caught.value.line("session") == f"dsh-fs: {message}"


def test_another_backend_checks_its_directories_itself() -> None:
    # /w is a directory of the memory backend's namespace, not of this machine.
    assert options_of("--backend", "memory", "--cwd", "/w", "--allow", "/lib").roots == (
        ".",
        "/lib",
    )


def test_tools_format_defaults_to_raw() -> None:
    assert build_parser().parse_args(["tools"]).format == "raw"
    assert build_parser().parse_args(["tools", "--format", "mcp"]).format == "mcp"


def test_a_relative_cwd_is_made_absolute_and_no_cwd_leaves_the_backend_default() -> None:
    parser = build_parser()
    assert workspace(parser.parse_args(["session", "--cwd", "sub"])) == os.path.abspath("sub")
    assert workspace(parser.parse_args(["session"])) is None


# -- call arguments ---------------------------------------------------------------------------


def test_call_arguments_are_decoded_json_of_any_shape() -> None:
    assert parse_call_arguments('{"file_path": "a"}') == {"file_path": "a"}
    assert parse_call_arguments("[1]") == [1]  # the tool itself rejects a non-object


def test_call_arguments_that_are_not_json_are_a_usage_error() -> None:
    with pytest.raises(UsageError) as caught:
        parse_call_arguments("{file_path: a}")
    assert str(caught.value) == (
        "ARGS is not valid JSON: Expecting property name enclosed in double quotes "
        "(line 1 column 2)"
    )


# -- session requests -------------------------------------------------------------------------


def test_a_request_gives_its_tool_and_arguments() -> None:
    assert parse_request(b'{"tool": "read", "args": {"file_path": "a"}}\n') == (
        "read",
        {"file_path": "a"},
    )


def test_a_request_without_args_means_empty_arguments() -> None:
    assert parse_request(b'{"tool": "list"}') == ("list", {})


def test_request_args_are_passed_on_unchecked() -> None:
    assert parse_request(b'{"tool": "list", "args": null}') == ("list", None)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"\xff{}", "request is not valid UTF-8 text"),
        (b"nope", "request is not valid JSON: Expecting value (line 1 column 1)"),
        (
            b'{"tool": "list"',
            "request is not valid JSON: Expecting ',' delimiter (line 1 column 16)",
        ),
        (b'"list"', "request must be a JSON object"),
        (b"[]", "request must be a JSON object"),
        (b"{}", "tool is required"),
        (b'{"args": {}}', "tool is required"),
        (b'{"tool": null}', "tool must be a string"),
        (b'{"tool": ["read"]}', "tool must be a string"),
        (
            b'{"tool": "read", "argz": {}}',
            'unknown request key "argz" (expected "tool" and "args")',
        ),
    ],
)
def test_a_malformed_request_names_its_problem(line: bytes, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_request(line)
    assert str(caught.value) == message


def test_the_answer_to_a_malformed_request_has_the_keys_of_a_result() -> None:
    assert request_error("tool is required") == {
        "is_error": True,
        "text": "Error: tool is required",
        "value": None,
        "error": {
            "message": "tool is required",
            "name": "SessionRequestError",
            "code": "INVALID_REQUEST",
        },
        "meta": None,
    }


# -- output encoding --------------------------------------------------------------------------


def test_json_lines_keep_non_ascii_and_escape_lone_surrogates() -> None:
    line = json_line({"name": "café\udcff", "text": "a\nb"})
    assert line == '{"name": "café\\udcff", "text": "a\\nb"}'
    line.encode("utf-8")  # valid UTF-8, no surrogate left
    assert json.loads(line) == {"name": "café\udcff", "text": "a\nb"}


def test_plain_text_writes_undecodable_bytes_back_and_escapes_other_surrogates() -> None:
    assert encode_plain("é ok") == "é ok".encode()
    assert encode_plain("bad\udcff.txt") == b"bad\xff.txt"
    assert encode_plain("x\ud800y\udc80") == b"x\\ud800y\x80"


# -- plugins and config -----------------------------------------------------------------------


def test_the_policy_is_loaded_by_default_when_installed() -> None:
    args = build_parser().parse_args(["session"])
    assert plugin_names(args, ["policy"]) == ["policy"]


def test_no_policy_drops_only_the_default() -> None:
    parser = build_parser()
    assert plugin_names(parser.parse_args(["session", "--no-policy"]), ["policy"]) == []
    args = parser.parse_args(["session", "--no-policy", "--plugin", "policy"])
    assert plugin_names(args, ["policy"]) == ["policy"]


def test_named_plugins_follow_the_policy_once_each() -> None:
    args = build_parser().parse_args(["session", "--plugin", "audit", "--plugin", "policy"])
    assert plugin_names(args, ["audit", "policy"]) == ["policy", "audit"]


def test_an_unknown_plugin_is_a_usage_error_naming_the_installed_ones() -> None:
    args = build_parser().parse_args(["session", "--plugin", "audit"])
    with pytest.raises(UsageError) as caught:
        plugin_names(args, ["policy"])
    assert str(caught.value) == 'unknown plugin "audit" (installed dsh_fs.plugins: policy)'


def test_a_missing_policy_is_a_warning_not_an_error(caplog: pytest.LogCaptureFixture) -> None:
    args = build_parser().parse_args(["session"])
    with caplog.at_level(logging.WARNING):
        assert plugin_names(args, []) == []
    assert 'the "policy" plugin is not installed: writes and edits are unguarded' in caplog.text


def test_config_items_accept_snake_and_camel_case_keys() -> None:
    config = parse_config(["list_max_entries=5", "readLimit=7"])
    assert (config.list_max_entries, config.read_limit) == (5, 7)
    assert parse_config([]).read_limit == 2000


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("readLimit=0", "--config: tool-fs: readLimit must be a positive integer"),
        ("read_limit=true", "--config: tool-fs: read_limit must be a positive integer"),
        ("read_limit=many", "--config: tool-fs: read_limit must be a positive integer"),
        ("search_time_limit=0", "--config: tool-fs: search_time_limit must be a positive integer"),
        (
            "colour=3",
            '--config: unknown config key "colour" (keys: list_max_entries, read_limit, '
            "read_max_line_length, read_max_bytes, read_stream_min_size, glob_max_results, "
            "grep_max_matches, search_time_limit, editor_max_characters)",
        ),
        ("read_limit", '--config expects KEY=VALUE, got "read_limit"'),
    ],
)
def test_a_bad_config_item_is_a_usage_error(item: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_config([item])
    assert str(caught.value) == message
