"""The built-in modes as a plugin: ``text`` (``-p``), ``json`` and ``rpc``."""

from __future__ import annotations

from pi_core.hookspecs import hookimpl
from pi_core.mode import Mode, ModeRequest


async def run_text(request: ModeRequest) -> int:
    from pi_core.modes.print_mode import run_print_mode

    return await run_print_mode(request.session, request.messages, request.images, json_mode=False)


async def run_json(request: ModeRequest) -> int:
    from pi_core.modes.print_mode import run_print_mode

    return await run_print_mode(request.session, request.messages, request.images, json_mode=True)


async def run_rpc(request: ModeRequest) -> int:
    from pi_core.modes.rpc import run_rpc_mode

    return await run_rpc_mode(request.session)


@hookimpl
def pi_modes() -> list[Mode]:
    return [
        Mode("text", run_text, "Answer the prompts, print the final reply and exit (-p)"),
        Mode("json", run_json, "Print every event as one JSON line and exit"),
        Mode("rpc", run_rpc, "Serve Pi's JSONL RPC protocol on stdin/stdout"),
    ]
