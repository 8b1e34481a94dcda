"""ModelRegistry: every known model (plugin catalogs + models.toml/models.json) and the API key for each.

Key priority (docs/models.md#api-keys): runtime ``--api-key`` > ``auth.json`` > environment > the provider's
``apiKey`` in the custom models files (resolved anew for every request, ``!command`` included).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core import config_paths
from pi_core.errors import MissingApiKey, PiError
from pi_core.models.auth import AuthStorage, resolve_config_value, run_value_command
from pi_core.models.custom import CustomConfig, build_models, load_custom_config
from pi_core.models.env_keys import env_api_key, env_var_names
from pi_core.types import Model

__all__ = ["ModelRegistry", "ModelSources", "missing_key_message"]

if TYPE_CHECKING:
    from pi_core.plugins import PluginSet


@dataclass
class ModelSources:
    """Where the registry's models come from: plugin models, provider defaults, and the user's files."""

    builtin: list[Model] = field(default_factory=list)
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    custom_files: list[Path] = field(default_factory=list)


def collect_plugin_models(plugins: PluginSet) -> tuple[list[Model], dict[str, dict[str, Any]], list[str]]:
    """Models from every ``pi_models`` hook and presets from ``pi_provider_presets`` (later layers win)."""
    from pi_core.registry import call_each

    models: dict[tuple[str, str], Model] = {}
    for _plugin, values in call_each(plugins, "pi_models"):
        for model in values:
            models[(model.provider, model.id)] = model
    presets: dict[str, dict[str, Any]] = {}
    if hasattr(plugins.pm.hook, "pi_provider_presets"):
        for _plugin, values in call_each(plugins, "pi_provider_presets"):
            presets.update(values)
    problems = [f.reason for f in plugins.failures if f.source in ("pi_models", "pi_provider_presets")]
    return list(models.values()), presets, problems


def provider_defaults(builtin: list[Model], presets: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per provider: the api/baseUrl a custom model may omit (preset, else its first built-in model)."""
    defaults: dict[str, dict[str, Any]] = {}
    for model in builtin:
        defaults.setdefault(model.provider, {"api": model.api, "baseUrl": model.base_url})
    for name, preset in presets.items():
        defaults[name] = {**defaults.get(name, {}), **preset}
    return defaults


class ModelRegistry:
    """All models pi knows, which of them have credentials, and their API keys."""

    def __init__(self, sources: ModelSources, auth: AuthStorage | None = None) -> None:
        self.sources = sources
        self.auth = auth if auth is not None else AuthStorage(Path(os.devnull))
        self.runtime_keys: dict[str, str] = {}
        self.errors: list[str] = []
        self._models: list[Model] = []
        self._custom = CustomConfig()
        self.refresh()

    @classmethod
    def from_plugins(cls, plugins: PluginSet, agent_dir: Path | None = None) -> ModelRegistry:
        """The registry for a pi run: plugin catalogs, ``models.json`` then ``models.toml``, ``auth.json``."""
        base = agent_dir if agent_dir is not None else config_paths.agent_dir()
        builtin, presets, problems = collect_plugin_models(plugins)
        registry = cls(
            ModelSources(builtin, presets, [base / "models.json", base / "models.toml"]),
            AuthStorage.load(base / "auth.json"),
        )
        registry.errors[:0] = problems
        return registry

    def refresh(self) -> None:
        """Re-read the custom model files (Pi reloads them whenever the model list is opened)."""
        defaults = provider_defaults(self.sources.builtin, self.sources.presets)
        self._custom = load_custom_config(self.sources.custom_files, defaults)
        self.errors = list(self._custom.errors)
        self._models = build_models(self.sources.builtin, self._custom.providers, defaults)

    @property
    def warnings(self) -> list[str]:
        """Texts to show as ``Warning: <text>``: custom model file errors (those files were ignored) and
        auth.json problems (e.g. refused because group/world readable)."""
        loads = [f"errors loading {'models.toml' if 'models.toml' in e.split(chr(10))[0] else 'models.json'}:\n{e}"
                 for e in self.errors]
        return loads + list(self.auth.warnings)

    # --- lookup ------------------------------------------------------------------------------------

    def all_models(self) -> list[Model]:
        return list(self._models)

    def available_models(self) -> list[Model]:
        """Models whose provider has credentials (checked without running any ``!command``)."""
        cache: dict[str, bool] = {}
        return [m for m in self._models if cache.setdefault(m.provider, self.has_auth(m.provider))]

    def find(self, provider: str, model_id: str) -> Model | None:
        return next((m for m in self._models if m.provider == provider and m.id == model_id), None)

    def providers(self) -> list[str]:
        return list(dict.fromkeys(m.provider for m in self._models))

    # --- credentials -------------------------------------------------------------------------------

    def set_runtime_key(self, provider: str, key: str) -> None:
        """``--api-key``: used for this run only, never written anywhere."""
        self.runtime_keys[provider] = key

    def _configured_key(self, provider: str) -> str | None:
        return (self._custom.providers.get(provider) or {}).get("apiKey") or \
            (self.sources.presets.get(provider) or {}).get("apiKey")

    def has_auth(self, provider: str) -> bool:
        return bool(provider in self.runtime_keys or self.auth.has_key(provider)
                    or env_api_key(provider) or self._configured_key(provider))

    def api_key_for(self, model: Model, override: str | None = None) -> str:
        """The key to send for ``model``; raises MissingApiKey naming the variable to set."""
        provider = model.provider
        key = override or self.runtime_keys.get(provider) or self.auth.api_key(provider) or env_api_key(provider)
        if key:
            return key
        configured = self._configured_key(provider)
        if configured:
            if configured.startswith("!"):
                value = run_value_command(configured[1:])
                if not value:
                    raise PiError(f'Failed to resolve API key for provider "{provider}" from shell command: '
                                  f"{configured[1:]}")
                return value
            value = resolve_config_value(configured)
            if value:
                return value
            raise PiError(f'Failed to resolve API key for provider "{provider}"')
        raise MissingApiKey(missing_key_message(provider))

    def request_headers(self, model: Model) -> dict[str, str] | None:
        """The headers a request for ``model`` carries (``authHeader`` is already folded into them);
        raises when the provider asks for a Bearer header but its key resolved to nothing."""
        config = self._custom.providers.get(model.provider) or {}
        if config.get("authHeader") and "Authorization" not in (model.headers or {}):
            raise PiError(f'No API key found for "{model.provider}"')
        return model.headers


def missing_key_message(provider: str) -> str:
    names = env_var_names(provider)
    where = config_paths.models_toml_path()
    if names:
        hint = " or ".join(names)
        return (f"No API key for provider: {provider}. Set {hint} in the environment, pass --api-key, "
                f"or store a key in {config_paths.auth_path()}.")
    return (f'No API key for provider: {provider}. Add "apiKey" to its entry in {where} '
            f"(a literal, an environment variable name, or !command), or pass --api-key.")
