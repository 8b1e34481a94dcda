"""What a settings file may hold: Pi 1.6.0's ``settings.json`` keys (plus pi's own) as pydantic models, checked
once per file when it is read (docs/config.md#settings).

A file that does not parse, or that nests deeper than ``MAX_NESTING``, is reported naming the file, line and
column, and its scope counts as empty. A known key with a value of the wrong type is reported (file, key, what it
must be, the value) and left out, so every reader sees either a valid value or the default. A key pi does not
know is reported once (file and key) and kept; a plugin's own settings belong under ``plugins.<name>``. Keys
Pi allows only in the agent directory are reported and left out of a project file.

The models are built on first use (``defer_build``): ``pi --help`` never imports this module, and a run without a
settings file never validates one.
"""

# No ``from __future__ import annotations``: pydantic would compile every annotation string again (a fifth of
# creating these classes, which a run with a settings file pays at start-up).

import json
import types
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from pi_core.types import AssistantMessage

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
NonNegative = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(gt=0)]
Millis = Union[Annotated[float, Field(ge=0)], Literal["disabled"]]  # noqa: UP007 (the description walks it)


def _empty(table: type[BaseModel]) -> Any:
    """A field whose default is ``table`` with its own defaults, made without validating (which would build
    the table's validator at start-up)."""
    return Field(default_factory=table.model_construct)


class Table(BaseModel):
    """A settings table: Pi's camelCase keys, strict types (``"3"`` is not a number, ``1`` not ``true``), keys
    it does not declare kept (and reported as unknown)."""

    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True,
                              extra="allow", strict=True, defer_build=True)


class CompactionOverride(Table):
    reserve_tokens: NonNegative | None = None
    keep_recent_tokens: NonNegative | None = None


class CompactionTable(Table):
    enabled: bool = True
    reserve_tokens: NonNegative = 16384
    keep_recent_tokens: NonNegative = 20000
    model_overrides: dict[str, CompactionOverride] = {}


class BranchSummaryTable(Table):
    reserve_tokens: NonNegative = 16384
    skip_prompt: bool = False


class ProviderRetryTable(Table):
    timeout_ms: Annotated[float, Field(ge=0)] | None = None
    max_retries: NonNegative | None = None
    max_retry_delay_ms: Annotated[float, Field(ge=0)] = 60000


class RetryTable(Table):
    enabled: bool = True  # mutable: /settings turns auto-retry on and off for the session
    max_retries: NonNegative = 3
    base_delay_ms: NonNegative = 2000
    max_agent_delay_ms: NonNegative = 60000
    provider: ProviderRetryTable = _empty(ProviderRetryTable)

    def should_retry(self, message: "AssistantMessage") -> bool:
        """Whether an error reply is worth another attempt (AgentSession's auto-retry asks)."""
        from pi_core.llm.retry import is_retryable_error

        return is_retryable_error(message)

    def delay_ms(self, attempt: int) -> int:
        """The wait before agent-level retry ``attempt`` (1-based): exponential, capped by ``maxAgentDelayMs``."""
        from pi_core.llm.retry import agent_retry_delay_ms

        return min(agent_retry_delay_ms(self.base_delay_ms, attempt), self.max_agent_delay_ms)


class ImagesTable(Table):
    auto_resize: bool = True
    block_images: bool = False


class TerminalTable(Table):
    show_images: bool = True
    image_width_cells: Positive = 60
    clear_on_shrink: bool | None = None  # unset: PI_CLEAR_ON_SHRINK=1 turns it on
    show_terminal_progress: bool = False
    hyperlinks: bool | Literal["auto"] = "auto"
    images: Literal["kitty", "iterm2", "auto", False] = "auto"
    true_color: bool | Literal["auto"] = "auto"


class MarkdownTable(Table):
    code_block_indent: str = "  "
    mermaid: Literal["off", "final", "streaming"] = "streaming"


class WarningsTable(Table):
    anthropic_extra_usage: bool = True


class CodemodeTable(Table):
    mode: Literal["on", "only"] = "on"
    inline_budget: NonNegative = 3000


