"""Issue 16 items 5, 6 and 8 (cli's part): unknown options are errors, --provider needs --model, and
Pi 1.6.0's --session-id, -n/--name and --thinking max."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.app.args import parse_args, unknown_flag_error
from pi_core.testing.fake_server import Reply
from pi_core.testing.pi_home import write_models
from pi_core.testing.runner import PiRunner, pi_runner


@pytest.fixture
def pi_anthropic(tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path) as runner:
        yield runner


def _session_header(path: Path) -> dict[str, object]:
    return json.loads(path.read_text().splitlines()[0])  # type: ignore[no-any-return]


# --- item 5 -------------------------------------------------------------------------------------


def test_unknown_long_option_is_an_error_before_any_request(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply(text="should not be asked"))
    result = pi_anthropic.run("--bogus", "-p", "hi")
    assert result.returncode == 1
    assert result.stderr.strip() == "Error: Unknown option: --bogus"
    assert result.stdout == ""
    assert pi_anthropic.server.requests == []


def test_several_unknown_options_are_named_together_in_every_mode(pi_anthropic: PiRunner) -> None:
    for mode in ("text", "json", "rpc"):
        result = pi_anthropic.run("--mode", mode, "--bogus", "--x=1", "hi")
        assert result.returncode == 1, mode
        assert "Error: Unknown options: --bogus, --x" in result.stderr, mode
    assert pi_anthropic.server.requests == []


def test_unknown_option_before_a_subcommand_is_an_error(pi_anthropic: PiRunner) -> None:
    result = pi_anthropic.run("--list-models", "--bogus")
    assert result.returncode == 1 and "Unknown option: --bogus" in result.stderr
    assert "fake-model" not in result.stdout


def test_unknown_short_option_stays_a_parse_error(pi_anthropic: PiRunner) -> None:
    result = pi_anthropic.run("-q", "-p", "hi")
    assert result.returncode == 1 and "Error: Unknown option: -q" in result.stderr


def test_plugin_registered_flags_count_as_known() -> None:
    args = parse_args(["--plan", "--preset", "fast", "--bogus=1", "-p", "hi"])
    assert args.unknown_flags == {"plan": True, "preset": "fast", "bogus": "1"}
    assert unknown_flag_error(args, {"plan", "preset"}) == "Unknown option: --bogus"
    assert unknown_flag_error(args, {"plan", "preset", "bogus"}) is None


FLAG_PLUGIN = """\
import json
from pathlib import Path
from pi_core import hookimpl
from pi_core import Flag

@hookimpl
def pi_flags():
    return [Flag("plan", "Plan before acting."), Flag("preset", "A preset name.", type="string", default="slow")]

@hookimpl
def pi_session_start(ctx, reason):
    seen = {"plan": ctx.get_flag("plan"), "preset": ctx.get_flag("preset")}
    Path(ctx.cwd, "flags.json").write_text(json.dumps(seen))
