"""What a settings file may hold, checked once when it is read (docs/config.md#settings).

A file that does not parse, or that nests deeper than ``MAX_NESTING``, is reported naming the file, line and
column, and its scope counts as empty; a known key with a value of the wrong type is reported (file, key,
expected type, the value) and left out, so every reader sees either a valid value or the default.
Keys pi does not know (a plugin's) are kept as they are.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pi_core.toolkit.nesting import MAX_NESTING, nesting_depth

_NUMBER = "a number"
_INT = "an integer"
_BOOL = "true or false"
_STR = "a string"
_LIST = "a list"
_TABLE = "a table"

# dotted key -> what it must be (Pi's settings.json keys, plus pi's own)
KNOWN: dict[str, str] = {
    "defaultProvider": _STR, "defaultModel": _STR, "defaultThinkingLevel": _STR, "steeringMode": _STR,
    "followUpMode": _STR, "transport": _STR, "shellPath": _STR, "shellCommandPrefix": _STR, "sessionDir": _STR,
    "theme": _STR, "hideThinkingBlock": _BOOL, "enableSkillCommands": _BOOL,  # quietStartup may be "header"
    "sessionShareDestination": _STR,
    "defaultTools": _LIST, "enabledModels": _LIST, "packages": _LIST, "extensions": _LIST, "skills": _LIST,
    "prompts": _LIST, "themes": _LIST, "disabledPlugins": _LIST, "enabledPlugins": _LIST, "disabled_plugins": _LIST,
    "thinkingBudgets": _TABLE, "images": _TABLE, "images.blockImages": _BOOL, "images.autoResize": _BOOL,
    "compaction": _TABLE, "compaction.enabled": _BOOL, "compaction.reserveTokens": _INT,
    "compaction.keepRecentTokens": _INT, "branchSummary": _TABLE, "branchSummary.reserveTokens": _INT,
    "branchSummary.skipPrompt": _BOOL, "retry": _TABLE, "retry.enabled": _BOOL, "retry.maxRetries": _INT,
    "retry.baseDelayMs": _INT, "retry.provider": _TABLE, "retry.provider.timeoutMs": _NUMBER,
    "retry.provider.maxRetries": _INT, "retry.provider.maxRetryDelayMs": _NUMBER,
}
_BUDGET_LEVELS = ("minimal", "low", "medium", "high", "xhigh", "max")


class SettingsFileError(ValueError):
    """A settings file that cannot be used at all; the text names the file (and line and column)."""


def _fits(value: Any, kind: str) -> bool:
    if kind == _BOOL:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    return {_NUMBER: isinstance(value, (int, float)), _INT: isinstance(value, int), _STR: isinstance(value, str),
            _LIST: isinstance(value, list), _TABLE: isinstance(value, dict)}[kind]


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_settings_text(path: Path, text: str) -> dict[str, Any]:
    """Parse a TOML (or, for ``.json``, JSON) settings file; raises SettingsFileError naming file, line, column."""
    import tomllib  # here: every start reads this module (models.json's nesting check), few have a TOML file

    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            data = tomllib.loads(text)
    except json.JSONDecodeError as err:
        raise SettingsFileError(f"Invalid settings file {path}: {err.msg} (line {err.lineno}, column {err.colno})"
                                ) from err
    except tomllib.TOMLDecodeError as err:
        message = str(err)
        found = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        if found:
            message = f"{message[:found.start()]} (line {found.group(1)}, column {found.group(2)})"
        raise SettingsFileError(f"Invalid settings file {path}: {message}") from err
    except RecursionError as err:
        raise SettingsFileError(f"Invalid settings file {path}: nested more than {MAX_NESTING} levels deep") from err
    if not isinstance(data, dict):
        raise SettingsFileError(f"Invalid settings file {path}: expected a JSON object")
    if nesting_depth(data) > MAX_NESTING:
        raise SettingsFileError(f"Invalid settings file {path}: nested more than {MAX_NESTING} levels deep")
    return data


def drop_invalid(path: Path, data: dict[str, Any]) -> list[str]:
    """Remove known keys whose values have the wrong type (mutates ``data``); one message per removal."""
    problems: list[str] = []

    def check(table: dict[str, Any], prefix: str) -> None:
        for key in list(table):
            dotted = f"{prefix}{key}"
            kind = KNOWN.get(dotted)
            value = table[key]
            if kind is not None and not _fits(value, kind):
                problems.append(f"{path}: {dotted} must be {kind}, not {_shown(value)}; ignored")
                del table[key]
            elif kind == _TABLE and isinstance(value, dict):
                if dotted == "thinkingBudgets":
                    for level in list(value):
                        budget = value[level]
                        if level in _BUDGET_LEVELS and not (_fits(budget, _INT) and budget > 0):
                            problems.append(f"{path}: thinkingBudgets.{level} must be a positive integer, "
                                            f"not {_shown(budget)}; ignored")
                            del value[level]
                else:
                    check(value, f"{dotted}.")

    check(data, "")
    return problems
