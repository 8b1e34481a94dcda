"""Running the app: start-up order (header after the plugins' session_start), background loops, shut-down."""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import ext_ui
from pi_plugins.interactive.view import render_notice

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost

STARTUP_WAIT_SECONDS = 2.0  # longest the first frame waits for the plugins' session_start


async def run(app: AppHost, initial_message: str | None = None,
              initial_images: list[Any] | None = None) -> int:
    scrollback = app.scrollback
    scrollback.intro = new_changelog(app)  # the start-up warnings go in front when it is released
    if app.session.messages:  # --continue / --session: show the conversation so far
        app.replay()
    ext_ui.install(app)
    # plugins' session_start runs before the app draws, so a header it sets is the one shown; a question it
    # asks (or a slow start) lets the app start at once, the header following when session_start returns
    starting = app.spawn(app.session.start("startup"))
    starting.add_done_callback(lambda task: app.session_started())
    asking = asyncio.ensure_future(app.asked.wait())
    await asyncio.wait({starting, asking}, timeout=STARTUP_WAIT_SECONDS, return_when=asyncio.FIRST_COMPLETED)
    asking.cancel()

    def on_first_render(_: Any) -> None:  # the prompt is on screen: now load the provider SDK
        app.app.after_render -= on_first_render
        app.preloader.start()

    app.app.after_render += on_first_render
    app.running = True
    _quit_on_signals(app)
    try:
        def watch_theme() -> None:
            app.spawn(watch_files(app))

        app.app.pre_run_callables.append(watch_theme)

        def send_initial() -> None:
            from pi_plugins.interactive.prompting import run_prompt

            app.spawn(run_prompt(app, initial_message or "", initial_images))

        if initial_message or initial_images:
            app.app.pre_run_callables.append(send_initial)
        app.app.pre_run_callables.append(lambda: replay_typeahead(app))  # after the initial message's run began
        code = await run_app(app)
    finally:
        app.running = False
        if app.session.is_streaming:
            await app.session.abort()
        for task in list(app.tasks):
            task.cancel()
        await app.session.shutdown("quit")
        app.unsubscribe()
        app.release_intro()
        scrollback.finish()
    code = app.exit_code if code is None else code
    if code == 0:  # a quit (Ctrl+C twice, Ctrl+D, /quit), not a signal
        print_resume_hint(app)
    return code


def print_resume_hint(app: AppHost) -> None:
    """As Pi on quitting: how to come back to this session, the command on a line of its own (easy to select).
    Only on a terminal, and only when the session has a file to come back to."""
    import shlex
    import sys
    from pathlib import Path

    from pi_core.sessions.store import default_session_dir

    store = app.session.store
    if store is None:
        return
    path, directory = store.session_file, store.session_dir
    if not sys.stdout.isatty() or not store.is_persisted or path is None or not Path(path).exists():
        return
    command = ["pi"]
    if directory is not None and Path(directory).resolve() != default_session_dir(store.cwd).resolve():
        command += ["--session-dir", shlex.quote(str(directory))]
    command += ["--session", store.session_id]
    sys.stdout.write(f"\x1b[2mTo resume this session:\x1b[22m\n{' '.join(command)}\n")
    sys.stdout.flush()


def replay_typeahead(app: AppHost) -> None:
    """Just before prompt_toolkit takes the terminal: the keys typed into the start-up stand-in editor
    (pi_core.app.typeahead) go to plugins' key handlers and the key bindings in order, after the first
    frame and before any key read from the terminal from then on."""
    import sys

    typeahead = sys.modules.get("pi_core.app.typeahead")
    typed = typeahead.take() if typeahead is not None else b""
    if typed:
        asyncio.get_running_loop().call_soon(app.router.replay, typed.decode(errors="replace"))


def _quit_on_signals(app: AppHost) -> None:
    """SIGTERM and SIGHUP (the terminal went away) end the app like /quit, with 143 / 129; left to the mode runner,
    they would only abort a run and a pi whose terminal closed would live on."""
    loop = asyncio.get_running_loop()
    for signum, code in ((signal.SIGTERM, 143), (signal.SIGHUP, 129)):
        try:
            loop.add_signal_handler(signum, app.exit, code)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such signal here
            pass


async def run_app(app: AppHost) -> int | None:
    """Run the app; an error escaping a redraw or callback ends it (terminal restored) and is raised."""
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()

    def on_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if error is not None and app.app.is_running and not app.app.future.done():  # type: ignore[union-attr]
            app.app.exit(exception=error)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(on_error)
    try:
        return await app.app.run_async(set_exception_handler=False)
    finally:
        loop.set_exception_handler(previous)


def new_changelog(app: AppHost) -> list[Any]:
    """After an update, the changelog entries newer than the version pi last ran as (once)."""
    from pi_plugins.interactive.session_commands import (
        changelog_path,
        changelog_sections,
        new_since,
        render_changelog,
    )

    from pi_core import __version__

    last = app.setting("lastChangelogVersion")
    settings = app.session.settings
    if last == __version__ or settings is None:
        return []
    path = changelog_path()
    sections = changelog_sections(path.read_text(encoding="utf-8")) if path is not None else []
    fresh = new_since(sections, last) if last is not None else []
    settings.set("lastChangelogVersion", __version__, "global")
    if not fresh or app.quiet_startup:
        return []
    return [render_notice(f"Updated to pi {__version__}. What's new:", "green"),
            render_changelog(fresh, app.setting("collapseChangelog", False) is True)]


async def watch_files(app: AppHost) -> None:
    """Pick up an edited theme file (and the git branch, new custom entries) within a second or so."""
    while True:
        await asyncio.sleep(0.5)
        app.theme_watcher.poll()
        app.footer_data.poll()
        app.entries.check()

