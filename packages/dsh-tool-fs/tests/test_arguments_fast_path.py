"""The plain-arguments fast path gives exactly what the two stages give, or defers to them."""

from __future__ import annotations

from typing import Any

import pytest
from dsh_tool_fs import ToolFsConfig
from dsh_tool_fs.arguments import _VALUE_RULES as VALUE_RULES
from dsh_tool_fs.arguments import (
    PARAMETERS,
    PLAIN_ARGUMENTS,
    ToolArgumentError,
    check_shape,
    validate_arguments,
)
from hypothesis import given, settings
from hypothesis import strategies as st

CONFIG = ToolFsConfig()
SMALL = ToolFsConfig(read_limit=5)
TOOLS = list(PARAMETERS)


class Text(str):
    """A ``str`` subclass: valid for the two stages, never taken by the fast path."""


def two_stages(tool: str, args: Any, config: ToolFsConfig) -> object:
    """What the two stages alone give: the typed arguments, or the exact error message."""
    try:
        return VALUE_RULES[tool](check_shape(tool, args), config)
    except ToolArgumentError as exc:
        return ("error", exc.message)


def validated(tool: str, args: Any, config: ToolFsConfig) -> object:
    try:
        return validate_arguments(tool, args, config)
    except ToolArgumentError as exc:
        return ("error", exc.message)


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=2003),
    st.sampled_from([1.0, 2.0, 2.5, float("nan"), float("inf"), -1.0]),
    st.sampled_from(["", " ", "\t\n", "a.txt", "x", "y", "dir/f", "α"]),
    st.text(max_size=4),
    st.builds(Text, st.sampled_from(["a", "", " "])),
    st.lists(st.integers(), max_size=1),
)
names = st.one_of(
    st.sampled_from(
        [
            *("file_path", "offset", "limit", "path", "content"),
            *("old_string", "new_string", "replace_all", "filePath", "zeta"),
        ]
    ),
    st.integers(min_value=0, max_value=1),
)
arguments = st.dictionaries(names, values, max_size=5)


@settings(max_examples=1500)
@given(tool=st.sampled_from(TOOLS), args=arguments, small=st.booleans())
def test_validation_with_the_fast_path_equals_the_two_stages(
    tool: str, args: dict[Any, Any], small: bool
) -> None:
    config = SMALL if small else CONFIG
    assert validated(tool, args, config) == two_stages(tool, args, config)


@settings(max_examples=1500)
@given(tool=st.sampled_from(TOOLS), args=arguments, small=st.booleans())
def test_the_fast_path_only_ever_accepts_and_then_agrees(
    tool: str, args: dict[Any, Any], small: bool
) -> None:
    config = SMALL if small else CONFIG
    plain = PLAIN_ARGUMENTS[tool](args, config)
    if plain is not None:
        expected = two_stages(tool, args, config)
        assert plain == expected
        assert type(plain) is type(expected)
        assert repr(plain) == repr(expected)
        for name in type(plain).__slots__:
            assert type(getattr(plain, name)) is type(getattr(expected, name))


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read", {"file_path": "a.txt"}),
        ("read", {"file_path": "a.txt", "offset": 3, "limit": 2000}),
        ("read", {"file_path": "a", "offset": None, "limit": None}),
        ("list", {}),
        ("list", {"path": "d", "offset": 2}),
        ("write", {"file_path": "a", "content": ""}),
        ("edit", {"file_path": "a", "old_string": "x", "new_string": "y"}),
        ("edit", {"file_path": "a", "old_string": "x", "new_string": "", "replace_all": True}),
    ],
)
def test_plain_valid_arguments_take_the_fast_path(tool: str, args: dict[str, Any]) -> None:
    plain = PLAIN_ARGUMENTS[tool](args, CONFIG)
    assert plain is not None
    assert plain == two_stages(tool, args, CONFIG)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read", {"file_path": "a", "offset": 2.0}),  # an integral float is converted
        ("read", {"file_path": Text("a")}),
        ("read", {"file_path": "a", "limit": True}),
        ("read", {"file_path": " "}),
        ("read", {"file_path": "a", "limit": 2001}),
        ("read", {"file_path": "a", "zeta": 1}),
        ("list", {"path": ""}),
        ("edit", {"file_path": "a", "old_string": "x", "new_string": "x"}),
        ("edit", {"file_path": "a", "old_string": "", "new_string": "x"}),
        ("edit", {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": 1}),
        ("write", {"file_path": "a"}),
    ],
)
def test_anything_unusual_is_left_to_the_two_stages(tool: str, args: dict[str, Any]) -> None:
    assert PLAIN_ARGUMENTS[tool](args, CONFIG) is None
