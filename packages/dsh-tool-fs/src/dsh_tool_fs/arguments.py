"""Tool arguments: one pydantic model per tool, shown to the model and validated by pydantic.

A tool's arguments are a :class:`ToolArguments` subclass, declared in its
tool module; the field order is the order the schema shows them and the
validation reports them::

    class ReadArgs(ToolArguments):
        file_path: FilePath = Field(description="File to read.")
        offset: Integer = Field(1, ge=1, description="First line.")

The JSON Schema the model sees is pydantic's, through :class:`ToolSchema`
(:meth:`ArgumentSchema.json_schema`); the validation is pydantic's, in
strict mode, and :meth:`ArgumentSchema.validate` maps its errors to the exact, model-facing
messages of the tools' reference (``docs/reference/messages.md``). What is here
besides the models is only what pydantic cannot express, each with its
reason.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Generic, TypeVar, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    GetJsonSchemaHandler,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import ErrorDetails, PydanticCustomError, core_schema

from .config import ToolFsConfig
from .json_types import Integer

__all__ = [
    "ArgumentSchema",
    "FilePath",
    "Integer",
    "NonBlank",
    "Setting",
    "ToolArgumentError",
    "ToolArguments",
    "ToolSchema",
    "without_default",
]

_DEFAULT_CONFIG = ToolFsConfig()
M = TypeVar("M", bound="ToolArguments")


def _config_of(info: ValidationInfo) -> ToolFsConfig:
    """The config a validation runs under: :meth:`ArgumentSchema.validate` passes it as the
    pydantic validation context; any other validation of a model runs under the default."""
    return info.context if isinstance(info.context, ToolFsConfig) else _DEFAULT_CONFIG


class ToolArgumentError(ValueError):
    """Arguments that do not fit a tool's schema. ``str(err)`` is the model-facing message."""

    code = "INVALID_ARGUMENTS"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


# -- the field types -----------------------------------------------------------------------


def _not_blank(value: str) -> str:
    # pydantic can strip a string, not refuse a whitespace-only one and keep it as given.
    if not value.strip():
        raise PydanticCustomError("blank", "the string is empty or whitespace-only")
    return value


def _no_trailing_slash(value: str) -> str:
    # A path that ends in "/" names a directory; a pattern would show in the schema.
    if value.endswith("/"):
        raise PydanticCustomError("trailing_slash", 'the path ends with "/"')
    return value


NonBlank = Annotated[str, AfterValidator(_not_blank)]
"""A string that is not empty or whitespace-only (``<name> must be a non-empty string``)."""

FilePath = Annotated[NonBlank, AfterValidator(_no_trailing_slash)]
"""A file's path: not blank, and not ending in ``/`` (``file_path must not end with "/"``)."""


def without_default(schema: dict[str, Any]) -> None:
    """``json_schema_extra`` of an argument whose description states its default better.

    ``list``'s ``path`` defaults to ``"."``, which the model knows as "the
    session workspace": the schema shows the description, not the value.
    """
    schema.pop("default", None)


