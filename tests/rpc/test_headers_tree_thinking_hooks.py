"""Three of issue 15's "Missing" hooks no example port exercises, through ``pi --mode rpc`` against the fake server:
``pi_before_provider_headers`` adds and deletes request headers, ``pi_thinking_level_select`` hears each change
with the previous level, and ``pi_session_before_tree`` sees where ``ctx.navigate_tree`` goes and can veto it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from pi_core.modes.rpc.client import RpcClient
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.pi_home import write_models

PI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]
PLUGIN = '''
from pi_core import hookimpl
from pi_core import TreeDecision
from pi_core import SlashCommand


@hookimpl
def pi_before_provider_headers(headers):
    headers["x-audit"] = "15"
    headers["anthropic-version"] = None


@hookimpl
def pi_thinking_level_select(ctx, level, previous_level):
    ctx.ui.notify(f"thinking {previous_level} -> {level}")


@hookimpl
def pi_session_before_tree(ctx, preparation):
    ctx.ui.notify(f"tree to {preparation.target_id} from {preparation.old_leaf_id}")
    ctx.ui.notify(" ".join(f"{type(e).__name__}:{getattr(getattr(e, 'message', None), 'role', '-')}:{e.id}"
                           for e in preparation.entries_to_summarize))
    return TreeDecision(cancel=True) if VETO else None


VETO = []


async def go(args, ctx):
    VETO[:] = [True] if args.startswith("veto ") else []
    change = await ctx.navigate_tree(args.removeprefix("veto "))
    ctx.ui.notify(f"cancelled={change.cancelled}")


@hookimpl
def pi_commands():
    return [SlashCommand("go", "move the leaf", go)]
'''


def notices(client: RpcClient, after: int) -> list[str]:
    return [e["message"] for e in client.events[after:] if e.get("method") == "notify"]


def test_headers_thinking_level_and_tree_hooks(tmp_path: Path) -> None:
    (tmp_path / "hooks.py").write_text(PLUGIN)
    with FakeModelServer() as server:
        write_models(tmp_path / "agent", server.base_url_for("anthropic-messages"), "anthropic-messages",
                     reasoning=True)
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        client = RpcClient(["--provider", "fake", "--model", "fake-model", "-e", "hooks.py"], command=PI,
                           cwd=tmp_path, env={**env, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}).start()
        try:
            server.add(Reply(text="first"), Reply(text="second"))
            client.prompt_and_wait("one")
            headers = server.requests[0].headers
            assert headers["x-audit"] == "15" and "anthropic-version" not in headers, headers

            mark = client.event_count()
            before = client.get_state()["thinkingLevel"]
            client.set_thinking_level("high")
            client.wait_for_event(lambda e: e.get("method") == "notify", after=mark)
            assert notices(client, mark) == [f"thinking {before} -> high"]

            client.prompt_and_wait("two")
            entries = [json.loads(line) for line in Path(client.get_state()["sessionFile"]).read_text().splitlines()]
            first_reply = next(e["id"] for e in entries if e.get("type") == "message"
                               and e["message"]["role"] == "assistant")
            leaf = entries[-1]["id"]
            # the typed entries after the common ancestor (the first reply), oldest first
            kinds = {"message": "MessageEntry", "thinking_level_change": "ThinkingLevelChangeEntry"}
            after = entries[[e.get("id") for e in entries].index(first_reply) + 1:]
            abandoned = " ".join(f"{kinds[e['type']]}:{e.get('message', {}).get('role', '-')}:{e['id']}"
                                 for e in after)
            assert "MessageEntry:user:" in abandoned and "MessageEntry:assistant:" in abandoned, abandoned
            mark = client.event_count()
            client.prompt(f"/go veto {first_reply}")
            client.wait_for_event(lambda e: str(e.get("message", "")).startswith("cancelled="), after=mark)
            assert notices(client, mark) == [f"tree to {first_reply} from {leaf}", abandoned, "cancelled=True"]
            assert [m["role"] for m in client.get_messages()] == ["user", "assistant", "user", "assistant"]

            mark = client.event_count()
            client.prompt(f"/go {first_reply}")
            client.wait_for_event(lambda e: str(e.get("message", "")).startswith("cancelled="), after=mark)
            assert notices(client, mark) == [f"tree to {first_reply} from {leaf}", abandoned, "cancelled=False"]
            assert [m["role"] for m in client.get_messages()] == ["user", "assistant"]
        finally:
            client.stop()
