"""Tool arguments: declared once, as a typed record, and turned into schema and validator.

A tool's arguments are a frozen dataclass whose fields are annotated with an
:class:`Argument`::

    @dataclass(frozen=True, slots=True)
    class ReadArgs:
        file_path: Annotated[str, Argument("File to read.", not_blank=True)]
        offset: Annotated[int, Argument("First line.", default=1, minimum=1)]

From that one declaration :class:`ArgumentSchema` derives, for one
:class:`~dsh_tool_fs.ToolFsConfig`, both the JSON Schema the model sees and
the validation of SPEC 5.4 (shape and types first, then the value rules),
which builds the record. The messages are ours, never a library's, because
the model reads them; each rule is written once, here.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Generic, Literal, TypeAlias, TypeVar

from .config import ToolFsConfig

__all__ = [
    "Argument",
    "ArgumentCheck",
    "ArgumentSchema",
    "Kind",
    "Parameter",
    "Setting",
    "ToolArgumentError",
]

Kind: TypeAlias = Literal["string", "integer", "boolean"]
"""The JSON type of a parameter."""

A = TypeVar("A")

_KINDS: dict[object, Kind] = {str: "string", int: "integer", bool: "boolean"}


class ToolArgumentError(ValueError):
    """Arguments that do not fit a tool's schema. ``str(err)`` is the model-facing message."""

    code = "INVALID_ARGUMENTS"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class Setting:
    """A limit taken from the config when the schema is built: ``Setting("read_limit")``."""

    key: str

    def of(self, config: ToolFsConfig) -> int:
        value: int = getattr(config, self.key)
        return value


