"""What the editor's text becomes: a slash command, a shell command, a prompt, or steering for the running one."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import attachments, shell
from pi_plugins.interactive.commands import MenuCommand, run_command
from pi_plugins.interactive.editor import classify

from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost


def submit(app: AppHost, *, follow_up: bool = False) -> None:
    text = app.buffer.text
    kind = classify(text)
    if kind.kind == "empty" and not app.attachments:
        return
    app.buffer.reset(append_to_history=True)
    app.hint = None
    if kind.kind == "command":
        command = app.commands.get(kind.command)
        if command is None:  # "/mo": the one command it begins, as completion would give
            starting = [c for name, c in app.commands.items() if name.startswith(kind.command)]
            command = starting[0] if len(starting) == 1 else None
        if command is not None and command.handler is not None:
            app.spawn(command_task(app, command, kind.args))
            return
        if command is None:  # no command, template or skill: a typo is not a prompt (issue 16 item 13)
            app.notify(f"Unknown command: /{kind.command}", "red")
            app.set_editor_text(text)
            return
    if kind.kind == "bash":
        app.shell_job = shell.ShellJob(app, kind.command, kind.send_output)
        app.spawn(app.shell_job.run())
        return
    if app.busy:
        if kind.text.strip():  # image chips wait for the next message of their own
            (app.session.follow_up if follow_up else app.session.steer)(kind.text)
        return
    app.busy = True  # now, not when the task starts: a quick second Enter must steer, not start a run
    app.spawn(run_prompt(app, kind.text, attachments.take(app) or None))


def run_command_text(app: AppHost, text: str) -> None:
    """Run a slash command as if typed (keys that open /model, /tree)."""
    kind = classify(text)
    command = app.commands.get(kind.command)
    if command is not None and command.handler is not None and app.panel is None:
        app.spawn(command_task(app, command, kind.args))


async def command_task(app: AppHost, command: MenuCommand, args: str) -> None:
    try:
        await run_command(command, app, args)
    except PiError as err:
        app.notify(str(err), "red")
    finally:
        app.entries.check()


async def run_prompt(app: AppHost, text: str, images: list[Any] | None = None) -> None:
    app.busy, app.started_at, app.run_ended = True, time.monotonic(), False
    app.invalidate()
    ticker = app.spawn(tick(app))
    try:
        if not app.preloader.done():
            app.view.pending_prompt = text  # shown at once; the session echoes it when the run starts
            app.invalidate()
        await app.preloader.wait()
        if app.preloader.error is not None:
            app.notify(f"Loading the provider in the background failed: {app.preloader.error}", "yellow")
            app.preloader.error = None  # said once; the request below reports the real failure
        await app.session.prompt(text, images, source="interactive")
    except PiError as err:
        app.notify(str(err), "red")
    finally:
        app.view.pending_prompt = None
        app.busy = False
        ticker.cancel()
        app.invalidate()


async def tick(app: AppHost) -> None:
    """Redraw the working indicator (spinner, elapsed time) while a run lasts; idle costs nothing."""
    while True:
        await asyncio.sleep(0.1)
        if app.running:
            app.app.invalidate()


def _take_queued(app: AppHost) -> list[str]:
    agent = app.session.agent
    queued = [m.text() for m in [*agent.steering_queue, *agent.follow_up_queue] if hasattr(m, "text")]
    if queued:
        agent.clear_all_queues()
    return queued


def dequeue(app: AppHost) -> None:
    """Alt+Up: the queued steering and follow-up messages come back into the editor, in order."""
    queued = _take_queued(app)
    if not queued:
        app.set_hint("No queued messages")
        return
    app.view.steering, app.view.follow_up = [], []
    current = app.buffer.text
    app.set_editor_text("\n".join([*queued, *([current] if current else [])]))
    app.set_hint(f"Restored {len(queued)} queued message{'s' if len(queued) > 1 else ''}")


async def abort(app: AppHost) -> None:
    """Escape while working: stop the run and put the queued messages back in the editor."""
    agent = app.session.agent
    queued = [m.text() for m in [*agent.steering_queue, *agent.follow_up_queue] if hasattr(m, "text")]
    agent.clear_all_queues()
    if queued:
        current = app.buffer.text
        app.set_editor_text("\n".join([*queued, *([current] if current else [])]))
    app.view.steering, app.view.follow_up = [], []
    await app.session.abort()
