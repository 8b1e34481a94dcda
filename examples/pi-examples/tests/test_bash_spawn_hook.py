"""bash_spawn_hook: every bash command runs after ~/.profile with PI_SPAWN_HOOK=1 in its environment."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def test_commands_see_the_profile_and_the_marker(example, tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".profile").write_text("export FOO=bar\n")
    example.server.add(Reply(tool_calls=[("bash", {"command": "echo $FOO $PI_SPAWN_HOOK"})]), Reply(text="done"),
                       Reply(tool_calls=[("bash", {"command": "echo [$FOO] [$PI_SPAWN_HOOK]"})]), Reply(text="done"))
    done = example.run("bash_spawn_hook", "--no-session", "-p", "run", env={"HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1) == ["bar 1\n"]
    without = example.run(None, "--no-session", "-p", "run", env={"HOME": str(home)})
    assert without.returncode == 0, without.stderr
    assert example.tool_results(3) == ["[] []\n"]
