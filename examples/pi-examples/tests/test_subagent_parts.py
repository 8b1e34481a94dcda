"""subagent's parts through the Python API: agent discovery (user and project folders, scopes, overrides, files
that define no agent), the shipped samples, the parallel limit and the output caps."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pi_examples.subagent import (
    map_with_concurrency_limit,
    truncate_model_output,
    truncate_parallel_output,
)
from pi_examples.subagent.agents import discover_agents, format_agent_list

SHIPPED = Path(__file__).resolve().parents[1] / "src" / "pi_examples" / "subagent"


def agent(folder: Path, file: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / file).write_text(text)


def test_scopes_overrides_and_broken_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, project = tmp_path / "agent", tmp_path / "repo"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    agent(home / "agents", "scout.md", "---\nname: scout\ndescription: user scout\ntools: read, grep\n---\nUSER\n")
    agent(home / "agents", "writer.md", "---\nname: writer\ndescription: writes\ntools: [write, ' edit ', 3]\n"
                                        "model: fake/fast\n---\nWRITE\n")
    agent(home / "agents", "nameless.md", "---\ndescription: no name\n---\nbody\n")
    agent(home / "agents", "broken.md", "---\nname: [unclosed\n---\nbody\n")
    agent(home / "agents", "notes.txt", "---\nname: notes\ndescription: not markdown\n---\n")
    agent(project / ".pi" / "agents", "scout.md", "---\nname: scout\ndescription: project scout\n---\nPROJECT\n")
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)

    user = discover_agents(deep, "user")
    assert {a.name: (a.source, a.tools, a.model, a.system_prompt) for a in user.agents} == {
        "scout": ("user", ("read", "grep"), None, "USER"),
        "writer": ("user", ("write", "edit"), "fake/fast", "WRITE"),
    }
    assert user.project_agents_dir == project / ".pi" / "agents"  # found from a sub-folder

    both = {a.name: a for a in discover_agents(deep, "both").agents}
    assert (both["scout"].source, both["scout"].system_prompt, both["scout"].tools) == ("project", "PROJECT", None)
    assert both["writer"].source == "user"
    assert [a.name for a in discover_agents(deep, "project").agents] == ["scout"]
    assert discover_agents(tmp_path, "project").agents == []

    text, remaining = format_agent_list(discover_agents(deep, "both").agents, 1)
    assert (text, remaining) == ("scout (project): project scout", 1)
    assert format_agent_list([], 3) == ("none", 0)


def test_the_shipped_agents_and_prompts_are_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    (tmp_path / "agents").symlink_to(SHIPPED / "agents")  # the README's set-up: the samples in <agentDir>/agents
    found = {a.name: a for a in discover_agents(tmp_path, "user").agents}
    assert sorted(found) == ["planner", "reviewer", "scout", "worker"]
    assert found["scout"].tools == ("read", "grep", "find", "ls", "bash")
    assert found["planner"].tools == ("read", "grep", "find", "ls")
    assert found["worker"].tools is None  # every default tool
    assert all(a.model and a.system_prompt for a in found.values())
    prompts = sorted(p.stem for p in (SHIPPED / "prompts").glob("*.md"))
    assert prompts == ["implement", "implement-and-review", "scout-and-plan"]


def test_at_most_four_children_run_at_once_and_results_keep_their_order() -> None:
    running, peak = 0, 0

    async def child(item: int, index: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01 * (8 - index))  # later tasks finish first
        running -= 1
        return item * 10

    assert asyncio.run(map_with_concurrency_limit(list(range(8)), 4, child)) == [i * 10 for i in range(8)]
    assert peak == 4


def test_output_caps() -> None:
    big = "é" * 30_000  # 60,000 bytes
    capped = truncate_parallel_output(big)
    kept, notice = capped.split("\n\n")
    assert len(kept.encode()) == 51_200 and kept == "é" * 25_600
    assert notice == "[Output truncated: 8800 bytes omitted. Full output preserved in tool details.]"
    assert truncate_parallel_output("short") == "short"

    lines = "\n".join(f"line {i}" for i in range(3000))
    body, notice = truncate_model_output(lines).rsplit("\n\n", 1)
    assert body.splitlines()[-1] == "line 1997"  # 2,000 lines less two for the notice
    assert notice.startswith("[Output truncated: ")
    assert notice.endswith(" bytes omitted. Full output preserved in tool details.]")
