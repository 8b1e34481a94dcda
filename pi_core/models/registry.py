"""ModelRegistry: every known model (plugin catalogs + models.toml/models.json + local servers) and the
credential for each.

Key priority (docs/models.md#api-keys): runtime ``--api-key`` > ``auth.json`` (an API key, or an OAuth token
kept fresh through its sign-in flow) > environment > the provider's ``apiKey`` in the custom models files
(resolved anew for every request, ``!command`` included).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core import config_paths
from pi_core.errors import MissingApiKey, PiError
from pi_core.hookspecs.results import ProviderPreset
from pi_core.models.auth import AuthStorage, resolve_config_value, run_value_command
from pi_core.models.custom import CustomConfig, build_models, load_custom_config
from pi_core.models.entries import (
    EntryTable,
    LazyModels,
    ModelEntry,
    ProviderGroup,
    groups_of,
    runs,
)
from pi_core.models.env_keys import (
    env_api_key,
    env_bearer_token,
    env_var_names,
    required_env,
)
from pi_core.types import Model

__all__ = ["ModelRegistry", "ModelSources", "missing_key_message"]

if TYPE_CHECKING:
    from pi_core.loader.plugins import PluginSet
    from pi_core.models.oauth import OAuthFlow, RequestAuth
    from pi_core.providers import VirtualModel
    from pi_core.session.parts import SettingsStore

DISCOVERY_TIMEOUT_S = 0.8


@dataclass(eq=False, repr=False)
class ModelSources:
    """Where the registry's models come from: plugin models, provider defaults, and the user's files.
    ``builtin`` may be a ``LazyModels``: its models are then built only when a lookup returns them."""

    builtin: Sequence[Model] = field(default_factory=list)
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)  # open: provider presets, models-file JSON
    custom_files: list[Path] = field(default_factory=list)
    discovered: list[Model] = field(default_factory=list)  # what running local servers listed
    virtual: list[VirtualModel] = field(default_factory=list)  # pi_virtual_models: routed per request


def collect_plugin_models(plugins: PluginSet) -> tuple[LazyModels, dict[str, dict[str, Any]], list[str]]:  # open: provider presets, models-file JSON
    """Models from every ``pi_models`` hook and presets from ``pi_provider_presets`` (later layers win: the
    registry's ``EntryTable`` keeps one entry per (provider, id), the last)."""
    groups: list[ProviderGroup] = []
    for _plugin, values in plugins.call_sync("pi_models"):
        groups.extend(groups_of(values))
    presets: dict[str, dict[str, Any]] = {}
    if hasattr(plugins.pm.hook, "pi_provider_presets"):
        for _plugin, values in plugins.call_sync("pi_provider_presets"):
            presets.update({provider: preset.to_json() if isinstance(preset, ProviderPreset) else dict(preset)
                            for provider, preset in values.items()})
    problems = [f.reason for f in plugins.failures if f.source in ("pi_models", "pi_provider_presets")]
    return LazyModels(groups=groups), presets, problems


class ProviderDefaults(Mapping[str, dict[str, Any]]):
    """Per provider: the api/baseUrl a custom model may omit (preset, else its first built-in model). A
    provider's built-in entries are made only when its defaults are read (a models file names a few)."""

    def __init__(self, builtin: EntryTable, presets: dict[str, dict[str, Any]]) -> None:  # open: provider presets, models-file JSON
        self._builtin, self._presets = builtin, presets
        self._names = list(dict.fromkeys([*builtin.providers(), *presets]))

    def __getitem__(self, name: str) -> dict[str, Any]:  # open: provider presets, models-file JSON
        if name not in self._presets and name not in self._names:
            raise KeyError(name)
        first = next(iter(self._builtin.of(name)), None)
        own = {"api": first.api, "baseUrl": first.base_url} if first is not None else {}
        return {**own, **self._presets.get(name, {})}

    def __contains__(self, name: object) -> bool:
        return name in self._presets or name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class ModelRegistry:
    """All models pi knows, which of them have credentials, and their API keys."""

    def __init__(self, sources: ModelSources, auth: AuthStorage | None = None,
                 plugins: PluginSet | None = None) -> None:
        self.sources = sources
        self.auth = auth if auth is not None else AuthStorage(Path(os.devnull))
        self.plugins = plugins
        self.runtime_keys: dict[str, str] = {}
        self.errors: list[str] = []
        self._table = EntryTable([])
        self._custom = CustomConfig()
        self._flows: dict[str, OAuthFlow] | None = None
        self.refresh()

    @classmethod
    def from_plugins(cls, plugins: PluginSet, agent_dir: Path | None = None) -> ModelRegistry:
        """The registry for a pi run: plugin catalogs, ``models.json`` then ``models.toml``, ``auth.json``."""
        base = agent_dir if agent_dir is not None else config_paths.agent_dir()
        builtin, presets, problems = collect_plugin_models(plugins)
        virtual = [v for _plugin, values in plugins.call_sync("pi_virtual_models") for v in values] \
            if hasattr(plugins.pm.hook, "pi_virtual_models") else []
        registry = cls(
            ModelSources(builtin, presets, [base / "models.json", base / "models.toml"], virtual=virtual),
            AuthStorage.load(base / "auth.json"), plugins,
        )
        registry.errors[:0] = problems
        return registry

    def refresh(self) -> None:
        """Re-read the custom model files (Pi reloads them whenever the model list is opened)."""
        builtin = groups_of(self.sources.builtin)
        defaults = ProviderDefaults(EntryTable(builtin), self.sources.presets)
        self._custom = load_custom_config(self.sources.custom_files, defaults)
        self.errors = list(self._custom.errors)
        found: list[ModelEntry] = []
        if self.sources.discovered:
            providers = {m.provider for m in self.sources.discovered}
            known = {e.key for e in EntryTable(builtin).where(providers.__contains__)}
            found = [ModelEntry.of(m) for m in self.sources.discovered if (m.provider, m.id) not in known]
        self._table = _with_custom(EntryTable([*builtin, *runs(found)]), self._custom.providers, defaults)
        if self.sources.virtual:
            from pi_core.models.virtual import catalog_entry

            virtual = {(v.provider, v.id): catalog_entry(v) for v in self.sources.virtual}  # the later one wins
            self._table = self._table.replaced({provider for provider, _id in virtual}, dict.fromkeys(virtual),
                                               [ModelEntry.of(m) for m in virtual.values()])

    def discover(self, settings: SettingsStore | None = None, timeout_s: float = DISCOVERY_TIMEOUT_S) -> None:
        """Ask ``pi_discover_models`` plugins (local servers) what they serve now, and rebuild the list."""
        if self.plugins is None or not hasattr(self.plugins.pm.hook, "pi_discover_models"):
            return
        found: list[Model] = []
        for _plugin, models in self.plugins.call_sync("pi_discover_models", settings=settings or {},
                                         timeout_s=timeout_s):
            found.extend(models)
        self.sources.discovered = found
        self.refresh()

    @property
    def warnings(self) -> list[str]:
        """Texts to show as ``Warning: <text>``: custom model file errors (those files were ignored) and
        auth.json problems (e.g. refused because group/world readable)."""
        loads = [f"errors loading {'models.toml' if 'models.toml' in e.split(chr(10))[0] else 'models.json'}:\n{e}"
                 for e in self.errors]
        return loads + list(self.auth.warnings)

    # --- lookup ------------------------------------------------------------------------------------

    def entries(self) -> list[ModelEntry]:
        """Every model as an entry: match on provider/id/name without building the others' ``Model``."""
        return self._table.all()

    def provider_entries(self, provider: str) -> list[ModelEntry]:
        """``entries()`` of one provider (the others' entries are not even made)."""
        return self._table.of(provider)

    def all_models(self) -> list[Model]:
        return [entry.model for entry in self._table.all()]

    def available_models(self) -> list[Model]:
        """Models whose provider has credentials (checked without running any ``!command``), limited to the
        models a signed-in account may use when its sign-in says so (GitHub Copilot)."""
        return [entry.model for entry in self.available_entries()]

    def available_entries(self) -> list[ModelEntry]:
        """``available_models`` as entries (their ``Model`` built when read)."""
        visible: dict[str, set[str] | None] = {}
        result = []
        for entry in self._table.where(self.has_auth):
            if entry.provider not in visible:
                visible[entry.provider] = self._visible_ids(entry.provider)
            ids = visible[entry.provider]
            if ids is None or entry.id in ids:
                result.append(entry)
        return result

    def _visible_ids(self, provider: str) -> set[str] | None:
        if self.auth.kind(provider) != "oauth" or provider in self.runtime_keys:
            return None
        flow = self.oauth_flows().get(provider)
        credential = self.auth.credential(provider)
        return flow.visible_models(credential) if flow is not None and credential is not None else None

    def find(self, provider: str, model_id: str) -> Model | None:
        return next((e.model for e in self._table.of(provider) if e.id == model_id), None)

    def providers(self) -> list[str]:
        return self._table.providers()

    def provider_name(self, provider: str) -> str:
        """The display name (``Anthropic``) from the catalog or a models file; the id when there is none."""
        named = (self._custom.providers.get(provider) or {}).get("name") or \
            (self.sources.presets.get(provider) or {}).get("name")
        return str(named) if named else provider

    def oauth_flows(self) -> dict[str, OAuthFlow]:
        """Subscription sign-in flows by provider id (from ``pi_oauth_providers``), loaded when first needed."""
        if self._flows is None:
            from pi_core.models.oauth import oauth_providers

            self._flows = oauth_providers(self.plugins) if self.plugins is not None else {}
        return self._flows

    # --- credentials -------------------------------------------------------------------------------

    def set_runtime_key(self, provider: str, key: str) -> None:
        """``--api-key``: used for this run only, never written anywhere."""
        self.runtime_keys[provider] = key

    def _configured_key(self, provider: str) -> str | None:
        return (self._custom.providers.get(provider) or {}).get("apiKey") or \
            (self.sources.presets.get(provider) or {}).get("apiKey")

    def virtual_model(self, model: Model) -> VirtualModel | None:
        """The router behind ``model`` when it is a virtual model (``pi_virtual_models``)."""
        if not self.sources.virtual:
            return None
        from pi_core.models.virtual import VIRTUAL_API

        return next((v for v in reversed(self.sources.virtual) if (v.provider, v.id) == (model.provider, model.id)
                     and model.api == VIRTUAL_API), None)

    def has_auth(self, provider: str) -> bool:
        if any(v.provider == provider for v in self.sources.virtual):
            from pi_core.models.virtual import VIRTUAL_API

            if all(e.api == VIRTUAL_API for e in self._table.of(provider)):
                return True  # only virtual models under this id: always available (docs/models.md#virtual-models)
        env = self.auth.env(provider)
        if self.auth.kind(provider) == "api_key" and not all(
                env.get(name) or os.environ.get(name) for name in required_env(provider)):
            return False
        return bool(provider in self.runtime_keys or self.auth.has_key(provider) or env_bearer_token(provider, env)
                    or env_api_key(provider, env) or self._configured_key(provider) or self.keyless(provider))

    def keyless(self, provider: str) -> bool:
        """A provider a models file defines with a base URL and models but no ``apiKey``: a local server
        (Ollama, llama.cpp, vLLM, LM Studio...) that needs no key, whatever its name."""
        config = self._custom.providers.get(provider) or {}
        return bool(config.get("baseUrl") and config.get("models") and not config.get("apiKey"))

    def _bearer_token(self, provider: str) -> str | None:
        """``ANTHROPIC_AUTH_TOKEN`` and the like, when nothing stronger (``--api-key``, auth.json) is set."""
        if provider in self.runtime_keys or self.auth.kind(provider) is not None:
            return None
        return env_bearer_token(provider, self.auth.env(provider))

    def provider_env(self, provider: str) -> dict[str, str]:
        """Settings for ``provider``: its stored credential's ``env`` over the process environment's values."""
        return self.auth.env(provider)

    def api_key_for(self, model: Model, override: str | None = None) -> str:
        """The key to send for ``model``; raises MissingApiKey naming the variable to set.

        A stored OAuth credential is refreshed first when it is about to expire.
        """
        if self.virtual_model(model) is not None:
            return ""  # a virtual model's requests carry the key of the model they are routed to
        provider = model.provider
        key = override or self.runtime_keys.get(provider)
        if not key and self.auth.kind(provider) == "oauth":
            return self.oauth_auth(provider).api_key
        key = key or self.auth.api_key(provider) or self._bearer_token(provider) or \
            env_api_key(provider, self.auth.env(provider))
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
        if self.keyless(provider):
            return KEYLESS_API_KEY
        if not env_var_names(provider) and provider in self.oauth_flows():
            raise MissingApiKey(f"No API key for provider: {provider}. Sign in with `pi auth login {provider}` "
                                f"(or /login in pi).")
        raise MissingApiKey(missing_key_message(provider))

    def oauth_auth(self, provider: str, *, force: bool = False, min_validity_ms: float | None = None) -> RequestAuth:
        """``RequestAuth`` from the stored OAuth credential of ``provider``, refreshed when due (or ``force``)."""
        from pi_core.models.oauth import OAuthError
        from pi_core.models.oauth.tokens import (
            REFRESH_MARGIN_MS,
            fresh_credential,
            run_sync,
        )

        flow = self.oauth_flows().get(provider)
        if flow is None:
            raise OAuthError(f'auth.json holds an OAuth sign-in for "{provider}", but no installed plugin '
                             f"provides that sign-in")
        credential = run_sync(fresh_credential(
            self.auth, flow, force=force,
            min_validity_ms=REFRESH_MARGIN_MS if min_validity_ms is None else min_validity_ms))
        return flow.to_auth(credential)

    def request_model(self, model: Model) -> Model:
        """``model`` as a request should see it: ``{NAME}`` placeholders in its base URL filled from the
        provider's settings, the ``Authorization`` header of an environment Bearer token
        (``ANTHROPIC_AUTH_TOKEN``), and the endpoint/headers its OAuth sign-in asks for (unless a models
        file routes the provider elsewhere)."""
        update: dict[str, Any] = {}
        if "{" in model.base_url:
            env = self.auth.env(model.provider)
            update["base_url"] = _fill(model.base_url, lambda name: env.get(name) or os.environ.get(name))
        bearer = self._bearer_token(model.provider)
        if bearer and not any(name.lower() == "authorization" for name in model.headers or {}):
            update["headers"] = {**(model.headers or {}), "Authorization": f"Bearer {bearer}"}
        if self.auth.kind(model.provider) == "oauth" and model.provider not in self.runtime_keys:
            auth = self.oauth_auth(model.provider)
            routed = bool((self._custom.providers.get(model.provider) or {}).get("baseUrl"))
            if auth.base_url and not routed:
                update["base_url"] = auth.base_url
            if auth.headers:
                update["headers"] = {**(model.headers or {}), **auth.headers}
        return model.model_copy(update=update) if update else model

    def uses_oauth(self, provider: str) -> bool:
        return self.auth.kind(provider) == "oauth" and provider not in self.runtime_keys

    def request_headers(self, model: Model) -> dict[str, str] | None:
        """The headers a request for ``model`` carries (``authHeader`` is already folded into them);
        raises when the provider asks for a Bearer header but its key resolved to nothing."""
        config = self._custom.providers.get(model.provider) or {}
        if config.get("authHeader") and "Authorization" not in (model.headers or {}):
            raise PiError(f'No API key found for "{model.provider}"')
        return model.headers


def _with_custom(table: EntryTable, providers: dict[str, dict[str, Any]],
                 defaults: Mapping[str, dict[str, Any]]) -> EntryTable:
    """``build_models`` over the providers a models file configures; the other entries stay unbuilt."""
    if not providers:
        return table
    touched = table.where(providers.__contains__)
    built = build_models([entry.model for entry in touched], providers, defaults)
    # build_models keeps their order; new custom models come after
    changed: dict[tuple[str, str], ModelEntry | None] = {e.key: ModelEntry.of(m) for e, m in zip(touched, built)}
    return table.replaced(set(providers), changed, [ModelEntry.of(m) for m in built[len(touched):]])


# Sent to a keyless provider: the wires always send a credential header, and local servers ignore it.
KEYLESS_API_KEY = "pi-no-key"


def _fill(template: str, lookup: Any) -> str:
    import re

    def value(match: re.Match[str]) -> str:
        found = lookup(match.group(1))
        return found if found else match.group(0)

    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", value, template)


_AMBIENT = {
    "amazon-bedrock": "Set AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or "
                      "AWS_BEARER_TOKEN_BEDROCK",
    "google-vertex-anthropic": "Set GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION and sign in with "
                               "`gcloud auth application-default login` (or GOOGLE_APPLICATION_CREDENTIALS)",
}


def missing_key_message(provider: str) -> str:
    if provider in _AMBIENT:
        return f"No credentials for provider: {provider}. {_AMBIENT[provider]}."
    names = env_var_names(provider)
    where = config_paths.models_toml_path()
    if names:
        hint = " or ".join(names)
        return (f"No API key for provider: {provider}. Set {hint} in the environment, pass --api-key, "
                f"or store a key in {config_paths.auth_path()}.")
    return (f'No API key for provider: {provider}. Add "apiKey" to its entry in {where} '
            f"(a literal, an environment variable name, or !command), or pass --api-key.")
