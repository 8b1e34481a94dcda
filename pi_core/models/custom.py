"""Custom providers and models from ``models.toml`` (pi's own) and ``models.json`` (Pi's), merged into the catalog.

Both files share one shape: ``providers.<name>`` with baseUrl, api, apiKey, headers, authHeader, compat,
models (new models) and modelOverrides (patches to built-in models). TOML keys may also be snake_case.
On any error the whole file is ignored, the built-in models stay, and the error text (Pi's wording)
is kept for the user.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_core.models.auth import resolve_config_value, resolve_headers
from pi_core.types import Model

DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TOKENS = 16_384
_NESTED_COMPAT_KEYS = ("openRouterRouting", "vercelGatewayRouting")


class ModelsFileError(Exception):
    """A models file could not be used; the message is shown to the user as is."""


@dataclass
class CustomConfig:
    """The merged, validated ``providers`` table of the custom model files."""

    providers: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


# --- reading ---------------------------------------------------------------------------------------


def strip_json_comments(text: str) -> str:
    """Drop ``//`` line comments and trailing commas that are outside strings."""
    out: list[str] = []
    i, n, in_string = 0, len(text), False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif ch == ",":
            j = i + 1
            while j < n and (text[j].isspace() or text.startswith("//", j)):
                if text.startswith("//", j):
                    while j < n and text[j] != "\n":
                        j += 1
                else:
                    j += 1
            if j < n and text[j] in "}]":
                i += 1
                continue
            out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_CAMEL_KEYS = {"base_url", "api_key", "auth_header", "model_overrides", "context_window", "max_tokens",
               "cache_read", "cache_write", "thinking_level_map"}


