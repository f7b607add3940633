"""Arbitrary JSON gives exactly the message the argument rules imply.

The oracle below is written from the rules as the tools' reference states
them (shape and types first, then the value rules, each in parameter order),
not from the pydantic models: the property is that the two agree on every
input, error or not, and on the typed values of a valid call.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from dsh_tool_fs import ToolFsConfig
from dsh_tool_fs.arguments import ToolArgumentError
from dsh_tool_fs.tools import TOOLS
from hypothesis import given
from hypothesis import strategies as st

# name -> (JSON type, required, default); in parameter order
PARAMETERS: dict[str, list[tuple[str, str, bool, Any]]] = {
    "list": [("path", "string", False, "."), ("offset", "integer", False, 1)],
    "read": [
        ("file_path", "string", True, None),
        ("offset", "integer", False, 1),
        ("limit", "integer", False, "read_limit"),
    ],
    "write": [("file_path", "string", True, None), ("content", "string", True, None)],
    "edit": [
        ("file_path", "string", True, None),
        ("old_string", "string", True, None),
        ("new_string", "string", True, None),
        ("replace_all", "boolean", False, False),
    ],
}


def _typed(kind: str, value: Any) -> tuple[bool, Any]:
    """Whether ``value`` is of JSON type ``kind``, and its Python value."""
    if kind == "string":
        return isinstance(value, str), value
    if kind == "boolean":
        return isinstance(value, bool), value
    if isinstance(value, bool):
        return False, value
    if isinstance(value, float):
        ok = math.isfinite(value) and value.is_integer()
        return ok, int(value) if ok else value
    return isinstance(value, int), value


def _value_rule(tool: str, name: str, value: Any, config: ToolFsConfig) -> str | None:
    if name == "file_path":
        if not value.strip():
            return "file_path must be a non-empty string"
        if value.endswith("/"):
            return 'file_path must not end with "/"'
    if name == "path" and not value.strip():
        return "path must be a non-empty string when given"
    if name in ("offset", "limit") and value < 1:
        return f"{name} must be a positive integer"
    if name == "limit" and value > config.read_limit:
        return f"limit must be less than or equal to {config.read_limit}"
    if name == "old_string" and value == "":
        return "old_string must be a non-empty string"
    return None


def oracle(tool: str, args: Any, config: ToolFsConfig) -> str | dict[str, Any]:
    """The message the rules give for ``args``, or the typed values of a valid call."""
    if not isinstance(args, dict):
        return "arguments must be a JSON object"
    parameters = PARAMETERS[tool]
    names = [name for name, *_ in parameters]
    for key in args:
        if key not in names:
            return f'unknown argument "{key}"'
    for name, _, required, _ in parameters:
        if required and name not in args:
            return f"{name} is required"
    values: dict[str, Any] = {}
    for name, kind, required, default in parameters:
        if args.get(name) is None and not required:
            values[name] = getattr(config, default) if default == "read_limit" else default
            continue
        ok, value = _typed(kind, args[name])
        if not ok:
            article = "an" if kind == "integer" else "a"
            return f"{name} must be {article} {kind}"
        values[name] = value
    for name, *_ in parameters:
        if name in args and args[name] is not None:
            broken = _value_rule(tool, name, values[name], config)
            if broken is not None:
                return broken
    if tool == "edit" and values["old_string"] == values["new_string"]:
        return "old_string and new_string must differ"
    return values


SPECS = {spec.name: spec for spec in TOOLS}
KEYS = sorted({name for parameters in PARAMETERS.values() for name, *_ in parameters})

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, 1, 2, 5, 6, -1, 0.0, 2.0, 6.0, -1.0, 1.5, 1e300])
    | st.floats()
    | st.sampled_from(["", " ", "a", "a/", "/", "\t", "x"])
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
configs = st.sampled_from([ToolFsConfig(), ToolFsConfig(read_limit=5)])


@given(tool=st.sampled_from(list(PARAMETERS)), args=arguments, config=configs)
def test_arbitrary_json_gives_exactly_the_message_the_rules_imply(
    tool: str, args: Any, config: ToolFsConfig
) -> None:
    expected = oracle(tool, args, config)
    schema = SPECS[tool].argument_schema(config)
    if isinstance(expected, str):
        with pytest.raises(ToolArgumentError) as info:
            schema.validate(args)
        assert str(info.value) == expected
    else:
        parsed = schema.validate(args)
        assert parsed.model_dump() == expected
        assert all(type(parsed.model_dump()[k]) is type(v) for k, v in expected.items())


@pytest.mark.parametrize("tool", list(PARAMETERS))
def test_the_schema_names_exactly_the_parameters_the_rules_know(tool: str) -> None:
    schema = SPECS[tool].argument_schema(ToolFsConfig()).json_schema()
    parameters = PARAMETERS[tool]
    assert list(schema["properties"]) == [name for name, *_ in parameters]
    assert schema["required"] == [name for name, _, required, _ in parameters if required]
    assert {k: v["type"] for k, v in schema["properties"].items()} == {
        name: kind for name, kind, *_ in parameters
    }
