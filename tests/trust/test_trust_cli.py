"""Project trust through the real ``pi`` (issue 17): what loads without a decision, with -a / -na, with a
saved decision (a parent's, a symlink's), with defaultProjectTrust, and through a plugin's pi_project_trust."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

from .conftest import ask, marker, sent_tools, system_prompt


def line_for(runner: PiRunner, skipped: str, reason: str = " yet") -> str:
    return (f"Warning: Project not trusted{reason}: skipped {skipped} in {os.path.realpath(runner.cwd)}. "
            "Run with --approve (-a) to load them for this run, or trust the folder in interactive pi (/trust).")


def save(runner: PiRunner, decisions: dict[str, bool]) -> None:
    (runner.home / "trust.json").write_text(json.dumps(decisions))


def test_print_mode_without_a_decision_skips_the_project_and_says_so_once(pi: PiRunner) -> None:
    (pi.cwd / ".pi" / "SYSTEM.md").write_text("PROJECT SYSTEM PROMPT")
    (pi.cwd / ".pi" / "settings.toml").write_text('disabledPlugins = ["bash"]\n')
    (pi.cwd / "AGENTS.md").write_text("CONTEXT FILE RULES")
    rc, out, err = ask(pi)
    assert rc == 0 and out == "hello\n"
    assert not marker(pi)
    assert err.splitlines() == [line_for(pi, ".pi/settings.toml, .pi/extensions, .pi/SYSTEM.md")]
    prompt = system_prompt(pi)
    assert "PROJECT SYSTEM PROMPT" not in prompt and "CONTEXT FILE RULES" in prompt  # context files still load
    assert "bash" in sent_tools(pi)  # the project's settings were not read
    assert not (pi.home / "trust.json").exists()  # nothing decided, nothing saved


def test_approve_loads_everything_for_this_run_only(pi: PiRunner) -> None:
    (pi.cwd / ".pi" / "SYSTEM.md").write_text("PROJECT SYSTEM PROMPT")
    (pi.cwd / ".pi" / "settings.toml").write_text('disabledPlugins = ["bash"]\n')
    rc, _, err = ask(pi, "-a")
    assert rc == 0 and err == ""
    assert marker(pi)
    assert system_prompt(pi).startswith("PROJECT SYSTEM PROMPT")
    assert "bash" not in sent_tools(pi)
    assert not (pi.home / "trust.json").exists()
    (pi.cwd / "MARKER").unlink()
    rc, _, err = ask(pi, "--approve")
    assert rc == 0 and marker(pi)


def test_no_approve_skips_quietly_even_when_trusted(pi: PiRunner) -> None:
    save(pi, {str(pi.cwd): True})
    rc, _, err = ask(pi, "-na")
    assert rc == 0 and err == "" and not marker(pi)
    rc, _, err = ask(pi, "--no-approve")
    assert rc == 0 and err == "" and not marker(pi)


def test_a_saved_decision_for_a_parent_applies_and_the_closest_wins(pi: PiRunner) -> None:
    save(pi, {os.path.realpath(pi.cwd.parent): True})
    rc, _, err = ask(pi)
    assert rc == 0 and err == "" and marker(pi)
    (pi.cwd / "MARKER").unlink()
    save(pi, {os.path.realpath(pi.cwd.parent): True, os.path.realpath(pi.cwd): False})
    rc, _, err = ask(pi)
    assert not marker(pi)
    assert err.splitlines() == [line_for(pi, ".pi/extensions", f" (saved decision for {os.path.realpath(pi.cwd)})")]


def test_a_symlinked_path_resolves_to_the_same_decision(pi: PiRunner, tmp_path: Path) -> None:
    link = tmp_path / "link-to-project"
    link.symlink_to(pi.cwd, target_is_directory=True)
    save(pi, {str(link): True})  # written by hand through the link: still the same folder
    rc, _, err = ask(pi)
    assert rc == 0 and err == "" and marker(pi)
    (pi.cwd / "MARKER").unlink()
    save(pi, {os.path.realpath(pi.cwd): True})
    rc, _, err = ask(pi, cwd=link)  # started inside the link
    assert rc == 0 and err == "" and marker(pi)


def test_default_project_trust_always_and_never(pi: PiRunner) -> None:
    pi.settings('defaultProjectTrust = "always"\n')
    rc, _, err = ask(pi)
    assert rc == 0 and err == "" and marker(pi)
    (pi.cwd / "MARKER").unlink()
    pi.settings('defaultProjectTrust = "never"\n')
    rc, _, err = ask(pi)
    assert not marker(pi)
    assert err.splitlines() == [line_for(pi, ".pi/extensions", ' (defaultProjectTrust is "never")')]
    (pi.cwd / ".pi" / "settings.toml").write_text('defaultProjectTrust = "always"\n')  # a project cannot vote
    rc, _, err = ask(pi)
    assert not marker(pi)


DECIDER = """\
from pi_core import hookimpl
from pi_core import ProjectTrust

