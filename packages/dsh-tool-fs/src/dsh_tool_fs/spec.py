"""``ToolSpec``: everything about one tool, in one place.

A tool is its name and title, its argument model (a pydantic model whose
fields give the JSON Schema and the validation, :mod:`dsh_tool_fs.arguments`), its
description, its prompt section, its MCP annotations, whether it may run
concurrently, its body (the seam calls, returning a canonical outcome) and
its renderer (outcome to model text, canonical value and diff metadata).
The host, the definitions, the wire-format converters, the CLI and the MCP
server all read the tools from their specs (:data:`dsh_tool_fs.tools.TOOLS`);
``docs/extending/adding-a-tool.md`` shows how to add one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

from .arguments import ArgumentSchema, ToolArguments
from .config import ToolFsConfig
from .definitions import PromptSection, ToolAnnotations, ToolDefinition
from .execution import Execution

__all__ = ["ToolOutput", "ToolSpec"]

A = TypeVar("A", bound=ToolArguments)
O = TypeVar("O")  # noqa: E741 - the outcome type, next to A for arguments


class ToolOutput(NamedTuple):
    """What a renderer makes of a successful call."""

    text: str
    """The model projection (``ToolResult.text``)."""
    value: dict[str, Any]
    """The canonical value (JSON-serializable)."""
    meta: dict[str, Any] | None = None
    """Diff metadata (write and edit), else ``None``."""


@dataclass(frozen=True, slots=True)
class ToolSpec(Generic[A, O]):
    """One tool: what the model is told about it, how its arguments are checked, what it does.

    ``arguments`` is the tool's argument model, a
    :class:`~dsh_tool_fs.arguments.ToolArguments` subclass: its fields give
    the JSON Schema and the validation, and a framework can take it as it is
    (``ToolFs.argument_model``). ``description`` is a :meth:`str.format`
    template over the config's fields (``"up to {list_max_entries}
    entries"``). ``body``
    runs the call through an :class:`~dsh_tool_fs.execution.Execution` and
    returns the outcome; ``render`` turns arguments and outcome into the
    :class:`ToolOutput`. Both may raise :class:`dsh_fs.FsError`, which the
    host reports as an error result.
    """

    name: str
    title: str
    arguments: type[A]
    description: str
    prompt: PromptSection
    annotations: ToolAnnotations
    concurrency_safe: bool
    body: Callable[[Execution, A], Awaitable[O]]
    render: Callable[[A, O], ToolOutput]
    builtins: Mapping[str, Mapping[str, Any] | Callable[[ToolFsConfig], Mapping[str, Any]]] = field(
        default_factory=dict
    )
    """Per wire format, a provider's built-in tool that may stand for this one
    (:attr:`ToolDefinition.builtins`), or a function of the config that builds it
    (Anthropic's text editor carries ``max_characters``)."""

    def argument_schema(self, config: ToolFsConfig) -> ArgumentSchema[A]:
        """The JSON Schema and the validation of this tool's arguments under ``config``."""
        return ArgumentSchema(self.arguments, config)

    def definition(self, config: ToolFsConfig) -> ToolDefinition:
        """What the model is told about this tool under ``config``."""
        return ToolDefinition(
            name=self.name,
            description=self.description.format(**config.model_dump()),
            parameters=self.argument_schema(config).json_schema(),
            concurrency_safe=self.concurrency_safe,
            title=self.title,
            annotations=self.annotations,
            builtins={
                fmt: form(config) if callable(form) else form for fmt, form in self.builtins.items()
            },
        )