@dataclass(frozen=True, slots=True)
class Setting:
    """The default and maximum of an integer argument, and its description, from the config.

    ``Annotated[int, Setting("read_limit", "Most lines to return (at most {read_limit}).")]``:
    pydantic's bounds and defaults are fixed when the class is made, these
    follow the :class:`~dsh_tool_fs.ToolFsConfig` of the host's validation
    (:meth:`ArgumentSchema.validate`). The model itself shows the default config's values, so a
    framework that takes the model sees a plain, complete schema.
    """

    key: str
    description: str

    def of(self, config: ToolFsConfig) -> int:
        value: int = getattr(config, self.key)
        return value

    def show(self, schema: JsonSchemaValue, config: ToolFsConfig) -> None:
        """Put this config's description, maximum and default in a property's schema."""
        schema["description"] = self.description.format(**config.model_dump())
        schema["maximum"] = schema["default"] = self.of(config)

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.with_info_after_validator_function(self._at_most, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        self.show(json_schema, _DEFAULT_CONFIG)
        return json_schema

    def _at_most(self, value: int, info: ValidationInfo) -> int:
        bound = self.of(_config_of(info))
        if value > bound:
            raise PydanticCustomError(
                "less_than_equal", "Input should be less than or equal to {le}", {"le": bound}
            )
        return value


@functools.cache
def _settings(model: type[BaseModel]) -> dict[str, Setting]:
    """The fields of ``model`` whose default and bound come from the config (once per model)."""
    return {
        name: marker
        for name, field in model.model_fields.items()
        for marker in field.metadata
        if isinstance(marker, Setting)
    }


@functools.cache
def _optional(model: type[BaseModel]) -> frozenset[str]:
    """The names of ``model``'s fields that have a default (once per model)."""
    return frozenset(name for name, field in model.model_fields.items() if not field.is_required())


# -- the model -----------------------------------------------------------------------------


class ToolArguments(BaseModel):
    """The base of every tool's argument model: closed, strict and immutable.

    A subclass declares the fields and is built with keywords, like any
    pydantic model (``ReadArgs(file_path="a.txt", limit=20)``); it has no
    ``__init__`` of its own, so pydantic validates a call's arguments in one
    pass (a custom ``__init__`` would be called from inside the validation,
    and validate again). Validation under a config
    (:meth:`ArgumentSchema.validate`) takes the :class:`Setting` defaults and
    bounds from that config; elsewhere they are the default config's.
    """

    # defer_build: a process builds the validator of the tools it calls, not of all of them.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _null_means_absent(cls, data: Any, info: ValidationInfo) -> Any:
        # Models send null for an optional key they mean to leave out; pydantic has no such option.
        if not isinstance(data, dict):
            return data
        optional = _optional(cls)
        given = {
            key: value for key, value in data.items() if not (value is None and key in optional)
        }
        config = _config_of(info)
        for name, setting in _settings(cls).items():
            given.setdefault(name, setting.of(config))
        return given


# -- validation ----------------------------------------------------------------------------

_KINDS = {str: "a string", int: "an integer", bool: "a boolean"}
_VALUE_ERRORS = {
    "blank",
    "trailing_slash",
    "string_too_short",
    "greater_than_equal",
    "less_than_equal",
}


@dataclass(frozen=True, slots=True)
class ArgumentSchema(Generic[M]):
    """A tool's argument model under one config: the JSON Schema the model sees, and validation."""

    model: type[M]
    config: ToolFsConfig = _DEFAULT_CONFIG

    def json_schema(self) -> dict[str, Any]:
        """pydantic's JSON Schema of the model (:class:`ToolSchema`) under this config."""
        schema: dict[str, Any] = self.model.model_json_schema(schema_generator=ToolSchema)
        for name, setting in _settings(self.model).items():
            setting.show(schema["properties"][name], self.config)
        return schema

    def validate(self, args: Any) -> M:
        """Decoded JSON in, the model out; else :class:`ToolArgumentError` with the first message.

        pydantic reports every error; the one reported is the first in the
        tools' order: not an object, the first unknown key in the arguments'
        order, the first missing required key, the first wrong type, the
        first broken value rule (each in parameter order), then the rules
        over several arguments (the model's own ``model_validator``).
        """
        try:
            return self.model.model_validate(args, context=self.config)
        except ValidationError as exc:
            first = min(exc.errors(include_url=False), key=_stage)
            raise ToolArgumentError(_message(self.model, first)) from None


def _stage(error: ErrorDetails) -> int:
    """0 not an object, 1 unknown key, 2 missing, 3 wrong type, 4 value rule, 5 several keys."""
    kind = error["type"]
    if kind == "model_type":
        return 0
    if kind == "extra_forbidden":
        return 1
    if kind == "missing":
        return 2
    if not error["loc"]:
        return 5
    return 4 if kind in _VALUE_ERRORS else 3


def _message(model: type[ToolArguments], error: ErrorDetails) -> str:
    kind, loc = error["type"], error["loc"]
    if kind == "model_type":
        return "arguments must be a JSON object"
    if not loc:
        return error["msg"]
    name = str(loc[0])
    if kind == "extra_forbidden":
        return f'unknown argument "{name}"'
    if kind == "missing":
        return f"{name} is required"
    field = model.model_fields[name]
    if kind in ("blank", "string_too_short"):
        when = "" if field.is_required() or kind == "string_too_short" else " when given"
        return f"{name} must be a non-empty string{when}"
    if kind == "trailing_slash":
        return f'{name} must not end with "/"'
    if kind == "greater_than_equal":
        bound = error.get("ctx", {})["ge"]
        if bound == 1:
            return f"{name} must be a positive integer"
        return f"{name} must be greater than or equal to {bound}"
    if kind == "less_than_equal":
        return f"{name} must be less than or equal to {error.get('ctx', {})['le']}"
    if kind == "literal_error":  # a Literal's choices, shown in the schema as an enum
        choices = [arg for arg in get_args(field.annotation) if arg is not None]
        return f"{name} must be one of: {', '.join(map(str, choices))}"
    return f"{name} must be {_kind(field.annotation)}"


def _kind(annotation: Any) -> str:
    """What a value of ``annotation`` is, as the messages say it (``a string`` …).

    An optional argument without a default value (``str | None = None``)
    is its type; a list is ``an array of <its items>s``.
    """
    if get_origin(annotation) is Annotated:
        return _kind(get_args(annotation)[0])
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    if get_origin(annotation) in (Union, UnionType) and len(args) == 1:
        return _kind(args[0])
    if get_origin(annotation) is list and len(args) == 1:
        return "an array of " + _kind(args[0]).split(" ", 1)[1] + "s"
    return _KINDS[annotation]


# -- the JSON Schema -----------------------------------------------------------------------

_ORDER = ("type", "description", "enum", "items", "minimum", "maximum", "default")
"""The keys a property's schema may have, in the order shown (``definitions.py``)."""


class ToolSchema(GenerateJsonSchema):
    """pydantic's JSON Schema in the tools' small, stable shape.

    An object of ``type``, ``properties``, ``required`` (always present) and
    ``additionalProperties``; each property has only the keys of
    :data:`_ORDER`, in that order: no titles, and constraints that JSON
    Schema cannot state as the model reads them (``minLength``) left to the
    descriptions. An optional argument without a default value (``str |
    None = None``) shows as its type alone: ``null`` is accepted as "absent"
    (:class:`ToolArguments`), not offered.
    """

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: core_schema.CoreSchema, mode: JsonSchemaMode = "validation") -> Any:
        generated = super().generate(schema, mode)
        return {
            "type": "object",
            "properties": {name: _property(prop) for name, prop in generated["properties"].items()},
            "required": generated.get("required", []),
            "additionalProperties": False,
        }

    def sort(self, value: JsonSchemaValue, parent_key: str | None = None) -> JsonSchemaValue:
        return value  # the order is the declaration's and _ORDER's, not the alphabet's


def _property(prop: dict[str, Any]) -> dict[str, Any]:
    """One property's schema in the keys of :data:`_ORDER`; ``X | None`` shown as ``X``."""
    options = [option for option in prop.get("anyOf", ()) if option != {"type": "null"}]
    if len(options) == 1:
        prop = {**options[0], **{k: v for k, v in prop.items() if k != "anyOf"}}
        if prop.get("default", 0) is None:
            del prop["default"]
    return {key: prop[key] for key in _ORDER if key in prop}
