"""``pi auth``: sign in and out of providers, print their credentials for other programs, check readiness.

Pi's grammar, texts and exit codes: ``check`` prints ``ready``/``not_ready``/``invalid`` and exits 0/1/2;
``login`` needs an interactive terminal; ``logout`` of nothing stored succeeds. Credentials never appear
in output except where a command exists to print them.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_core.app.args import Args
    from pi_core.models.registry import ModelRegistry

LOGIN_USAGE = "pi auth login <provider> [--api-key] [--no-browser]"
LOGOUT_USAGE = "pi auth logout <provider>"
USAGE = {
    "check": "pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]",
    "print-api-key": "pi auth print-api-key --provider <provider> [--model <model>]",
    "print-bearer-token": "pi auth print-bearer-token --provider <provider> [--model <model>] [--min-expiry <duration>]",
}
DEFAULT_MIN_EXPIRY_MS = 30 * 60_000
HELP = """Usage:
  pi auth login <provider> [--api-key] [--no-browser]
  pi auth logout <provider>
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Sign in to model providers and out again, print their credentials for other programs, or check that
they are ready. Credentials are kept in auth.json in the config directory (~/.pi/agent).

Commands:
  login <provider>        Sign in with an account (browser or device code), or store an API key, then exit
  logout <provider>       Remove the stored credentials; environment variables and models.json stay
  print-api-key           Print the resolved API key
  print-bearer-token      Print a resolved OAuth bearer token (refreshed when it expires too soon)
  check                   Print ready, not_ready, or invalid; exit with 0, 1, or 2

Options for print-api-key, print-bearer-token, and check (at least one is required):
  --provider <provider>   Resolve credentials for a provider
  --model <model>         Resolve credentials from a model

Options for login:
  --api-key               Store an API key instead of signing in with an account
  --no-browser            Do not open a browser; use another sign-in method, e.g. a device code

Other options:
  --min-expiry <duration> Minimum remaining token lifetime for print-bearer-token, e.g. 30m or 1h
  --json                  Print the check result as JSON
  --credentials           Print the credential from check, or include it in the JSON
  --no-refresh            Do not refresh expired OAuth credentials during check
