"""``/login`` and ``/logout`` through a session's UI (driven over RPC, whose dialogs are extension UI requests)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_core.modes.rpc.client import RpcClient
from pi_core.testing.fake_auth import FakeAuthServer
from pi_core.testing.fake_server import FakeModelServer
from pi_core.testing.pi_home import write_models
from tests.providers.pi16 import clean_env


@pytest.fixture
def rpc(tmp_path: Path) -> Iterator[tuple[RpcClient, FakeAuthServer, Path, list[dict[str, Any]]]]:
    browser = tmp_path / "browser"
    browser.write_text(f"#!{sys.executable}\nimport sys\nfrom pi_core.testing.fake_auth import browse\n"
                       "sys.exit(browse(sys.argv[1]))\n")
    browser.chmod(0o755)
    with FakeAuthServer() as auth, FakeModelServer() as models:
        env = clean_env(tmp_path, {"PI_OAUTH_SERVER": auth.url, "BROWSER": str(browser),
                                   "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
        write_models(tmp_path / "agent", models.url, "anthropic-messages")
        client = RpcClient(["--provider", "fake", "--model", "fake-model", "--no-session"], env=env, cwd=tmp_path)
        notices: list[dict[str, Any]] = []
        client.on_event(lambda e: notices.append(e) if e.get("type") == "extension_ui_request"
                        and e.get("method") == "notify" else None)
        with client.start():
            yield client, auth, tmp_path / "agent", notices


def _prompt(client: RpcClient, text: str) -> None:
    """Send without waiting: the command's response comes after its dialogs are answered."""
    client.send_raw(json.dumps({"type": "prompt", "message": text}) + "\n")


def _wait_notice(client: RpcClient, text: str) -> dict[str, Any]:
    return client.wait_for_event(lambda e: e.get("type") == "extension_ui_request" and e.get("method") == "notify"
                                 and text in e.get("message", ""), timeout=30)


def test_login_signs_in_through_the_browser_and_logout_forgets(rpc: Any) -> None:
    client, auth, agent, notices = rpc
    assert not any(m["provider"] == "anthropic" for m in client.get_available_models())
    _prompt(client, "/login anthropic")
    # Anthropic also takes an API key: the session asks which.
    ask = client.wait_for_event(lambda e: e.get("type") == "extension_ui_request" and e.get("method") == "select",
                                timeout=30)
    assert ask["options"] == ["Sign in with an account", "Enter an API key"]
    client.respond_ui(ask["id"], value="Sign in with an account")
    method = client.wait_for_event(lambda e: e.get("type") == "extension_ui_request" and e.get("method") == "select"
                                   and e["id"] != ask["id"], timeout=30)
    client.respond_ui(method["id"], value="Browser login (default)")
    _wait_notice(client, "Open this URL to sign in:")
    # The browser's redirect lands on the callback server while the paste question is still open.
    _wait_notice(client, "Logged in to Anthropic. Credentials saved to")
    stored = json.loads((agent / "auth.json").read_text())["anthropic"]
    assert stored["access"] in auth.issued
    assert any(m["provider"] == "anthropic" for m in client.get_available_models())
    assert not any(stored["access"] in n.get("message", "") for n in notices)

    _prompt(client, "/logout anthropic")
    _wait_notice(client, "Logged out of Anthropic.")
    assert "anthropic" not in json.loads((agent / "auth.json").read_text())
    assert not any(m["provider"] == "anthropic" for m in client.get_available_models())


def test_login_with_an_api_key_and_an_unknown_provider(rpc: Any) -> None:
    client, _auth, agent, _notices = rpc
    _prompt(client, "/login groq")
    ask = client.wait_for_event(lambda e: e.get("type") == "extension_ui_request" and e.get("method") == "input",
                                timeout=30)
    assert ask["title"] == "Enter Groq API key"
    client.respond_ui(ask["id"], value="gsk-from-dialog-0123456789")
    _wait_notice(client, "Saved API key for Groq.")
    assert json.loads((agent / "auth.json").read_text())["groq"]["key"] == "gsk-from-dialog-0123456789"
    _prompt(client, "/login nope")
    _wait_notice(client, 'Unknown provider "nope".')
