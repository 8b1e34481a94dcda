"""The tasks file: one JSON object per line, checked line by line so one bad line never stops the others."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_core.app.args import THINKING_CHOICES

_STRINGS = ("id", "prompt", "prompt_file", "cwd", "repo", "ref", "provider", "model", "thinking",
            "append_system_prompt")
FIELDS = (*_STRINGS, "tools", "timeout_s", "max_turns", "meta")


@dataclass(frozen=True)
class TaskSpec:
    """One task, resolved: the prompt text is loaded and paths are absolute. Crosses to the workers."""

    id: str
    line: int
    prompt: str
    cwd: str | None = None
    repo: str | None = None
    ref: str | None = None
    provider: str | None = None
    model: str | None = None
    thinking: str | None = None
    tools: tuple[str, ...] | None = None
    timeout_s: float | None = None
    max_turns: int | None = None
    append_system_prompt: str | None = None
    meta: Any = None

    @property
    def slug(self) -> str:
        """The id as a file name; an id that is not already one gets a hash suffix, so two ids never share it."""
        return _slug(self.id)


@dataclass(frozen=True)
class BadLine:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class TaskFile:
    path: Path
    tasks: list[TaskSpec] = field(default_factory=list)
    problems: list[BadLine] = field(default_factory=list)


class TaskError(ValueError):
    """One line is not a valid task; the message says what to fix."""


def _slug(task_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", task_id).strip("._") or "task"
    if slug != task_id or len(slug) > 100:
        import zlib  # a stable hash: the same slug on every run and every node

        slug = f"{slug[:80]}-{zlib.crc32(task_id.encode('utf-8')):08x}"
    return slug


def load_tasks(path: Path, *, base: Path | None = None) -> TaskFile:
    """Read ``path``; ``prompt_file`` and ``cwd`` resolve against ``base`` (default: the file's folder)."""
    base = base or path.parent
    result = TaskFile(path=path)
    seen: dict[str, int] = {}
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise TaskError(f"cannot read tasks file {path}: {err.strerror or err}") from err
    for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            task = parse_task(line, number, base)
        except TaskError as err:
            result.problems.append(BadLine(number, str(err)))
            continue
        if task.id in seen:
            result.problems.append(BadLine(number, f"duplicate id {task.id!r} (first on line {seen[task.id]})"))
            continue
        seen[task.id] = number
        result.tasks.append(task)
    return result


def parse_task(line: str, number: int, base: Path) -> TaskSpec:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise TaskError(f"not valid JSON ({err.msg} at column {err.colno})") from err
    if not isinstance(data, dict):
        raise TaskError(f"a task is a JSON object, not {type(data).__name__}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise TaskError(f"unknown field(s) {', '.join(unknown)}; valid fields: {', '.join(FIELDS)}")
    for key in _STRINGS:
        if key in data and data[key] is not None and not isinstance(data[key], str):
            raise TaskError(f"{key} must be a string")
    task_id = data.get("id")
    if task_id is None and "id" not in data:
        raise TaskError("missing id")
    if not isinstance(task_id, str) or not task_id.strip():
        raise TaskError("id must be a non-empty string")
    prompt = _prompt(data, base)
    if data.get("cwd") and data.get("repo"):
        raise TaskError("give cwd or repo, not both")
    if data.get("ref") and not data.get("repo"):
        raise TaskError("ref needs repo")
    thinking = data.get("thinking")
    if thinking is not None and thinking not in THINKING_CHOICES:
        raise TaskError(f"thinking must be one of {', '.join(THINKING_CHOICES)}")
    cwd = data.get("cwd")
    repo = data.get("repo")
    return TaskSpec(
        id=task_id, line=number, prompt=prompt,
        cwd=str((base / cwd).resolve()) if cwd else None,
        repo=_repo(repo, base) if repo else None, ref=data.get("ref") or None,
        provider=data.get("provider") or None, model=data.get("model") or None, thinking=thinking,
        tools=_tools(data.get("tools")), timeout_s=_positive(data, "timeout_s", float),
        max_turns=_positive(data, "max_turns", int), append_system_prompt=data.get("append_system_prompt") or None,
        meta=data.get("meta"),
    )


def _prompt(data: dict[str, Any], base: Path) -> str:
    prompt, prompt_file = data.get("prompt"), data.get("prompt_file")
    if prompt is not None and prompt_file is not None:
        raise TaskError("give prompt or prompt_file, not both")
    if prompt_file is not None:
        path = base / prompt_file
        try:
            prompt = path.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            raise TaskError(f"cannot read prompt_file {prompt_file}: {err.strerror or err}") from err
    if prompt is None:
        raise TaskError("missing prompt (or prompt_file)")
    if not prompt.strip():
        raise TaskError("the prompt is empty")
    return prompt


def _repo(repo: str, base: Path) -> str:
    """A URL stays as it is; a local path becomes absolute."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", repo) or re.match(r"^[^/]+@[^/:]+:", repo):
        return repo
    return str((base / repo).resolve())


def _tools(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        names = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        names = [v.strip() for v in value]
    else:
        raise TaskError('tools must be a list of tool names or a comma-separated string ("read,grep")')
    return tuple(name for name in names if name)


def _positive(data: dict[str, Any], key: str, kind: type[float | int]) -> Any:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TaskError(f"{key} must be a number")
    if kind is int and value != int(value):
        raise TaskError(f"{key} must be a whole number")
    if value <= 0:
        raise TaskError(f"{key} must be greater than 0")
    return kind(value)