@hookimpl
def pi_project_trust(ctx):
    ctx.ui.notify(f"asked about {ctx.cwd} in {ctx.mode}: {', '.join(ctx.resources)}")
    return ProjectTrust(trusted=TRUSTED, remember=REMEMBER)
"""


def decider_source(trusted: bool, remember: bool) -> str:
    return DECIDER.replace("TRUSTED", str(trusted)).replace("REMEMBER", str(remember))


def test_a_command_line_plugin_decides_and_may_remember(pi: PiRunner, tmp_path: Path) -> None:
    decider = tmp_path / "decider.py"
    decider.write_text(decider_source(True, True))
    rc, _, err = ask(pi, "-e", str(decider))
    assert rc == 0 and marker(pi)
    real = os.path.realpath(pi.cwd)
    assert err.splitlines() == [f"asked about {real} in text: .pi/extensions"]
    assert json.loads((pi.home / "trust.json").read_text()) == {real: True}
    (pi.cwd / "MARKER").unlink()
    decider.write_text(decider_source(False, False))  # the plugin's answer beats the saved one
    rc, _, err = ask(pi, "-e", str(decider))
    assert not marker(pi)
    assert err.splitlines()[-1] == line_for(pi, ".pi/extensions", " (plugin decider decided)")


def test_the_projects_own_plugins_never_decide(pi: PiRunner) -> None:
    (pi.cwd / ".pi" / "extensions" / "self_trust.py").write_text(decider_source(True, True))
    rc, _, err = ask(pi)
    assert rc == 0 and not marker(pi) and "asked about" not in err
    assert not (pi.home / "trust.json").exists()


def test_a_failing_or_odd_decider_is_reported_and_does_not_decide(pi: PiRunner, tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("from pi_core import hookimpl\n\n@hookimpl\ndef pi_project_trust(ctx):\n    raise OSError('boom')\n")
    odd = tmp_path / "odd.py"
    odd.write_text("from pi_core import hookimpl\n\n@hookimpl\ndef pi_project_trust(ctx):\n    return True\n")
    rc, _, err = ask(pi, "-e", str(broken), "-e", str(odd))
    assert rc == 0 and not marker(pi)
    assert f'Warning: Extension "{broken}" project_trust error: boom' in err
    assert f'Warning: Extension "{odd}" project_trust returned bool; expected ProjectTrust or None (ignored)' in err
    assert "Traceback" not in err


def test_a_broken_trust_file_is_reported_and_never_overwritten(pi: PiRunner, tmp_path: Path) -> None:
    (pi.home / "trust.json").write_text("{not json")
    decider = tmp_path / "decider.py"
    decider.write_text(decider_source(True, True))
    rc, _, err = ask(pi, "-e", str(decider))
    assert rc == 0 and marker(pi)  # the plugin decided; saving its answer failed loudly
    assert f"Failed to read trust store {pi.home / 'trust.json'}" in err and "Traceback" not in err
    assert (pi.home / "trust.json").read_text() == "{not json"
    (pi.cwd / "MARKER").unlink()
    rc, _, err = ask(pi)
    assert not marker(pi) and "saved trust decisions are ignored until it is fixed" in err


def test_project_skills_templates_and_agents_skills_wait_for_trust(pi: PiRunner) -> None:
    (pi.cwd / ".git").mkdir()
    skill = pi.cwd / ".agents" / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship the thing.\n---\nsteps\n")
    (pi.cwd / ".pi" / "prompts").mkdir()
    (pi.cwd / ".pi" / "prompts" / "review.md").write_text("Review $1 carefully")
    shutil.rmtree(pi.cwd / ".pi" / "extensions")
    rc, _, err = ask(pi, prompt="/review main.py")
    assert err.splitlines() == [line_for(pi, ".pi/prompts, .agents/skills")]
    assert "Ship the thing." not in system_prompt(pi)
    assert "/review main.py" in json.dumps(pi.server.requests[-1].body["contents"])
    rc, _, err = ask(pi, "-a", prompt="/review main.py")
    assert rc == 0 and err == ""
    assert "Ship the thing." in system_prompt(pi)
    assert "Review main.py carefully" in json.dumps(pi.server.requests[-1].body["contents"])


def test_json_and_rpc_modes_skip_with_the_same_line(pi: PiRunner) -> None:
    pi.server.add(Reply(text="hello"))
    done = pi.run("--mode", "json", "hi")
    assert done.returncode == 0 and not marker(pi)
    assert done.stderr.splitlines() == [line_for(pi, ".pi/extensions")]
    assert all(json.loads(line) for line in done.stdout.splitlines())  # stdout stays pure JSON
    rpc = pi.run("--mode", "rpc", stdin='{"type": "get_state", "id": "1"}\n')
    assert not marker(pi)
    assert rpc.stderr.splitlines() == [line_for(pi, ".pi/extensions")]
    assert json.loads(rpc.stdout.splitlines()[0])["success"] is True


def test_plugins_listing_respects_trust(pi: PiRunner) -> None:
    listed = pi.run("plugins", "--json")
    assert "x" not in {row["name"] for row in json.loads(listed.stdout)} and not marker(pi)
    assert listed.stderr.splitlines() == [line_for(pi, ".pi/extensions")]
    rows = {row["name"]: row for row in json.loads(pi.run("plugins", "--json", "-a").stdout)}
    assert rows["x"]["layer"] == "project" and marker(pi)


def make_project_dist(site: Path, name: str, module: str, body: str) -> None:
    """What ``pip install --prefix .pi/packages`` leaves: a module and its dist-info with a ``pi`` entry point."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(body)
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[pi]\n{module} = {module}\n")


