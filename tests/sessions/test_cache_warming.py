"""``cacheWarming`` (issue 36) against the fake server: a model that declares a prompt-cache lifetime has its
last request re-sent with a one-token cap shortly before the cache expires, while the refresh pays for itself;
the refreshes' usage counts in the session's totals and never enters the context; warming stops when the
session ends, the conversation moves on, or the agent sits idle past 30 minutes.

The warmer's clock runs faster (``PI_CACHE_WARMING_TIME_SCALE``). Most tests use a 20-second cache lifetime at
5x: a refresh is due 10 s (warming time) after its request, 2 s here, with 1 s to spare before the cache would
expire. The idle-limit test needs a lifetime near Pi's real ones: 15 minutes at 200x, a refresh every 810 s
(4.05 s here), the 30-minute limit after 9 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_core.modes.rpc.client import RpcClient
from pi_core.testing.fake_server import FakeModelServer, RecordedRequest, Reply

SCALE = 5
SHORT_CACHE = {"short": 20}
DELAY_S = 10 / SCALE  # at least 10 s before a 20 s cache expires
IDLE_SCALE = 200
IDLE_DELAY_S = 810 / IDLE_SCALE  # 90% of a 900 s lifetime
IDLE_LIMIT_S = 1800 / IDLE_SCALE
API = "anthropic-messages"
PROMPT_TOKENS = 400_000  # big enough that an idle refresh pays for itself at these prices
COST = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
WARM_COST = PROMPT_TOKENS * 0.3 / 1e6 + 15 / 1e6


def refresh_reply(request: RecordedRequest) -> Reply:
    return Reply(text=".", input_tokens=0, cache_read_tokens=PROMPT_TOKENS, output_tokens=1)


class Pi:
    def __init__(self, server: FakeModelServer, root: Path) -> None:
        self.server = server
        self.home, self.cwd = root / "agent", root / "project"
        self.cwd.mkdir(parents=True)
        self.home.mkdir()
        self.models(prompt_cache=SHORT_CACHE)
        self.clients: list[RpcClient] = []

    def models(self, prompt_cache: dict[str, int] | None, cost: dict[str, float] = COST, **extra: Any) -> None:
        model: dict[str, Any] = {"id": "fake-model", "contextWindow": 1_000_000, "maxTokens": 4096, "cost": cost,
                                 **extra}
        if prompt_cache is not None:
            model["promptCache"] = prompt_cache
        (self.home / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": self.server.base_url_for(API), "api": API, "apiKey": "test-key", "models": [model]}}}))

    def settings(self, **values: Any) -> None:
        (self.home / "settings.json").write_text(json.dumps(values))

    def start(self, *args: str, scale: int = SCALE) -> RpcClient:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update(PI_CODING_AGENT_DIR=str(self.home), PI_CACHE_WARMING_TIME_SCALE=str(scale))
        client = RpcClient([*args], command=[sys.executable, "-c", "from pi_core.app.cli import cli; cli()"],
                           provider="fake", model="fake-model", cwd=self.cwd, env=env)
        self.clients.append(client.start())
        return client

    def entries(self) -> list[dict[str, Any]]:
        (path,) = sorted((self.home / "sessions").rglob("*.jsonl"))
        return [json.loads(line) for line in path.read_text().splitlines() if line]

    def refreshes(self) -> list[RecordedRequest]:
        return [r for r in self.server.requests if r.body and r.body.get("max_tokens") == 1]


@pytest.fixture
def pi(tmp_path: Path) -> Iterator[Pi]:
    with FakeModelServer(responder=refresh_reply) as server:
        env = Pi(server, tmp_path)
        yield env
        for client in env.clients:
            client.stop()


def first_reply(text: str = "done") -> Reply:
    return Reply(text=text, input_tokens=10, cache_write_tokens=PROMPT_TOKENS, output_tokens=20)


def wait_until(predicate: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not predicate():
        time.sleep(0.05)


def test_an_idle_session_is_refreshed_until_the_30_minute_limit(pi: Pi) -> None:
    pi.models(prompt_cache={"short": 900, "long": 3600})
    pi.server.add(first_reply())
    client = pi.start(scale=IDLE_SCALE)
    client.prompt_and_wait("hello")
    sent = pi.server.requests[0]
    time.sleep(IDLE_LIMIT_S + IDLE_DELAY_S / 2)  # two refreshes fit in the limit (810 s, 1620 s), a third would not

    refreshes = pi.refreshes()
    assert len(pi.server.requests) == 3 and len(refreshes) == 2
    for refresh in refreshes:  # the same request, capped at one output token
        assert {k: v for k, v in refresh.body.items() if k != "max_tokens"} == \
            {k: v for k, v in sent.body.items() if k != "max_tokens"}
    # The first is due 810 s after the request was made: the first request of a process leaves later (its
    # provider SDK is imported first), so only an upper bound holds for it.
    assert refreshes[0].arrived - sent.arrived < IDLE_DELAY_S * 1.3
    assert IDLE_DELAY_S * 0.9 < refreshes[1].arrived - refreshes[0].arrived < IDLE_DELAY_S * 1.3

    appended = [e["entry"] for e in client.events if e["type"] == "entry_appended"]
    assert [(e["type"], e["kind"]) for e in appended] == [("usage", "cache_warm")] * 2  # as Pi tells clients
    usage = [e for e in pi.entries() if e["type"] == "usage"]
    assert [(e["kind"], e["provider"], e["model"]) for e in usage] == [("cache_warm", "fake", "fake-model")] * 2
    assert usage[0]["usage"]["cacheRead"] == PROMPT_TOKENS and usage[0]["usage"]["output"] == 1
    assert usage[0]["usage"]["cost"]["total"] == pytest.approx(WARM_COST)

    stats = client.get_session_stats()
    reply_cost = (10 * 3 + PROMPT_TOKENS * 3.75 + 20 * 15) / 1e6
    assert stats["cost"] == pytest.approx(reply_cost + 2 * WARM_COST)
    assert stats["tokens"]["cacheRead"] == 2 * PROMPT_TOKENS and stats["assistantMessages"] == 1
    assert stats["contextUsage"]["tokens"] == 10 + PROMPT_TOKENS + 20  # the context is the reply's, not a refresh's

    pi.server.add(first_reply("again"))
    client.prompt_and_wait("next")
    messages = pi.server.requests[3].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]  # no refresh joined the context
    assert [m["role"] for m in client.get_messages()] == ["user", "assistant", "user", "assistant"]


def test_streaming_mode_refreshes_during_a_long_tool_and_stops_when_the_run_settles(pi: Pi) -> None:
    pi.settings(cacheWarming="streaming")
    pi.server.add(Reply(tool_calls=[("bash", {"command": f"sleep {DELAY_S + 1.2:.1f}"})], input_tokens=10,
                        cache_write_tokens=PROMPT_TOKENS, output_tokens=20), first_reply())
    client = pi.start()
    client.prompt_and_wait("run it", timeout=30)
    time.sleep(DELAY_S * 1.5)

    # A slow machine may start the tool late enough for a second refresh: how many is not the point.
    refreshes = pi.refreshes()
    first, second = [r for r in pi.server.requests if r not in refreshes]
    assert refreshes and all(r.body["messages"] == first.body["messages"] for r in refreshes)
    assert all(first.arrived < r.arrived < second.arrived for r in refreshes)  # while the tool ran, not after
    kinds = [e["type"] if e["type"] != "message" else e["message"]["role"] for e in pi.entries()]
    assert kinds[-3 - len(refreshes):] == ["assistant", *["usage"] * len(refreshes), "toolResult", "assistant"]


def test_no_refresh_when_off_or_without_a_lifetime_or_not_worth_it_or_not_replayable(pi: Pi) -> None:
    """Four sessions side by side: ``cacheWarming = off``; a model with no ``promptCache``; a prompt too
    small for an idle refresh to save $0.05; Anthropic budget thinking, whose budget follows ``max_tokens``
    (a one-token replay would be another request)."""
    pi.settings(cacheWarming="off")
    pi.server.add(first_reply())
    pi.start().prompt_and_wait("hello")
    pi.settings()
    pi.models(prompt_cache=None)
    pi.server.add(first_reply())
    pi.start().prompt_and_wait("hello")
    pi.models(prompt_cache=SHORT_CACHE)
    pi.server.add(Reply(text="small", input_tokens=10, cache_write_tokens=20_000))
    pi.start().prompt_and_wait("hello")
    pi.models(prompt_cache=SHORT_CACHE, reasoning=True)
    pi.server.add(first_reply())
    pi.start("--thinking", "high").prompt_and_wait("hello")
    assert "thinking" in pi.server.requests[-1].body
    time.sleep(DELAY_S * 1.4)
    assert len(pi.server.requests) == 4 and pi.refreshes() == []


def test_warming_stops_when_the_conversation_moves_on(pi: Pi) -> None:
    pi.server.add(first_reply())
    client = pi.start()
    client.prompt_and_wait("hello")
    client.new_session()
    time.sleep(DELAY_S * 1.4)
    assert pi.refreshes() == []


def test_a_project_cannot_turn_warming_off(pi: Pi) -> None:
    (pi.cwd / ".pi").mkdir()
    (pi.cwd / ".pi" / "settings.json").write_text(json.dumps({"cacheWarming": "off"}))
    pi.server.add(first_reply())
    client = pi.start("-a")
    client.prompt_and_wait("hello")
    wait_until(lambda: pi.refreshes(), DELAY_S * 2)
    assert len(pi.refreshes()) == 1
    assert "cacheWarming can only be set in the agent directory's settings; ignored" in client.stderr


def test_models_json_declares_and_overrides_prompt_cache_lifetimes(pi: Pi) -> None:
    (pi.home / "models.json").write_text(json.dumps({"providers": {"anthropic": {"modelOverrides": {
        "claude-sonnet-4-5": {"promptCache": {"short": 600}}}}}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PI_CODING_AGENT_DIR=str(pi.home), ANTHROPIC_API_KEY="test-key")
    client = RpcClient([], command=[sys.executable, "-c", "from pi_core.app.cli import cli; cli()"],
                       provider="anthropic", model="claude-sonnet-4-5", cwd=pi.cwd, env=env)
    pi.clients.append(client.start())
    models = {m["id"]: m for m in client.get_available_models()}
    assert models["claude-haiku-4-5"]["promptCache"] == {"short": 300, "long": 3600}  # Pi's catalog
    assert models["claude-sonnet-4-5"]["promptCache"] == {"short": 600, "long": 3600}  # merged over it

    pi.models(prompt_cache={"short": -1})
    done = subprocess.run([sys.executable, "-c", "from pi_core.app.cli import cli; cli()", "--list-models"],
                          capture_output=True, text=True, env=env, cwd=pi.cwd, timeout=60, check=False)
    assert f"{pi.home / 'models.json'}:1:" in done.stderr and "must be > 0" in done.stderr, done.stderr


def test_a_failed_refresh_is_not_retried_or_counted_and_the_next_one_still_comes(pi: Pi) -> None:
    pi.server.responder = lambda request: Reply.http_error(500, "upstream exploded")
    pi.server.add(first_reply())
    client = pi.start()
    client.prompt_and_wait("hello")
    wait_until(lambda: len(pi.refreshes()) >= 2, DELAY_S * 3)
    first, second = pi.refreshes()[:2]
    assert second.arrived - first.arrived > DELAY_S * 0.9  # one request each: the retries of a real request are off
    assert [e for e in pi.entries() if e["type"] == "usage"] == []
    assert client.get_session_stats()["tokens"]["cacheRead"] == 0


def test_an_export_counts_refreshes_in_its_totals_and_hides_them_from_its_tree(pi: Pi) -> None:
    usage = {"input": 0, "output": 1, "cacheRead": 50_000, "cacheWrite": 0, "totalTokens": 50_001,
             "cost": {"input": 0, "output": 0, "cacheRead": 0.015, "cacheWrite": 0, "total": 0.015}}
    reply = {"role": "assistant", "content": [{"type": "text", "text": "yo"}], "api": API, "provider": "fake",
             "model": "fake-model", "usage": {**usage, "cacheRead": 0, "output": 2, "cost": {"total": 0.002}},
             "stopReason": "stop", "timestamp": 2}
    lines = [{"type": "session", "version": 3, "id": "11111111-1111-1111-1111-111111111111",
              "timestamp": "2026-12-07T10:00:00.000Z", "cwd": str(pi.cwd)},
             {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-12-07T10:00:01.000Z",
              "message": {"role": "user", "content": "hi", "timestamp": 1}},
             {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-12-07T10:00:02.000Z",
              "message": reply},
             {"type": "usage", "id": "a3", "parentId": "a2", "timestamp": "2026-12-07T10:04:32.000Z",
              "kind": "cache_warm", "provider": "fake", "model": "fake-model", "usage": usage}]
    session = pi.cwd / "warm.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(pi.home)}
    done = subprocess.run([sys.executable, "-c", "from pi_core.app.cli import cli; cli()", "--export", str(session),
                           str(pi.cwd / "out.html")], capture_output=True, text=True, env=env, cwd=pi.cwd,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    page = (pi.cwd / "out.html").read_text()
    assert "R50k" in page and "$0.017" in page  # the refresh's 50k cached tokens and its cost in the header
    assert 'data-id="a3" data-parent="a2"' in page and 'data-filter="settings"' in page.split('data-id="a3"')[1][:200]
