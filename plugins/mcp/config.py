"""mcp.json: the ``mcpServers`` entries of the agent dir and (once trusted) the project, validated and merged.

The format is the one Claude Desktop, Claude Code and Cursor use. A project entry replaces a user entry of the same
name; one without ``command``, ``url`` or ``type`` overrides only ``enabled``, ``exposure`` and ``toolExposure``.
Invalid entries are reported and skipped, so the others still connect. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pi_core.errors import PiError

Exposure = Literal["codemode", "deferred", "direct", "hidden"]
EXPOSURES: tuple[Exposure, ...] = ("codemode", "deferred", "direct", "hidden")
EXPOSURE_ALIASES = {"codemode-deferred": "codemode"}
OVERRIDE_KEYS = ("enabled", "exposure", "toolExposure")
DEFAULT_TIMEOUT_S = 60.0
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")
CLIENT_SOURCE = Path("<editor>")  # the source of the servers an editor passed (add_client_servers), in messages


class ConfigError(PiError):
    pass


@dataclass(frozen=True)
class OAuthSettings:
    client_id: str | None = None
    client_secret: str | None = None  # may be ${VAR} or !command
    callback_port: int | None = None
    callback_url: str | None = None
    scope: str | None = None
    client_name: str | None = None
    client_registration: Literal["auto", "dcr", "cimd"] = "auto"
    auth_server_metadata_url: str | None = None


@dataclass(frozen=True)
class ServerConfig:
    """One validated ``mcpServers`` entry. ``raw`` is the entry as written (what ``pi mcp`` edits)."""

    name: str
    transport: Literal["stdio", "http"]
    raw: dict[str, Any]
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    oauth: OAuthSettings | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    enabled: bool = True
    description: str | None = None
    exposure: Exposure = "codemode"
    tool_exposure: dict[str, Exposure] = field(default_factory=dict)

    @property
    def uses_oauth(self) -> bool:
        """HTTP servers sign in with OAuth unless the config sends its own ``Authorization`` header."""
        return self.transport == "http" and not any(h.lower() == "authorization" for h in self.headers)

    def exposure_of(self, tool: str) -> Exposure:
        """``toolExposure`` exact name first, then the first matching ``*`` pattern, then the server's exposure."""
        if tool in self.tool_exposure:
            return self.tool_exposure[tool]
        from pi_core.app.tool_selection import NameMatcher

        for pattern, exposure in self.tool_exposure.items():
            if "*" in pattern and NameMatcher([pattern])(tool):
                return exposure
        return self.exposure

    def exposures(self) -> set[Exposure]:
        """Every exposure the server's tools can have, known before it connects."""
        return {self.exposure, *self.tool_exposure.values()}

    def describe(self) -> str:
        return self.url if self.transport == "http" else " ".join([self.command, *self.args])


@dataclass
class ServerEntry:
    config: ServerConfig
    source: Path  # the file that defines the server
    scope: Literal["global", "project"]
    override: Path | None = None  # the project file that overrides some of its fields

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def edit_path(self) -> Path:
        """Where enable/disable and exposure changes are saved."""
        return self.override or self.source


