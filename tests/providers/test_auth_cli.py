"""``pi auth`` end to end: sign-in flows against the fake authorization server, requests against the fake
model server (which checks each subscription's headers), stored credentials, refresh and failures."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from pi_core.testing.fake_auth import ACCOUNT_ID, FakeAuthServer
from pi_core.testing.fake_server import FakeModelServer, RecordedRequest, Reply
from tests.providers.pi16 import clean_env, run_pi, run_pi_here
from tests.providers.ptyrun import PtyPi

CLAUDE = "claude-sonnet-4-6"


@dataclass
class World:
    auth: FakeAuthServer
    models: FakeModelServer
    env: dict[str, str]
    root: Path
    agent: Path

    @property
    def auth_file(self) -> Path:
        return self.agent / "auth.json"

    def stored(self) -> dict:
        return json.loads(self.auth_file.read_text()) if self.auth_file.exists() else {}

    def store(self, data: dict) -> None:
        self.auth_file.write_text(json.dumps(data))
        self.auth_file.chmod(0o600)

    def login(self, *args: str, **env: str) -> PtyPi:
        return PtyPi(["auth", "login", *args], {**self.env, **env}, self.root)

    def pi(self, *args: str, **env: str):
        """``pi`` as its own process: what reads the terminal, streams from a model or runs concurrently."""
        return run_pi(list(args), {**self.env, **env}, self.root)

    def cli(self, *args: str, **env: str):
        """A quick ``pi auth ...`` / ``--list-models`` through the same entry point, in this process."""
        return run_pi_here(list(args), {**self.env, **env}, self.root)

    def route(self, provider: str, base: str) -> None:
        """models.json: send ``provider``'s requests to the fake model server."""
        path = self.agent / "models.json"
        data = json.loads(path.read_text()) if path.exists() else {"providers": {}}
        data["providers"][provider] = {"baseUrl": base}
        path.write_text(json.dumps(data))


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    browser = tmp_path / "browser"
    browser.write_text(f"#!{sys.executable}\nimport sys\nfrom pi_core.testing.fake_auth import browse\n"
                       "sys.exit(browse(sys.argv[1]))\n")
    browser.chmod(0o755)
    with FakeAuthServer() as auth, FakeModelServer() as models:
        env = clean_env(tmp_path, {"PI_OAUTH_SERVER": auth.url, "BROWSER": str(browser), "PI_OAUTH_TIMEOUT": "5",
                                   "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
        yield World(auth, models, env, tmp_path, tmp_path / "agent")


def _location(url: str) -> str:
    """What the authorization page redirects to, without following it (the user copies it from the browser)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object) -> None:
            return None

    try:
        urllib.request.build_opener(NoRedirect).open(url, timeout=5)
    except urllib.error.HTTPError as err:
        return err.headers["location"]
    raise AssertionError("the authorization page did not redirect")


def _printed_url(output: str) -> str:
    return output.split("Open this URL to sign in:\n", 1)[1].split("\n", 1)[0].strip()


def _assert_private(path: Path) -> None:
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# --- Anthropic: browser, paste, copy code, denial -------------------------------------------------


def test_anthropic_browser_sign_in_then_requests_carry_the_subscription_headers(world: World) -> None:
    run = world.login("anthropic")
    out = run.expect("Credentials saved to")
    assert run.wait() == 0
    assert f"Logged in to Anthropic. Credentials saved to {world.auth_file}" in out
    assert 'To use "Copy code login (headless)" instead, run "pi auth login anthropic --no-browser"' in out
    saved = world.stored()["anthropic"]
    assert saved["type"] == "oauth" and saved["access"] in world.auth.issued and saved["refresh"].startswith("sk-ant-ort")
    assert saved["expires"] > time.time() * 1000
    _assert_private(world.auth_file)
    assert saved["access"] not in out and saved["refresh"] not in out
    authorize = next(r for r in world.auth.requests if r["path"] == "/claude.ai/oauth/authorize")
    assert authorize["query"]["code_challenge_method"] == "S256" and authorize["query"]["redirect_uri"].startswith(
        "http://localhost:")

    world.route("anthropic", world.models.url)
    world.models.add(Reply(text="hello from claude"))
    done = world.pi("-p", "--model", f"anthropic/{CLAUDE}", "hi")
    assert done.returncode == 0, done.stderr
    assert "hello from claude" in done.stdout
    sent = world.models.requests[0]
    assert sent.headers["authorization"] == f"Bearer {saved['access']}" and "x-api-key" not in sent.headers
    assert {"claude-code-20250219", "oauth-2025-04-20"} <= set(sent.headers["anthropic-beta"].split(","))
    assert sent.body["system"][0]["text"].startswith("You are Claude Code")

    check = world.cli("auth", "check", "--provider", "anthropic", "--json")
    assert (check.returncode, json.loads(check.stdout)) == (0, {"status": "ready", "provider": "anthropic",
                                                                "authType": "oauth"})
    token = world.cli("auth", "print-bearer-token", "--provider", "anthropic")
    assert (token.returncode, token.stdout.strip()) == (0, saved["access"])
    key = world.cli("auth", "print-api-key", "--provider", "anthropic")
    assert key.returncode == 1 and 'Provider "anthropic" is configured with OAuth, not an API key' in key.stderr

    out = world.cli("auth", "logout", "anthropic")
    assert (out.returncode, out.stdout.strip()) == (0, "Logged out of Anthropic.")
    assert "anthropic" not in world.stored()
    again = world.cli("auth", "logout", "anthropic")
    assert again.returncode == 0 and again.stdout.startswith("No stored credentials for Anthropic.")


def test_a_pasted_redirect_url_completes_the_sign_in_when_the_browser_cannot_reach_pi(world: World) -> None:
    run = world.login("anthropic", BROWSER="/bin/true")
    out = run.expect("paste the authorization code / redirect URL here")
    redirect = _location(_printed_url(out))
    # The browser never reaches pi's callback server: the user copies the address bar into the terminal.
    run.send(redirect)
    run.expect("Credentials saved to")
    assert run.wait() == 0
    assert world.stored()["anthropic"]["access"] in world.auth.issued


def test_a_pasted_url_from_another_sign_in_is_refused(world: World) -> None:
    run = world.login("anthropic", BROWSER="/bin/true")
    out = run.expect("redirect URL here")
    redirect = _location(_printed_url(out))
    parts = urlsplit(redirect)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    run.send(f"{parts.scheme}://{parts.netloc}{parts.path}?code={query['code']}&state=someone-elses")
    out = run.expect("Failed to log in")
    assert run.wait() == 1
    assert "Failed to log in to Anthropic: OAuth state mismatch" in out
    assert not world.auth_file.exists()


def test_copy_code_sign_in_on_a_headless_machine(world: World) -> None:
    run = world.login("anthropic", "--no-browser")
    out = run.expect("Paste the code Anthropic shows")
    assert "Select Anthropic login method: Copy code login (headless)" in out
    url = _printed_url(out)
    assert parse_qs(urlsplit(url).query)["redirect_uri"] == ["https://platform.claude.com/oauth/code/callback"]
    query = {k: v[0] for k, v in parse_qs(urlsplit(_location(url)).query).items()}
    run.send(f"{query['code']}#{query['state']}")
    run.expect("Credentials saved to")
    assert run.wait() == 0
    assert world.stored()["anthropic"]["type"] == "oauth"


def test_a_denied_authorization_fails_without_storing_anything(world: World) -> None:
    world.auth.deny = True
    run = world.login("anthropic")
    out = run.expect("Failed to log in")
    assert run.wait() == 1
    assert "Failed to log in to Anthropic: Anthropic authorization failed: The user denied access" in out
    assert not world.auth_file.exists()


# --- device flows ---------------------------------------------------------------------------------


def test_copilot_device_sign_in_limits_models_and_sends_copilot_headers(world: World) -> None:
    run = world.login("github-copilot")
    run.expect("GitHub Enterprise URL/domain (blank for github.com)")
    run.send("")
    out = run.expect("Credentials saved to", timeout=30)
    assert run.wait() == 0
    code_line = next(line for line in out.splitlines() if line.startswith("Open ") and "enter code:" in line)
    assert f"{world.auth.url}/github.com/login/device" in code_line
    assert "Waiting for authentication..." in out
    saved = world.stored()["github-copilot"]
    assert saved["refresh"].startswith("gho_") and saved["access"].startswith("tid=")
    assert saved["availableModelIds"] == ["gpt-5.4-nano", "claude-sonnet-4.6"]  # gpt-6-sol's policy is disabled

    listed = world.cli("--list-models", "github-copilot")
    ids = {line.split()[1] for line in listed.stdout.splitlines()[1:] if line.startswith("github-copilot")}
    assert ids == {"gpt-5.4-nano", "claude-sonnet-4.6"}

    world.route("github-copilot", world.models.url + "/v1")
    world.models.add(Reply(text="copilot says hi"))
    done = world.pi("-p", "--model", "github-copilot/gpt-5.4-nano", "hi")
    assert done.returncode == 0, done.stderr
    sent = world.models.requests[0]
    assert sent.headers["authorization"] == f"Bearer {saved['access']}"
    assert sent.headers["copilot-integration-id"] == "vscode-chat" and sent.headers["editor-version"].startswith("vscode/")


@pytest.mark.parametrize("outcome,message", [("deny", "Device flow failed: access_denied"),
                                             ("expire", "Device flow failed: expired_token")])
def test_copilot_device_flow_denied_or_expired(world: World, outcome: str, message: str) -> None:
    world.auth.device_outcome = outcome
    run = world.login("github-copilot")
    run.expect("GitHub Enterprise")
    run.send("")
    out = run.expect("Failed to log in", timeout=30)
    assert run.wait() == 1
    assert f"Failed to log in to GitHub Copilot: {message}" in out
    assert not world.auth_file.exists()


@pytest.mark.parametrize("provider,name", [("xai", "xAI"), ("kimi-coding", "Kimi For Coding"), ("meta", "Meta")])
def test_other_device_sign_ins(world: World, provider: str, name: str) -> None:
    run = world.login(provider)
    out = run.expect("Credentials saved to", timeout=30)
    assert run.wait() == 0
    assert f"Logged in to {name}." in out and "enter code:" in out
    saved = world.stored()[provider]
    assert saved["type"] == "oauth" and saved["access"] in world.auth.issued


def test_codex_device_code_sign_in_records_the_chatgpt_account(world: World) -> None:
    run = world.login("openai-codex", "--no-browser")
    out = run.expect("Credentials saved to", timeout=30)
    assert run.wait() == 0
    assert "Select OpenAI Codex login method: Device code login (headless)" in out
    assert f"Open {world.auth.url}/auth.openai.com/codex/device and enter code:" in out
    assert world.stored()["openai-codex"]["accountId"] == ACCOUNT_ID


def test_openrouter_browser_sign_in_stores_the_key_it_gets(world: World) -> None:
    run = world.login("openrouter")
    run.expect("Credentials saved to")
    assert run.wait() == 0
    saved = world.stored()["openrouter"]
    assert saved["access"].startswith("sk-or-v1-")
    authorize = next(r for r in world.auth.requests if r["path"] == "/openrouter.ai/auth")
    assert authorize["query"]["callback_url"].startswith("http://127.0.0.1:")


# --- API keys and refusals ------------------------------------------------------------------------


def test_api_key_login_and_logout(world: World) -> None:
    run = world.login("groq")
    run.expect("Enter Groq API key")
    run.send("gsk-typed-secret-123456")
    out = run.expect("Credentials saved to")
    assert run.wait() == 0
    assert "Saved API key for Groq." in out and "gsk-typed-secret-123456" not in out  # not echoed
    assert world.stored()["groq"] == {"type": "api_key", "key": "gsk-typed-secret-123456"}
    printed = world.cli("auth", "print-api-key", "--provider", "groq")
    assert printed.stdout.strip() == "gsk-typed-secret-123456"
    out = world.cli("auth", "logout", "groq")
    assert out.stdout.strip() == ("Removed stored API key for Groq. Environment variables and models.json "
                                  "config are unchanged.")


def test_login_refusals(world: World) -> None:
    codex = world.login("openai-codex", "--api-key")
    assert "OpenAI Codex has no API key login. Omit --api-key to sign in." in codex.expect("login")
    assert codex.wait() == 1
    bedrock = world.login("amazon-bedrock")
    assert "Amazon Bedrock is configured outside pi (AWS credentials or bearer token)." in bedrock.expect("outside")
    assert bedrock.wait() == 1
    piped = world.cli("auth", "login", "anthropic")
    assert piped.returncode == 1
    assert '"pi auth login <provider> [--api-key] [--no-browser]" requires an interactive terminal' in piped.stderr
    unknown = world.cli("auth", "login", "nope")
    assert unknown.returncode == 1 and 'Unknown provider "nope".' in unknown.stderr
    assert "anthropic, ant-ling" not in unknown.stderr and "github-copilot" in unknown.stderr


# --- stored tokens: refresh, revocation, 401, locking ---------------------------------------------


def _expired_anthropic(world: World) -> dict:
    credential = {"type": "oauth", "access": world.auth.access_token("anthropic"),
                  "refresh": world.auth.refresh_token("anthropic"), "expires": int(time.time() * 1000) - 1000}
    world.store({"anthropic": credential})
    world.route("anthropic", world.models.url)
    return credential


def test_an_expired_token_is_refreshed_before_the_request(world: World) -> None:
    old = _expired_anthropic(world)
    world.models.add(Reply(text="fresh"))
    done = world.pi("-p", "--model", f"anthropic/{CLAUDE}", "hi")
    assert done.returncode == 0, done.stderr
    new = world.stored()["anthropic"]
    assert new["access"] != old["access"] and new["access"] in world.auth.issued and new["expires"] > time.time() * 1000
    assert world.models.requests[0].headers["authorization"] == f"Bearer {new['access']}"
    assert world.auth.hits["/platform.claude.com/v1/oauth/token"] == 1
    _assert_private(world.auth_file)


def test_a_revoked_refresh_token_asks_to_sign_in_again(world: World) -> None:
    old = _expired_anthropic(world)
    world.auth.revoke_refresh_tokens()
    done = world.pi("-p", "--model", f"anthropic/{CLAUDE}", "hi")
    assert done.returncode == 1
    text = done.stdout + done.stderr
    assert "Anthropic (Claude Pro/Max) sign-in is no longer valid" in text
    assert "Run `pi auth login anthropic` to sign in again." in text and "Traceback" not in text
    assert world.stored()["anthropic"] == old  # nothing lost
    assert world.models.requests == []
    check = world.cli("auth", "check", "--provider", "anthropic")
    assert (check.returncode, check.stdout.strip()) == (2, "invalid")
    no_refresh = world.cli("auth", "check", "--provider", "anthropic", "--no-refresh")
    assert (no_refresh.returncode, no_refresh.stdout.strip()) == (0, "ready")


def test_a_401_refreshes_the_token_once_and_repeats_the_request(world: World) -> None:
    old = _expired_anthropic(world)
    old["expires"] = int(time.time() * 1000) + 3_600_000  # looks valid, but the server revoked it
    world.store({"anthropic": old})

    def only_fresh(request: RecordedRequest) -> Reply:
        if request.headers.get("authorization") == f"Bearer {old['access']}":
            return Reply.http_error(401, body={"type": "error", "error": {"type": "authentication_error",
                                                                          "message": "OAuth token revoked"}})
        return Reply(text="after refresh")

    world.models.add(only_fresh, only_fresh)
    done = world.pi("-p", "--model", f"anthropic/{CLAUDE}", "hi")
    assert done.returncode == 0, done.stderr
    assert "after refresh" in done.stdout
    assert len(world.models.requests) == 2 and world.auth.hits["/platform.claude.com/v1/oauth/token"] == 1


def test_a_second_401_is_reported_not_retried_forever_and_no_token_leaks(world: World) -> None:
    _expired_anthropic(world)

    def refused(request: RecordedRequest) -> Reply:  # a server that echoes the credential in its error
        return Reply.http_error(401, body={"type": "error", "error": {
            "type": "authentication_error", "message": f"subscription ended for {request.headers['authorization']}"}})

    world.models.add(refused, refused, refused)
    done = world.pi("-p", "--model", f"anthropic/{CLAUDE}", "hi")
    assert done.returncode == 1
    shown = done.stdout + done.stderr
    assert "subscription ended for Bearer [REDACTED]" in shown
    assert len(world.models.requests) == 2
    assert world.auth.hits["/platform.claude.com/v1/oauth/token"] == 2  # before expiry, then after the 401
    tokens = [t for t in world.auth.issued if t.startswith("sk-ant-oat")]
    written = "".join(p.read_text() for p in (world.agent / "sessions").rglob("*.jsonl"))
    assert written and not any(t in shown or t in written for t in tokens)


def test_two_processes_refreshing_together_spend_the_refresh_token_once(world: World) -> None:
    import subprocess

    _expired_anthropic(world)
    world.auth.delay_s = 0.5
    command = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()", "auth", "print-bearer-token",
               "--provider", "anthropic"]
    procs = [subprocess.Popen(command, env=world.env, cwd=world.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert outputs[0][0] == outputs[1][0] == world.stored()["anthropic"]["access"] + "\n"
    assert world.auth.hits["/platform.claude.com/v1/oauth/token"] == 1


def test_copilot_expiry_is_measured_on_the_servers_clock(world: World) -> None:
    world.auth.clock_offset_s = -3 * 3600  # the server's clock is three hours behind ours
    run = world.login("github-copilot")
    run.expect("GitHub Enterprise")
    run.send("")
    run.expect("Credentials saved to", timeout=30)
    assert run.wait() == 0
    left_s = world.stored()["github-copilot"]["expires"] / 1000 - time.time()
    assert 3600 - 5 * 60 - 30 < left_s <= 3600 - 5 * 60
    world.route("github-copilot", world.models.url + "/v1")
    world.models.add(Reply(text="one"), Reply(text="two"))
    for _ in range(2):
        assert world.pi("-p", "--model", "github-copilot/gpt-5.4-nano", "hi").returncode == 0
    assert world.auth.hits["/api.github.com/copilot_internal/v2/token"] == 1  # minted at sign-in only


# --- slow and dead servers ------------------------------------------------------------------------


def test_a_slow_authorization_server_times_out_with_its_url(world: World) -> None:
    world.auth.delay_s = 3
    run = world.login("github-copilot", PI_OAUTH_TIMEOUT="1")
    run.expect("GitHub Enterprise")
    started = time.monotonic()
    run.send("")
    out = run.expect("Failed to log in", timeout=15)
    assert run.wait() == 1 and time.monotonic() - started < 3
    assert (f"Failed to log in to GitHub Copilot: GitHub device code request failed: "
            f"{world.auth.url}/github.com/login/device/code did not answer within 1 s") in out


def test_a_dead_authorization_server_fails_at_once_naming_it(world: World) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    run = world.login("xai", PI_OAUTH_SERVER=dead)
    out = run.expect("Failed to log in")
    assert run.wait() == 1
    assert f"Failed to log in to xAI: xAI device authorization failed: could not reach {dead}/auth.x.ai/oauth2/device/code" \
        in out


def test_check_and_print_without_a_target_or_credentials(world: World) -> None:
    missing = world.cli("auth", "check")
    assert missing.returncode == 2 and "Auth checks require --provider <provider> or --model <model>" in missing.stderr
    assert world.cli("auth", "check", "--provider", "groq").stdout.strip() == "not_ready"
    unknown = world.cli("auth", "check", "--provider", "nope", "--json")
    assert (unknown.returncode, json.loads(unknown.stdout)["reason"]) == (1, "provider_not_found")
    with_key = world.cli("auth", "check", "--model", "groq/llama-3.3-70b-versatile", "--credentials", "--json",
                        GROQ_API_KEY="gsk-env-0123456789")
    assert json.loads(with_key.stdout) == {"status": "ready", "provider": "groq", "authType": "api_key",
                                           "credentials": "gsk-env-0123456789"}
    bearer = world.cli("auth", "print-bearer-token", "--provider", "groq", GROQ_API_KEY="gsk-env-0123456789")
    assert bearer.returncode == 1 and 'Provider "groq" is not configured with an OAuth bearer token' in bearer.stderr
    bad = world.cli("auth", "print-bearer-token", "--provider", "groq", "--min-expiry", "soon")
    assert bad.returncode == 1 and "--min-expiry must use a duration such as 30m or 1h" in bad.stderr
