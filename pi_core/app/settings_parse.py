"""Reading a settings file's text (TOML, or Pi's JSON) into a table, without checking what it holds
(settings_schema does that): ``pi --help`` reads the plugin lists through here and never imports pydantic."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pi_core.toolkit.nesting import MAX_NESTING, nesting_depth


class SettingsFileError(ValueError):
    """A settings file that cannot be used at all; the text names the file (and line and column)."""


def parse_settings_text(path: Path, text: str) -> dict[str, Any]:  # open: settings JSON (settings.json)
    """Parse a TOML (or, for ``.json``, JSON) settings file; raises SettingsFileError naming file, line, column."""
    import tomllib

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
