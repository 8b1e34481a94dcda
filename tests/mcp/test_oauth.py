"""OAuth through the SDK's client support: a fake authorization server and an SDK-built HTTP MCP server that
demands sign-in; ``pi mcp login|logout``, tokens at 0600, refresh after expiry, configured clients (issue 18)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

from .conftest import SERVERS, tool_names, tool_results, write_mcp


@dataclass
class OAuthServers:
    issuer: str
    mcp_url: str

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.issuer}/_state", timeout=10) as response:
            return json.loads(response.read())


def start_servers(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[bytes], OAuthServers]:
    ports = tmp_path / f"ports-{len(list(tmp_path.glob('ports-*')))}"
    process = subprocess.Popen([sys.executable, str(SERVERS / "oauth_servers.py"), "--port-file", str(ports), *args],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ports.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    if not ports.exists():
        process.kill()
        raise AssertionError("the OAuth test servers did not start")
    urls = json.loads(ports.read_text())
    return process, OAuthServers(urls["as"], urls["mcp"])


@pytest.fixture
def oauth(tmp_path: Path) -> Iterator[OAuthServers]:
    process, servers = start_servers(tmp_path)
    try:
        yield servers
    finally:
        process.terminate()
        process.wait(timeout=10)


def browser(pi: PiRunner) -> Path:
    """Sign-ins open the "browser" through $BROWSER, as Python's webbrowser does."""
    log = pi.cwd / "browser.log"
    pi.extra_env["BROWSER"] = f"{sys.executable} {SERVERS / 'fake_browser.py'} %s"
    pi.extra_env["FAKE_BROWSER_LOG"] = str(log)
    return log


# Eight pi processes, each importing the MCP SDK (about 2 s of CPU for its ~570 pydantic models), after the
# OAuth servers (the SDK and uvicorn again): about 20 s of CPU, which at a load of 20 on two cores took 100 s of
# wall time and once hit the 120 s default. The budget scales with the load, the work does not.
@pytest.mark.timeout(300)
def test_sign_in_use_refresh_and_sign_out(pi: PiRunner, oauth: OAuthServers) -> None:
    write_mcp(pi.home / "mcp.json", {"secure": {"url": oauth.mcp_url, "exposure": "direct"}})
    before = pi.run("mcp", "list")
    assert before.returncode == 1
    assert "secure: needs sign-in (direct, global)" in before.stdout
    assert "sign in with: pi mcp login secure" in before.stdout
    pi.server.add(Reply(text="no tools yet"))
    session = pi.run("-p", "x")
    assert session.returncode == 0, session.stderr
    assert "secure: needs sign-in" in session.stderr and "Run /mcp to fix." in session.stderr
    assert oauth.state()["registrations"] == []  # a session only reports; it registers nothing

    log = browser(pi)
    login = pi.run("mcp", "login", "secure", timeout=120)
    assert login.returncode == 0, login.stderr
    assert 'Sign in to MCP server "secure" in your browser:' in login.stdout
    assert login.stdout.rstrip().endswith('Signed in to MCP server "secure" (1 tools).')
    opened = log.read_text().split()
    assert len(opened) == 1 and "code_challenge_method=S256" in opened[0] and "scope=mcp%3Aread" in opened[0]
    [registration] = oauth.state()["registrations"]
    assert registration["client_name"] == "pi"
    assert registration["redirect_uris"][0].startswith("http://127.0.0.1:")
    assert registration["redirect_uris"][0].endswith("/callback")
    credentials = pi.home / "mcp-auth.json"
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert json.loads(credentials.read_text())["secure"][oauth.mcp_url]["tokens"]["access_token"].startswith("at-")

    pi.server.add(Reply(tool_calls=[("mcp__secure__whoami", {})]), Reply(text="ok"))
    used = pi.run("-p", "who am I?")
    assert used.returncode == 0, used.stderr
    assert "mcp__secure__whoami" in tool_names(pi.server.requests[1].body)
    assert tool_results(pi.server.requests[2].body)[-1]["text"] == "signed in"
    assert oauth.state()["refreshes"] == 0

    # the stored token has expired (as far as pi knows): the next connection refreshes it, no sign-in needed
    stored = json.loads(credentials.read_text())
    old_token = stored["secure"][oauth.mcp_url]["tokens"]["access_token"]
    stored["secure"][oauth.mcp_url]["expiresAt"] = time.time() - 60
    credentials.write_text(json.dumps(stored))
    again = pi.run("mcp", "list")
    assert again.returncode == 0, again.stdout
    assert "secure: connected, 1 tool" in again.stdout
    assert oauth.state()["refreshes"] == 1
    assert len(oauth.state()["registrations"]) == 1
    refreshed = json.loads(credentials.read_text())["secure"][oauth.mcp_url]
    assert refreshed["tokens"]["access_token"] != old_token and refreshed["expiresAt"] > time.time()
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600

    out = pi.run("mcp", "logout", "secure")
    assert out.returncode == 0 and out.stdout == 'Signed out of MCP server "secure".\n'
    assert "secure" not in json.loads(credentials.read_text())
    assert pi.run("mcp", "logout", "secure").stdout == 'No stored credentials for MCP server "secure".\n'
    assert pi.run("mcp", "list").returncode == 1


