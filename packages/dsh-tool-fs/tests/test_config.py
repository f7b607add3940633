"""ToolFsConfig: defaults, aliases and the positive-integer rule (SPEC 5.2)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any

import pytest
from dsh_tool_fs import ToolFsConfig
from dsh_tool_fs.config import ToolFsConfigError
from pydantic import BaseModel

ALIASES = {
    "list_max_entries": "listMaxEntries",
    "read_limit": "readLimit",
    "read_max_line_length": "readMaxLineLength",
    "read_max_bytes": "readMaxBytes",
    "read_stream_min_size": "readStreamMinSize",
    "glob_max_results": "globMaxResults",
    "grep_max_matches": "grepMaxMatches",
    "search_time_limit": "searchTimeLimit",
    "editor_max_characters": "editorMaxCharacters",
}


def test_defaults_are_those_of_the_spec() -> None:
    config = ToolFsConfig()
    assert config.list_max_entries == 200
    assert config.read_limit == 2000
    assert config.read_max_line_length == 2000
    assert config.read_max_bytes == 51200
    assert config.read_stream_min_size == 10485760
    assert config.glob_max_results == 100
    assert config.grep_max_matches == 100
    assert config.search_time_limit == 30


@pytest.mark.parametrize(("key", "alias"), ALIASES.items())
def test_keys_are_accepted_by_name_and_by_camel_case_alias(key: str, alias: str) -> None:
    assert getattr(ToolFsConfig.model_validate({key: 7}), key) == 7
    assert getattr(ToolFsConfig.model_validate({alias: 7}), key) == 7


def test_dump_by_alias_gives_the_camel_case_keys() -> None:
    assert ToolFsConfig().model_dump(by_alias=True) == {
        "listMaxEntries": 200,
        "readLimit": 2000,
        "readMaxLineLength": 2000,
        "readMaxBytes": 51200,
        "readStreamMinSize": 10485760,
        "globMaxResults": 100,
        "grepMaxMatches": 100,
        "searchTimeLimit": 30,
        "editorMaxCharacters": 16000,
    }


def test_an_integral_float_is_accepted_as_an_integer() -> None:
    config = ToolFsConfig.model_validate({"readLimit": 5.0})
    assert config.read_limit == 5
    assert type(config.read_limit) is int


@pytest.mark.parametrize(
    "bad", [True, False, 0, -1, 2.5, float("nan"), float("inf"), "3", None, [1]]
)
@pytest.mark.parametrize(("key", "alias"), ALIASES.items())
def test_a_value_that_is_not_a_positive_integer_names_the_alias(
    key: str, alias: str, bad: Any
) -> None:
    with pytest.raises(ValueError) as info:
        ToolFsConfig.model_validate({key: bad})
    assert f"tool-fs: {alias} must be a positive integer" in str(info.value)


def test_the_config_is_frozen() -> None:
    config = ToolFsConfig()
    with pytest.raises(FrozenInstanceError):
        config.read_limit = 3  # type: ignore[misc]


def test_the_config_is_a_pydantic_model() -> None:
    assert issubclass(ToolFsConfig, BaseModel)
    assert ToolFsConfig.aliases() == ALIASES
    assert ToolFsConfig(readLimit=9) == ToolFsConfig(read_limit=9)


def test_a_refusal_can_name_the_key_as_it_was_typed() -> None:
    with pytest.raises(ToolFsConfigError) as info:
        ToolFsConfig.model_validate({"read_limit": "abc"})
    assert str(info.value) == "tool-fs: readLimit must be a positive integer"
    assert info.value.as_typed() == "tool-fs: read_limit must be a positive integer"
    assert not info.value.unknown_key
    with pytest.raises(ToolFsConfigError) as unknown:
        ToolFsConfig.model_validate({"colour": 3})
    assert unknown.value.as_typed() == 'unknown config key "colour"'
    assert unknown.value.unknown_key


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(ValueError) as info:
        ToolFsConfig.model_validate({"readLimits": 3})
    assert str(info.value) == 'unknown config key "readLimits"'


@pytest.mark.parametrize(("key", "alias"), ALIASES.items())
def test_a_bad_keyword_argument_names_the_alias(key: str, alias: str) -> None:
    with pytest.raises(ValueError) as info:
        ToolFsConfig(**{key: 0})
    assert str(info.value) == f"tool-fs: {alias} must be a positive integer"


def test_a_value_up_to_the_largest_is_accepted_and_one_past_it_refused() -> None:
    assert ToolFsConfig(read_limit=2**31 - 1).read_limit == 2147483647
    with pytest.raises(ToolFsConfigError) as caught:
        ToolFsConfig(read_limit=2**31)
    assert str(caught.value) == "tool-fs: readLimit must be at most 2147483647"
