"""input_transform_streaming: prompts about changes get git's diff stat; steering mid-run is passed on untouched."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply

GATE = ("bash", {"command": "while [ ! -f gate ]; do sleep 0.05; done"})


def test_diff_stat_is_added_to_prompts_about_changes(example, repo) -> None:
    (repo / "README.md").write_text("hello\nworld\n")
    example.server.add(Reply(text="ok"), Reply(text="ok"))
    client = example.rpc("input_transform_streaming", "--no-session")
    client.prompt_and_wait("review my changes")
    stat = "README.md | 1 +\n 1 file changed, 1 insertion(+)"  # trimmed, as the example does
    assert example.user_text(0) == f"review my changes\n\nCurrent uncommitted changes:\n```\n{stat}\n```"
    client.prompt_and_wait("what time is it")
    assert example.user_text(1) == "what time is it"


def test_steering_skips_git_and_follow_ups_do_not(example, repo) -> None:
    (repo / "README.md").write_text("hello\nworld\n")
    example.server.add(Reply(tool_calls=[GATE]), Reply(text="ok"), Reply(text="ok"))
    client = example.rpc("input_transform_streaming", "--no-session")
    client.prompt("start")
    client.wait_for_event("tool_execution_start", timeout=30)
    client.prompt("changes too", streaming_behavior="steer")
    client.prompt("and the diff", streaming_behavior="followUp")
    (repo / "gate").write_text("")
    client.wait_for_event(lambda e: e.get("type") == "agent_end" and len(example.server.requests) >= 3, timeout=30)
    assert example.user_text(1) == "changes too"
    assert example.user_text(2).startswith("and the diff\n\nCurrent uncommitted changes:\n```\nREADME.md | 1 +")