@dataclass
class McpConfig:
    servers: list[ServerEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    project_path: Path | None = None  # the trusted project's mcp.json, where project overrides go
    untrusted_project: Path | None = None  # a project mcp.json that was not read

    def find(self, name: str) -> ServerEntry | None:
        return next((s for s in self.servers if s.name == name), None)


def namespace(server: str) -> str:
    """``mcp__<server>`` with ``-`` as ``_``: servers differing only in ``-``/``_`` share it, so both cannot exist."""
    return "mcp__" + server.replace("-", "_")


# --- trust ----------------------------------------------------------------------------------------


def project_trusted(cwd: Path, agent_dir: Path) -> bool:
    """Whether the project's ``.pi/mcp.json`` may be read (docs/config.md#project-trust): inside ``pi``, the
    decision the process made at start-up (``-a``/``-na``, ``pi_project_trust``, saved, default, prompt);
    in a command that cannot ask (``pi mcp ...``), the saved decision only, as in Pi: none means no."""
    from pi_core.app.trust import TrustStore, TrustStoreError, current_decision

    decided = current_decision(cwd)
    if decided is not None:
        return decided
    try:
        saved = TrustStore(agent_dir).saved(cwd)
    except TrustStoreError:
        return False
    return saved is not None and saved.trusted


# --- validation -----------------------------------------------------------------------------------


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def _is_loopback_http(url: str) -> bool:
    parsed = urlparse(url)
    return parsed.scheme == "http" and (parsed.hostname or "") in LOOPBACK_HOSTS and not parsed.query \
        and not parsed.fragment


def _oauth(value: Any) -> OAuthSettings:
    if not isinstance(value, dict):
        raise ConfigError("oauth must be an object")
    for key in ("clientId", "clientSecret", "scope", "callbackUrl", "authServerMetadataUrl"):
        if key in value and not isinstance(value[key], str):
            raise ConfigError(f"oauth.{key} must be a string")
    port = value.get("callbackPort")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535):
        raise ConfigError("oauth.callbackPort must be a port number")
    callback = value.get("callbackUrl")
    if callback is not None:
        if not _is_loopback_http(callback):
            raise ConfigError("oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without "
                              "query or fragment")
        url_port = urlparse(callback).port
        if url_port and port is not None and url_port != port:
            raise ConfigError("oauth.callbackUrl and oauth.callbackPort name different ports")
    name = value.get("clientName")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ConfigError("oauth.clientName must be a non-empty string")
    registration = value.get("clientRegistration", "auto")
    if registration not in ("auto", "dcr", "cimd"):
        raise ConfigError('oauth.clientRegistration must be "auto", "dcr", or "cimd"')
    if registration == "cimd":
        if "clientId" in value or "clientName" in value:
            raise ConfigError('oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or '
                              "oauth.clientName")
        raise ConfigError('oauth.clientRegistration "cimd" is not supported: there are no Client ID Metadata '
                          "Documents")
    metadata = value.get("authServerMetadataUrl")
    if metadata is not None:
        parsed = urlparse(metadata)
        if not (parsed.scheme == "https" or (parsed.scheme == "http" and (parsed.hostname or "") in LOOPBACK_HOSTS)):
            raise ConfigError("oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, "
                              "or [::1]")
    return OAuthSettings(client_id=value.get("clientId"), client_secret=value.get("clientSecret"),
                         callback_port=port, callback_url=callback, scope=value.get("scope"), client_name=name,
                         client_registration=registration, auth_server_metadata_url=metadata)


def _exposure(value: Any, what: str) -> Exposure:
    value = EXPOSURE_ALIASES.get(value, value) if isinstance(value, str) else value
    if value not in EXPOSURES:
        raise ConfigError(f"{what} must be one of {', '.join(repr(e).replace(chr(39), chr(34)) for e in EXPOSURES)}")
    return value  # type: ignore[no-any-return]


def validate_server(name: str, raw: Any) -> ServerConfig:
    """One ``mcpServers`` entry as a ServerConfig, or ConfigError with Pi's message."""
    if not SERVER_NAME.match(name):
        raise ConfigError(f'invalid server name "{name}" (use letters, digits, "_" and "-")')
    if not isinstance(raw, dict):
        raise ConfigError(f'server "{name}" must be an object')
    try:
        return _validate_fields(name, raw)
    except ConfigError as err:
        joiner = " " if str(err).startswith("needs either") else ": "
        raise ConfigError(f'server "{name}"{joiner}{err}') from None


