"""``pi mcp add|remove|list|login|logout``: configure and check servers and sign in, without a session."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from pi_plugins.mcp.config import (
    ConfigError,
    McpConfig,
    ServerEntry,
    add_server,
    load_config,
    project_trusted,
    remove_server,
    validate_server,
)

from pi_core.config_paths import agent_dir

HINT = 'Use "pi mcp --help" for usage.'
HTTP_ONLY = ("header", "bearer-token-env-var", "oauth-client-id", "oauth-client-secret", "oauth-callback-port",
             "oauth-client-name", "oauth-client-registration")
STDIO_ONLY = ("env", "cwd")
ADD_OPTIONS = {"local": "flag", "url": "value", "env": "list", "cwd": "value", "header": "list",
               "bearer-token-env-var": "value", "oauth-client-id": "value", "oauth-client-secret": "value",
               "oauth-callback-port": "value", "oauth-client-name": "value", "oauth-client-registration": "value",
               "exposure": "value", "description": "value"}
DEFAULT_LOGIN_TIMEOUT_S = 300.0


class CommandError(Exception):
    """A usage or configuration problem: printed on stderr, exit status 1."""


class McpGroup(click.Group):
    """Returns the sub-command's exit status and prints errors without a traceback, however it is invoked."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs) or 0
        except click.exceptions.Exit as done:
            return done.exit_code
        except click.ClickException as err:
            err.show()
            return 1
        except CommandError as err:
            click.echo(str(err), err=True)
            return 1


@click.group("mcp", cls=McpGroup, context_settings={"help_option_names": ["-h", "--help"]})
def mcp_command() -> None:
    """Configure and check MCP servers and sign in to OAuth servers without starting a session.

    Reads <agentDir>/mcp.json and, in trusted projects, .pi/mcp.json."""


def _paths(local: bool) -> tuple[Path, str]:
    if local:
        return Path.cwd() / ".pi" / "mcp.json", "project"
    return agent_dir() / "mcp.json", "global"


def parse_options(args: list[str], known: dict[str, str], max_positionals: int | None = None
                  ) -> tuple[list[str], dict[str, Any]]:
    """``--name value`` options anywhere; ``--`` or the last positional ends them, so a server command's own
    flags (``add fs npx -y pkg``) are passed through."""
    positional: list[str] = []
    values: dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = "--local" if args[i] == "-l" else args[i]
        if arg == "--" or (max_positionals is not None and len(positional) >= max_positionals):
            positional.extend(args[i + 1:] if arg == "--" else args[i:])
            break
        if not arg.startswith("--"):
            positional.append(arg)
        else:
            name = arg[2:]
            kind = known.get(name)
            if kind is None:
                raise CommandError(f"Unknown option {args[i]}.\n{HINT}")
            if kind == "flag":
                values[name] = True
            else:
                i += 1
                if i >= len(args):
                    raise CommandError(f"{arg} needs a value.")
                if kind == "list":
                    values.setdefault(name, []).append(args[i])
                else:
                    values[name] = args[i]
        i += 1
    return positional, values


def _pairs(option: str, pairs: list[str]) -> dict[str, str]:
    record: dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise CommandError(f'--{option} expects KEY=VALUE, got "{pair}".')
        record[key] = value
    return record


def _untrusted_note(config: McpConfig) -> str | None:
    if config.untrusted_project is None:
        return None
    return (f"{config.untrusted_project} is ignored because the project is not trusted. Start pi in the project "
            "to trust it.")