"""


class AuthCommandError(PiError):
    pass


class MissingTarget(AuthCommandError):
    """Neither --provider nor --model (``check`` exits 2 for it, as Pi's does)."""


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _err(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _registry(pi_options: Args | None) -> ModelRegistry:
    """The models and credentials of the plugins ``pi_options`` (-e, --no-extensions, ...) load."""
    from pi_core.app.args import Args
    from pi_core.app.startup import load_environment, model_registry

    registry: ModelRegistry = model_registry(load_environment(pi_options or Args(), Path.cwd()))
    return registry


# --- entry ----------------------------------------------------------------------------------------


def run(argv: list[str], pi_options: Args | None = None) -> int:
    """``argv`` starts after ``auth``; ``pi_options`` are pi's own, given before it."""
    if not argv or argv[0] == "help" or "-h" in argv or "--help" in argv:
        sys.stdout.write(HELP)
        return 0
    command, rest = argv[0], [a for a in argv[1:] if a != "--offline"]
    try:
        if command == "login":
            return _login(rest, pi_options)
        if command == "logout":
            return _logout(rest, pi_options)
        if command not in USAGE:
            raise AuthCommandError(f'Unknown auth command "{command}". Use "pi auth login", "pi auth logout", '
                                   f'"pi auth print-api-key", "pi auth print-bearer-token", or "pi auth check".')
        options = _parse_options(command, rest)
    except AuthCommandError as err:
        _err(f"Error: {err}")
        return 2 if isinstance(err, MissingTarget) and command == "check" else 1
    try:
        registry = _registry(pi_options)
        if command == "check":
            return _check(registry, options)
        _out(_print_credential(registry, command, options))
        return 0
    except PiError as err:
        _err(f"Error: {err}")
        return 2 if command == "check" else 1


@dataclass
class Options:
    provider: str | None = None
    model: str | None = None
    json: bool = False
    credentials: bool = False
    refresh: bool = True
    min_expiry_ms: float | None = None
    extra: list[str] = field(default_factory=list)


def _parse_options(command: str, args: list[str]) -> Options:
    options = Options()
    items = iter(args)
    for arg in items:
        if arg in ("--provider", "--model"):
            value = next(items, None)
            if not value or value.startswith("-"):
                raise AuthCommandError(f"{arg} needs a value")
            setattr(options, arg[2:], value.strip())
        elif arg == "--min-expiry":
            if command != "print-bearer-token":
                raise AuthCommandError("--min-expiry is only supported by print-bearer-token")
            options.min_expiry_ms = parse_duration_ms(next(items, None))
        elif arg in ("--json", "--credentials", "--no-refresh"):
            if command != "check":
                raise AuthCommandError(f"{arg} is only supported by auth check")
            if arg == "--json":
                options.json = True
            elif arg == "--credentials":
                options.credentials = True
            else:
                options.refresh = False
        elif arg.startswith("-"):
            raise AuthCommandError(f'Unknown option {arg} for "auth {command}". Use "{USAGE[command]}".')
        else:
            raise AuthCommandError("Auth commands only accept --provider and --model")
    if not options.provider and not options.model:
        raise MissingTarget("Auth checks require --provider <provider> or --model <model>" if command == "check"
                               else "Credential printing requires --provider <provider> or --model <model>")
    return options


def parse_duration_ms(text: str | None) -> float:
    found = re.fullmatch(r"(\d+)(ms|s|m|h)", (text or "").strip(), re.IGNORECASE)
    if not found:
        raise AuthCommandError("--min-expiry must use a duration such as 30m or 1h")
    unit = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000}[found.group(2).lower()]
    return int(found.group(1)) * unit


def _provider_of(registry: ModelRegistry, options: Options) -> str:
    if not options.model:
        return options.provider or ""
    from pi_core.models.resolution import resolve_cli_model

    resolved = resolve_cli_model(registry, options.provider, options.model)
    if resolved.model is None:
        raise AuthCommandError(resolved.error or f'Model "{options.model}" not found. Use --list-models to see '
                               f"available models.")
    return str(resolved.model.provider)


# --- check and print ------------------------------------------------------------------------------


Status = Literal["ready", "not_ready", "invalid"]


@dataclass(frozen=True)
class CheckResult:
    """What ``pi auth check`` found; ``to_json`` is Pi's ``--json`` object."""

    status: Status
    provider: str
    reason: str | None = None  # why not ready / invalid
    auth_type: Literal["oauth", "api_key"] | None = None  # how a ready provider authenticates

    @property
    def exit_code(self) -> int:
        return {"ready": 0, "not_ready": 1}.get(self.status, 2)

    def to_json(self, credential: str | None = None) -> dict[str, Any]:  # open: JSON for --json
        out: dict[str, Any] = {"status": self.status, "provider": self.provider}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.auth_type is not None:
            out["authType"] = self.auth_type
        if credential:
            out["credentials"] = credential
        return out


def _check(registry: ModelRegistry, options: Options) -> int:
    provider = _provider_of(registry, options)
    credential: str | None = None
    try:
        result = _status(registry, provider, options.refresh)
        if options.credentials and result.status == "ready":
            credential = _credential(registry, provider, options.refresh)
            if not credential:
                result = CheckResult("not_ready", provider, "credential_not_available")
    except PiError:
        result = CheckResult("invalid", provider, "invalid_state")
    if options.json:
        _out(json.dumps(result.to_json(credential), separators=(",", ":")))
    else:
        _out(credential or result.status)
    return result.exit_code


def _status(registry: ModelRegistry, provider: str, refresh: bool) -> CheckResult:
    from pi_core.models.login import is_known

    if registry.errors:
        return CheckResult("invalid", provider, "invalid_state")
    if not is_known(registry, provider):
        return CheckResult("not_ready", provider, "provider_not_found")
    if not registry.has_auth(provider):
        return CheckResult("not_ready", provider, "credentials_not_configured")
    oauth = registry.uses_oauth(provider)
    if oauth and refresh:
        from pi_core.models.oauth import OAuthError

        try:
            registry.oauth_auth(provider)
        except OAuthError:
            return CheckResult("invalid", provider, "invalid_state")
    return CheckResult("ready", provider, auth_type="oauth" if oauth else "api_key")


def _credential(registry: ModelRegistry, provider: str, refresh: bool) -> str | None:
    if registry.uses_oauth(provider):
        if not refresh:
            access = (registry.auth.credential(provider) or {}).get("access")
            return access if isinstance(access, str) else None
        return registry.oauth_auth(provider).api_key or None
    return _api_key(registry, provider)


def _api_key(registry: ModelRegistry, provider: str) -> str | None:
    from pi_core.errors import MissingApiKey
    from pi_core.types import Model

    model = next((m for m in registry.all_models() if m.provider == provider), None) or \
        Model(id="-", api="-", provider=provider)
    try:
        key = registry.api_key_for(model)
    except MissingApiKey:
        return None
    return None if key == "<authenticated>" else key


def _print_credential(registry: ModelRegistry, command: str, options: Options) -> str:
    from pi_core.models.login import is_known

    if options.provider and not is_known(registry, options.provider):
        raise AuthCommandError(f'Unknown provider "{options.provider}". Use --list-models to see available providers.')
    provider = _provider_of(registry, options)
    oauth = registry.uses_oauth(provider)
    if command == "print-api-key":
        if oauth:
            raise AuthCommandError(f'Provider "{provider}" is configured with OAuth, not an API key')
        key = _api_key(registry, provider)
        if not key:
            raise AuthCommandError("No usable API key is configured")
        return key
    if not oauth:
        raise AuthCommandError(f'Provider "{provider}" is not configured with an OAuth bearer token')
    minimum = options.min_expiry_ms if options.min_expiry_ms is not None else DEFAULT_MIN_EXPIRY_MS
    auth = registry.oauth_auth(provider, min_validity_ms=minimum)
    if not auth.api_key:
        raise AuthCommandError("No usable OAuth bearer token is configured")
    return str(auth.api_key)


# --- login and logout -----------------------------------------------------------------------------


def _login(args: list[str], pi_options: Args | None) -> int:
    from pi_core import config_paths
    from pi_core.app.login_terminal import TerminalLoginUI, is_interactive
    from pi_core.models.login import LoginUnavailable, choose_login, is_known, login, login_providers, saved_text
    from pi_core.models.oauth import LoginCancelled, OAuthError

    provider, api_key, browser = "", False, True
    for arg in args:
        if arg == "--api-key":
            api_key = True
        elif arg == "--no-browser":
            browser = False
        elif arg.startswith("-") or provider:
            _err(f"Usage: {LOGIN_USAGE}")
            return 1
        else:
            provider = arg
    if not provider:
        _err(f"Usage: {LOGIN_USAGE}")
        return 1
    if api_key and not browser:
        _err("--no-browser only applies to account sign-in; omit it with --api-key.")
        return 1
    registry = _registry(pi_options)
    if not is_known(registry, provider):
        _err(f'Unknown provider "{_printable(provider)}".')
        _err(f"Providers: {', '.join(login_providers(registry))}")
        return 1
    if not is_interactive():
        _err(f'"{LOGIN_USAGE}" requires an interactive terminal')
        return 1
    name = registry.provider_name(provider)
    try:
        choice = choose_login(registry, provider, api_key)
    except LoginUnavailable as err:
        _err(str(err))
        return 1
    ui = TerminalLoginUI(provider, browser)
    try:
        asyncio.run(login(registry, provider, ui, choice))
    except (LoginCancelled, KeyboardInterrupt):
        _err("Login cancelled.")
        return 1
    except OAuthError as err:
        _err(f"Failed to log in to {name}: {err}")
        return 1
    done = saved_text(registry, provider, choice)
    _out(f"{done}. Credentials saved to {config_paths.auth_path()}")
    return 0


def _logout(args: list[str], pi_options: Args | None) -> int:
    from pi_core.models.login import is_known, logout, signed_out_text

    if len(args) != 1 or args[0].startswith("-"):
        _err(f"Usage: {LOGOUT_USAGE}")
        return 1
    provider = args[0]
    registry = _registry(pi_options)
    if not is_known(registry, provider) and registry.auth.credential(provider) is None:
        _err(f'Unknown provider "{_printable(provider)}".')
        _err(f"Stored credentials: {', '.join(sorted(registry.auth.providers())) or 'none'}")
        return 1
    name = registry.provider_name(provider)
    try:
        removed = logout(registry, provider)
    except PiError as err:
        _err(f"Logout failed: {err}")
        return 1
    _out(signed_out_text(name, removed))
    return 0


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)
