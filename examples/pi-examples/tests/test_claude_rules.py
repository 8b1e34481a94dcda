"""claude_rules: the rule files under .claude/rules/ are listed in the system prompt, and announced once."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def write_rules(example) -> None:
    rules = example.cwd / ".claude" / "rules"
    (rules / "api").mkdir(parents=True)
    (rules / "testing.md").write_text("Run pytest.\n")
    (rules / "api" / "design.md").write_text("REST.\n")
    (rules / "notes.txt").write_text("not a rule\n")


def test_rules_are_listed_in_the_system_prompt(example) -> None:
    write_rules(example)
    example.server.add(Reply(text="ok"))
    done = example.run("claude_rules", "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    prompt = example.system_prompt(0)
    assert "## Project Rules\n\nThe following project rules are available in .claude/rules/:\n\n" \
           "- .claude/rules/api/design.md\n- .claude/rules/testing.md\n\n" \
           "When working on tasks related to these rules, use the read tool" in prompt
    assert "notes.txt" not in prompt


def test_no_rules_folder_leaves_the_prompt_alone(example) -> None:
    example.server.add(Reply(text="ok"), Reply(text="ok"))
    assert example.run("claude_rules", "--no-session", "-p", "hi").returncode == 0
    assert example.run(None, "--no-session", "-p", "hi").returncode == 0
    with_plugin, without = (example.system_prompt(i) for i in (0, 1))
    assert "Project Rules" not in with_plugin
    assert with_plugin == without


def test_rpc_client_is_told_how_many_rules_were_found(example) -> None:
    write_rules(example)
    client = example.rpc("claude_rules", "--no-session")
    client.wait_for_event(lambda e: e.get("method") == "notify")
    assert [n["message"] for n in example.ui_requests(client, "notify")] == ["Found 2 rule(s) in .claude/rules/"]