class ThinkingBudgets(Table):
    minimal: Positive | None = None
    low: Positive | None = None
    medium: Positive | None = None
    high: Positive | None = None
    xhigh: Positive | None = None
    max: Positive | None = None


class SettingsFile(Table):
    """One settings file, or the merge of both scopes. ``None`` means unset where the default is found elsewhere
    (the provider's model, the terminal's theme)."""

    schema_url: str | None = Field(None, alias="$schema")
    # model and thinking
    default_provider: str | None = None
    default_model: str | None = None
    default_thinking_level: ThinkingLevel | None = None
    model_thinking_levels: dict[str, ThinkingLevel] = {}
    thinking_budgets: ThinkingBudgets = _empty(ThinkingBudgets)
    enabled_models: list[str] | None = None
    hide_thinking_block: bool = False
    show_cache_miss_notices: bool = False
    cache_warming: Literal["off", "streaming", "idle"] = "idle"
    # interaction
    steering_mode: Literal["all", "one-at-a-time"] = "one-at-a-time"
    follow_up_mode: Literal["all", "one-at-a-time"] = "one-at-a-time"
    external_editor: str | None = None
    double_escape_action: Literal["tree", "fork", "none"] = "tree"
    tree_filter_mode: Literal["default", "no-tools", "user-only", "labeled-only", "all"] = "default"
    default_project_trust: Literal["ask", "always", "never"] = "ask"
    # tools
    default_tools: list[str] | None = None
    codemode: CodemodeTable = _empty(CodemodeTable)
    # sessions and context
    session_dir: str | None = None
    session_share_destination: Literal["auto", "gist", "radius"] = "auto"
    compaction: CompactionTable = _empty(CompactionTable)
    branch_summary: BranchSummaryTable = _empty(BranchSummaryTable)
    # terminal and display
    theme: str | None = None
    quiet_startup: bool | Literal["header"] = False
    tui_mode: Literal["regular", "fullscreen"] | None = None
    fullscreen_exit_output: Literal["transcript", "resume-hint"] = "transcript"
    fullscreen_scrollbar: Literal["auto", "always", "hidden"] = "auto"
    fullscreen_copy_on_select: bool = True
    fullscreen_wheel_scroll_lines: Annotated[int, Field(ge=1, le=100)] | Literal["auto"] = "auto"
    editor_padding_x: Annotated[int, Field(ge=0, le=3)] = 0
    output_pad: Literal[0, 1] = 1
    autocomplete_max_visible: Annotated[int, Field(ge=3, le=20)] = 5
    show_hardware_cursor: bool = False
    terminal: TerminalTable = _empty(TerminalTable)
    images: ImagesTable = _empty(ImagesTable)
    markdown: MarkdownTable = _empty(MarkdownTable)
    # network and retries
    transport: Literal["auto", "sse", "websocket", "websocket-cached"] = "auto"
    http_proxy: str | None = None
    http_idle_timeout_ms: Millis = 300_000
    websocket_connect_timeout_ms: Millis = 15_000
    retry: RetryTable = _empty(RetryTable)
    # shell
    shell_path: str | None = None
    shell_command_prefix: str | None = None
    npm_command: list[str] | None = None
    self_update_command: list[str] | None = None
    # resources
    packages: list[Any] = []  # open: a package source: a string or an object, as settings.json has it
    extensions: list[str] = []
    skills: list[str] = []
    prompts: list[str] = []
    themes: list[str] = []
    enable_skill_commands: bool = True
    # updates, telemetry and warnings
    collapse_changelog: bool = False
    enable_install_telemetry: bool = True
    enable_analytics: bool = False
    warnings: WarningsTable = _empty(WarningsTable)
    # Pi's bookkeeping (written by Pi, read by pi where it means the same)
    last_changelog_version: str | None = None
    extension_changelog_versions: dict[str, Any] = {}  # open: settings JSON, checked by its owner
    tracking_id: str | None = None
    device_id: str | None = None
    # pi's own
    disabled_plugins: list[str] = []
    disabled_plugins_01: list[str] = Field([], alias="disabled_plugins")  # pi 0.1's spelling
    enabled_plugins: list[str] = []
    tool_overrides: dict[str, str] = {}
    sandbox: dict[str, Any] | None = None  # open: settings JSON, checked by its owner; checked by the sandbox when it starts (a bad value stops pi)
    plugins: dict[str, dict[str, Any]] = {}  # open: settings JSON, checked by its owner; a plugin's own settings, by its name


