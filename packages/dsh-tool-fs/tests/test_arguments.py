"""Argument validation: exact messages, in the order of SPEC 5.4."""

from __future__ import annotations

import re
from typing import Any

import pytest
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import ToolFs, ToolFsConfig
from dsh_tool_fs.arguments import ToolArgumentError
from dsh_tool_fs.tools import TOOLS, EditArgs, ListArgs, ReadArgs, WriteArgs
from hypothesis import given
from hypothesis import strategies as st

CONFIG = ToolFsConfig()
SPECS = {spec.name: spec for spec in TOOLS}


def validate_arguments(tool: str, args: Any, config: ToolFsConfig) -> object:
    """What the host does with a call's arguments: the tool's one validator."""
    return SPECS[tool].argument_schema(config).validate(args)


def message(tool: str, args: Any, config: ToolFsConfig = CONFIG) -> str:
    with pytest.raises(ToolArgumentError) as info:
        validate_arguments(tool, args, config)
    return str(info.value)


# -- stage one: shape and types ------------------------------------------------


@pytest.mark.parametrize("args", [None, [], "x", 3, 2.0, True, [["file_path", "a"]]])
@pytest.mark.parametrize("tool", ["list", "read", "write", "edit"])
def test_arguments_that_are_not_an_object(tool: str, args: Any) -> None:
    assert message(tool, args) == "arguments must be a JSON object"


def test_the_first_unknown_key_in_argument_order_is_reported() -> None:
    assert message("read", {"zeta": 1, "file_path": "a", "alpha": 2}) == 'unknown argument "zeta"'
    assert message("read", {"file_path": "a", "alpha": 2, "zeta": 1}) == 'unknown argument "alpha"'


def test_unknown_key_comes_before_missing_and_wrong_types() -> None:
    assert message("edit", {"file_path": 3, "filePath": "a"}) == 'unknown argument "filePath"'


def test_camel_case_names_are_unknown() -> None:
    assert message("edit", {"file_path": "a", "oldString": "x"}) == 'unknown argument "oldString"'


def test_missing_required_keys_in_parameter_order() -> None:
    assert message("read", {}) == "file_path is required"
    assert message("write", {}) == "file_path is required"
    assert message("write", {"file_path": "a"}) == "content is required"
    assert message("edit", {"new_string": "y", "file_path": "a"}) == "old_string is required"
    assert message("edit", {"file_path": "a", "old_string": "x"}) == "new_string is required"


def test_missing_comes_before_wrong_type() -> None:
    assert message("write", {"file_path": 3}) == "content is required"