def _camelize(value: Any, depth: int = 0) -> Any:
    """TOML users may write snake_case field names; map the known ones to Pi's camelCase."""
    if isinstance(value, dict):
        return {(_camel(k) if k in _CAMEL_KEYS else k): _camelize(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_camelize(v, depth + 1) for v in value]
    return value


def read_models_json(path: Path) -> dict[str, Any]:
    text = _read_text(path)
    try:
        return _shallow_enough(path, json.loads(strip_json_comments(text)))
    except json.JSONDecodeError as err:
        raise ModelsFileError(f"Failed to parse {path.name}: {err}\n\nFile: {path}") from err
    except RecursionError as err:
        raise _too_deep(path) from err


def read_models_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when there is a models.toml

    try:
        return _camelize(_shallow_enough(path, tomllib.loads(_read_text(path))))
    except tomllib.TOMLDecodeError as err:
        raise ModelsFileError(f"Failed to parse {path.name}: {err}\n\nFile: {path}") from err
    except RecursionError as err:
        raise _too_deep(path) from err


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ModelsFileError(f"Failed to parse {path.name}: not UTF-8 text ({err.reason})\n\nFile: {path}") from err


def _too_deep(path: Path) -> ModelsFileError:
    from pi_core.toolkit.nesting import MAX_NESTING

    return ModelsFileError(f"Failed to parse {path.name}: nested more than {MAX_NESTING} levels deep\n\nFile: {path}")


def _shallow_enough(path: Path, data: Any) -> Any:
    """Absurd nesting is refused before anything walks it recursively."""
    from pi_core.toolkit.nesting import MAX_NESTING, nesting_depth

    if nesting_depth(data) > MAX_NESTING:
        raise _too_deep(path)
    return data


def write_models_toml(path: Path, config: dict[str, Any]) -> None:
    """Write the ``{"providers": {...}}`` table as TOML (used when pi edits the user's models)."""
    import tomli_w

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(tomli_w.dumps(config), encoding="utf-8")
    tmp.replace(path)


def upsert_custom_model(path: Path, provider: str, model_def: dict[str, Any],
                        provider_fields: dict[str, Any] | None = None) -> None:
    """Add or replace one model (by id) under ``provider`` in ``models.toml``, keeping everything else."""
    config = read_models_toml(path) if path.exists() else {}
    providers = config.setdefault("providers", {})
    entry = providers.setdefault(provider, {})
    entry.update(provider_fields or {})
    models = [m for m in entry.get("models", []) if m.get("id") != model_def["id"]]
    entry["models"] = [*models, model_def]
    write_models_toml(path, config)


# --- schema ----------------------------------------------------------------------------------------

_TYPE_NAMES = {str: "string", bool: "boolean", dict: "object", list: "array"}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check(value: Any, kind: str, where: str) -> None:
    ok = {
        "string": isinstance(value, str), "boolean": isinstance(value, bool), "object": isinstance(value, dict),
        "array": isinstance(value, list), "number": _is_number(value),
    }[kind]
    if not ok:
        raise _SchemaError(where, f"must be {kind}")
    if kind == "string" and value == "":
        raise _SchemaError(where, "must NOT have fewer than 1 characters")


class _SchemaError(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where or 'root'}: {message}")


def _check_string_map(value: Any, where: str) -> None:
    _check(value, "object", where)
    for key, item in value.items():
        if not isinstance(item, str):
            raise _SchemaError(f"{where}/{key}", "must be string")


def _check_model_fields(entry: dict[str, Any], where: str, *, partial_cost: bool) -> None:
    for key, kind in (("name", "string"), ("api", "string"), ("baseUrl", "string"), ("reasoning", "boolean"),
                      ("contextWindow", "number"), ("maxTokens", "number"), ("compat", "object")):
        if key in entry:
            _check(entry[key], kind, f"{where}/{key}")
    if "headers" in entry:
        _check_string_map(entry["headers"], f"{where}/headers")
    if "input" in entry:
        _check(entry["input"], "array", f"{where}/input")
        for i, item in enumerate(entry["input"]):
            if item not in ("text", "image"):
                raise _SchemaError(f"{where}/input/{i}", "must be equal to one of the allowed values")
    if "thinkingLevelMap" in entry:
        _check(entry["thinkingLevelMap"], "object", f"{where}/thinkingLevelMap")
        for level, mapped in entry["thinkingLevelMap"].items():
            if mapped is not None and not isinstance(mapped, str):
                raise _SchemaError(f"{where}/thinkingLevelMap/{level}", "must be string,null")
    if "cost" in entry:
        cost = entry["cost"]
        _check(cost, "object", f"{where}/cost")
        for key in ("input", "output", "cacheRead", "cacheWrite"):
            if key not in cost:
                if not partial_cost:
                    raise _SchemaError(f"{where}/cost", f"must have required property '{key}'")
                continue
            _check(cost[key], "number", f"{where}/cost/{key}")


def check_schema(config: Any) -> None:
    """Raise _SchemaError at the first problem, naming its JSON path (``/providers/x/models/0/id``)."""
    _check(config, "object", "")
    if "providers" not in config:
        raise _SchemaError("", "must have required property 'providers'")
    _check(config["providers"], "object", "/providers")
    for name, provider in config["providers"].items():
        where = f"/providers/{name}"
        _check(provider, "object", where)
        for key, kind in (("name", "string"), ("baseUrl", "string"), ("apiKey", "string"), ("api", "string"),
                          ("authHeader", "boolean"), ("compat", "object")):
            if key in provider:
                _check(provider[key], kind, f"{where}/{key}")
        if "headers" in provider:
            _check_string_map(provider["headers"], f"{where}/headers")
        if "models" in provider:
            _check(provider["models"], "array", f"{where}/models")
            for i, model in enumerate(provider["models"]):
                _check(model, "object", f"{where}/models/{i}")
                if "id" not in model:
                    raise _SchemaError(f"{where}/models/{i}", "must have required property 'id'")
                _check(model["id"], "string", f"{where}/models/{i}/id")
                _check_model_fields(model, f"{where}/models/{i}", partial_cost=False)
        if "modelOverrides" in provider:
            _check(provider["modelOverrides"], "object", f"{where}/modelOverrides")
            for model_id, override in provider["modelOverrides"].items():
                _check(override, "object", f"{where}/modelOverrides/{model_id}")
                _check_model_fields(override, f"{where}/modelOverrides/{model_id}", partial_cost=True)


def check_semantics(config: dict[str, Any], defaults: Mapping[str, dict[str, Any]]) -> None:
    """Pi's extra checks (docs/models.md#custom-models); raises ValueError with Pi's message.

    ``defaults`` maps each built-in provider (and preset) to its api/baseUrl/apiKey defaults: such a
    provider's custom models may leave those out.
    """
    for name, provider in config["providers"].items():
        models = provider.get("models") or []
        builtin = name in defaults
        preset = defaults.get(name, {})
        if not models:
            if not any(provider.get(k) for k in ("baseUrl", "headers", "compat", "modelOverrides")):
                raise ValueError(f'Provider {name}: must specify "baseUrl", "headers", "compat", '
                                 f'"modelOverrides", or "models".')
        elif not builtin and not provider.get("baseUrl"):
            # No "apiKey" is fine (a deliberate difference: Pi requires one): local servers need none.
            raise ValueError(f'Provider {name}: "baseUrl" is required when defining custom models.')
        for model in models:
            if not model.get("id"):
                raise ValueError(f'Provider {name}: model missing "id"')
            if not (model.get("api") or provider.get("api") or preset.get("api")):
                raise ValueError(f'Provider {name}, model {model["id"]}: no "api" specified. '
                                 f"Set at provider or model level.")
            for key in ("contextWindow", "maxTokens"):
                if key in model and model[key] <= 0:
                    raise ValueError(f"Provider {name}, model {model['id']}: invalid {key}")


def load_custom_file(path: Path, defaults: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """Read and validate one file; raise ModelsFileError carrying the user-facing message."""
    label = path.name
    config = read_models_toml(path) if path.suffix == ".toml" else read_models_json(path)
    try:
        check_schema(config)
    except _SchemaError as err:
        raise ModelsFileError(f"Invalid {label} schema:\n  - {err}\n\nFile: {path}") from err
    try:
        check_semantics(config, defaults)
    except ValueError as err:
        raise ModelsFileError(f"Failed to load {label}: {err}\n\nFile: {path}") from err
    return config["providers"]


def load_custom_config(paths: list[Path], defaults: Mapping[str, dict[str, Any]]) -> CustomConfig:
    """Load each existing file in order; a later file's provider entry replaces an earlier one's."""
    result = CustomConfig()
    for path in paths:
        if not path.is_file():
            continue
        try:
            result.providers.update(load_custom_file(path, defaults))
        except ModelsFileError as err:
            result.errors.append(str(err))
        except OSError as err:
            result.errors.append(f"Failed to load {path.name}: {err}\n\nFile: {path}")
    return result


# --- merging ---------------------------------------------------------------------------------------


def merge_compat(base: dict[str, Any] | None, override: dict[str, Any] | None) -> dict[str, Any] | None:
    """Shallow merge, except routing objects, which merge one level deeper."""
    if not override:
        return base
    merged = {**(base or {}), **override}
    for key in _NESTED_COMPAT_KEYS:
        if (base or {}).get(key) or override.get(key):
            merged[key] = {**(base or {}).get(key, {}), **override.get(key, {})}
    return merged


def _merge_headers(base: dict[str, str] | None, extra: dict[str, str] | None) -> dict[str, str] | None:
    resolved = resolve_headers(extra)
    if not resolved:
        return base
    return {**(base or {}), **resolved}


def apply_override(model: Model, override: dict[str, Any]) -> Model:
    """Patch a built-in model with a ``modelOverrides`` entry (cost, headers, compat and map merge)."""
    update: dict[str, Any] = {}
    for key, attr in (("name", "name"), ("reasoning", "reasoning"), ("input", "input"),
                      ("contextWindow", "context_window"), ("maxTokens", "max_tokens")):
        if key in override:
            update[attr] = override[key]
    if "cost" in override:
        cost = model.cost.model_copy(update={
            attr: override["cost"][key] for key, attr in
            (("input", "input"), ("output", "output"), ("cacheRead", "cache_read"), ("cacheWrite", "cache_write"))
            if key in override["cost"]})
        update["cost"] = cost
    if "thinkingLevelMap" in override:
        update["thinking_level_map"] = {**(model.thinking_level_map or {}), **override["thinkingLevelMap"]}
    if "headers" in override:
        update["headers"] = _merge_headers(model.headers, override["headers"])
    if "compat" in override:
        update["compat"] = merge_compat(model.compat, override["compat"])
    return model.model_copy(update=update)


def build_models(builtin: list[Model], providers: dict[str, dict[str, Any]],
                 defaults: Mapping[str, dict[str, Any]]) -> list[Model]:
    """Built-in models with provider overrides and modelOverrides applied, then custom models upserted."""
    result: list[Model] = []
    for model in builtin:
        provider = providers.get(model.provider)
        if provider:
            if any(provider.get(k) for k in ("baseUrl", "headers", "compat")):
                model = model.model_copy(update={
                    "base_url": provider.get("baseUrl") or model.base_url,
                    "headers": _merge_headers(model.headers, provider.get("headers")),
                    "compat": merge_compat(model.compat, provider.get("compat")),
                })
            override = (provider.get("modelOverrides") or {}).get(model.id)
            if override:
                model = apply_override(model, override)
        result.append(model)
    index = {(m.provider, m.id): i for i, m in enumerate(result)}
    for name, provider in providers.items():
        preset = defaults.get(name, {})
        provider_headers = resolve_headers(provider.get("headers"))
        provider_compat = merge_compat(preset.get("compat"), provider.get("compat"))
        bearer = _bearer_header(provider)
        for spec in provider.get("models") or []:
            model_headers = resolve_headers(spec.get("headers"))
            headers = {**(provider_headers or {}), **(model_headers or {}), **bearer} or None
            model = Model(
                id=spec["id"],
                name=spec.get("name", spec["id"]),
                api=spec.get("api") or provider.get("api") or preset.get("api", ""),
                provider=name,
                base_url=spec.get("baseUrl") or provider.get("baseUrl") or preset.get("baseUrl", ""),
                reasoning=spec.get("reasoning", False),
                thinking_level_map=spec.get("thinkingLevelMap"),
                input=spec.get("input", ["text"]),
                cost=spec.get("cost", {}),
                context_window=spec.get("contextWindow", DEFAULT_CONTEXT_WINDOW),
                max_tokens=spec.get("maxTokens", DEFAULT_MAX_TOKENS),
                headers=headers,
                compat=merge_compat(provider_compat, spec.get("compat")),
            )
            key = (name, model.id)
            if key in index:
                result[index[key]] = model
            else:
                index[key] = len(result)
                result.append(model)
    return result


def _bearer_header(provider: dict[str, Any]) -> dict[str, str]:
    """``authHeader: true``: send the resolved apiKey as ``Authorization: Bearer`` (a command runs once)."""
    if not provider.get("authHeader") or not provider.get("apiKey"):
        return {}
    key = resolve_config_value(provider["apiKey"], cache=True)
    return {"Authorization": f"Bearer {key}"} if key else {}