# Keys Pi reads only from the agent directory's settings.json (a project must not set them).
GLOBAL_ONLY = ("defaultProjectTrust", "httpProxy", "selfUpdateCommand", "cacheWarming")


# --- checking a file -------------------------------------------------------------------------------------------

def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(annotation: Any) -> str:
    """What a value of ``annotation`` must be, in the words of the warning (``a number``, ``one of "a", "b"``)."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        base, *marks = typing.get_args(annotation)
        bounds = [m for field in marks for m in getattr(field, "metadata", [field])]
        lower = next((getattr(b, "ge", None) for b in bounds if getattr(b, "ge", None) is not None), None)
        upper = next((getattr(b, "le", None) for b in bounds if getattr(b, "le", None) is not None), None)
        if any(getattr(b, "gt", None) == 0 for b in bounds):
            return f"a positive {'integer' if base is int else 'number'}"
        if lower is not None and upper is not None:
            return f"{'an integer' if base is int else 'a number'} from {lower} to {upper}"
        if lower == 0:
            return f"a non-negative {'integer' if base is int else 'number'}"
        return _describe(base)
    if origin in (Union, types.UnionType, Literal):
        kinds: list[str] = []
        literals: list[Any] = []
        for arg in typing.get_args(annotation) if origin is not Literal else [annotation]:
            if arg is bool:
                literals += [True, False]
            elif typing.get_origin(arg) is Literal:
                literals += typing.get_args(arg)
            elif arg is not type(None):
                kinds.append(_describe(arg))
        if literals:
            kinds.append(json.dumps(literals[0]) if len(literals) == 1
                         else "one of " + ", ".join(json.dumps(v) for v in literals))
        return " or ".join(dict.fromkeys(kinds))
    if origin is list:
        return "a list of strings" if typing.get_args(annotation) == (str,) else "a list"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return "a table"
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(annotation, "valid")


def _field(model: type[BaseModel], key: str) -> Any:
    for info in model.model_fields.values():
        if key == info.alias:  # a file spells keys as Pi does: ``default_model`` is not ``defaultModel``
            return Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    return None


def _table_model(annotation: Any) -> type[BaseModel] | None:
    for arg in (annotation, *typing.get_args(annotation)):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _annotation_at(keys: tuple[str, ...]) -> Any:
    """The declared type at a dotted path (``retry.provider.timeoutMs``, ``modelThinkingLevels.<model>``)."""
    current: Any = SettingsFile
    for key in keys:
        model = _table_model(current)
        if model is not None and typing.get_origin(current) is not dict:
            current = _field(model, key)
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            return None
    return current


def _bad_key(data: dict[str, Any], loc: tuple[Any, ...]) -> tuple[str, ...]:
    """The settings keys an error's location names: the deepest key present in ``data`` (a list's item
    blames the whole list; a union member's name in the location is not a key)."""
    keys: list[str] = []
    current: Any = data
    for part in loc:
        if not isinstance(current, dict) or not isinstance(part, str) or part not in current:
            break
        keys.append(part)
        current = current[part]
    return tuple(keys)


