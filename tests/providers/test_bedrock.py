"""Amazon Bedrock end to end through ``pi -p`` against the fake model server's ConverseStream endpoint (AWS
event-stream): SigV4 with env keys and a session token (the signature recomputed with botocore), a named
profile and its region, a Bedrock bearer token, Bedrock's error texts, and the missing-extra message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer, RecordedRequest, Reply
from tests.providers.pi16 import clean_env, run_pi, run_pi_here

pytest.importorskip("botocore", reason="the bedrock extra is not installed (pip install -e '.[bedrock]')")

CLAUDE = "us.anthropic.claude-sonnet-4-6"
KEYS = {"AWS_ACCESS_KEY_ID": "AKIAFAKEKEY123", "AWS_SECRET_ACCESS_KEY": "fake/secret+key"}


def configure(tmp_path: Path, server: FakeModelServer, **env: str) -> dict[str, str]:
    env_ = clean_env(tmp_path, env)
    agent = tmp_path / "agent"
    (agent / "models.json").write_text(json.dumps({"providers": {"amazon-bedrock": {"baseUrl": server.url}}}))
    (agent / "settings.json").write_text(json.dumps({"localServers": False,
                                                     "retry": {"enabled": False, "provider": {"maxRetries": 0}}}))
    return env_


def assert_signed(sent: RecordedRequest, access_key: str, secret: str, region: str, token: str | None = None) -> None:
    """Recompute the SigV4 signature over what arrived, with the same date: it must match."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    authorization = sent.headers["authorization"]
    scope = authorization.split("Credential=", 1)[1].split(",", 1)[0]
    date = sent.headers["x-amz-date"]
    assert scope == f"{access_key}/{date[:8]}/{region}/bedrock/aws4_request"
    signed = authorization.split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";")
    assert {"host", "x-amz-date", "content-type"} <= set(signed)
    if token is not None:
        assert sent.headers["x-amz-security-token"] == token and "x-amz-security-token" in signed
    request = AWSRequest(method="POST", url=f"http://{sent.headers['host']}{sent.path}", data=sent.raw,
                         headers={name: sent.headers[name] for name in signed if name != "host"})
    request.context["timestamp"] = date
    signer = SigV4Auth(Credentials(access_key, secret, token), "bedrock", region)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    assert authorization.endswith(f"Signature={expected}")


