"""``pi batch TASKS.jsonl --out DIR``: the click command. Cheap to import; the run loads inside it."""

from __future__ import annotations

from pathlib import Path

import click
from pi_plugins.batch.run import DEFAULT_RETRIES, BatchOptions

from pi_core.app.args import Args
from pi_core.app.subcommands import CommandContext

_SESSION_FLAGS = (("continue_", "--continue"), ("resume", "--resume"), ("session", "--session"),
                  ("fork", "--fork"), ("session_dir", "--session-dir"))


def session_options(options: Args, cwd: Path) -> tuple[str, ...]:
    """pi's options typed before ``batch``, for every task's session: paths made absolute, since each
    task runs in its own directory."""
    for name, flag in _SESSION_FLAGS:
        if getattr(options, name):
            raise click.UsageError(f"{flag} cannot be used with pi batch: each task starts a new session, "
                                   "kept in DIR/sessions")

    def path(value: str) -> str:
        return str((cwd / value).resolve())

    def text_or_file(value: str) -> str:
        return path(value) if (cwd / value).exists() else value

    argv: list[str] = []
    for flag, value in (("--provider", options.provider), ("--model", options.model),
                        ("--api-key", options.api_key), ("--thinking", options.thinking),
                        ("--system-prompt", options.system_prompt and text_or_file(options.system_prompt))):
        if value:
            argv += [flag, value]
    for flag, values in (("--models", options.models), ("--tools", options.tools),
                         ("--exclude-tools", options.exclude_tools)):
        if values is not None:
            argv += [flag, ",".join(values)]
    for flag, items in (("-e", [path(e) for e in options.extensions]),
                        ("--disable-plugin", options.disable_plugins),
                        ("--skill", [path(s) for s in options.skills]),
                        ("--prompt-template", [path(t) for t in options.prompt_templates]),
                        ("--append-system-prompt", [text_or_file(a) for a in options.append_system_prompt])):
        for item in items:
            argv += [flag, item]
    for flag, on in (("--no-tools", options.no_tools), ("--no-builtin-tools", options.no_builtin_tools),
                     ("--no-extensions", options.no_extensions), ("--no-skills", options.no_skills),
                     ("--no-prompt-templates", options.no_prompt_templates),
                     ("--no-context-files", options.no_context_files), ("--no-session", options.no_session),
                     ("--offline", options.offline)):
        if on:
            argv.append(flag)
    for name, value in options.unknown_flags.items():  # flags plugins register
        argv += [f"--{name}"] if value is True else [f"--{name}={value}"]
    return tuple(argv)


def _resources(values: tuple[str, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for value in values:
        name, eq, amount = value.partition("=")
        try:
            out[name.strip()] = float(amount) if eq else 1.0
        except ValueError:
            raise click.BadParameter(f"{value!r}: expected NAME=AMOUNT, e.g. GPU_SLOT=1",
                                     param_hint="--task-resource") from None
        if not name.strip():
            raise click.BadParameter(f"{value!r}: expected NAME=AMOUNT", param_hint="--task-resource")
    return out


@click.command("batch", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("tasks", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Directory for results.jsonl, sessions/ and workspaces/.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: processes on this machine; ray: tasks on a Ray cluster.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Tasks at once (default: this machine's CPUs; ray: cluster CPUs / --task-cpus).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds per task unless the task sets timeout_s.")
@click.option("--max-turns", type=click.IntRange(min=1), default=None,
              help="Model turns per task unless the task sets max_turns.")
@click.option("--retries", type=click.IntRange(min=0), default=DEFAULT_RETRIES, show_default=True,
              help="Extra attempts for a task whose worker process dies under it.")
@click.option("--resume", is_flag=True, help="Skip tasks that already have a result in DIR/results.jsonl.")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where repo tasks get their clones/worktrees (default DIR/workspaces).")
@click.option("--ray-address", default=None, metavar="ADDR",
              help="An existing Ray cluster: auto, or ray://host:port (default: start a local one).")
@click.option("--task-cpus", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="CPUs Ray reserves per task.")
@click.option("--task-memory", "task_memory_mb", type=click.IntRange(min=1), default=None, metavar="MB",
              help="Memory Ray reserves per task, in MB.")
@click.option("--task-resource", "task_resources", multiple=True, metavar="NAME=AMOUNT",
              help="A custom Ray resource per task (repeatable).")
@click.option("--progress/--no-progress", "live", default=None,
              help="Live progress display (default: when stderr is a terminal); else one line per task.")
@click.pass_obj
def batch(context: CommandContext | None, tasks: Path, out: Path, executor: str, jobs: int | None,
          timeout_s: float | None, max_turns: int | None, retries: int, resume: bool, workdir: Path | None,
          ray_address: str | None, task_cpus: float, task_memory_mb: int | None, task_resources: tuple[str, ...],
          live: bool | None) -> int:
    """Run every task of TASKS (JSON lines) as its own pi session; results go to DIR/results.jsonl."""
    from pi_plugins.batch.run import run_batch

    context = context or CommandContext()
    if executor == "local" and (ray_address or task_resources or task_memory_mb):
        raise click.UsageError("--ray-address, --task-memory and --task-resource need --executor ray")
    options = BatchOptions(tasks=tasks, out=out, pi_options=session_options(context.options, context.cwd),
                           executor=executor, jobs=jobs, retries=retries, resume=resume, timeout_s=timeout_s,
                           max_turns=max_turns, workdir=workdir, ray_address=ray_address, task_cpus=task_cpus,
                           task_memory_mb=task_memory_mb, task_resources=_resources(task_resources), live=live)
    return run_batch(options)
