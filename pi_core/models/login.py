"""Sign in to a provider or store its API key, and sign out: what ``pi auth login/logout``, ``/login`` and
``/logout`` share. The UI (terminal or dialogs) is a ``LoginUI``; results are stored in ``auth.json``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pi_core.errors import PiError
from pi_core.models.env_keys import ENV_VARS, required_env

if TYPE_CHECKING:
    from pi_core.models.oauth import LoginUI, OAuthFlow
    from pi_core.models.registry import ModelRegistry

# Providers whose credentials come from their platform: pi does not store them (providers.md).
AMBIENT: dict[str, str] = {"amazon-bedrock": "AWS credentials or bearer token"}
VERTEX = ("google-vertex", "google-vertex-anthropic")


class LoginUnavailable(PiError):
    """The provider cannot be signed in to this way (the message says what to do instead)."""


@dataclass
class LoginChoice:
    kind: Literal["oauth", "api_key"]
    flow: OAuthFlow | None = None


def login_providers(registry: ModelRegistry) -> list[str]:
    """Provider ids ``pi auth login`` accepts: an OAuth flow or an API key to store."""
    known = set(registry.providers()) | set(registry.oauth_flows()) | set(ENV_VARS)
    return sorted(p for p in known if p in registry.oauth_flows() or p in ENV_VARS or p in AMBIENT or p in VERTEX)


def is_known(registry: ModelRegistry, provider: str) -> bool:
    return provider in registry.providers() or provider in registry.oauth_flows() or provider in ENV_VARS \
        or provider in AMBIENT or provider in VERTEX


def choose_login(registry: ModelRegistry, provider: str, api_key: bool) -> LoginChoice:
    """Account sign-in unless ``api_key``; providers without one take an API key (the only way in)."""
    flow = registry.oauth_flows().get(provider)
    has_key_login = provider in ENV_VARS or provider in VERTEX
    name = registry.provider_name(provider)
    if flow is not None and not api_key:
        return LoginChoice("oauth", flow)
    if has_key_login:
        return LoginChoice("api_key")
    if api_key and flow is not None:
        raise LoginUnavailable(f"{name} has no API key login. Omit --api-key to sign in.")
    raise LoginUnavailable(f"{name} is configured outside pi ({AMBIENT.get(provider, 'ambient credentials')}).")


async def login(registry: ModelRegistry, provider: str, ui: LoginUI, choice: LoginChoice) -> None:
    """Run the sign-in (or ask for the key) and store the credential; raises OAuthError/LoginCancelled."""
    from pi_core.models.oauth import LoginCancelled
    from pi_core.models.oauth.tokens import remember_secrets

    if choice.kind == "oauth" and choice.flow is not None:
        credential = await choice.flow.login(ui)
        credential["type"] = "oauth"
        remember_secrets(credential)
        registry.auth.set_credential(provider, credential)
        return
    if provider in VERTEX:
        await _vertex_login(registry, provider, ui)
        return
    name = registry.provider_name(provider)
    key = (await ui.ask(f"Enter {name} API key", secret=True)).strip()
    if not key:
        raise LoginCancelled()
    env = {}
    for variable in required_env(provider):
        value = (await ui.ask(f"Enter {variable}")).strip()
        if not value:
            raise LoginCancelled()
        env[variable] = value
    from pi_core.toolkit.redact import register_secret

    register_secret(key)
    registry.auth.set_api_key(provider, key, env or None)


async def _vertex_login(registry: ModelRegistry, provider: str, ui: LoginUI) -> None:
    """Vertex AI: a Google Cloud API key, or Application Default Credentials / a service-account key file with
    the project and location, kept as the credential's ``env`` (Pi's three choices; Claude takes no key)."""
    from pi_core.models.oauth import LoginCancelled

    methods = [("adc", "Application Default Credentials"), ("service-account", "Service account credentials file")]
    if provider == "google-vertex":
        methods.insert(0, ("api-key", "Google Cloud API key"))
    ui.progress("Select Google Vertex AI authentication method:\n" +
                "\n".join(f"  {index}. {label}" for index, (_, label) in enumerate(methods, 1)))

    async def answer(prompt: str, secret: bool = False) -> str:
        value = (await ui.ask(prompt, secret=secret)).strip()
        if not value:
            raise LoginCancelled()
        return value

    while True:
        picked = await answer(f"Select 1-{len(methods)}")
        if picked.isdigit() and 1 <= int(picked) <= len(methods):
            method = methods[int(picked) - 1][0]
            break
        ui.progress(f"Enter a number from 1 to {len(methods)}.")
    if method == "api-key":
        key = await answer("Enter Google Cloud API key", secret=True)
        from pi_core.toolkit.redact import register_secret

        register_secret(key)
        registry.auth.set_api_key(provider, key)
        return
    if method == "adc":
        ui.progress("Run `gcloud auth application-default login`, then provide the project and location.")
    env = {"GOOGLE_CLOUD_PROJECT": await answer("Enter Google Cloud project ID"),
           "GOOGLE_CLOUD_LOCATION": await answer("Enter Google Cloud location")}
    if method == "service-account":
        env["GOOGLE_APPLICATION_CREDENTIALS"] = await answer("Enter service account credentials file path")
    registry.auth.update(lambda data: {**data, provider: {"type": "api_key", "env": env}})


def saved_text(registry: ModelRegistry, provider: str, choice: LoginChoice) -> str:
    """``Logged in to X`` / ``Saved API key for X`` / ``Saved settings for X`` (a credential that is only ``env``)."""
    name = registry.provider_name(provider)
    if choice.kind == "oauth":
        return f"Logged in to {name}"
    registry.auth.reload()
    stored = registry.auth.credential(provider) or {}
    return f"Saved API key for {name}" if stored.get("key") else f"Saved settings for {name}"


def logout(registry: ModelRegistry, provider: str) -> str | None:
    """Remove what is stored for ``provider``; the kind that was removed (``oauth``/``api_key``) or None."""
    kind = registry.auth.kind(provider)
    if kind is None and registry.auth.credential(provider) is None:
        return None
    registry.auth.remove(provider)
    return kind or "api_key"


def signed_out_text(name: str, removed: str | None) -> str:
    """Pi's line after a logout; ``removed`` is what ``logout`` returned."""
    if removed is None:
        return f"No stored credentials for {name}. Environment variables and models.json config are unchanged."
    if removed == "oauth":
        return f"Logged out of {name}."
    return f"Removed stored API key for {name}. Environment variables and models.json config are unchanged."