def _validate_fields(name: str, raw: dict[str, Any]) -> ServerConfig:
    enabled, timeout, description = raw.get("enabled", True), raw.get("timeout"), raw.get("description")
    if not isinstance(enabled, bool):
        raise ConfigError("enabled must be a boolean")
    if description is not None and not isinstance(description, str):
        raise ConfigError("description must be a string")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ConfigError("timeout must be a positive number of seconds")
    exposure = _exposure(raw["exposure"], "exposure") if "exposure" in raw else "codemode"
    tool_exposure_raw = raw.get("toolExposure", {})
    if not isinstance(tool_exposure_raw, dict):
        raise ConfigError("toolExposure must map tool names to exposures")
    tool_exposure = {tool: _exposure(v, f'toolExposure "{tool}"') for tool, v in tool_exposure_raw.items()}
    common: dict[str, Any] = {"name": name, "raw": raw, "enabled": enabled, "description": description,
                              "timeout": float(timeout or DEFAULT_TIMEOUT_S), "exposure": exposure,
                              "tool_exposure": tool_exposure}
    kind, url, command = raw.get("type"), raw.get("url"), raw.get("command")
    if kind == "sse":
        raise ConfigError("legacy SSE transport is not supported; use the streamable HTTP URL")
    if kind not in (None, "stdio", "http", "streamable-http"):
        raise ConfigError('type must be "stdio", "http", or "streamable-http"')
    if isinstance(url, str) and kind in (None, "http", "streamable-http"):
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ConfigError("url must be an http or https URL")
        headers = raw.get("headers", {})
        if not _string_map(headers):
            raise ConfigError("headers must map names to strings")
        oauth = _oauth(raw["oauth"]) if "oauth" in raw else None
        return ServerConfig(transport="http", url=url, headers=dict(headers), oauth=oauth, **common)
    if isinstance(command, str) and kind in (None, "stdio"):
        args, env, cwd = raw.get("args", []), raw.get("env", {}), raw.get("cwd")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError("args must be an array of strings")
        if not _string_map(env):
            raise ConfigError("env must map names to strings")
        if cwd is not None and not isinstance(cwd, str):
            raise ConfigError("cwd must be a string")
        if not command.strip():
            raise ConfigError("command must not be empty")
        return ServerConfig(transport="stdio", command=command, args=tuple(args), env=dict(env), cwd=cwd, **common)
    raise ConfigError('needs either "command" (stdio) or "url" (streamable HTTP)')


def _is_override(raw: Any) -> bool:
    return isinstance(raw, dict) and not ({"command", "url", "type"} & raw.keys())


def _read_file(path: Path, scope: Literal["global", "project"], config: McpConfig) -> None:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return
    except OSError as err:
        config.errors.append(f"{path}: {err.strerror or err}")
        return
    try:
        parsed = json.loads(text)
    except ValueError as err:
        config.errors.append(f"{path}: {err}")
        return
    if not isinstance(parsed, dict) or not isinstance(parsed.get("mcpServers", {}), dict):
        config.errors.append(f'{path}: expected an object with an "mcpServers" object')
        return
    for name, raw in parsed.get("mcpServers", {}).items():
        existing = config.find(name)
        if scope == "project" and _is_override(raw):
            extra = [k for k in raw if k not in OVERRIDE_KEYS]
            if existing is None:
                config.errors.append(f'{path}: server "{name}" needs "command" or "url", or a global server to '
                                     "override")
            elif extra:
                config.errors.append(f'{path}: server "{name}": an override can only set {", ".join(OVERRIDE_KEYS)}')
            else:
                try:
                    merged = validate_server(name, {**existing.config.raw, **raw})
                except ConfigError as err:
                    config.errors.append(f"{path}: {err}")
                    continue
                config.servers[config.servers.index(existing)] = replace(existing, config=merged, override=path)
            continue
        try:
            server = validate_server(name, raw)
        except ConfigError as err:
            config.errors.append(f"{path}: {err}")
            continue
        clash = next((s.name for s in config.servers if s.name != name and namespace(s.name) == namespace(name)),
                     None)
        if clash is not None:
            config.errors.append(f'{path}: server "{name}" conflicts with "{clash}"')
            continue
        entry = ServerEntry(server, path, scope)
        if existing is not None:
            config.servers[config.servers.index(existing)] = entry
        else:
            config.servers.append(entry)


