"""inline_bash: !{command} in a prompt becomes the command's output; a whole-line !command is left alone."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def test_print_mode_expands_inline_commands(example) -> None:
    example.server.add(Reply(text="ok"))
    done = example.run("inline_bash", "--no-session", "-p", "What's in !{echo hello}? and !{printf 'a\\nb'}!")
    assert done.returncode == 0, done.stderr
    assert example.user_text(0) == "What's in hello? and a\nb!"


def test_rpc_reports_each_expansion_and_failures(example, ui) -> None:
    example.server.add(Reply(text="ok"), Reply(text="ok"))
    client = example.rpc("inline_bash", "--no-session")
    client.prompt_and_wait("Here: !{echo hello} !{ls /nonexistent-dir-xyz} !{seq 1 40 | tr '\\n' ' '}")
    notice = ui(client, "notify")
    lines = notice["message"].split("\n")
    assert lines[0] == "Expanded 3 inline command(s):"
    assert lines[1] == '!{echo hello} -> "hello"'
    assert lines[2].startswith("!{ls /nonexistent-dir-xyz} (exit code 2) -> \"ls: cannot access")
    sequence = " ".join(str(n) for n in range(1, 41))
    assert lines[3] == f'!{{seq 1 40 | tr \'\\n\' \' \'}} -> "{sequence[:50]}..."'
    sent = example.user_text(0)
    assert sent.startswith("Here: hello ls: cannot access") and sent.endswith(sequence)

    mark = client.event_count()
    client.prompt_and_wait("!echo hi and !{echo x}")  # the user's own shell line: untouched
    assert example.user_text(1) == "!echo hi and !{echo x}"
    assert not [e for e in client.events[mark:] if e.get("method") == "notify"]