def _get(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    current: Any = data
    for key in keys:
        current = current[key]
    return current


def _pop(data: dict[str, Any], keys: tuple[str, ...]) -> None:
    table = data
    for key in keys[:-1]:
        table = table[key]
    del table[keys[-1]]


def _unknown(model: type[BaseModel], data: dict[str, Any], prefix: str) -> list[str]:
    """Dotted keys of ``data`` that ``model`` does not declare (tables walked, free-form tables not)."""
    found: list[str] = []
    for key, value in data.items():
        annotation = _field(model, key)
        if annotation is None:
            found.append(prefix + key)
            continue
        if typing.get_origin(annotation) is dict and isinstance(value, dict):
            entry = _table_model(typing.get_args(annotation)[1])
            if entry is not None:
                found.extend(item for name, row in value.items() if isinstance(row, dict)
                             for item in _unknown(entry, row, f"{prefix}{key}.{name}."))
            continue
        table = _table_model(annotation)
        if table is not None and isinstance(value, dict):
            found.extend(_unknown(table, value, f"{prefix}{key}."))
    return found


def _adapter(key: str) -> Any:
    """The validator of one top-level key, built the first time a file sets it (a few per run, not all ~90)."""
    adapter = _ADAPTERS.get(key)
    if adapter is None:
        from pydantic import TypeAdapter

        annotation = _field(SettingsFile, key)
        table = _table_model(annotation)
        if table is not None and typing.get_origin(annotation) is not dict:
            adapter = _ADAPTERS[key] = TypeAdapter(annotation)  # a table's own config (strict) applies
        else:
            adapter = _ADAPTERS[key] = TypeAdapter(annotation, config=ConfigDict(strict=True))
    return adapter


_ADAPTERS: dict[str, Any] = {}


def check_file(path: Path, data: dict[str, Any], *, scope: str) -> list[str]:  # open: settings JSON (settings.json)
    """Check one file's content (mutates ``data``): a value of the wrong type is removed, and so is a global-only
    key in a project file; unknown keys stay. One message per problem, each naming the file and the key."""
    problems: list[str] = []
    for key in list(data):
        if scope == "project" and key in GLOBAL_ONLY:
            problems.append(f"{path}: {key} can only be set in the agent directory's settings; ignored")
            del data[key]
        elif _field(SettingsFile, key) is not None:
            for _ in range(100):  # each pass removes at least one bad key; a table holds far fewer
                try:
                    _adapter(key).validate_python(data[key])
                    break
                except ValidationError as err:
                    locs = ((key, *error["loc"]) for error in err.errors())
                    bad = list(dict.fromkeys(found for loc in locs if (found := _bad_key(data, loc))))
                    for keys in bad:
                        expected = _describe(_annotation_at(keys))
                        problems.append(f"{path}: {'.'.join(keys)} must be {expected}, "
                                        f"not {_shown(_get(data, keys))}; ignored")
                    for keys in bad:
                        _pop(data, keys)
                    if key not in data:
                        break
    problems.extend(f'{path}: unknown setting "{key}"' for key in _unknown(SettingsFile, data, ""))
    return problems


def value_problem(key: str, value: Any) -> str | None:  # open: settings JSON (settings.json)
    """Why ``value`` cannot be the dotted ``key`` (``"retry.maxRetries must be a non-negative integer, not
    \"x\""``), or None: a runtime write is checked as a file is."""
    data: dict[str, Any] = {}
    table = data
    *tables, last = key.split(".")
    for part in tables:
        table = table.setdefault(part, {})
    table[last] = value
    problems = [p for p in check_file(Path("-"), data, scope="global") if "unknown setting" not in p]
    return problems[0].removeprefix("-: ").removesuffix("; ignored") if problems else None


def _construct(model: type[BaseModel], data: dict[str, Any]) -> Any:
    """``model`` over checked ``data`` without validating again: tables within become their models."""
    values: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if info.alias not in data:
            continue
        value = data[info.alias]
        annotation = info.annotation
        table = _table_model(annotation)
        if table is not None and isinstance(value, dict):
            if typing.get_origin(annotation) is dict:
                value = {k: _construct(table, v) if isinstance(v, dict) else v for k, v in value.items()}
            else:
                value = _construct(table, value)
        values[name] = value
    return model.model_construct(**values)


def effective(data: dict[str, Any]) -> SettingsFile:  # open: settings JSON (settings.json)
    """The typed settings of checked (and merged) content, every key valid or at its default."""
    return _construct(SettingsFile, data)  # type: ignore[no-any-return]
