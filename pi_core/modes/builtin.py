"""The built-in modes as a plugin: ``text`` (``-p``), ``json`` and ``rpc``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core.hookspecs.markers import hookimpl
from pi_core.mode import Mode, ModeRequest

if TYPE_CHECKING:
    from pi_core.ui import Theme


def user_theme(request: ModeRequest) -> Theme:
    """``ctx.ui.theme`` in these modes: the user's theme, as Pi styles plugin text in every mode (over RPC the
    ANSI travels to the client as is). Looked up on first use, so a run that styles nothing never pays for it."""
    from pi_core.resources.ansi_theme import AnsiTheme

    found: list[Any] = []

    def theme() -> Any:
        if not found:
            from pi_core.resources.themes import session_theme

            found.append(session_theme(request.session, request.args)[0])
        return found[0]

    return AnsiTheme(theme)


async def run_text(request: ModeRequest) -> int:
    from pi_core.modes.print_mode import run_print_mode

    return await run_print_mode(request.session, request.messages, request.images, json_mode=False,
                                theme=user_theme(request))


async def run_json(request: ModeRequest) -> int:
    from pi_core.modes.print_mode import run_print_mode

    return await run_print_mode(request.session, request.messages, request.images, json_mode=True,
                                theme=user_theme(request))


async def run_rpc(request: ModeRequest) -> int:
    from pi_core.modes.rpc import run_rpc_mode

    return await run_rpc_mode(request.session, theme=user_theme(request))


@hookimpl
def pi_modes() -> list[Mode]:
    return [
        Mode("text", run_text, "Answer the prompts, print the final reply and exit (-p)"),
        Mode("json", run_json, "Print every event as one JSON line and exit"),
        Mode("rpc", run_rpc, "Serve Pi's JSONL RPC protocol on stdin/stdout", stdio=True),
    ]