PACKAGE_PLUGIN = textwrap.dedent("""\
    from pathlib import Path
    from pi_core import hookimpl
    from pi_core import ProjectTrust

    Path.cwd().joinpath("PACKAGE_MARKER").write_text("imported")

    @hookimpl
    def pi_project_trust(ctx):
        return ProjectTrust(trusted=True, remember=True)
""")


def test_a_project_package_loads_only_in_its_project_and_only_after_trust(pi: PiRunner, tmp_path: Path) -> None:
    from pi_core.plugins import project_site

    shutil.rmtree(pi.cwd / ".pi" / "extensions")
    make_project_dist(project_site(pi.cwd), "pi-proj-pack", "proj_pack", PACKAGE_PLUGIN)
    rc, _, err = ask(pi)
    assert rc == 0 and not (pi.cwd / "PACKAGE_MARKER").exists()  # untrusted, and it never votes on its own trust
    assert err.splitlines() == [line_for(pi, ".pi/packages")]
    assert not (pi.home / "trust.json").exists()
    rows = {row["name"]: row for row in json.loads(pi.run("-a", "plugins", "--json").stdout)}
    assert rows["proj_pack"]["layer"] == "project" and rows["proj_pack"]["source"] == "pi-proj-pack 1.0 (project)"
    assert (pi.cwd / "PACKAGE_MARKER").exists()
    other = tmp_path / "other-project"
    other.mkdir()
    pi.cwd = other
    listed = pi.run("-a", "plugins", "--json")
    assert "proj_pack" not in {row["name"] for row in json.loads(listed.stdout)}
    assert not (other / "PACKAGE_MARKER").exists()


def test_project_pi_skills_and_append_system_wait_for_trust(pi: PiRunner) -> None:
    shutil.rmtree(pi.cwd / ".pi" / "extensions")
    skill = pi.cwd / ".pi" / "skills" / "lint"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: lint\ndescription: Lint the project.\n---\nsteps\n")
    (pi.cwd / ".pi" / "APPEND_SYSTEM.md").write_text("PROJECT APPENDIX")
    rc, _, err = ask(pi)
    assert rc == 0 and err.splitlines() == [line_for(pi, ".pi/skills, .pi/APPEND_SYSTEM.md")]
    assert "Lint the project." not in system_prompt(pi) and "PROJECT APPENDIX" not in system_prompt(pi)
    rc, _, err = ask(pi, "-a")
    assert rc == 0 and err == ""
    assert "Lint the project." in system_prompt(pi) and "PROJECT APPENDIX" in system_prompt(pi)
