"""The checks of ``models.json`` / ``models.toml``: its schema as pydantic models, with its errors in Pi's (ajv's)
wording, then Pi's semantic checks on a file the schema accepts.

Validation is strict (a ``"4096"`` is not a number, ``1`` is not a boolean) and collects every error of the
file at once; each error becomes a ``Problem``: the JSON pointer it is about and the text Pi prints for it
(``must be number``, ``must have required property 'id'``). Unknown keys are kept, as Pi keeps them.
The validator is built on first use: only a run that has a models file pays for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
)
from pydantic.alias_generators import to_camel


@dataclass(eq=False, repr=False)
class Problem:
    """One thing wrong in a models file: the JSON pointer it is about and Pi's message for it."""

    pointer: str
    message: str


def _pi_error(message: str) -> ValueError:
    # A validator's ValueError becomes pydantic's "value_error", whose context keeps it: its text is Pi's.
    return ValueError(message)


def _number(value: Any) -> int | float:
    # JSON's number: int or float as written (so 4096 stays an int), never a bool.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    raise _pi_error("must be number")


def _string_or_null(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _pi_error("must be string,null")


def _given(kind: str) -> BeforeValidator:
    """A key may be left out, but not given as null (its default ``None`` is never validated)."""
    def refuse_null(value: Any) -> Any:
        if value is None:
            raise _pi_error(f"must be {kind}")
        return value
    return BeforeValidator(refuse_null)


Number = Annotated[int | float, PlainValidator(_number, json_schema_input_type=float)]
Text = Annotated[str, Field(min_length=1)]
StringOrNull = Annotated[str | None, PlainValidator(_string_or_null, json_schema_input_type=str | None)]
# The optional keys: absent is fine, null is the wrong type.
OptText = Annotated[Text | None, _given("string")]
OptNumber = Annotated[Number | None, _given("number")]
OptBool = Annotated[bool | None, _given("boolean")]
OptObject = Annotated[dict[str, Any] | None, _given("object")]  # open: the models file (models.json / models.toml), JSON
OptHeaders = Annotated[dict[str, str] | None, _given("object")]


class _Record(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", alias_generator=to_camel, validate_by_name=True,
                              validate_by_alias=True, defer_build=True)


class CostConfig(_Record):
    """USD per million tokens; a new model gives all four."""

    input: Number
    output: Number
    cache_read: Number
    cache_write: Number


class CostPatch(_Record):
    """A ``modelOverrides`` entry may change some prices only."""

    input: OptNumber = None
    output: OptNumber = None
    cache_read: OptNumber = None
    cache_write: OptNumber = None


class PromptCacheConfig(_Record):
    """Seconds a provider keeps a prompt cache entry, per retention tier (docs/models.md)."""

    short: OptNumber = None
    long: OptNumber = None


class _Endpoint(_Record):
    """The keys a provider and each of its models may both set."""

    name: OptText = None
    api: OptText = None
    base_url: OptText = None
    compat: OptObject = None
    headers: OptHeaders = None


class _ModelFields(_Endpoint):
    reasoning: OptBool = None
    context_window: OptNumber = None
    max_tokens: OptNumber = None
    input: Annotated[list[Literal["text", "image"]] | None, _given("array")] = None
    thinking_level_map: Annotated[dict[str, StringOrNull] | None, _given("object")] = None
    prompt_cache: Annotated[PromptCacheConfig | None, _given("object")] = None


class ModelDefinition(_ModelFields):
    """A new model under ``providers.<name>.models``."""

    id: Text
    cost: Annotated[CostConfig | None, _given("object")] = None


class ModelOverride(_ModelFields):
    """A patch to a built-in model under ``providers.<name>.modelOverrides.<id>``."""

    cost: Annotated[CostPatch | None, _given("object")] = None


class ProviderConfig(_Endpoint):
    api_key: OptText = None
    auth_header: OptBool = None
    models: Annotated[list[ModelDefinition] | None, _given("array")] = None
    model_overrides: Annotated[dict[str, ModelOverride] | None, _given("object")] = None


class ModelsFile(_Record):
    providers: dict[str, ProviderConfig]


# pydantic's error types, in Pi's words (ajv's, as Pi's TypeBox schema reports them).
_MESSAGES = {
    "model_type": "must be object", "model_attributes_type": "must be object", "dict_type": "must be object",
    "list_type": "must be array", "string_type": "must be string", "bool_type": "must be boolean",
    "string_too_short": "must NOT have fewer than 1 characters",
    "literal_error": "must be equal to one of the allowed values",
}


def check_schema(config: Any) -> list[Problem]:  # open: the models file (models.json / models.toml), JSON
    """Every schema problem of the file (empty when it is valid), each naming its JSON pointer."""
    try:
        ModelsFile.model_validate(config)
    except ValidationError as err:
        return [_problem(error) for error in err.errors(include_url=False, include_input=False)]
    return []


def _problem(error: Any) -> Problem:
    path = [str(part) for part in error["loc"]]
    if error["type"] == "missing":  # ajv reports a missing property at the object that lacks it
        return Problem(_pointer(path[:-1]), f"must have required property '{path[-1]}'")
    if error["type"] == "value_error":
        return Problem(_pointer(path), str(error["ctx"]["error"]))
    return Problem(_pointer(path), _MESSAGES.get(error["type"], error["msg"]))


def _pointer(path: list[str]) -> str:
    return "".join(f"/{part}" for part in path)


def check_semantics(config: dict[str, Any], defaults: Mapping[str, dict[str, Any]]) -> list[Problem]:  # open: the models file (models.json / models.toml), JSON
    """Pi's extra checks (docs/models.md#custom-models), each with Pi's message, on a schema-valid file.

    ``defaults`` maps each built-in provider (and preset) to its api/baseUrl/apiKey defaults: such a
    provider's custom models may leave those out.
    """
    problems: list[Problem] = []

    def add(pointer: str, message: str) -> None:
        problems.append(Problem(pointer, message))

    for name, provider in config["providers"].items():
        where = f"/providers/{name}"
        models = provider.get("models") or []
        builtin = name in defaults
        preset = defaults.get(name, {})
        if not models:
            if not any(provider.get(k) for k in ("baseUrl", "headers", "compat", "modelOverrides")):
                add(where, f'Provider {name}: must specify "baseUrl", "headers", "compat", '
                           f'"modelOverrides", or "models".')
        elif not builtin and not provider.get("baseUrl"):
            # No "apiKey" is fine (a deliberate difference: Pi requires one): local servers need none.
            add(where, f'Provider {name}: "baseUrl" is required when defining custom models.')
        for i, model in enumerate(models):
            if not model.get("id"):
                add(f"{where}/models/{i}", f'Provider {name}: model missing "id"')
                continue
            if not (model.get("api") or provider.get("api") or preset.get("api")):
                add(f"{where}/models/{i}", f'Provider {name}, model {model["id"]}: no "api" specified. '
                                           f"Set at provider or model level.")
            for key in ("contextWindow", "maxTokens"):
                if key in model and model[key] <= 0:
                    add(f"{where}/models/{i}/{key}", f"Provider {name}, model {model['id']}: invalid {key}")
        patches = [(f"{where}/models/{i}", m) for i, m in enumerate(models)] + \
            [(f"{where}/modelOverrides/{k}", m) for k, m in (provider.get("modelOverrides") or {}).items()]
        for pointer, model in patches:
            for tier, seconds in (model.get("promptCache") or {}).items():
                if tier in ("short", "long") and seconds is not None and seconds <= 0:
                    add(f"{pointer}/promptCache/{tier}", "must be > 0")
    return problems