def load_config(agent_dir: Path, cwd: Path, *, trusted: bool | None = None) -> McpConfig:
    """Servers of ``<agentDir>/mcp.json`` and, when the project is trusted, ``<cwd>/.pi/mcp.json``."""
    config = McpConfig()
    _read_file(agent_dir / "mcp.json", "global", config)
    project = cwd / ".pi" / "mcp.json"
    if trusted is None:
        trusted = project.exists() and project_trusted(cwd, agent_dir)
    if trusted:
        config.project_path = project
        _read_file(project, "project", config)
    elif project.exists():
        config.untrusted_project = project
    return config


def add_client_servers(config: McpConfig, servers: dict[str, dict[str, Any]]) -> None:
    """Servers an editor passed for this session (ACP ``session/new``), validated like ``mcpServers`` entries;
    one named like a configured server replaces it for the session. Never saved."""
    for name, raw in servers.items():
        try:
            server = validate_server(name, raw)
        except ConfigError as err:
            config.errors.append(f"{CLIENT_SOURCE}: {err}")
            continue
        entry = ServerEntry(server, CLIENT_SOURCE, "global")
        existing = config.find(name)
        if existing is not None:
            config.servers[config.servers.index(existing)] = entry
        else:
            config.servers.append(entry)


# --- editing (pi mcp add/remove, /mcp enable/disable) ----------------------------------------------


def _edit(path: Path, change: Any) -> bool:
    """Read an mcp.json (empty when missing), let ``change(servers, document)`` edit it, write it back with its
    own indentation when ``change`` returns True. Other content is kept."""
    try:
        text: str | None = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        text = None
    try:
        document = json.loads(text) if text is not None else {}
    except ValueError as err:
        raise ConfigError(f"{path}: {err}") from None
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers", {}), dict):
        raise ConfigError(f'{path}: expected an object with an "mcpServers" object')
    servers = document.setdefault("mcpServers", {})
    if not change(servers, document):
        return False
    indent_match = re.search(r"^([ \t]+)\S", text or "", re.MULTILINE)
    indent = indent_match.group(1) if indent_match else "  "
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(document, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return True


def add_server(path: Path, name: str, raw: dict[str, Any]) -> bool:
    """Add or replace a server; True when an entry was replaced."""
    replaced = False

    def change(servers: dict[str, Any], _document: dict[str, Any]) -> bool:
        nonlocal replaced
        replaced = name in servers
        servers[name] = raw
        return True

    _edit(path, change)
    return replaced


def remove_server(path: Path, name: str) -> bool:
    if not path.exists():
        return False
    return _edit(path, lambda servers, _doc: servers.pop(name, None) is not None)


def update_server(path: Path, name: str, *, enabled: bool | None = None, exposure: str | None = None,
                  create_override: bool = False) -> None:
    """Change ``enabled``/``exposure`` of the entry in ``path``; ``create_override`` adds a project override."""

    def change(servers: dict[str, Any], _document: dict[str, Any]) -> bool:
        entry = servers.get(name)
        if entry is None and create_override:
            entry = servers[name] = {}
        if not isinstance(entry, dict):
            raise ConfigError(f'{path} does not define MCP server "{name}"')
        keep_defaults = _is_override(entry)
        if enabled is not None:
            if enabled and not keep_defaults:
                entry.pop("enabled", None)
            else:
                entry["enabled"] = enabled
        if exposure is not None:
            if exposure == "codemode" and not keep_defaults:
                entry.pop("exposure", None)
            else:
                entry["exposure"] = exposure
        return True

    _edit(path, change)
