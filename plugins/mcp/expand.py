"""``env``, ``headers`` and ``oauth.clientSecret`` values: ``${VAR}``/``$VAR`` from the environment, or a whole-value
``!command`` whose output is the value. ``$$`` is a literal ``$`` and ``$!`` a literal ``!``."""

from __future__ import annotations

import os
import re

from pi_core.errors import PiError
from pi_core.models.auth import run_value_command

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ExpansionError(PiError):
    pass


def _template(value: str, missing: list[str]) -> str:
    out: list[str] = []
    i = 0
    while i < len(value):
        dollar = value.find("$", i)
        if dollar < 0:
            out.append(value[i:])
            break
        out.append(value[i:dollar])
        nxt = value[dollar + 1: dollar + 2]
        if nxt in ("$", "!"):
            out.append(nxt)
            i = dollar + 2
            continue
        if nxt == "{":
            end = value.find("}", dollar + 2)
            name = value[dollar + 2: end] if end >= 0 else ""
            if end < 0 or not _NAME.fullmatch(name):
                out.append(value[dollar: end + 1] if end >= 0 else "$")
                i = end + 1 if end >= 0 else dollar + 1
                continue
            i = end + 1
        else:
            match = _NAME.match(value, dollar + 1)
            if match is None:
                out.append("$")
                i = dollar + 1
                continue
            name, i = match.group(0), match.end()
        resolved = os.environ.get(name)
        if not resolved:
            missing.append(name)
        else:
            out.append(resolved)
    return "".join(out)


def expand_value(value: str, what: str) -> str:
    """The value to send; ExpansionError names ``what`` and the variable or command that failed."""
    if value.startswith("!"):
        result = run_value_command(value[1:])
        if result is None:
            raise ExpansionError(f"Failed to resolve {what} from shell command: {value[1:]}")
        return result
    missing: list[str] = []
    resolved = _template(value, missing)
    if missing:
        names = list(dict.fromkeys(missing))
        plural = "s" if len(names) > 1 else ""
        raise ExpansionError(f"Failed to resolve {what} from environment variable{plural}: {', '.join(names)}")
    return resolved


def expand_map(values: dict[str, str], what: str, kind: str) -> dict[str, str]:
    return {key: expand_value(raw, f'{what} {kind} "{key}"') for key, raw in values.items()}
