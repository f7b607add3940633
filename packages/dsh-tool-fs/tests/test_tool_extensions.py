"""What a tool distribution may declare beyond the four tools' needs: a built-in form that
depends on the config, optional arguments without a default value, choices and arrays
of integers in the argument model, and host tool options that every call carries."""

from __future__ import annotations

from typing import Any, Literal

import anyio
import pytest
from dsh_fs_memory import MemoryFileSystem
from dsh_tool_fs import (
    Execution,
    Integer,
    PromptSection,
    ToolAnnotations,
    ToolArgumentError,
    ToolArguments,
    ToolFs,
    ToolFsConfig,
    ToolOutput,
    ToolSpec,
    to_anthropic_tools,
    to_openai_responses_tools,
    to_tools,
)
from dsh_tool_fs.arguments import ArgumentSchema
from dsh_tool_fs.cli import build_parser
from dsh_tool_fs.cli.stack import tool_options
from pydantic import Field


class PickArgs(ToolArguments):
    command: Literal["one", "two"] = Field(description="Which.")
    lines: list[Integer] | None = Field(default=None, description="Some lines.")
    note: str | None = Field(default=None, description="A note.")


async def _options(ex: Execution, args: PickArgs) -> dict[str, Any]:
    return dict(ex.options)


PICK = ToolSpec(
    name="pick",
    title="Pick",
    arguments=PickArgs,
    description="Pick one.",
    prompt=PromptSection("tool:pick", 200, "Pick."),
    annotations=ToolAnnotations(read_only=True),
    concurrency_safe=True,
    body=_options,
    render=lambda args, options: ToolOutput("picked", options),
    builtins={
        "anthropic": lambda config: {"type": "pick_1", "name": "pick", "n": config.read_limit},
        "openai-responses": {"type": "pick"},
    },
)


def definitions(**config: Any) -> list[Any]:
    return ToolFs(MemoryFileSystem(), config=config or None, tools=(PICK,)).definitions


def test_a_built_in_form_may_be_built_from_the_config() -> None:
    assert to_anthropic_tools(definitions(read_limit=7)) == [
        {"type": "pick_1", "name": "pick", "n": 7}
    ]


def test_anthropic_offers_built_ins_by_default_and_functions_when_asked() -> None:
    assert to_tools(definitions(), "anthropic")[0]["type"] == "pick_1"
    assert list(to_tools(definitions(), "anthropic", builtins=False)[0]) == [
        "name",
        "description",
        "input_schema",
    ]


def test_openai_responses_offers_functions_by_default_and_built_ins_when_asked() -> None:
    assert to_tools(definitions(), "openai-responses")[0]["type"] == "function"
    assert to_openai_responses_tools(definitions(), builtins=True) == [{"type": "pick"}]


def test_the_tools_command_takes_builtins_and_no_builtins() -> None:
    parser = build_parser()
    assert parser.parse_args(["tools"]).builtins is None
    assert parser.parse_args(["tools", "--builtins"]).builtins is True
    assert parser.parse_args(["tools", "--no-builtins"]).builtins is False


def test_optional_choices_and_arrays_show_as_their_types() -> None:
    assert ArgumentSchema(PickArgs).json_schema() == {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "Which.", "enum": ["one", "two"]},
            "lines": {"type": "array", "description": "Some lines.", "items": {"type": "integer"}},
            "note": {"type": "string", "description": "A note."},
        },
        "required": ["command"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"command": "three"}, "command must be one of: one, two"),
        ({"command": "one", "lines": "1"}, "lines must be an array of integers"),
        ({"command": "one", "lines": [1, True]}, "lines must be an array of integers"),
        ({"command": "one", "note": 3}, "note must be a string"),
    ],
)
def test_their_wrong_values_have_messages_in_the_tools_style(
    args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        ArgumentSchema(PickArgs, ToolFsConfig()).validate(args)
    assert caught.value.message == message


def test_null_for_an_optional_argument_means_absent() -> None:
    parsed = ArgumentSchema(PickArgs).validate({"command": "one", "lines": None, "note": None})
    assert (parsed.lines, parsed.note) == (None, None)


def test_tool_options_reach_every_call() -> None:
    toolfs = ToolFs(MemoryFileSystem(), tools=(PICK,), tool_options={"memory_dir": "/m"})
    result = anyio.run(toolfs.execute, "pick", {"command": "one"})
    assert result.value == {"memory_dir": "/m"}


def test_memory_dir_on_the_command_line_is_a_tool_option() -> None:
    args = build_parser().parse_args(["session", "--memory-dir", "/abs/notes"])
    assert tool_options(args) == {"memory_dir": "/abs/notes"}
    assert tool_options(build_parser().parse_args(["session"])) == {}
