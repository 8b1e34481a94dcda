"""Secrets never reach session files, exported HTML, logs or error messages; auth.json stays private."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from pi_core.export.html import export_html
from pi_core.models.auth import AuthStorage
from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner
from pi_core.toolkit.redact import (
    REDACTED,
    forget_secrets,
    redact,
    redact_value,
    register_secret,
)

PROVIDER_KEY = "prov-Zq8mK2vX9wLp4nR7tY1u"  # no known key shape: only the registry can catch it
ENV_KEY = "env-Hj3kL9mN2bV5cX8zQ4wE"
SHAPED_KEY = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 2  # a key pi never saw, printed by a tool
ALL = [PROVIDER_KEY, ENV_KEY, SHAPED_KEY]


@pytest.fixture(autouse=True)
def _fresh_registry() -> None:
    forget_secrets()


def use_secret_key(pi: PiRunner) -> None:
    models = json.loads((pi.home / "models.json").read_text())
    models["providers"]["fake"]["apiKey"] = "VAULT_PROVIDER_KEY"  # resolved from the environment
    (pi.home / "models.json").write_text(json.dumps(models))
    pi.extra_env.update({"VAULT_PROVIDER_KEY": PROVIDER_KEY, "DEPLOY_API_KEY": ENV_KEY})


def assert_clean(text: str, where: str) -> None:
    for secret in ALL:
        assert secret not in text, f"{secret} leaked into {where}"


def test_keys_stay_out_of_session_errors_and_html(pi: PiRunner) -> None:
    use_secret_key(pi)
    pi.settings("retry = { enabled = false }\n")
    show = f"echo provider=$VAULT_PROVIDER_KEY env=$DEPLOY_API_KEY shaped={SHAPED_KEY}"
    pi.server.add(Reply(tool_calls=[("bash", {"command": show})]),
                  Reply(text="The keys were printed."),
                  Reply.http_error(401, f"Incorrect API key provided: {PROVIDER_KEY}. Check {ENV_KEY}."))
    first = pi.run("-p", "print the keys")
    assert first.returncode == 0, first.stderr
    # the key really was used on the wire and the tool really printed the secrets
    assert pi.server.requests[0].headers["x-goog-api-key"] == PROVIDER_KEY
    assert PROVIDER_KEY in json.dumps(pi.server.requests[1].body)  # the model may see its own tool's output

    second = pi.run("-c", "-p", "again")
    assert second.returncode == 1
    assert REDACTED in second.stderr and "Incorrect API key" in second.stderr
    assert_clean(second.stderr + second.stdout, "print-mode output")

    json_mode = pi.run("-c", "--mode", "json", "once more")  # the queue is empty: the server says so
    assert_clean(json_mode.stdout + json_mode.stderr, "json mode events")

    (session,) = pi.session_files()
    text = session.read_text()
    assert_clean(text, "the session file")
    assert text.count(REDACTED) >= 4  # tool output (3 secrets) and the 401 message
    for line in text.splitlines():
        json.loads(line)

    out = export_html(session, pi.cwd / "export.html")  # what `pi --export` and RPC export_html call
    html = out.read_text()
    assert "print the keys" in html and REDACTED in html
    assert_clean(html, "the exported HTML")


def test_log_records_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    register_secret(PROVIDER_KEY)
    logger = logging.getLogger("pi.reliability.test")
    with caplog.at_level(logging.DEBUG, logger="pi"):
        logger.warning("request failed with key %s", PROVIDER_KEY)
        try:
            raise RuntimeError(f"401 for {SHAPED_KEY}")
        except RuntimeError:
            logger.exception("provider error")
        logging.getLogger("httpx2").warning("header x-api-key: %s", PROVIDER_KEY)
    text = caplog.text
    assert "request failed with key [REDACTED]" in text and "401 for [REDACTED]" in text
    assert_clean(text, "the log")


def test_redaction_rules() -> None:
    register_secret("short")  # too short to be a secret: never replaced
    register_secret(PROVIDER_KEY)
    assert redact("short and sweet") == "short and sweet"
    assert redact(f"key={PROVIDER_KEY}!") == f"key={REDACTED}!"
    assert redact("pip install scikit-learn; sk-learn is fine") == "pip install scikit-learn; sk-learn is fine"
    assert redact("OPENAI=sk-proj-abcdefghijklmnopqrstuvwxyz012345") == f"OPENAI={REDACTED}"
    assert redact("AIza" + "x" * 35) == REDACTED
    assert redact_value({"a": [PROVIDER_KEY, 3, None], PROVIDER_KEY: True}) == {"a": [REDACTED, 3, None], REDACTED: True}


def test_environment_secrets_are_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    assert redact(f"x {ENV_KEY}") == f"x {ENV_KEY}"
    monkeypatch.setenv("LATE_TOKEN", ENV_KEY)
    assert redact(f"x {ENV_KEY}") == f"x {REDACTED}"


def test_auth_file_is_created_0600_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "auth.json"
    old = os.umask(0)
    try:
        AuthStorage(path).set_api_key("anthropic", PROVIDER_KEY)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert AuthStorage.load(path).api_key("anthropic") == PROVIDER_KEY


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660])
def test_readable_auth_file_is_refused_with_a_warning(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"anthropic": {"type": "api_key", "key": PROVIDER_KEY}}))
    path.chmod(mode)
    storage = AuthStorage.load(path)
    assert storage.api_key("anthropic") is None
    assert len(storage.warnings) == 1 and "chmod 600" in storage.warnings[0]
    assert_clean(storage.warnings[0], "the warning")


def test_cli_warns_about_a_readable_auth_file(pi: PiRunner) -> None:
    path = pi.home / "auth.json"
    path.write_text(json.dumps({"fake": {"type": "api_key", "key": ENV_KEY}}))
    path.chmod(0o644)
    pi.server.add(Reply(text="answer"))
    result = pi.run("-p", "hi")
    assert result.returncode == 0 and result.stdout == "answer\n"
    assert "readable by other users" in result.stderr and "chmod 600" in result.stderr
    assert pi.server.requests[0].headers["x-goog-api-key"] == "test-key"  # the file's key was not used
    assert_clean(result.stderr, "the warning")
