"""acp: ``pi --mode acp`` and ``pi acp``, the Agent Client Protocol on stdin/stdout, so editors (Zed, JetBrains
IDEs, Neovim) drive pi (docs/acp.md). The SDK loads only when the mode runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core import hookimpl
from pi_core.mode import Mode, ModeRequest

if TYPE_CHECKING:
    import click

    from pi_core.session import AgentSession
    from pi_core.ui import UI

MODE = "acp"


async def run_mode(request: ModeRequest[AgentSession]) -> int:
    from pi_plugins.acp.serve import serve

    return await serve(request)


def startup_ui() -> UI:
    from pi_plugins.acp.ui import startup_ui

    return startup_ui()


@hookimpl
def pi_modes() -> list[Mode]:
    return [Mode(MODE, run_mode, "Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains)",
                 startup_ui=startup_ui, stdio=True)]


@hookimpl
def pi_cli_commands() -> list[click.Command]:
    import click

    @click.command(MODE, context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                           "help_option_names": ["-h", "--help"]})
    @click.pass_context
    def acp(context: click.Context) -> int:
        """Serve the Agent Client Protocol on stdin/stdout (the same as pi --mode acp). Options after acp are
        pi's own: pi acp --model sonnet."""
        from pi_core.app.cli import main, run_session

        command: Any = context.obj
        if context.args:  # pi's options after the name: parse the whole line again, as pi --mode acp would
            return main([*command.global_argv, "--mode", MODE, *context.args], command.cwd)
        command.options.mode = MODE
        return run_session(command.options, command.cwd, command.startup)

    return [acp]
