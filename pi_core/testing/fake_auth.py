"""A fake authorization server on 127.0.0.1 for the subscription sign-ins (tests set ``PI_OAUTH_SERVER``).

With ``PI_OAUTH_SERVER=server.url``, pi sends ``https://<host><path>`` to ``server.url/<host><path>``, so one
server plays every provider: the paths below start with the real host. It checks what a real server checks
(PKCE challenge against verifier, the redirect URI and state round trip, grant types, refresh tokens) and
issues tokens shaped like the real ones (``sk-ant-oat01-…``, a JWT naming a ChatGPT account, a Copilot
``tid=…;proxy-ep=…`` token).

Scenarios are attributes set before pi runs: ``deny`` (the user refuses at the authorization page),
``device_outcome`` ("approve", "deny", "expire"), ``pending_polls`` (answers "authorization_pending" first),
``access_lifetime_s``, ``clock_offset_s`` (the server's clock, for Copilot's absolute ``expires_at``),
``delay_s`` (every answer is late), ``revoke_refresh_tokens()``. ``hits`` counts requests per path and
``issued`` lists every access token handed out.

A "browser" for tests: ``python -m pi_core.testing.fake_auth --browse URL`` follows the authorization
URL's redirects (to pi's callback server), as a browser would; use it as ``$BROWSER``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlencode, urlsplit

Reply = tuple[int, dict[str, str], bytes]  # status, headers, body

ACCOUNT_ID = "acct_fake_chatgpt"


def fake_jwt(claims: dict[str, Any]) -> str:  # open: JWT claims, form fields and JSON bodies of the fake OAuth server
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.sig"


def store_codex_sign_in(agent_dir: Path, base_url: str) -> str:
    """A ChatGPT (Codex) sign-in in ``agent_dir``'s auth.json, its requests sent to ``base_url`` (models.json's
    other providers kept); returns the access token."""
    token = fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT_ID}, "n": "1"})
    auth = agent_dir / "auth.json"
    auth.write_text(json.dumps({"openai-codex": {"type": "oauth", "access": token, "refresh": "rt-unused",
                                                 "expires": int(time.time() * 1000) + 3_600_000,
                                                 "accountId": ACCOUNT_ID}}))
    auth.chmod(0o600)
    models_file = agent_dir / "models.json"
    models = json.loads(models_file.read_text()) if models_file.is_file() else {"providers": {}}
    models["providers"]["openai-codex"] = {"baseUrl": base_url}
    models_file.write_text(json.dumps(models))
    return token


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass
class _Grant:
    provider: str
    client_id: str
    redirect_uri: str
    challenge: str | None
    state: str | None


@dataclass
class _Device:
    provider: str
    user_code: str
    polls: int = 0


@dataclass
class FakeAuthServer:
    """Use as a context manager; ``url`` is what ``PI_OAUTH_SERVER`` must be set to."""

    deny: bool = False
    device_outcome: str = "approve"
    pending_polls: int = 1
    access_lifetime_s: int = 3600
    clock_offset_s: float = 0.0
    delay_s: float = 0.0
    hits: Counter[str] = field(default_factory=Counter)
    issued: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)  # open: JWT claims, form fields and JSON bodies of the fake OAuth server
    google_assertions: list[dict[str, Any]] = field(default_factory=list)  # open: JWT claims, form fields and JSON bodies of the fake OAuth server; claims of service-account JWTs

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._grants: dict[str, _Grant] = {}
        self._devices: dict[str, _Device] = {}
        self._refresh: dict[str, str] = {}  # refresh token -> provider
        self._revoked: set[str] = set()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True, name="fake-auth-server")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- helpers for tests --

    def refresh_token(self, provider: str) -> str:
        """A valid refresh token for ``provider``, as if a sign-in had happened earlier."""
        token = self._new_refresh(provider)
        return token

    def revoke_refresh_tokens(self) -> None:
        with self._lock:
            self._revoked.update(self._refresh)

    def access_token(self, provider: str) -> str:
        return self._new_access(provider)

    # -- token minting --

    def _new_refresh(self, provider: str) -> str:
        token = {"anthropic": "sk-ant-ort01-", "github-copilot": "gho_"}.get(provider, "rt-") + secrets.token_hex(16)
        with self._lock:
            self._refresh[token] = provider
        return token

    def _new_access(self, provider: str) -> str:
        if provider == "anthropic":
            token = "sk-ant-oat01-" + secrets.token_hex(20)
        elif provider == "openai-codex":
            token = fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT_ID},
                              "n": secrets.token_hex(8)})
        elif provider == "github-copilot":
            token = f"tid={secrets.token_hex(8)};exp={int(time.time()) + 1800};sku=fake;proxy-ep=proxy.fake-copilot.test;"
        elif provider == "openrouter":
            token = "sk-or-v1-" + secrets.token_hex(24)
        elif provider == "google":
            token = "ya29.fake-" + secrets.token_hex(16)
        else:
            token = f"{provider}-access-{secrets.token_hex(12)}"
        with self._lock:
            self.issued.append(token)
        return token

    def _tokens(self, provider: str) -> dict[str, Any]:
        return {"access_token": self._new_access(provider), "refresh_token": self._new_refresh(provider),
                "expires_in": self.access_lifetime_s, "token_type": "Bearer"}

    # -- request handling (server thread) --

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> Reply:
        if self.delay_s:
            time.sleep(self.delay_s)
        parts = urlsplit(raw_path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        form: dict[str, Any] = {}
        if body:
            try:
                form = json.loads(body) if headers.get("content-type", "").startswith("application/json") else \
                    {k: v[0] for k, v in parse_qs(body.decode()).items()}
            except ValueError:
                form = {}
        path = parts.path
        with self._lock:
            self.hits[path] += 1
            self.requests.append({"method": method, "path": path, "query": query, "form": form, "headers": headers})
        route = _ROUTES.get((method, path))
        if route is None:
            return _json(404, {"error": "not_found", "error_description": f"no fake route for {method} {path}"})
        return route(self, query, form, headers)

    def authorize(self, provider: str, query: dict[str, str], redirect_key: str = "redirect_uri"
                  ) -> Reply:
        redirect = query.get(redirect_key, "")
        if self.deny:
            target = f"{redirect}?{urlencode({'error': 'access_denied', 'error_description': 'The user denied access'})}"
            if query.get("state"):
                target += "&" + urlencode({"state": query["state"]})
            return 302, {"location": target}, b""
        code = "code-" + secrets.token_hex(8)
        with self._lock:
            self._grants[code] = _Grant(provider, query.get("client_id", ""), redirect, query.get("code_challenge"),
                                        query.get("state"))
        params = {"code": code, **({"state": query["state"]} if query.get("state") else {})}
        return 302, {"location": f"{redirect}?{urlencode(params)}"}, b""

    def exchange(self, provider: str, form: dict[str, Any], *, check_redirect: bool = True) -> Reply:  # open: JWT claims, form fields and JSON bodies of the fake OAuth server
        grant_type = form.get("grant_type")
        if grant_type == "refresh_token":
            token = form.get("refresh_token", "")
            with self._lock:
                valid = self._refresh.get(token) == provider and token not in self._revoked
            if not valid:
                return _json(400, {"error": "invalid_grant", "error_description": "Refresh token revoked or unknown"})
            return _json(200, self._tokens(provider))
        if grant_type != "authorization_code" and provider != "openrouter":
            return _json(400, {"error": "unsupported_grant_type"})
        with self._lock:
            grant = self._grants.pop(str(form.get("code", "")), None)
        if grant is None or grant.provider != provider:
            return _json(400, {"error": "invalid_grant", "error_description": "Unknown or used authorization code"})
        if grant.challenge and _s256(str(form.get("code_verifier", ""))) != grant.challenge:
            return _json(400, {"error": "invalid_grant", "error_description": "PKCE verification failed"})
        if check_redirect and form.get("redirect_uri") != grant.redirect_uri:
            return _json(400, {"error": "invalid_grant", "error_description": "redirect_uri mismatch"})
        if provider == "openrouter":
            return _json(200, {"key": self._new_access("openrouter")})
        return _json(200, self._tokens(provider))

    def start_device(self, provider: str, page: str) -> dict[str, Any]:  # open: JWT claims, form fields and JSON bodies of the fake OAuth server
        device_code = "dev-" + secrets.token_hex(8)
        user_code = f"{secrets.token_hex(2).upper()}-{secrets.token_hex(2).upper()}"
        with self._lock:
            self._devices[device_code] = _Device(provider, user_code)
        return {"device_code": device_code, "user_code": user_code, "verification_uri": f"{self.url}/{page}",
                "interval": 1, "expires_in": 600}

    def poll_device(self, device_code: str) -> str:
        """"pending", "approved", "denied", "expired" or "unknown" for a poll of ``device_code``."""
        with self._lock:
            device = self._devices.get(device_code)
            if device is None:
                return "unknown"
            device.polls += 1
            if device.polls <= self.pending_polls:
                return "pending"
        return {"approve": "approved", "deny": "denied", "expire": "expired"}[self.device_outcome]


def _json(status: int, body: Any, extra: dict[str, str] | None = None) -> Reply:
    return status, {"content-type": "application/json", **(extra or {})}, json.dumps(body).encode()


# --- routes -----------------------------------------------------------------------------------------

# a route answers (server, query, form, headers); form is the decoded JSON or urlencoded body
Route = Callable[["FakeAuthServer", dict[str, str], dict[str, Any], dict[str, str]], Reply]  # open: JWT claims, form fields and JSON bodies of the fake OAuth server


def _rfc8628(server: FakeAuthServer, provider: str, form: dict[str, Any]) -> Reply:
    outcome = server.poll_device(str(form.get("device_code", "")))
    if outcome == "approved":
        return _json(200, server._tokens(provider))
    error = {"pending": "authorization_pending", "denied": "access_denied", "expired": "expired_token"}.get(
        outcome, "invalid_grant")
    return _json(400, {"error": error})


def _github_token(server: FakeAuthServer, q: Any, form: dict[str, Any], h: Any) -> Reply:
    outcome = server.poll_device(str(form.get("device_code", "")))
    if outcome == "approved":
        token = "gho_" + secrets.token_hex(18)
        with server._lock:
            server._refresh[token] = "github-copilot"
        return _json(200, {"access_token": token, "token_type": "bearer", "scope": "read:user"})
    error = {"pending": "authorization_pending", "denied": "access_denied", "expired": "expired_token"}[outcome] \
        if outcome != "unknown" else "bad_verification_code"
    return _json(200, {"error": error})  # GitHub answers 200 with an error field


def _copilot_token(server: FakeAuthServer, q: Any, form: Any, headers: dict[str, str]) -> Reply:
    github = headers.get("authorization", "").removeprefix("Bearer ").strip()
    with server._lock:
        valid = server._refresh.get(github) == "github-copilot" and github not in server._revoked
    if not valid:
        return _json(401, {"message": "Bad credentials"})
    now = time.time() + server.clock_offset_s
    return _json(200, {"token": server._new_access("github-copilot"), "expires_at": int(now + server.access_lifetime_s),
                       "refresh_in": None})


def _copilot_models(server: FakeAuthServer, q: Any, form: Any, h: Any) -> Reply:
    rows = [{"id": "gpt-5.4-nano", "model_picker_enabled": True, "policy": {"state": "enabled"}},
            {"id": "claude-sonnet-4.6", "model_picker_enabled": True, "policy": {"state": "enabled"}},
            {"id": "gpt-6-sol", "model_picker_enabled": True, "policy": {"state": "disabled"}}]
    return _json(200, {"data": rows})


def _codex_device_start(server: FakeAuthServer, q: Any, form: dict[str, Any], h: Any) -> Reply:
    started = server.start_device("openai-codex", "auth.openai.com/codex/device")
    return _json(200, {"device_auth_id": started["device_code"], "user_code": started["user_code"], "interval": "0"})


def _codex_device_poll(server: FakeAuthServer, q: Any, form: dict[str, Any], h: Any) -> Reply:
    outcome = server.poll_device(str(form.get("device_auth_id", "")))
    if outcome == "pending":
        return _json(403, {"error": {"code": "deviceauth_authorization_pending"}})
    if outcome != "approved":
        return _json(400, {"error": {"code": f"deviceauth_{outcome}", "message": f"device authorization {outcome}"}})
    verifier = secrets.token_urlsafe(32)
    code = "code-" + secrets.token_hex(8)
    with server._lock:
        server._grants[code] = _Grant("openai-codex", "", "https://auth.openai.com/deviceauth/callback",
                                      _s256(verifier), None)
    return _json(200, {"authorization_code": code, "code_verifier": verifier})


def _meta_mint(server: FakeAuthServer, q: Any, form: Any, headers: dict[str, str]) -> Reply:
    identity = headers.get("authorization", "").removeprefix("Bearer ").strip()
    if identity not in server.issued or identity in server._revoked:
        return _json(401, {"detail": "identity token expired"})
    return _json(200, {"api_key": server._new_access("meta")})


def _google_token(server: FakeAuthServer, form: dict[str, Any]) -> Reply:
    """Google's token endpoint: a service account's signed JWT (``jwt-bearer``) or a refresh token."""
    if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
        return server.exchange("google", form)
    parts = str(form.get("assertion", "")).split(".")
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))) if len(parts) == 3 else {}
    except ValueError:
        claims = {}
    if not claims.get("iss") or "cloud-platform" not in str(claims.get("scope", "")) or not parts[2]:
        return _json(400, {"error": "invalid_grant", "error_description": "Invalid JWT assertion"})
    with server._lock:
        server.google_assertions.append(claims)
    return _json(200, {"access_token": server.access_token("google"), "expires_in": 3599, "token_type": "Bearer"})


def _device_start(provider: str, page: str) -> Route:
    return lambda server, q, form, h: _json(200, server.start_device(provider, page))


_ROUTES: dict[tuple[str, str], Route] = {
    ("GET", "/claude.ai/oauth/authorize"): lambda s, q, f, h: s.authorize("anthropic", q),
    ("POST", "/platform.claude.com/v1/oauth/token"): lambda s, q, f, h: s.exchange("anthropic", f),
    ("GET", "/auth.openai.com/oauth/authorize"): lambda s, q, f, h: s.authorize("openai-codex", q),
    ("POST", "/auth.openai.com/oauth/token"): lambda s, q, f, h: s.exchange("openai-codex", f),
    ("POST", "/auth.openai.com/api/accounts/deviceauth/usercode"): _codex_device_start,
    ("POST", "/auth.openai.com/api/accounts/deviceauth/token"): _codex_device_poll,
    ("POST", "/github.com/login/device/code"): _device_start("github-copilot", "github.com/login/device"),
    ("POST", "/github.com/login/oauth/access_token"): _github_token,
    ("GET", "/api.github.com/copilot_internal/v2/token"): _copilot_token,
    ("GET", "/api.fake-copilot.test/models"): _copilot_models,
    ("GET", "/openrouter.ai/auth"): lambda s, q, f, h: s.authorize("openrouter", q, "callback_url"),
    ("POST", "/openrouter.ai/api/v1/auth/keys"): lambda s, q, f, h: s.exchange("openrouter", f, check_redirect=False),
    ("POST", "/auth.x.ai/oauth2/device/code"): _device_start("xai", "accounts.x.ai/device"),
    ("POST", "/auth.x.ai/oauth2/token"): lambda s, q, f, h: (s.exchange("xai", f) if f.get("grant_type") ==
                                                             "refresh_token" else _rfc8628(s, "xai", f)),
    ("POST", "/auth.kimi.com/api/oauth/device_authorization"): _device_start("kimi-coding", "www.kimi.com/device"),
    ("POST", "/auth.kimi.com/api/oauth/token"): lambda s, q, f, h: (s.exchange("kimi-coding", f) if f.get(
        "grant_type") == "refresh_token" else _rfc8628(s, "kimi-coding", f)),
    ("POST", "/auth.meta.com/oidc/device/authorization/"): _device_start("meta", "auth.meta.com/device"),
    ("POST", "/auth.meta.com/oidc/device/token/"): lambda s, q, f, h: _rfc8628(s, "meta", f),
    ("POST", "/api.meta.ai/muse-code/key"): _meta_mint,
    # Google's token endpoint, as an ADC file's ``token_uri`` (google-auth refreshes a gcloud sign-in there)
    ("POST", "/oauth2.googleapis.com/token"): lambda s, q, f, h: _google_token(s, f),
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def date_time_string(self, timestamp: float | None = None) -> str:
        owner: FakeAuthServer = self.server.owner  # type: ignore[attr-defined]
        return formatdate((timestamp or time.time()) + owner.clock_offset_s, usegmt=True)  # the server's clock

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        owner: FakeAuthServer = self.server.owner  # type: ignore[attr-defined]
        status, headers, payload = owner.handle(method, self.path, {k.lower(): v for k, v in self.headers.items()},
                                                body)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")


def browse(url: str) -> int:
    """Follow ``url``'s redirects like a browser would; 0 when the last page answered 200."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as page:
            return 0 if page.status == 200 else 1
    except urllib.error.HTTPError as err:
        return 0 if err.code < 500 else 1
    except OSError:
        return 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--browse":
        sys.exit(browse(sys.argv[2]))
    sys.stderr.write("usage: python -m pi_core.testing.fake_auth --browse URL\n")
    sys.exit(2)