def test_env_keys_sign_each_request_and_a_tool_turn_round_trips(tmp_path: Path, pi_fake_server: FakeModelServer,
                                                                ) -> None:
    env = configure(tmp_path, pi_fake_server, **KEYS, AWS_SESSION_TOKEN="session-tok", AWS_REGION="us-west-2")
    listed = run_pi_here(["--list-models", "amazon-bedrock"], env, tmp_path)
    assert CLAUDE in listed.stdout and "amazon.nova-pro-v1:0" in listed.stdout
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.add(Reply(thinking="look first", tool_calls=[("read", {"path": "a.txt"})]),
                       Reply(text="bedrock read alpha", cache_read_tokens=3))
    done = run_pi(["-p", "--model", f"amazon-bedrock/{CLAUDE}", "--thinking", "high", "read a.txt"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "bedrock read alpha" in done.stdout
    first, second = pi_fake_server.requests
    assert first.path == f"/model/{CLAUDE}/converse-stream" and first.wire == "bedrock-converse-stream"
    for sent in (first, second):
        assert_signed(sent, KEYS["AWS_ACCESS_KEY_ID"], KEYS["AWS_SECRET_ACCESS_KEY"], "us-west-2", "session-tok")
    body = first.body
    assert body["system"][0]["text"] and body["system"][1] == {"cachePoint": {"type": "default"}}
    assert body["messages"][-1]["content"][-1] == {"cachePoint": {"type": "default"}}
    assert body["additionalModelRequestFields"]["thinking"]["type"] == "adaptive"  # sonnet 4.6 thinks adaptively
    assert body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]["type"] == "object"
    history = second.body["messages"]
    assistant = next(m for m in history if m["role"] == "assistant")
    assert assistant["content"][0] == {"reasoningContent": {"reasoningText": {
        "text": "look first", "signature": "fake-thinking-signature"}}}
    call = assistant["content"][1]["toolUse"]
    result = history[-1]["content"][0]["toolResult"]
    assert (call["name"], call["input"]) == ("read", {"path": "a.txt"})
    assert result["toolUseId"] == call["toolUseId"] and result["status"] == "success"
    assert result["content"][0]["text"].startswith("alpha")
    session = next((tmp_path / "agent" / "sessions").rglob("*.jsonl")).read_text()
    assert '"api":"bedrock-converse-stream"' in session and '"cacheRead":3' in session


def test_a_named_profile_and_its_region(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = configure(tmp_path, pi_fake_server, AWS_PROFILE="work")
    aws = Path(env["HOME"]) / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text("[work]\naws_access_key_id = AKIAPROFILEKEY\naws_secret_access_key = profsecret\n")
    (aws / "config").write_text("[profile work]\nregion = eu-central-1\n")
    pi_fake_server.add(Reply(text="from the profile"))
    done = run_pi(["-p", "--model", "amazon-bedrock/amazon.nova-pro-v1:0", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    sent = pi_fake_server.requests[0]
    assert_signed(sent, "AKIAPROFILEKEY", "profsecret", "eu-central-1")
    assert "x-amz-security-token" not in sent.headers
    assert "cachePoint" not in json.dumps(sent.body)  # Nova caches by itself


def test_a_bedrock_bearer_token(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = configure(tmp_path, pi_fake_server, AWS_BEARER_TOKEN_BEDROCK="bedrock-api-key-1")
    pi_fake_server.add(Reply(text="bearer ok"))
    done = run_pi(["-p", "--model", f"amazon-bedrock/{CLAUDE}", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    sent = pi_fake_server.requests[0]
    assert sent.headers["authorization"] == "Bearer bedrock-api-key-1" and "x-amz-date" not in sent.headers


def test_bedrocks_errors_keep_their_names(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = configure(tmp_path, pi_fake_server, **KEYS)
    pi_fake_server.add(Reply.http_error(400, "The model returned the following errors: bad input",
                                        headers={"x-amzn-errortype": "ValidationException"}),
                       Reply(text="partial", stream_error="throttlingException", error_message="Too many tokens"))
    refused = run_pi(["-p", "--model", f"amazon-bedrock/{CLAUDE}", "hi"], env, tmp_path)
    assert refused.returncode == 1
    assert "Validation error: The model returned the following errors: bad input" in refused.stderr
    assert f"[provider amazon-bedrock, POST {pi_fake_server.url}/model/{CLAUDE}/converse-stream]" in refused.stderr
    throttled = run_pi(["-p", "--model", f"amazon-bedrock/{CLAUDE}", "hi"], env, tmp_path)
    assert throttled.returncode == 1 and "Throttling error: Too many tokens" in throttled.stderr


def test_a_missing_profile_is_named(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = configure(tmp_path, pi_fake_server, AWS_PROFILE="missing-profile")
    done = run_pi(["-p", "--model", f"amazon-bedrock/{CLAUDE}", "hi"], env, tmp_path)
    assert done.returncode == 1 and pi_fake_server.requests == []
    assert "Amazon Bedrock: could not read the AWS configuration" in done.stderr and "missing-profile" in done.stderr


def test_the_fake_refuses_what_aws_would(pi_fake_server: FakeModelServer) -> None:
    import urllib.error
    import urllib.request

    for authorization in (None, "AWS4-HMAC-SHA256 Credential=AKIA/20261201/us-east-1/bedrock/aws4_request, "
                                "SignedHeaders=content-type, Signature=" + "0" * 64):
        request = urllib.request.Request(f"{pi_fake_server.url}/model/m/converse-stream", data=b"{}", method="POST")
        if authorization:
            request.add_header("Authorization", authorization)
            request.add_header("X-Amz-Date", "20261201T000000Z")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 403


def test_without_the_bedrock_extra_the_error_names_it(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    blocked = tmp_path / "no-botocore"
    (blocked / "botocore").mkdir(parents=True)
    (blocked / "botocore" / "__init__.py").write_text("raise ImportError('botocore is not installed')\n")
    env = configure(tmp_path, pi_fake_server, **KEYS, PYTHONPATH=str(blocked))
    done = run_pi(["-p", "--model", f"amazon-bedrock/{CLAUDE}", "hi"], env, tmp_path)
    assert done.returncode == 1 and pi_fake_server.requests == []
    assert 'Amazon Bedrock needs the bedrock extra: pip install "pi-harness[bedrock]"' in done.stderr


def test_no_aws_credentials_at_all_says_what_to_set(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = configure(tmp_path, pi_fake_server)
    done = run_pi(["-p", "--model", f"amazon-bedrock/{CLAUDE}", "hi"], env, tmp_path)
    assert done.returncode == 1 and pi_fake_server.requests == []
    assert "No credentials for provider: amazon-bedrock. Set AWS_PROFILE, AWS_ACCESS_KEY_ID" in done.stderr