@pytest.mark.slow
def test_configured_client_callback_port_and_client_name(pi: PiRunner, oauth: OAuthServers) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    write_mcp(pi.home / "mcp.json", {
        "preset": {"url": oauth.mcp_url, "oauth": {"clientId": "registered-client", "clientSecret": "${PRESET_SECRET}",
                                                   "callbackPort": port}},
        "named": {"url": oauth.mcp_url, "oauth": {"clientName": "Claude Code", "scope": "mcp:read extra"}},
    })
    pi.extra_env["PRESET_SECRET"] = "s3cret"
    log = browser(pi)
    first = pi.run("mcp", "login", "preset", timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    assert oauth.state()["registrations"] == []  # a configured client is not registered
    assert f"redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback" in log.read_text()
    exchange = next(r for r in oauth.state()["token_requests"] if r["grant_type"] == "authorization_code")
    assert exchange["client_id"] == "registered-client" and exchange["client_secret"] == "s3cret"
    second = pi.run("mcp", "login", "named", timeout=120)
    assert second.returncode == 0, second.stdout + second.stderr
    [registration] = oauth.state()["registrations"]
    assert registration["client_name"] == "Claude Code"
    assert "scope=mcp%3Aread+extra" in log.read_text().splitlines()[-1]
    # the same URL under two names: two sign-ins, two credentials
    stored = json.loads((pi.home / "mcp-auth.json").read_text())
    assert set(stored) == {"preset", "named"}


@pytest.mark.slow
def test_auth_server_metadata_url_replaces_wrong_discovery(pi: PiRunner, tmp_path: Path) -> None:
    process, servers = start_servers(tmp_path, "--wrong-issuer")
    try:
        write_mcp(pi.home / "mcp.json", {"wrong": {"url": servers.mcp_url},
                                         "fixed": {"url": servers.mcp_url, "oauth": {
                                             "authServerMetadataUrl":
                                                 f"{servers.issuer}/.well-known/oauth-authorization-server"}}})
        browser(pi)
        broken = pi.run("mcp", "login", "wrong", timeout=120)
        assert broken.returncode == 1
        assert 'Sign-in to MCP server "wrong" failed: ' in broken.stderr
        fixed = pi.run("mcp", "login", "fixed", timeout=120)
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        assert 'Signed in to MCP server "fixed" (1 tools).' in fixed.stdout
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.slow
def test_sign_in_times_out_when_the_browser_never_comes_back(pi: PiRunner, oauth: OAuthServers) -> None:
    write_mcp(pi.home / "mcp.json", {"secure": {"url": oauth.mcp_url}})
    browser(pi)
    pi.extra_env["FAKE_BROWSER_STAY_AWAY"] = "1"
    result = pi.run("mcp", "login", "secure", "--timeout", "3", timeout=120)
    assert result.returncode == 1
    assert 'Sign-in to MCP server "secure" was cancelled or not completed within 3 seconds.' in result.stderr
    unknown = pi.run("mcp", "login", "secur")
    assert unknown.returncode == 1 and 'No MCP server named "secur". Did you mean "secure"?' in unknown.stderr


def test_credential_updates_wait_for_other_processes_and_keep_what_they_saved(tmp_path: Path) -> None:
    from pi_plugins.mcp.oauth import CredentialStore

    from pi_core.toolkit.private_files import file_lock, lock_path, write_private_json

    store = CredentialStore(tmp_path / "mcp-auth.json")
    store.update("a", "https://a/mcp", tokens={"access_token": "a-1"})
    finished = threading.Event()

    def save_b() -> None:
        store.update("b", "https://b/mcp", tokens={"access_token": "b-1"})
        finished.set()

    with file_lock(lock_path(store.path)):  # another pi process is saving server a's refreshed token
        writer = threading.Thread(target=save_b)
        writer.start()
        assert not finished.wait(0.3)
        write_private_json(store.path, {"a": {"https://a/mcp": {"tokens": {"access_token": "a-2"}}}})
    writer.join(10)
    assert finished.is_set()
    saved = json.loads(store.path.read_text())
    assert saved == {"a": {"https://a/mcp": {"tokens": {"access_token": "a-2"}}},
                     "b": {"https://b/mcp": {"tokens": {"access_token": "b-1"}}}}
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