@mcp_command.command("add", context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                              "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def add_command(args: tuple[str, ...]) -> int:
    """Add or replace a server: pi mcp add <server> [options] (--url <url> | -- <command> [args...])."""
    usage = f"Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n{HINT}"
    positional, values = parse_options(list(args), ADD_OPTIONS, max_positionals=2)
    name, command = (positional[0], positional[1:]) if positional else (None, [])
    url = values.get("url")
    if not name or (url is None) == (not command):
        raise CommandError(usage)
    misplaced = next((o for o in (HTTP_ONLY if url is None else STDIO_ONLY) if o in values), None)
    if misplaced:
        raise CommandError(f"--{misplaced} only applies to "
                           f"{'HTTP servers (--url)' if url is None else 'stdio servers'}.")
    raw: dict[str, Any]
    if url is not None:
        headers = _pairs("header", values.get("header", []))
        if "bearer-token-env-var" in values:
            headers["Authorization"] = "Bearer ${" + values["bearer-token-env-var"] + "}"
        oauth: dict[str, Any] = {}
        for option, key in (("oauth-client-id", "clientId"), ("oauth-client-secret", "clientSecret"),
                            ("oauth-client-name", "clientName"), ("oauth-client-registration", "clientRegistration")):
            if option in values:
                oauth[key] = values[option]
        if "oauth-callback-port" in values:
            try:
                oauth["callbackPort"] = int(values["oauth-callback-port"])
            except ValueError:
                raise CommandError("--oauth-callback-port must be a port number.") from None
        raw = {"url": url, **({"headers": headers} if headers else {}), **({"oauth": oauth} if oauth else {})}
    else:
        env = _pairs("env", values.get("env", []))
        raw = {"command": command[0], **({"args": command[1:]} if command[1:] else {}),
               **({"env": env} if env else {}), **({"cwd": values["cwd"]} if "cwd" in values else {})}
    if "exposure" in values:
        raw["exposure"] = values["exposure"]
    if "description" in values:
        raw["description"] = values["description"]
    try:
        validated = validate_server(name, raw)
    except ConfigError as err:
        raise CommandError(str(err)) from None
    path, scope = _paths(bool(values.get("local")))
    try:
        replaced = add_server(path, name, raw)
    except (ConfigError, OSError) as err:
        raise CommandError(f"Could not update {path}: {err}") from None
    click.echo(f'{"Replaced" if replaced else "Added"} {scope} MCP server "{name}" in {path}.')
    if scope == "project" and not project_trusted(Path.cwd(), agent_dir()):
        click.echo(f"The project is not trusted, so {path} is ignored until you start pi in the project and "
                   "trust it.")
    sign_in = f". If it requires sign-in: pi mcp login {name}" if validated.uses_oauth else ""
    click.echo(f"Check it with: pi mcp list{sign_in}")
    return 0


@mcp_command.command("remove")
@click.argument("name")
@click.option("-l", "--local", is_flag=True, help="Use .pi/mcp.json of the current project.")
def remove_command(name: str, local: bool) -> int:
    """Remove a server from mcp.json (stored OAuth credentials are kept)."""
    path, scope = _paths(local)
    try:
        removed = remove_server(path, name)
    except (ConfigError, OSError) as err:
        raise CommandError(f"Could not update {path}: {err}") from None
    if removed:
        click.echo(f'Removed {scope} MCP server "{name}" from {path}.')
        return 0
    other = load_config(agent_dir(), Path.cwd(), trusted=True).find(name)
    hint = ""
    if other is not None and other.scope != scope:
        hint = f" It is defined in {other.source}; {'use --local' if other.scope == 'project' else 'omit --local'}."
    raise CommandError(f'No {scope} MCP server named "{name}" in {path}.{hint}')


@dataclass
class ServerReport:
    """What ``pi mcp list`` found for one entry; ``to_json`` is its ``--json`` object."""

    entry: ServerEntry
    state: str = "disabled"
    tools: list[str] = field(default_factory=list)
    tool_exposure: dict[str, str] = field(default_factory=dict)  # tools whose exposure differs from the server's
    resources: bool = False
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.entry.config.enabled and self.state != "connected"

    def to_json(self) -> dict[str, Any]:
        entry, config = self.entry, self.entry.config
        out: dict[str, Any] = {"name": entry.name, "scope": entry.scope, "source": str(entry.source)}
        if entry.override:
            out["override"] = str(entry.override)
        out.update(enabled=config.enabled, exposure=config.exposure, transport=config.describe(), state=self.state,
                   tools=self.tools)
        if self.tool_exposure:
            out["toolExposure"] = self.tool_exposure
        if self.resources:
            out["resources"] = True
        if self.error:
            out["error"] = self.error
        return out


async def _check(entry: ServerEntry) -> ServerReport:
    from pi_plugins.mcp.connection import ServerConnection
    from pi_plugins.mcp.log import ServerLog
    from pi_plugins.mcp.oauth import session_auth

    config = entry.config
    if not config.enabled:
        return ServerReport(entry)
    directory = agent_dir()
    connection = ServerConnection(entry=entry, cwd=Path.cwd(), log=ServerLog(directory / "mcp.log"),
                                  auth=session_auth(directory))
    try:
        await connection.try_connect()
        return ServerReport(
            entry, state=connection.state, tools=[t.name for t in connection.tools],
            tool_exposure={t.name: config.exposure_of(t.name) for t in connection.tools
                           if config.exposure_of(t.name) != config.exposure},
            resources=connection.has_resources,
            error=connection.error if connection.state != "connected" else None)
    finally:
        await connection.close()


@mcp_command.command("list")
@click.option("--json", "json_", is_flag=True, help="Print the list as JSON.")
def list_command(json_: bool) -> int:
    """Connect to every enabled server and print its state, tools and errors (exit 1 on any failure)."""
    config = load_config(agent_dir(), Path.cwd())
    note = _untrusted_note(config)

    async def check_all() -> list[ServerReport]:
        return list(await asyncio.gather(*(_check(entry) for entry in config.servers)))

    reports = asyncio.run(check_all()) if config.servers else []
    failed = bool(config.errors) or any(r.failed for r in reports)
    if json_:
        click.echo(json.dumps({"servers": [r.to_json() for r in reports], "errors": config.errors,
                               **({"note": note} if note else {})}, indent=2))
        return 1 if failed else 0
    if not reports and not config.errors:
        click.echo(f"No MCP servers configured. Add them to {agent_dir() / 'mcp.json'} or .pi/mcp.json.")
    for report in reports:
        name, count = report.entry.name, len(report.tools)
        state = {"connected": f"connected, {count} tool{'s' if count != 1 else ''}",
                 "needs-auth": "needs sign-in"}.get(report.state, report.state)
        click.echo(f"{name}: {state} ({report.entry.config.exposure}, {report.entry.scope})")
        click.echo(f"  {report.entry.config.describe()}")
        if report.entry.override:
            click.echo(f"  project override: {report.entry.override}")
        if report.state == "needs-auth":
            click.echo(f"  sign in with: pi mcp login {name}")
        if report.tools:
            shown = [f"{t} [{report.tool_exposure[t]}]" if t in report.tool_exposure else t for t in report.tools]
            click.echo(f"  tools: {', '.join(shown)}")
        if report.resources:
            click.echo("  offers resources")
        if report.error:
            click.echo("  " + report.error.replace("\n", "\n  "))
    for error in config.errors:
        click.echo(f"config error: {error}")
    if note:
        click.echo(note)
    return 1 if failed else 0


def _oauth_entry(name: str, local: bool) -> ServerEntry:
    config = load_config(agent_dir(), Path.cwd())
    entry = config.find(name)
    if entry is None:
        import difflib

        names = [s.name for s in config.servers]
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        note = _untrusted_note(config)
        raise CommandError(f'No MCP server named "{name}".' + (f' Did you mean "{close[0]}"?' if close else "")
                           + (f" {note}" if note else "") + f" Configured: {', '.join(names) or 'none'}.")
    if local and entry.scope != "project":
        raise CommandError(f'MCP server "{name}" is defined in {entry.source}, not in the project; omit --local.')
    if not entry.config.uses_oauth:
        raise CommandError(f'MCP server "{name}" does not use OAuth. Only HTTP servers without an Authorization '
                           "header do.")
    return entry


@mcp_command.command("login")
@click.argument("name")
@click.option("-l", "--local", is_flag=True, help="The server must be defined in the project's .pi/mcp.json.")
@click.option("--timeout", type=float, default=DEFAULT_LOGIN_TIMEOUT_S, show_default=True,
              help="Time limit for the whole sign-in, in seconds.")
def login_command(name: str, local: bool, timeout: float) -> int:
    """Sign in to an OAuth server: open the authorization page and wait for the browser."""
    if timeout <= 0:
        raise CommandError("--timeout must be a positive number of seconds.")
    entry = _oauth_entry(name, local)
    return asyncio.run(_login(entry, timeout))


async def _login(entry: ServerEntry, timeout: float) -> int:
    from pi_plugins.mcp.connection import ServerConnection
    from pi_plugins.mcp.oauth import SignInCancelled, SignInError, session_auth, sign_in

    directory = agent_dir()
    connection = ServerConnection(entry=entry, cwd=Path.cwd(), auth=session_auth(directory))
    try:
        await connection.connect()
        click.echo(f'Already signed in to MCP server "{entry.name}" ({len(connection.tools)} tools).')
        return 0
    except Exception:  # noqa: BLE001 - the state says whether a sign-in is what is missing
        if connection.state != "needs-auth":
            click.echo(f'MCP server "{entry.name}" failed to connect: {connection.error or "unknown error"}', err=True)
            return 1
    finally:
        await connection.close()

    def show(url: str) -> None:
        click.echo(f'Sign in to MCP server "{entry.name}" in your browser:\n{url}')

    try:
        await sign_in(entry, directory, show=show, paste=_paste_from_terminal if sys.stdin.isatty() else None,
                      timeout=timeout)
    except SignInCancelled:
        click.echo(f'Sign-in to MCP server "{entry.name}" was cancelled or not completed within {timeout:g} seconds.',
                   err=True)
        return 1
    except SignInError as err:
        click.echo(f'Sign-in to MCP server "{entry.name}" failed: {err}', err=True)
        return 1
    check = ServerConnection(entry=entry, cwd=Path.cwd(), auth=session_auth(directory))
    try:
        await check.connect()
    except Exception:  # noqa: BLE001 - reported below
        click.echo(f"Signed in, but MCP server \"{entry.name}\" failed to connect: {check.error}", err=True)
        return 1
    finally:
        await check.close()
    click.echo(f'Signed in to MCP server "{entry.name}" ({len(check.tools)} tools).')
    return 0


async def _paste_from_terminal(callback: Any) -> None:
    """A terminal also accepts the URL the browser was redirected to (a browser on another machine)."""
    while True:
        line = await asyncio.to_thread(_prompt_line)
        if line is None or callback.accept(line):
            return
        click.echo("That is not the redirected URL (it has no code=...). Try again.", err=True)


def _prompt_line() -> str | None:
    sys.stderr.write("If the browser cannot reach this machine, paste the URL it was redirected to: ")
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.strip() or None if line else None


@mcp_command.command("logout")
@click.argument("name")
@click.option("-l", "--local", is_flag=True, help="The server must be defined in the project's .pi/mcp.json.")
def logout_command(name: str, local: bool) -> int:
    """Delete the stored OAuth credentials of a server."""
    from pi_plugins.mcp.oauth import sign_out

    entry = _oauth_entry(name, local)
    removed = sign_out(entry, agent_dir())
    click.echo(f'Signed out of MCP server "{name}".' if removed else f'No stored credentials for MCP server "{name}".')
    return 0
