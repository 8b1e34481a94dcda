"""Tool definitions as data, the context a tool runs in, and its result."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pi_core.signals import AbortSignal

if TYPE_CHECKING:
    from pydantic import BaseModel

    from pi_core.extension import ExtensionContext
    from pi_core.types import (
        AssistantMessage,
        ImageContent,
        Model,
        TextContent,
        ToolCall,
        ToolDefinition,
    )


@dataclass
class ToolResult:
    """What ``execute`` returns: content the model reads, details for renderers and sessions.

    ``is_error`` marks a failed call that keeps its details (raising ``ToolError`` is the usual way to fail);
    ``terminate`` ends the run once every call of the batch asked for it. ``structured_content`` is the
    result as data for scripts (Pi 1.6.0's ``structuredContent``: bash's output and exit code, read's text),
    sent in ``tool_execution_end`` events, never to the model.
    """

    content: list[TextContent | ImageContent]
    details: Any = None  # open: tool-defined details, stored in the session JSON
    terminate: bool = False
    is_error: bool = False
    structured_content: Any = None  # open: any JSON value

    @classmethod
    def text(cls, text: str, details: Any = None) -> ToolResult:  # open: tool-defined details, stored in the session JSON
        from pi_core.types import TextContent

        return cls(content=[TextContent(text=text)], details=details)

    def encodable(self) -> ToolResult:
        """A copy UTF-8 can encode: tool output can hold what it cannot (a file name decoded with surrogateescape)."""
        from pi_core.types import TextContent, encodable, encodable_value

        content = [block.model_copy(update={"text": encodable(block.text)}) if isinstance(block, TextContent)
                   else block for block in self.content]
        return ToolResult(content=content, details=encodable_value(self.details), terminate=self.terminate,
                          structured_content=encodable_value(self.structured_content))

    def to_json(self) -> dict[str, Any]:  # open: JSON
        """The wire form Pi's events carry (``partialResult``): content, and details when there are any."""
        out: dict[str, Any] = {"content": [block.model_dump(by_alias=True, exclude_none=True, mode="json")
                                           for block in self.content]}
        if self.details is not None:
            out["details"] = self.details
        return out


@dataclass(eq=False, repr=False)
class ToolSettings:
    """Session settings the built-in tools read (``shellPath``, ``shellCommandPrefix``, ``images.autoResize``)."""

    shell_path: str | None = None
    shell_command_prefix: str | None = None
    auto_resize_images: bool | None = None  # None: the tool's own default
    # Where full-output files go (asked when one is needed: the session file may change); None or an
    # answer of None: the system temp dir, where they are kept past exit.
    output_dir: Callable[[], Path | None] | None = None

    def full_output_dir(self) -> Path | None:
        return self.output_dir() if self.output_dir is not None else None


# Run another tool as the model's call would (hooks, events): its call id, result and whether it failed.
NestedCall = Callable[["Tool", dict[str, Any], AbortSignal], Awaitable[tuple[str, ToolResult, bool]]]  # open: the model's tool arguments, JSON

# Keys that 0.1 passed through ``ToolContext.extras``; still read from there for one release.
_LEGACY_EXTRAS = ("model", "pi", "shell_path", "shell_command_prefix", "auto_resize_images")


@dataclass(eq=False, repr=False)
class ToolContext:
    """Everything a running tool needs besides its arguments.

    ``call_id`` is the model's tool-call id, ``signal`` fires on abort (Ctrl-C, timeout of the run),
    ``update`` streams partial results (each becomes a ``tool_execution_update`` event). ``model`` is the
    model the call came from (its ``input`` says whether images can be sent back), ``settings`` the
    session's tool settings, ``pi`` the session's ExtensionContext (set active tools, send messages, ask
    the user) when the tool runs inside a session. ``extras`` is free for a pack's own values. ``call_tool``
    runs another tool from inside this one, as the loop runs the model's calls (codemode's scripts use it).
    """

    cwd: Path
    call_id: str = ""
    signal: AbortSignal = field(default_factory=AbortSignal)
    on_update: Callable[[ToolResult], None] | None = None
    env: dict[str, str] | None = None
    model: Model | None = None
    settings: ToolSettings = field(default_factory=ToolSettings)
    pi: ExtensionContext | None = None
    extras: dict[str, Any] = field(default_factory=dict)  # open: values a host passes by key (0.1's ctx.extras, read for one release)
    call_tool: NestedCall | None = None

    def __post_init__(self) -> None:
        extras = self.extras
        if any(key in extras for key in _LEGACY_EXTRAS):
            model = self.model or extras.get("model")
            if isinstance(model, dict):  # 0.1 passed the model's JSON: ``ctx.model`` is always a Model
                from pi_core.types import Model

                model = Model.model_validate(model)
            self.model = model
            self.pi = self.pi or extras.get("pi")
            self.settings = ToolSettings(
                shell_path=extras.get("shell_path", self.settings.shell_path),
                shell_command_prefix=extras.get("shell_command_prefix", self.settings.shell_command_prefix),
                auto_resize_images=extras.get("auto_resize_images", self.settings.auto_resize_images))
        # ... and written there, for tools that still read ``ctx.extras["pi"]``.
        extras.setdefault("model", self.model)
        extras.setdefault("pi", self.pi)

    def resolve(self, path: str) -> Path:
        """Resolve a model-supplied path against ``cwd`` (``~``, a leading ``@``, Unicode spaces)."""
        return Path(resolve_to_cwd(path, str(self.cwd)))

    def update(self, partial: ToolResult | str) -> None:
        if self.on_update is not None:
            self.on_update(ToolResult.text(partial) if isinstance(partial, str) else partial)


# Unicode spaces that models (and macOS screenshot names) use where a plain space was meant (compiled by re on
# the first tool call, not at import).
_UNICODE_SPACES = "[\u00a0\u2000-\u200a\u202f\u205f\u3000]"


def expand_path(path: str) -> str:
    """Drop one leading ``@``, turn Unicode spaces into ASCII spaces and expand ``~`` / ``~/``."""
    path = path.removeprefix("@")
    path = re.sub(_UNICODE_SPACES, " ", path)
    if path == "~":
        return os.path.expanduser("~")
    if path.startswith("~/"):
        return os.path.expanduser("~") + path[1:]
    return path


def resolve_to_cwd(path: str, cwd: str) -> str:
    """``expand_path``, then keep an absolute path as is or resolve a relative one against ``cwd``.
    A NUL character, which no file name can hold, is a ``ToolError`` (the OS would say "embedded null byte")."""
    if "\x00" in path:
        from pi_core.errors import ToolError

        raise ToolError(f"Invalid path {path!r}: it contains a NUL character, which no file name can hold. "
                        "Check the path and try again.")
    expanded = expand_path(path)
    if os.path.isabs(expanded):
        return expanded
    return os.path.normpath(os.path.join(os.path.abspath(cwd), expanded))


ExecuteResult = ToolResult | str
Execute = Callable[[Any, ToolContext], ExecuteResult | Awaitable[ExecuteResult]]  # open: the tool's arguments, as built: a pydantic model or JSON


@dataclass(eq=False, repr=False)
class Tool:
    """A tool the model can call.

    ``parameters`` is a JSON Schema dict (``execute`` then gets a dict) or a pydantic model class
    (``execute`` gets an instance). ``prepare_arguments`` fixes known model quirks before validation.
    ``coercion`` picks Pi's conversion table: "typebox" for the built-ins, "json" for plain schemas.
    ``exposure`` "deferred" keeps a tool out of the model's declarations until something activates it
    (``tool_search`` finds such tools). ``reaches_tools`` marks a tool that finds or calls other tools,
    so plugins whose tools appear late (servers still connecting) finish adding them before it runs.
    ``annotations`` are behaviour hints (``readOnlyHint``, ``destructiveHint``, ...) for permission plugins.
    ``output_schema`` describes what a call's ``structured_content`` holds: scripts (codemode) get that value.
    ``quick(args, ctx)`` True says this call of a synchronous ``execute`` is over at once (the read of a small
    local file): it runs on the event loop instead of a worker thread, whose hand-off can cost milliseconds.
    """

    name: str
    description: str
    parameters: dict[str, Any] | type[BaseModel]  # open: a JSON Schema
    execute: Execute
    label: str = ""
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(default_factory=list)
    execution_mode: Literal["parallel", "sequential"] = "parallel"
    prepare_arguments: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # open: the model's tool arguments (JSON)
    coercion: Literal["typebox", "json"] = "json"
    active_by_default: bool = True  # built-ins only: grep/find/ls are registered but off
    exposure: Literal["direct", "deferred"] = "direct"
    reaches_tools: bool = False
    annotations: dict[str, bool] | None = None
    quick: Callable[[Any, ToolContext], bool] | None = None  # open: the tool's arguments, as built: a pydantic model or JSON
    output_schema: dict[str, Any] | None = None  # open: a JSON Schema; the JSON Schema of ``structured_content`` (codemode declares it)

    def __hash__(self) -> int:
        return id(self)

    @functools.cached_property
    def json_schema(self) -> dict[str, Any]:  # open: a JSON Schema
        if isinstance(self.parameters, dict):
            return self.parameters
        return schema_of(self.parameters)

    def definition(self) -> ToolDefinition:
        """What a request declares; built once (every turn asks, and validating a schema costs per tool)."""
        made: ToolDefinition | None = self.__dict__.get("_definition")
        if made is None or made.name != self.name or made.description != self.description:
            from pi_core.types import ToolDefinition

            made = self.__dict__["_definition"] = ToolDefinition(name=self.name, description=self.description,
                                                                 parameters=self.json_schema)
        return made

    def build_args(self, validated: dict[str, Any]) -> Any:  # open: the model's tool arguments, JSON
        """Turn validated JSON arguments into what ``execute`` receives (pi_core.toolkit.validation.tool_args
        words a refusal by the pydantic model's own validators)."""
        if isinstance(self.parameters, dict):
            return validated
        return self.parameters.model_validate(validated)


def schema_of(model: type[BaseModel]) -> dict[str, Any]:  # open: a JSON Schema
    """A pydantic model as a plain, self-contained JSON Schema (no titles, no $refs), as models expect."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})

    def clean(node: Any, names: bool = False) -> Any:
        """``names``: ``node`` maps property names to schemas (a property may be called "title")."""
        if isinstance(node, dict):
            if not names and "$ref" in node:
                return clean(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {k: clean(v, not names and k in _NAME_MAPS) for k, v in node.items() if names or k != "title"}
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    cleaned: dict[str, Any] = clean(raw)
    return cleaned


_NAME_MAPS = ("properties", "patternProperties")


class ArgumentCheck(Protocol):
    """How the loop turns a call's JSON arguments into what ``execute`` receives. pi's sessions use
    ``pi_core.toolkit.arguments.PI_ARGUMENTS`` (docs/loop.md#argument-validation); ``UNCHECKED`` passes them on."""

    def validate(self, tool: Tool, call: ToolCall) -> dict[str, Any]:  # open: the model's tool arguments, JSON
        """The arguments to run ``call`` with; raises ``ValidationError`` with the text the model reads."""
        ...

    def build(self, tool: Tool, validated: dict[str, Any]) -> Any:  # open: the model's tool arguments, JSON
        """What ``execute`` gets for arguments that passed (a ``pi_before_tool_call`` hook may have replaced them)."""
        ...


class Unchecked:
    """No checks: the arguments as the model sent them (after ``prepare_arguments``), built by ``Tool.build_args``."""

    def validate(self, tool: Tool, call: ToolCall) -> dict[str, Any]:  # open: the model's tool arguments, JSON
        return tool.prepare_arguments(call.arguments) if tool.prepare_arguments is not None else call.arguments

    def build(self, tool: Tool, validated: dict[str, Any]) -> Any:  # open: the model's tool arguments, JSON
        return tool.build_args(validated)


UNCHECKED = Unchecked()


class ToolPolicy(Protocol):
    """The user's tool selection (``--tools``, ``--exclude-tools``), applied to tools added while a session runs."""

    def allows(self, name: str) -> bool:
        """Whether a tool of this name may exist in this run at all."""
        ...

    def may_declare(self, tool: Tool) -> bool:
        """Whether the tool may be declared to the model (active), once something activates it."""
        ...


def choose_tools(available: dict[str, Tool], names: list[str], policy: ToolPolicy | None) -> list[Tool]:
    """The tools to declare for exactly ``names`` (in that order); an unknown name raises PiError."""
    unknown = [n for n in names if n not in available]
    if unknown:
        from pi_core.errors import PiError

        raise PiError(f"Unknown tool(s): {', '.join(unknown)}. Known: {', '.join(available)}")
    return [t for t in (available[n] for n in dict.fromkeys(names)) if policy is None or policy.may_declare(t)]


def merge_tools(active: list[Tool], available: dict[str, Tool], tools: list[Tool],
                policy: ToolPolicy | None) -> tuple[list[Tool], list[str]]:
    """Tools made available at run time: each joins ``available`` (replacing one of the same name) unless the
    user's selection excludes it; a ``direct`` one the selection lets be declared becomes active. Returns the
    new active list and the names added."""
    added: list[str] = []
    active = list(active)
    positions = {t.name: i for i, t in enumerate(active)}
    for tool in tools:
        if policy is not None and not policy.allows(tool.name):
            continue
        available[tool.name] = tool
        added.append(tool.name)
        declarable = policy is None or policy.may_declare(tool)
        if tool.name in positions:
            if declarable:
                active[positions[tool.name]] = tool
        elif tool.exposure == "direct" and declarable:
            positions[tool.name] = len(active)
            active.append(tool)
    return [t for t in active if policy is None or policy.may_declare(t)], added


@dataclass(eq=False, repr=False)
class ToolCallInfo:
    """What before/after-tool-call hooks see: the raw call, the validated args, the tool and context."""

    tool_call_id: str
    tool_name: str
    args: Any  # open: the tool's arguments, as built: a pydantic model or JSON
    raw_arguments: dict[str, Any]  # open: the model's tool arguments, JSON
    tool: Tool | None = None
    assistant_message: AssistantMessage | None = None
    context: ToolContext | None = None
