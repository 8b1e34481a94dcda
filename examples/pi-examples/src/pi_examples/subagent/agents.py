"""Finding subagent definitions: markdown files with a ``name``/``description`` frontmatter in the user's
``<agentDir>/agents`` and the nearest project ``.pi/agents`` folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pi_core.config_paths import agent_dir
from pi_core.resources.frontmatter import FrontmatterError, parse_frontmatter

AgentScope = Literal["user", "project", "both"]
AgentSource = Literal["user", "project"]
PROJECT_CONFIG_DIR = ".pi"


@dataclass(frozen=True)
class AgentConfig:
    """One agent: its system prompt is the file's body; ``tools``/``model`` are None when the file leaves them
    out (the child then gets pi's default tools and the dispatching session's model)."""

    name: str
    description: str
    system_prompt: str
    source: AgentSource
    file_path: Path
    tools: tuple[str, ...] | None = None
    model: str | None = None


@dataclass(frozen=True)
class AgentDiscovery:
    agents: list[AgentConfig]
    project_agents_dir: Path | None


def user_agents_dir() -> Path:
    return agent_dir() / "agents"


def parse_tool_list(value: Any) -> tuple[str, ...] | None:
    """``tools: read, bash`` and ``tools: [read, bash]`` both name tools; anything else names none."""
    raw = value if isinstance(value, list) else value.split(",") if isinstance(value, str) else []
    tools = tuple(item.strip() for item in raw if isinstance(item, str) and item.strip())
    return tools or None


def load_agent(path: Path, source: AgentSource) -> AgentConfig | None:
    """The agent a file defines, or None when it cannot be read or lacks a string name and description
    (one broken file must not hide the other agents of its folder)."""
    try:
        frontmatter, body = parse_frontmatter(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, FrontmatterError):
        return None
    name, description = frontmatter.get("name"), frontmatter.get("description")
    if not isinstance(name, str) or not isinstance(description, str):
        return None
    model = frontmatter.get("model")
    return AgentConfig(name=name, description=description, system_prompt=body, source=source, file_path=path,
                       tools=parse_tool_list(frontmatter.get("tools")),
                       model=model if isinstance(model, str) else None)


def load_agents_from_dir(directory: Path, source: AgentSource) -> list[AgentConfig]:
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    agents = []
    for path in entries:
        if path.suffix == ".md" and path.is_file():
            agent = load_agent(path, source)
            if agent is not None:
                agents.append(agent)
    return agents


def nearest_project_agents_dir(cwd: Path) -> Path | None:
    """``.pi/agents`` in ``cwd`` or its closest ancestor that has one."""
    for folder in (cwd, *cwd.parents):
        candidate = folder / PROJECT_CONFIG_DIR / "agents"
        if candidate.is_dir():
            return candidate
    return None


def discover_agents(cwd: Path, scope: AgentScope) -> AgentDiscovery:
    """The agents ``scope`` allows; with "both", a project agent replaces a user agent of the same name."""
    project_dir = nearest_project_agents_dir(cwd)
    by_name: dict[str, AgentConfig] = {}
    if scope != "project":
        by_name.update((agent.name, agent) for agent in load_agents_from_dir(user_agents_dir(), "user"))
    if scope != "user" and project_dir is not None:
        by_name.update((agent.name, agent) for agent in load_agents_from_dir(project_dir, "project"))
    return AgentDiscovery(list(by_name.values()), project_dir)


def format_agent_list(agents: list[AgentConfig], max_items: int) -> tuple[str, int]:
    """("name (source): description; ...", how many were left out) for at most ``max_items`` agents."""
    if not agents:
        return "none", 0
    listed = agents[:max_items]
    return "; ".join(f"{a.name} ({a.source}): {a.description}" for a in listed), len(agents) - len(listed)
