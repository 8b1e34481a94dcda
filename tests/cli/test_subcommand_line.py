"""Issue 16 item 7: pi's options may come before a built-in or plugin sub-command, and every token
after the sub-command's name goes to that command's own parser."""

from __future__ import annotations

import json
import textwrap

from pi_core.testing.fake_server import Reply

from .conftest import PiRunner

EXTENSION = textwrap.dedent('''
    import json

    import click
    from pi_core import Tool, hookimpl

    @click.command("sweep")
    @click.argument("tasks")
    @click.option("-j", "--jobs", type=int, default=1)
    @click.option("-o", "--out", default="out")
    @click.option("--dry-run", is_flag=True)
    @click.pass_obj
    def sweep(context, tasks, jobs, out, dry_run):
        click.echo(json.dumps({"tasks": tasks, "jobs": jobs, "out": out, "dry_run": dry_run,
                               "global_argv": context.global_argv, "extensions": context.options.extensions,
                               "model": context.options.model,
                               "plugins": sorted(context.startup.plugins.info)}))

    def execute(args, ctx):
        return "ok"

    TOOL = Tool(name="sweeptool", description="A tool from the sweep extension.",
                parameters={"type": "object", "properties": {}}, execute=execute)

    @hookimpl
    def pi_cli_commands():
        return [sweep]

    @hookimpl
    def pi_tools():
        return [TOOL]
''')


def _extension(pi: PiRunner) -> str:
    (pi.cwd / "sweep_ext.py").write_text(EXTENSION)
    return "sweep_ext.py"


def test_plugin_command_after_global_options_gets_its_own_short_and_long_options(pi_anthropic: PiRunner) -> None:
    ext = _extension(pi_anthropic)
    result = pi_anthropic.run("-e", ext, "sweep", "t.jsonl", "-j", "4", "--out", "results", "--dry-run")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["tasks"] == "t.jsonl" and data["jobs"] == 4 and data["out"] == "results" and data["dry_run"]
    # pi's own options typed before the name reach the command, and chose its plugins
    assert data["global_argv"] == ["--provider", "fake", "--model", "fake-model", "-e", ext]
    assert data["extensions"] == [ext] and data["model"] == "fake-model"
    assert "sweep_ext" in data["plugins"]
    assert pi_anthropic.server.requests == []  # nothing went to the model

    short = pi_anthropic.run("-e", ext, "sweep", "t.jsonl", "-o", "d", "--jobs", "2")
    assert short.returncode == 0, short.stderr
    assert json.loads(short.stdout)["jobs"] == 2 and json.loads(short.stdout)["out"] == "d"


def test_command_options_are_not_read_as_pis(pi_anthropic: PiRunner) -> None:
    ext = _extension(pi_anthropic)
    # -e after the name is the command's (it has none): click's usage error, not pi loading a file
    result = pi_anthropic.run("-e", ext, "sweep", "t.jsonl", "-e", "other.py")
    assert result.returncode == 2
    assert "No such option '-e'" in result.stderr and "Traceback" not in result.stderr
    assert pi_anthropic.server.requests == []
    bad_value = pi_anthropic.run("-e", ext, "sweep", "t.jsonl", "-j", "many")
    assert bad_value.returncode == 2 and "'many' is not a valid integer" in bad_value.stderr


def test_builtin_plugins_command_after_extension_option(pi_anthropic: PiRunner) -> None:
    ext = _extension(pi_anthropic)
    result = pi_anthropic.run("-e", ext, "plugins", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["sweep_ext"]["layer"] == "explicit" and rows["sweep_ext"]["tools"] == ["sweeptool"]
    assert pi_anthropic.server.requests == []  # "plugins" was not sent to the model


def test_plugins_and_tools_take_extension_disable_and_no_extensions(pi_anthropic: PiRunner) -> None:
    ext = _extension(pi_anthropic)
    project_ext = pi_anthropic.cwd / ".pi" / "extensions"
    project_ext.mkdir(parents=True)
    (project_ext / "found.py").write_text(EXTENSION.replace('"sweeptool"', '"foundtool"')
                                          .replace('"sweep"', '"found"'))

    def tools(*args: str) -> dict[str, dict[str, object]]:
        result = pi_anthropic.run(*args)
        assert result.returncode == 0, result.stderr
        return {row["name"]: row for row in json.loads(result.stdout)}

    listed = tools("tools", "--json", "-e", ext, "-a")  # -a: the project's own extensions need trust
    assert {"sweeptool", "foundtool", "bash"} <= set(listed)
    assert "foundtool" not in tools("tools", "--json", "-e", ext)
    assert "foundtool" not in tools("tools", "--json", "--no-extensions", "-a")
    assert "foundtool" not in tools("tools", "--json", "-ne", "-a")
    assert "foundtool" not in tools("--no-extensions", "-a", "tools", "--json")  # before the name works too
    assert "bash" not in tools("tools", "--json", "--disable-plugin", "bash")
    assert "bash" not in tools("--disable-plugin", "bash", "tools", "--json")
    both = tools("-e", ext, "tools", "--json", "--disable-plugin", "found", "--extension", ext)
    assert "sweeptool" in both and "foundtool" not in both

    plugins = pi_anthropic.run("plugins", "--no-extensions", "--extension", ext, "--disable-plugin", "read")
    assert plugins.returncode == 0, plugins.stderr
    names = [line.split()[0] for line in plugins.stdout.splitlines() if line and not line.startswith(" ")]
    assert "sweep_ext" in names and "found" not in names and "read" not in names and "bash" in names


def test_a_bare_word_that_is_no_command_is_the_prompt(pi_anthropic: PiRunner) -> None:
    ext = _extension(pi_anthropic)
    pi_anthropic.server.add(Reply(text="answer one"), Reply(text="answer two"))
    result = pi_anthropic.run("-e", ext, "-p", "plugins")  # -p takes the next word as its message
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "answer one"
    other = pi_anthropic.run("-e", ext, "hello", "-p")
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == "answer two"
    sent = [r.body["messages"][-1]["content"] for r in pi_anthropic.server.requests]
    assert [c[0]["text"] if isinstance(c, list) else c for c in sent] == ["plugins", "hello"]


def test_plugin_command_is_found_only_with_the_options_before_it(pi_anthropic: PiRunner) -> None:
    _extension(pi_anthropic)
    pi_anthropic.server.add(Reply(text="a prompt"))
    # without -e the extension is not loaded, so "sweep" is a message; pi's options after it are pi's
    result = pi_anthropic.run("sweep", "-p")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "a prompt"
    assert len(pi_anthropic.server.requests) == 1
