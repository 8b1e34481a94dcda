"""login_commands: ``/login`` and ``/logout``, the interactive side of ``pi auth login`` / ``pi auth logout``."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pi_core import SlashCommand, hookimpl

if TYPE_CHECKING:
    from pi_core.extension import ExtensionContext
    from pi_core.models.oauth import LoginMethod
    from pi_core.models.registry import ModelRegistry
    from pi_core.ui import UI

SIGN_IN = "Sign in with an account"
API_KEY = "Enter an API key"


class DialogLoginUI:
    """``LoginUI`` on the session's UI: questions become dialogs, URLs and codes become notices."""

    def __init__(self, ui: UI) -> None:
        self.ui = ui

    async def choose(self, message: str, methods: list[LoginMethod]) -> LoginMethod:
        from pi_core.models.oauth import LoginCancelled

        if len(methods) == 1:
            return methods[0]
        picked = await self.ui.select(message, [m.label for m in methods])
        method = next((m for m in methods if m.label == picked), None)
        if method is None:
            raise LoginCancelled()
        return method

    async def ask(self, message: str, placeholder: str = "", secret: bool = False) -> str:
        from pi_core.models.oauth import LoginCancelled

        answer = await self.ui.input(message, placeholder)
        if answer is None:
            raise LoginCancelled()
        return answer

    async def paste(self, message: str, placeholder: str = "") -> str:
        return await self.ask(message, placeholder)

    def open_url(self, url: str, instructions: str) -> None:
        self.ui.notify(f"Open this URL to sign in:\n  {url}\n{instructions}".rstrip())
        _open_browser(url)

    def show_device_code(self, verification_uri: str, user_code: str) -> None:
        self.ui.notify(f"Open {verification_uri} and enter code: {user_code}\nWaiting for authentication...")
        _open_browser(verification_uri)

    def progress(self, message: str) -> None:
        self.ui.notify(message)


def _open_browser(url: str) -> None:
    from pi_core.app.login_terminal import open_browser

    open_browser(url)


def _registry(ctx: ExtensionContext) -> ModelRegistry:
    models = getattr(ctx.session, "models", None)
    if models is None or not hasattr(models, "oauth_flows"):
        from pi_core.models.registry import ModelRegistry

        session: Any = ctx.session  # an AgentSession: it has the plugins the SessionHost protocol leaves out
        models = ModelRegistry.from_plugins(session.plugins)
    return models  # type: ignore[no-any-return]


def _label(registry: ModelRegistry, provider: str) -> str:
    flow = registry.oauth_flows().get(provider)
    name = flow.name if flow is not None else registry.provider_name(provider)
    return f"{name} ({provider})" if name != provider else provider


async def login_command(args: str, ctx: ExtensionContext) -> None:
    from pi_core import config_paths
    from pi_core.models.login import LoginUnavailable, choose_login, is_known, login, login_providers, saved_text
    from pi_core.models.oauth import LoginCancelled, OAuthError

    registry = _registry(ctx)
    provider = args.strip()
    if not provider:
        choices = login_providers(registry)
        ordered = sorted(choices, key=lambda p: (p not in registry.oauth_flows(), p))
        labels = {_label(registry, p): p for p in ordered}
        picked = await ctx.ui.select("Select provider to login:", list(labels))
        if picked is None:
            return
        provider = labels[picked]
    elif not is_known(registry, provider):
        ctx.ui.notify(f'Unknown provider "{provider}". Providers: {", ".join(login_providers(registry))}', "error")
        return
    name = registry.provider_name(provider)
    use_key = False
    if provider in registry.oauth_flows() and provider in _key_providers():
        picked = await ctx.ui.select(f"Log in to {name}:", [SIGN_IN, API_KEY])
        if picked is None:
            return
        use_key = picked == API_KEY
    try:
        choice = choose_login(registry, provider, use_key)
        await login(registry, provider, DialogLoginUI(ctx.ui), choice)
    except LoginUnavailable as err:
        ctx.ui.notify(str(err), "error")
        return
    except (LoginCancelled, asyncio.CancelledError):
        ctx.ui.notify("Login cancelled.", "warning")
        return
    except OAuthError as err:
        ctx.ui.notify(f"Failed to log in to {name}: {err}", "error")
        return
    registry.refresh()
    done = saved_text(registry, provider, choice)
    ctx.ui.notify(f"{done}. Credentials saved to {config_paths.auth_path()}")


def _key_providers() -> set[str]:
    from pi_core.models.env_keys import ENV_VARS

    return set(ENV_VARS)


async def logout_command(args: str, ctx: ExtensionContext) -> None:
    from pi_core.errors import PiError
    from pi_core.models.login import logout, signed_out_text

    registry = _registry(ctx)
    stored = sorted(registry.auth.providers())
    provider = args.strip()
    if not provider:
        if not stored:
            ctx.ui.notify("No stored credentials. Environment variables and models.json config are unchanged.")
            return
        labels = {_label(registry, p): p for p in stored}
        picked = await ctx.ui.select("Select provider to logout:", list(labels))
        if picked is None:
            return
        provider = labels[picked]
    name = registry.provider_name(provider)
    try:
        removed = logout(registry, provider)
    except PiError as err:
        ctx.ui.notify(f"Logout failed: {err}", "error")
        return
    registry.refresh()
    ctx.ui.notify(signed_out_text(name, removed))


COMMANDS = [
    SlashCommand("login", "Sign in to a provider (subscription or API key)", login_command),
    SlashCommand("logout", "Remove a provider's stored credentials", logout_command),
]


@hookimpl
def pi_commands() -> list[Any]:
    return list(COMMANDS)
