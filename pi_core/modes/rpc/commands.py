"""RPC command handlers (docs/rpc.md#commands): parameter checks, then one call into the session per command.

A handler returns the response ``data`` (``NO_DATA`` to omit the key) and fails by raising; the
mode turns the exception into ``success:false`` with the command's name and id.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pi_core.errors import PiError
from pi_core.types import ImageContent

if TYPE_CHECKING:
    from pi_core.control.session_control import SessionControl
    from pi_core.session import AgentSession


class RpcMode(Protocol):
    """What command handlers use of the running mode (``pi_core.modes.rpc.mode.RpcMode``)."""

    session: AgentSession
    ops: SessionControl

    def respond(self, request_id: object, command: str, *, data: object = ..., error: str | None = None) -> None: ...
    async def submit_prompt(self, text: str, images: list[ImageContent] | None, behavior: str | None,
                            respond: Callable[[str], None]) -> None: ...
    async def abort_run(self) -> None: ...

NO_DATA = object()  # a success response without a "data" key
RESPONDED = object()  # the handler already wrote its response (prompt answers on acceptance)
STREAMING_BEHAVIORS = ("steer", "followUp")

Command = dict[str, Any]  # open: one RPC command, JSON from the client (docs/rpc.md)
Handler = Callable[[RpcMode, Command], Awaitable[object]]


@dataclass(frozen=True)
class Param:
    name: str
    kind: type | tuple[type, ...]
    required: bool = True

    def check(self, command: Command) -> None:
        value = command.get(self.name)
        if value is None:
            if self.required:
                raise PiError(f'Missing required field "{self.name}" ({_kind_name(self.kind)})')
            return
        if not isinstance(value, self.kind) or (self.kind is int and isinstance(value, bool)):
            raise PiError(f'Field "{self.name}" must be {_kind_name(self.kind)}, got {_json_kind(value)}')


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", bool: "a boolean", list: "an array", dict: "an object", int: "a number"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _json_kind(value: Any) -> str:
    return {str: "a string", bool: "a boolean", list: "an array", dict: "an object", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


def parse_images(command: Command) -> list[ImageContent] | None:
    raw = command.get("images")
    if raw is None:
        return None
    images = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("data"), str) \
                or not isinstance(item.get("mimeType"), str):
            raise PiError(f'images[{index}] must be {{"type":"image","data":<base64>,"mimeType":<string>}}')
        images.append(ImageContent(data=item["data"], mime_type=item["mimeType"]))
    return images


# --- prompting ------------------------------------------------------------------------------------


async def prompt(mode: RpcMode, command: Command) -> object:
    """Exactly one response: success once accepted (the run then streams events), else the error."""
    images = parse_images(command)
    behavior = command.get("streamingBehavior")
    if behavior is not None and behavior not in STREAMING_BEHAVIORS:
        raise PiError(f'Invalid streamingBehavior "{behavior}". Valid values: steer, followUp')
    await mode.submit_prompt(command["message"], images, behavior,
                             respond=lambda disposition: mode.respond(command.get("id"), "prompt",
                                                                      data={"disposition": disposition}))
    return RESPONDED


def _refuse_plugin_command(mode: RpcMode, text: str) -> None:
    if not text.startswith("/"):
        return
    name = text[1:].partition(" ")[0]
    if name in mode.session.commands:
        raise PiError(f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command '
                      "when not streaming.")


async def steer(mode: RpcMode, command: Command) -> object:
    _refuse_plugin_command(mode, command["message"])
    mode.session.steer(command["message"], parse_images(command))
    return {"disposition": "queued"}


async def follow_up(mode: RpcMode, command: Command) -> object:
    _refuse_plugin_command(mode, command["message"])
    mode.session.follow_up(command["message"], parse_images(command))
    return {"disposition": "queued"}


async def abort(mode: RpcMode, command: Command) -> object:
    await mode.abort_run()
    return NO_DATA


async def clear_queue(mode: RpcMode, command: Command) -> object:
    steering, follow_up = mode.ops.clear_queue()
    return {"steering": steering, "followUp": follow_up}


# --- state ----------------------------------------------------------------------------------------


async def get_state(mode: RpcMode, command: Command) -> object:
    return mode.ops.state()


async def get_messages(mode: RpcMode, command: Command) -> object:
    return {"messages": [m.to_json() if hasattr(m, "to_json") else m for m in mode.session.messages]}


async def get_last_assistant_text(mode: RpcMode, command: Command) -> object:
    text = mode.ops.last_assistant_text()
    return {} if text is None else {"text": text}


async def get_session_stats(mode: RpcMode, command: Command) -> object:
    from pi_core.control.stats import session_stats

    return session_stats(mode.session)


async def get_commands(mode: RpcMode, command: Command) -> object:
    return {"commands": [info.to_json() for info in mode.session.command_infos()]}


# --- models and thinking --------------------------------------------------------------------------


async def set_model(mode: RpcMode, command: Command) -> object:
    return mode.ops.set_model(command["provider"], command["modelId"]).to_json()


async def cycle_model(mode: RpcMode, command: Command) -> object:
    return mode.ops.cycle_model()


async def get_available_models(mode: RpcMode, command: Command) -> object:
    import asyncio

    models = await asyncio.to_thread(mode.ops.available_models, True)  # probes local servers
    return {"models": [m.to_json() for m in models]}


async def get_available_thinking_levels(mode: RpcMode, command: Command) -> object:
    return {"levels": mode.ops.available_thinking_levels()}


async def cycle_thinking_level(mode: RpcMode, command: Command) -> object:
    level = mode.ops.cycle_thinking_level()
    return None if level is None else {"level": level}


# --- compaction and retry -------------------------------------------------------------------------


async def compact(mode: RpcMode, command: Command) -> object:
    result = await mode.session.compact(command.get("customInstructions"))
    return result.to_json()


async def abort_retry(mode: RpcMode, command: Command) -> object:
    mode.ops.abort_retry()
    return NO_DATA


# --- bash -----------------------------------------------------------------------------------------


async def bash(mode: RpcMode, command: Command) -> object:
    return await mode.ops.bash.run(command["command"])


async def abort_bash(mode: RpcMode, command: Command) -> object:
    mode.ops.bash.abort()
    return NO_DATA


# --- sessions -------------------------------------------------------------------------------------


async def new_session(mode: RpcMode, command: Command) -> object:
    ok = await mode.ops.new_session(command.get("parentSession"))
    return {"cancelled": not ok}


async def switch_session(mode: RpcMode, command: Command) -> object:
    ok = await mode.ops.switch_session(command["sessionPath"])
    return {"cancelled": not ok}


async def fork(mode: RpcMode, command: Command) -> object:
    text, cancelled = await mode.ops.fork(command["entryId"])
    return {"text": text, "cancelled": cancelled}


async def clone(mode: RpcMode, command: Command) -> object:
    return {"cancelled": await mode.ops.clone()}


async def get_fork_messages(mode: RpcMode, command: Command) -> object:
    return {"messages": mode.ops.fork_messages()}


async def get_entries(mode: RpcMode, command: Command) -> object:
    from pi_core.control.entries import entries_since

    return entries_since(mode.session.store, command.get("since"))


async def get_tree(mode: RpcMode, command: Command) -> object:
    from pi_core.control.entries import session_tree

    return session_tree(mode.session.store)


async def export_html(mode: RpcMode, command: Command) -> object:
    return {"path": mode.ops.export_html(command.get("outputPath"))}


def _setter(name: str, param: Param) -> tuple[Handler, tuple[Param, ...]]:
    """A ``set_*`` command: its one field goes to the ``SessionControl`` method of the same name, and the answer
    carries no data."""

    async def handler(mode: RpcMode, command: Command) -> object:
        getattr(mode.ops, name)(command[param.name])
        return NO_DATA

    return handler, (param,)


_MESSAGE = (Param("message", str), Param("images", list, required=False))

COMMANDS: dict[str, tuple[Handler, tuple[Param, ...]]] = {
    "prompt": (prompt, (*_MESSAGE, Param("streamingBehavior", str, required=False))),
    "steer": (steer, _MESSAGE),
    "follow_up": (follow_up, _MESSAGE),
    "abort": (abort, ()),
    "clear_queue": (clear_queue, ()),
    "new_session": (new_session, (Param("parentSession", str, required=False),)),
    "get_state": (get_state, ()),
    "get_messages": (get_messages, ()),
    "set_model": (set_model, (Param("provider", str), Param("modelId", str))),
    "cycle_model": (cycle_model, ()),
    "get_available_models": (get_available_models, ()),
    "set_thinking_level": _setter("set_thinking_level", Param("level", str)),
    "cycle_thinking_level": (cycle_thinking_level, ()),
    "get_available_thinking_levels": (get_available_thinking_levels, ()),
    "set_steering_mode": _setter("set_steering_mode", Param("mode", str)),
    "set_follow_up_mode": _setter("set_follow_up_mode", Param("mode", str)),
    "compact": (compact, (Param("customInstructions", str, required=False),)),
    "set_auto_compaction": _setter("set_auto_compaction", Param("enabled", bool)),
    "set_auto_retry": _setter("set_auto_retry", Param("enabled", bool)),
    "abort_retry": (abort_retry, ()),
    "bash": (bash, (Param("command", str),)),
    "abort_bash": (abort_bash, ()),
    "get_session_stats": (get_session_stats, ()),
    "export_html": (export_html, (Param("outputPath", str, required=False),)),
    "switch_session": (switch_session, (Param("sessionPath", str),)),
    "fork": (fork, (Param("entryId", str),)),
    "clone": (clone, ()),
    "get_fork_messages": (get_fork_messages, ()),
    "get_entries": (get_entries, (Param("since", str, required=False),)),
    "get_tree": (get_tree, ()),
    "get_last_assistant_text": (get_last_assistant_text, ()),
    "set_session_name": _setter("set_session_name", Param("name", str)),
    "get_commands": (get_commands, ()),
}


def warn(text: str) -> None:
    """Diagnostics go to stderr: stdout carries only protocol lines."""
    print(text, file=sys.stderr, flush=True)
