"""Custom providers and models from ``models.toml`` (pi's own) and ``models.json`` (Pi's), merged into the catalog.

Both files share one shape: ``providers.<name>`` with baseUrl, api, apiKey, headers, authHeader, compat,
models (new models) and modelOverrides (patches to built-in models). TOML keys may also be snake_case.
On any error the whole file is ignored, the built-in models stay, and every error of the file is kept
for the user, one ``path:line:col: message`` line each (Pi's wording for the message).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core.models.auth import resolve_config_value, resolve_headers
from pi_core.types import Model

if TYPE_CHECKING:
    from pi_core.models.custom_check import Problem

DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TOKENS = 16_384
_NESTED_COMPAT_KEYS = ("openRouterRouting", "vercelGatewayRouting")


class ModelsFileError(Exception):
    """A models file could not be used; the message is shown to the user as is."""


@dataclass(eq=False, repr=False)
class CustomConfig:
    """The merged, validated ``providers`` table of the custom model files."""

    providers: dict[str, dict[str, Any]] = field(default_factory=dict)  # open: the models file (models.json / models.toml), JSON
    errors: list[str] = field(default_factory=list)


# --- reading ---------------------------------------------------------------------------------------


def strip_json_comments(text: str) -> str:
    """Blank out ``//`` line comments and trailing commas that are outside strings (with spaces, so that a
    parser's line and column still point into the user's text)."""
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
                out.append(" ")
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
                out.append(" ")
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


def read_models_json(path: Path) -> Any:  # open: the models file (models.json / models.toml), JSON
    """The file's JSON value, of any shape: ``check_schema`` names a top level that is not an object."""
    text = _read_text(path)
    try:
        return _shallow_enough(path, json.loads(strip_json_comments(text)))
    except json.JSONDecodeError as err:
        raise ModelsFileError(f"{path}:{err.lineno}:{err.colno}: {err.msg}") from err
    except RecursionError as err:
        raise _too_deep(path) from err


def read_models_toml(path: Path) -> dict[str, Any]:  # open: the models file (models.json / models.toml), JSON
    import re
    import tomllib  # only when there is a models.toml

    try:
        config: dict[str, Any] = _camelize(_shallow_enough(path, tomllib.loads(_read_text(path))))
        return config
    except tomllib.TOMLDecodeError as err:
        # tomllib only puts the position into its text: "Invalid value (at line 1, column 18)"
        found = re.search(r"\s*\(at line (\d+), column (\d+)\)$", str(err))
        line, column, message = (found.group(1), found.group(2), str(err)[:found.start()]) if found \
            else ("1", "1", str(err))
        raise ModelsFileError(f"{path}:{line}:{column}: {message}") from err
    except RecursionError as err:
        raise _too_deep(path) from err


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise ModelsFileError(f"{path}:{line}:{column}: not UTF-8 text ({err.reason})") from err


def _too_deep(path: Path) -> ModelsFileError:
    from pi_core.toolkit.nesting import MAX_NESTING

    return ModelsFileError(f"{path}:1:1: nested more than {MAX_NESTING} levels deep")


def _shallow_enough(path: Path, data: Any) -> Any:
    """Absurd nesting is refused before anything walks it recursively."""
    from pi_core.toolkit.nesting import MAX_NESTING, nesting_depth

    if nesting_depth(data) > MAX_NESTING:
        raise _too_deep(path)
    return data


def write_models_toml(path: Path, config: dict[str, Any]) -> None:  # open: the models file (models.json / models.toml), JSON
    """Write the ``{"providers": {...}}`` table as TOML (used when pi edits the user's models)."""
    import tomli_w

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(tomli_w.dumps(config), encoding="utf-8")
    tmp.replace(path)


def upsert_custom_model(path: Path, provider: str, model_def: dict[str, Any],  # open: the models file (models.json / models.toml), JSON
                        provider_fields: dict[str, Any] | None = None) -> None:  # open: the models file (models.json / models.toml), JSON
    """Add or replace one model (by id) under ``provider`` in ``models.toml``, keeping everything else."""
    config = read_models_toml(path) if path.exists() else {}
    providers = config.setdefault("providers", {})
    entry = providers.setdefault(provider, {})
    entry.update(provider_fields or {})
    models = [m for m in entry.get("models", []) if m.get("id") != model_def["id"]]
    entry["models"] = [*models, model_def]
    write_models_toml(path, config)


def load_custom_file(path: Path, defaults: Mapping[str, dict[str, Any]]) -> dict[str, Any]:  # open: the models file (models.json / models.toml), JSON
    """Read and validate one file; raise ModelsFileError carrying every problem as ``path:line:col: message``.

    The schema check (pydantic) is skipped for content it accepted before (``custom_check``: a cache keyed by
    the content's digest); Pi's semantic checks run every time."""
    from pi_core.models import custom_check

    config = read_models_toml(path) if path.suffix == ".toml" else read_models_json(path)
    digest = custom_check.schema_digest(config)
    schema: list[Problem] = []
    if not custom_check.known_valid(digest):
        # pydantic: only for a file not yet seen valid
        from pi_core.models.custom_schema import check_schema

        schema = check_schema(config)
        if not schema:
            custom_check.remember_valid(digest)
    problems = [custom_check.Problem(p.pointer, f"{p.pointer or '/'}: {p.message}") for p in schema] if schema \
        else custom_check.check_semantics(config, defaults)
    if problems:
        raise ModelsFileError(_located(path, problems))
    providers: dict[str, Any] = config["providers"]  # the schema has made it an object
    return providers


def _located(path: Path, problems: list[Problem]) -> str:
    from pi_core.models.positions import locate

    toml = path.suffix == ".toml"
    text = path.read_text(encoding="utf-8")
    located = sorted((locate(text if toml else strip_json_comments(text), problem.pointer, toml=toml,
                             key_name=_camel if toml else str), i, problem.message)
                     for i, problem in enumerate(problems))
    return "\n".join(f"{path}:{line}:{column}: {message}" for (line, column), _i, message in located)


def load_custom_config(paths: list[Path], defaults: Mapping[str, dict[str, Any]]) -> CustomConfig:  # open: the models file (models.json / models.toml), JSON
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
            result.errors.append(f"{path}:1:1: {err.strerror or err}")
    return result


# --- merging ---------------------------------------------------------------------------------------


def merge_compat(base: dict[str, Any] | None, override: dict[str, Any] | None) -> dict[str, Any] | None:  # open: the models file (models.json / models.toml), JSON
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


def apply_override(model: Model, override: dict[str, Any]) -> Model:  # open: the models file (models.json / models.toml), JSON
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
    if "promptCache" in override:
        update["prompt_cache"] = {**(model.prompt_cache or {}), **override["promptCache"]}
    return model.model_copy(update=update)


def build_models(builtin: list[Model], providers: dict[str, dict[str, Any]],  # open: the models file (models.json / models.toml), JSON
                 defaults: Mapping[str, dict[str, Any]]) -> list[Model]:  # open: the models file (models.json / models.toml), JSON
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
                prompt_cache=spec.get("promptCache"),
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