def test_wrong_types_in_parameter_order() -> None:
    assert message("read", {"limit": "5", "offset": "1", "file_path": "a"}) == (
        "offset must be an integer"
    )
    assert message("read", {"file_path": 1}) == "file_path must be a string"
    assert message("list", {"path": 1}) == "path must be a string"
    assert message(
        "edit", {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": 1}
    ) == ("replace_all must be a boolean")
    assert message("edit", {"file_path": "a", "old_string": 1, "new_string": 2}) == (
        "old_string must be a string"
    )


@pytest.mark.parametrize(
    "bad", [True, False, 1.5, float("nan"), float("inf"), float("-inf"), "2", [2]]
)
def test_an_integer_parameter_rejects_booleans_fractions_and_non_finite_floats(bad: Any) -> None:
    assert message("read", {"file_path": "a", "limit": bad}) == "limit must be an integer"
    assert message("list", {"offset": bad}) == "offset must be an integer"


def test_an_integral_float_is_accepted_as_an_integer() -> None:
    args = validate_arguments("read", {"file_path": "a", "offset": 2.0, "limit": 3.0}, CONFIG)
    assert args == ReadArgs(file_path="a", offset=2, limit=3)
    assert isinstance(args, ReadArgs)
    assert type(args.offset) is int


def test_null_for_an_optional_key_means_absent() -> None:
    assert validate_arguments("list", {"path": None, "offset": None}, CONFIG) == ListArgs(
        path=".", offset=1
    )
    assert validate_arguments(
        "read", {"file_path": "a", "offset": None, "limit": None}, CONFIG
    ) == ReadArgs(file_path="a", offset=1, limit=2000)
    assert validate_arguments(
        "edit",
        {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": None},
        CONFIG,
    ) == EditArgs(file_path="a", old_string="x", new_string="y", replace_all=False)


def test_null_for_a_required_key_is_a_wrong_type() -> None:
    assert message("read", {"file_path": None}) == "file_path must be a string"
    assert message("write", {"file_path": "a", "content": None}) == "content must be a string"
    assert message("edit", {"file_path": "a", "old_string": "x", "new_string": None}) == (
        "new_string must be a string"
    )


def test_type_errors_come_before_value_rules() -> None:
    assert message("read", {"file_path": "", "offset": "x"}) == "offset must be an integer"
    assert message("edit", {"file_path": "a", "old_string": "", "new_string": 3}) == (
        "new_string must be a string"
    )


# -- stage two: values ---------------------------------------------------------


@pytest.mark.parametrize("path", ["", " ", "\t\n"])
def test_blank_file_path(path: str) -> None:
    assert message("read", {"file_path": path}) == "file_path must be a non-empty string"
    assert message("write", {"file_path": path, "content": ""}) == (
        "file_path must be a non-empty string"
    )
    assert message("edit", {"file_path": path, "old_string": "a", "new_string": "b"}) == (
        "file_path must be a non-empty string"
    )


@pytest.mark.parametrize("path", ["", "  "])
def test_blank_list_path(path: str) -> None:
    assert message("list", {"path": path}) == "path must be a non-empty string when given"


@pytest.mark.parametrize("offset", [0, -1, -2.0])
def test_offset_must_be_positive(offset: Any) -> None:
    assert message("list", {"offset": offset}) == "offset must be a positive integer"
    assert message("read", {"file_path": "a", "offset": offset}) == (
        "offset must be a positive integer"
    )


@pytest.mark.parametrize("limit", [0, -5])
def test_limit_must_be_positive(limit: int) -> None:
    assert message("read", {"file_path": "a", "limit": limit}) == "limit must be a positive integer"


def test_limit_must_not_exceed_the_read_limit() -> None:
    assert message("read", {"file_path": "a", "limit": 2001}) == (
        "limit must be less than or equal to 2000"
    )
    small = ToolFsConfig(read_limit=10)
    assert message("read", {"file_path": "a", "limit": 11}, small) == (
        "limit must be less than or equal to 10"
    )
    assert validate_arguments("read", {"file_path": "a", "limit": 10}, small) == ReadArgs(
        file_path="a", offset=1, limit=10
    )


def test_value_rules_in_parameter_order() -> None:
    assert message("read", {"file_path": "", "offset": 0, "limit": 0}) == (
        "file_path must be a non-empty string"
    )
    assert message("read", {"file_path": "a", "offset": 0, "limit": 0}) == (
        "offset must be a positive integer"
    )


def test_empty_old_string_is_rejected() -> None:
    assert message("edit", {"file_path": "a", "old_string": "", "new_string": "b"}) == (
        "old_string must be a non-empty string"
    )
    assert message("edit", {"file_path": "a", "old_string": "", "new_string": ""}) == (
        "old_string must be a non-empty string"
    )


def test_whitespace_old_string_is_a_real_old_string() -> None:
    args = validate_arguments(
        "edit", {"file_path": "a", "old_string": " ", "new_string": ""}, CONFIG
    )
    assert args == EditArgs(file_path="a", old_string=" ", new_string="", replace_all=False)


def test_old_and_new_string_must_differ() -> None:
    assert message("edit", {"file_path": "a", "old_string": "x", "new_string": "x"}) == (
        "old_string and new_string must differ"
    )


def test_valid_arguments_become_typed_objects() -> None:
    assert validate_arguments("list", {}, CONFIG) == ListArgs(path=".", offset=1)
    assert validate_arguments("list", {"path": "src", "offset": 3}, CONFIG) == ListArgs(
        path="src", offset=3
    )
    assert validate_arguments("read", {"file_path": "a"}, CONFIG) == ReadArgs(
        file_path="a", offset=1, limit=2000
    )
    assert validate_arguments("write", {"file_path": "a", "content": ""}, CONFIG) == WriteArgs(
        file_path="a", content=""
    )
    assert validate_arguments(
        "edit",
        {"file_path": "a", "old_string": "x", "new_string": "", "replace_all": True},
        CONFIG,
    ) == EditArgs(file_path="a", old_string="x", new_string="", replace_all=True)


@pytest.mark.parametrize("path", ["/", "src/", "a.txt/", " /", "//"])
def test_a_file_path_that_ends_with_a_slash_names_a_directory(path: str) -> None:
    assert message("read", {"file_path": path}) == 'file_path must not end with "/"'
    assert message("write", {"file_path": path, "content": ""}) == (
        'file_path must not end with "/"'
    )
    assert message("edit", {"file_path": path, "old_string": "a", "new_string": "b"}) == (
        'file_path must not end with "/"'
    )


def test_a_slash_inside_or_before_trailing_space_is_a_file_path() -> None:
    assert validate_arguments("read", {"file_path": "src/a.txt"}, CONFIG) == ReadArgs(
        file_path="src/a.txt"
    )
    assert validate_arguments("read", {"file_path": "a/ "}, CONFIG) == ReadArgs(file_path="a/ ")


def test_the_slash_rule_is_a_value_rule_of_file_path_in_parameter_order() -> None:
    # Blank and ending in "/" exclude each other ("/" is not whitespace): each is file_path's
    # value rule, after every type error and before the value rules of later parameters.
    assert message("read", {"file_path": "a/", "offset": "x"}) == "offset must be an integer"
    assert message("read", {"file_path": "a/", "offset": 0}) == 'file_path must not end with "/"'
    assert message("edit", {"file_path": "a/", "old_string": "", "new_string": "b"}) == (
        'file_path must not end with "/"'
    )
    assert message("read", {"file_path": " "}) == "file_path must be a non-empty string"


def test_a_list_path_may_end_with_a_slash() -> None:
    assert validate_arguments("list", {"path": "src/"}, CONFIG) == ListArgs(path="src/")


@pytest.mark.anyio
async def test_a_trailing_slash_is_refused_before_any_filesystem_call() -> None:
    fs = MemoryFileSystem(cwd="/w", files={"/w/a.txt": "x\n"})
    toolfs = ToolFs(fs)
    for tool, args in [
        ("read", {"file_path": "/w/"}),
        ("write", {"file_path": "new/", "content": "x"}),
        ("edit", {"file_path": "a.txt/", "old_string": "x", "new_string": "y"}),
    ]:
        result = await toolfs.execute(tool, args)
        assert result.text == 'Error: file_path must not end with "/"'
        assert result.error is not None
        assert (result.error.name, result.error.code) == ("ToolArgumentError", "INVALID_ARGUMENTS")
    assert await fs.read_text(await fs.resolve("a.txt")) == "x\n"
    assert await fs.stat(await fs.resolve("new")) is None


# -- property: arbitrary JSON never crashes validation -------------------------

KEYS = [
    "path",
    "offset",
    "file_path",
    "limit",
    "content",
    "old_string",
    "new_string",
    "replace_all",
]
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=5)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
arguments = json_values | st.dictionaries(
    st.sampled_from(KEYS) | st.text(max_size=4), json_values, max_size=6
)

MESSAGES = [
    r"arguments must be a JSON object",
    r'unknown argument ".*"',
    r"(path|offset|file_path|limit|content|old_string|new_string|replace_all) is required",
    r"\w+ must be a string",
    r"\w+ must be an integer",
    r"\w+ must be a boolean",
    r"file_path must be a non-empty string",
    r"path must be a non-empty string when given",
    r"offset must be a positive integer",
    r"limit must be a positive integer",
    r"limit must be less than or equal to 2000",
    r"old_string must be a non-empty string",
    r"old_string and new_string must differ",
]


@given(tool=st.sampled_from(["list", "read", "write", "edit"]), args=arguments)
def test_arbitrary_json_gives_typed_arguments_or_one_exact_message(tool: str, args: Any) -> None:
    try:
        parsed = validate_arguments(tool, args, CONFIG)
    except ToolArgumentError as exc:
        assert any(re.fullmatch(pattern, str(exc), re.DOTALL) for pattern in MESSAGES), str(exc)
    else:
        assert isinstance(parsed, ListArgs | ReadArgs | WriteArgs | EditArgs)