"""


def test_flags_a_plugin_registers_are_known_through_the_cli(pi_anthropic: PiRunner, tmp_path: Path) -> None:
    plugin = tmp_path / "flagged.py"
    plugin.write_text(FLAG_PLUGIN)
    seen = pi_anthropic.cwd / "flags.json"
    pi_anthropic.server.add(Reply(text="ok"), Reply(text="ok"))
    result = pi_anthropic.run("-e", str(plugin), "--plan", "--preset", "fast", "-p", "hi")
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
    assert json.loads(seen.read_text()) == {"plan": True, "preset": "fast"}
    result = pi_anthropic.run("-e", str(plugin), "--preset=quick", "-p", "hi")
    assert result.returncode == 0 and json.loads(seen.read_text()) == {"plan": None, "preset": "quick"}
    result = pi_anthropic.run("-e", str(plugin), "--plan", "--bogus", "-p", "hi")  # known and unknown together
    assert result.returncode == 1 and result.stderr.strip() == "Error: Unknown option: --bogus"
    assert len(pi_anthropic.server.requests) == 2
    pi_anthropic.server.add(Reply(text="ok"))
    result = pi_anthropic.run("-e", str(plugin), "--plan", "fix it", "-p")  # a boolean flag gives its word back
    assert result.returncode == 0 and json.loads(seen.read_text())["plan"] is True, result.stderr
    assert "fix it" in json.dumps(pi_anthropic.server.requests[-1].body["messages"][-1])
    result = pi_anthropic.run("-e", str(plugin), "--preset", "-p", "hi")
    assert result.returncode == 1 and result.stderr.strip() == 'Error: Extension flag "--preset" requires a value'
    helped = pi_anthropic.run("-e", str(plugin), "--help")
    assert "Extension CLI Flags:" in helped.stdout and "--preset <value>" in helped.stdout


def test_double_dash_ends_the_options(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply(text="ok"))
    result = pi_anthropic.run("-p", "--", "--not-a-flag")
    assert result.returncode == 0, result.stderr
    assert "--not-a-flag" in json.dumps(pi_anthropic.server.requests[0].body)


# --- item 6 -------------------------------------------------------------------------------------


def test_provider_without_model_is_an_error(tmp_path: Path) -> None:
    with pi_runner(tmp_path) as pi:
        pi.server.add(Reply(text="default model answered"))
        command = [c for c in pi.command("-p", "hi") if c not in ("--model", "fake-model")]
        command[command.index("fake")] = "nosuch"
        result = subprocess.run(command, capture_output=True, text=True, cwd=pi.cwd, env=pi.env(), timeout=60,
                                check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == \
        "Error: --provider requires --model (for example: --provider nosuch --model <pattern>)"
    assert pi.server.requests == []


# --- item 8: --session-id, --name, --thinking max ------------------------------------------------


def test_session_id_creates_then_reopens_that_session(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply(text="first"), Reply(text="second"))
    first = pi_anthropic.run("--session-id", "task-42", "-p", "one")
    assert first.returncode == 0, first.stderr
    assert "No project session found with id 'task-42'; creating a new session with that id." in first.stderr
    files = pi_anthropic.session_files()
    assert len(files) == 1 and files[0].name.endswith("_task-42.jsonl")
    assert _session_header(files[0])["id"] == "task-42"

    second = pi_anthropic.run("--session-id", "task-42", "-p", "two")
    assert second.returncode == 0, second.stderr
    assert "No project session found" not in second.stderr
    assert pi_anthropic.session_files() == files
    sent = json.dumps(pi_anthropic.server.requests[1].body)
    assert "one" in sent and "first" in sent  # the second run continued the first conversation


def test_session_id_is_validated_and_conflicts_are_errors(pi_anthropic: PiRunner) -> None:
    bad = pi_anthropic.run("--session-id", "bad id", "-p", "hi")
    assert bad.returncode == 1 and "Session id must be non-empty, contain only alphanumeric" in bad.stderr
    for flag in ("-c", "-r"):
        both = pi_anthropic.run("--session-id", "abc", flag, "-p", "hi")
        assert both.returncode == 1
        assert f"--session-id cannot be combined with --{'continue' if flag == '-c' else 'resume'}" in both.stderr
    assert pi_anthropic.server.requests == []


def test_session_id_with_no_session_and_with_fork(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply(text="a"), Reply(text="b"), Reply(text="c"))
    memory = pi_anthropic.run("--no-session", "--session-id", "mem-1", "--mode", "json", "hi")
    assert json.loads(memory.stdout.splitlines()[0])["id"] == "mem-1"
    assert pi_anthropic.session_files() == []

    assert pi_anthropic.run("--session-id", "src", "-p", "hi").returncode == 0
    source = pi_anthropic.session_files()[0]
    forked = pi_anthropic.run("--fork", str(source), "--session-id", "copy", "-p", "again")
    assert forked.returncode == 0, forked.stderr
    assert {_session_header(p)["id"] for p in pi_anthropic.session_files()} == {"src", "copy"}
    taken = pi_anthropic.run("--fork", str(source), "--session-id", "src", "-p", "again")
    assert taken.returncode == 1 and "Session already exists with id 'src'" in taken.stderr


def test_name_sets_the_session_display_name(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply(text="ok"))
    result = pi_anthropic.run("-n", "  Fix the parser  ", "-p", "hi")
    assert result.returncode == 0, result.stderr
    entries = [json.loads(line) for line in pi_anthropic.session_files()[0].read_text().splitlines()]
    assert [e["name"] for e in entries if e["type"] == "session_info"] == ["Fix the parser"]

    empty = pi_anthropic.run("--name", "  ", "-p", "hi")
    assert empty.returncode == 1 and "--name requires a non-empty value" in empty.stderr
    missing = pi_anthropic.run("-p", "hi", "--name")
    assert missing.returncode == 1 and "--name requires a value" in missing.stderr


def test_thinking_choices_are_the_kernel_levels() -> None:
    from pi_core.app.args import THINKING_CHOICES
    from pi_core.types import THINKING_LEVELS

    assert THINKING_CHOICES == THINKING_LEVELS


def _reasoning_home(pi: PiRunner, level_map: dict[str, str | None] | None) -> None:
    path = write_models(pi.home, pi.server.base_url_for("openai-completions"), "openai-completions", reasoning=True)
    data = json.loads(path.read_text())
    if level_map is not None:
        data["providers"]["fake"]["models"][0]["thinkingLevelMap"] = level_map
    path.write_text(json.dumps(data))


def test_thinking_max_for_a_model_that_maps_it(tmp_path: Path) -> None:
    with pi_runner(tmp_path, "openai-completions") as pi:
        _reasoning_home(pi, {"xhigh": "xhigh", "max": "max"})
        pi.server.add(Reply(text="ok"))
        result = pi.run("--thinking", "max", "-p", "hi")
        assert result.returncode == 0, result.stderr
        assert "Invalid thinking level" not in result.stderr
        assert pi.server.requests[0].body["reasoning_effort"] == "max"


def test_thinking_max_is_clamped_for_a_model_without_it(tmp_path: Path) -> None:
    with pi_runner(tmp_path, "openai-completions") as pi:
        _reasoning_home(pi, None)
        pi.server.add(Reply(text="ok"))
        result = pi.run("--thinking", "max", "-p", "hi")
        assert result.returncode == 0, result.stderr
        assert pi.server.requests[0].body["reasoning_effort"] == "high"