class _Required:
    """The marker of an argument without a default."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True, slots=True)
class Argument:
    """How one field of an arguments record is shown to the model and checked.

    ``description`` is a :meth:`str.format` template over the config's fields
    (``"at most {read_limit}"``). Without a ``default`` the argument is
    required. ``minimum`` and ``maximum`` bound an integer (a :class:`Setting`
    reads the bound from the config) and appear in the schema; ``not_blank``
    refuses an empty or whitespace-only string, ``not_empty`` an empty one.
    ``schema_default=False`` keeps the default out of the schema when the
    description states it better (``path`` defaults to ``"."``, which the
    model knows as "the session workspace").
    """

    description: str
    default: Any = REQUIRED
    minimum: int | Setting | None = None
    maximum: int | Setting | None = None
    not_blank: bool = False
    not_empty: bool = False
    schema_default: bool = True


@dataclass(frozen=True, slots=True)
class ArgumentCheck:
    """A rule over several arguments of a built record, checked after the field rules."""

    message: str
    holds: Callable[[Any], bool]


def _bound(value: int | Setting | None, config: ToolFsConfig) -> int | None:
    return value.of(config) if isinstance(value, Setting) else value


@dataclass(frozen=True, slots=True)
class Parameter:
    """One argument resolved for a config: what the schema shows and the validator checks."""

    name: str
    kind: Kind
    description: str
    required: bool
    default: Any
    minimum: int | None
    maximum: int | None
    not_blank: bool
    not_empty: bool
    schema_default: bool

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": self.kind, "description": self.description}
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        if not self.required and self.schema_default:
            schema["default"] = self.default
        return schema

    def typed(self, value: Any) -> Any:
        """``value`` as this parameter's Python type; raises the wrong-type message.

        A JSON boolean is never an integer; an integral float is one; NaN
        and the infinities are not.
        """
        if self.kind == "string":
            ok = isinstance(value, str)
        elif self.kind == "boolean":
            ok = isinstance(value, bool)
        elif isinstance(value, bool):
            ok = False
        elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)
        else:
            ok = isinstance(value, int)
        if not ok:
            article = "an" if self.kind == "integer" else "a"
            raise ToolArgumentError(f"{self.name} must be {article} {self.kind}")
        return value

    def check_value(self, value: Any) -> None:
        """The value rules of a given (not defaulted) value, with their exact messages."""
        if self.not_blank and not value.strip():
            when = "" if self.required else " when given"
            raise ToolArgumentError(f"{self.name} must be a non-empty string{when}")
        if self.not_empty and value == "":
            raise ToolArgumentError(f"{self.name} must be a non-empty string")
        if self.minimum is not None and value < self.minimum:
            if self.minimum == 1:
                raise ToolArgumentError(f"{self.name} must be a positive integer")
            raise ToolArgumentError(f"{self.name} must be greater than or equal to {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise ToolArgumentError(f"{self.name} must be less than or equal to {self.maximum}")


class ArgumentSchema(Generic[A]):
    """The parameters of one arguments record under one config: JSON Schema and validation."""

    def __init__(
        self,
        record: type[A],
        config: ToolFsConfig,
        checks: tuple[ArgumentCheck, ...] = (),
    ) -> None:
        self.record = record
        self.checks = checks
        self.parameters = tuple(_parameters(record, config))
        self._names = frozenset(p.name for p in self.parameters)

    def json_schema(self) -> dict[str, Any]:
        """A closed JSON Schema object: ``type``, ``properties``, ``required``, no extras."""
        return {
            "type": "object",
            "properties": {p.name: p.json_schema() for p in self.parameters},
            "required": [p.name for p in self.parameters if p.required],
            "additionalProperties": False,
        }

    def validate(self, args: Any) -> A:
        """Decoded JSON in, the typed record out; else :class:`ToolArgumentError` (SPEC 5.4).

        Reported first: not an object, the first unknown key in the arguments'
        order, the first missing required key and the first wrong type (both
        in parameter order), then the value rules in parameter order, then
        the checks. ``null`` for an optional key means absent; for a required
        key it is a wrong type.
        """
        if not isinstance(args, Mapping):
            raise ToolArgumentError("arguments must be a JSON object")
        for key in args:
            if key not in self._names:
                raise ToolArgumentError(f'unknown argument "{key}"')
        for parameter in self.parameters:
            if parameter.required and parameter.name not in args:
                raise ToolArgumentError(f"{parameter.name} is required")
        given: dict[str, Any] = {}
        for parameter in self.parameters:
            value = args.get(parameter.name)
            if value is None and not parameter.required:
                continue
            given[parameter.name] = parameter.typed(value)
        values: dict[str, Any] = {}
        for parameter in self.parameters:
            if parameter.name in given:
                parameter.check_value(given[parameter.name])
                values[parameter.name] = given[parameter.name]
            else:
                values[parameter.name] = parameter.default
        record = self.record(**values)
        for check in self.checks:
            if not check.holds(record):
                raise ToolArgumentError(check.message)
        return record


def _parameters(record: type[Any], config: ToolFsConfig) -> list[Parameter]:
    """The annotated fields of ``record``, in declaration order, resolved for ``config``."""
    hints = typing.get_type_hints(record, include_extras=True)
    settings = config.model_dump()
    parameters = []
    for field in fields(record):
        hint = hints[field.name]
        if typing.get_origin(hint) is not typing.Annotated:
            raise TypeError(f"{record.__name__}.{field.name} is not Annotated[..., Argument(...)]")
        python_type, argument = typing.get_args(hint)[:2]
        if not isinstance(argument, Argument):
            raise TypeError(f"{record.__name__}.{field.name} is not Annotated[..., Argument(...)]")
        required = argument.default is REQUIRED
        default = _bound(argument.default, config) if not required else None
        parameters.append(
            Parameter(
                name=field.name,
                kind=_KINDS[python_type],
                description=argument.description.format(**settings),
                required=required,
                default=default,
                minimum=_bound(argument.minimum, config),
                maximum=_bound(argument.maximum, config),
                not_blank=argument.not_blank,
                not_empty=argument.not_empty,
                schema_default=argument.schema_default,
            )
        )
    return parameters
