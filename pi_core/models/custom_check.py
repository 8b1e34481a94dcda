"""What is checked of a models file besides its schema, and what spares a valid file that check.

``check_semantics``: Pi's extra checks on a file the schema (``custom_schema``, pydantic) accepts. The schema check
itself needs pydantic and a validator built, on every start; a file it accepted once is remembered in pi's cache
dir (``models-check.json``) by a digest of its content, pi's version and the schema module's own stamp, so the next
start with the same file skips it. Any change to the file (or a pi upgrade, or an edited schema) is a new digest
and the file is checked again, with every mistake named by file, line and column. The cache fails open: a missing,
unreadable or malformed cache file means "check", and a cache that cannot be written costs only the next check.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_core.config_paths import default_cache_dir

try:  # hashlib would load OpenSSL just to name a digest; this one needs no crypto
    from _blake2 import blake2b as _digest
except ImportError:  # a Python built without it
    from hashlib import sha256 as _digest  # type: ignore[assignment]

CACHE_NAME = "models-check.json"
CACHE_FORMAT = 1
KEEP = 16  # digests remembered: a few agent dirs and projects, each with its own files
_SCHEMA = Path(__file__).with_name("custom_schema.py")


@dataclass(eq=False, repr=False)
class Problem:
    """One thing wrong in a models file: the JSON pointer it is about and Pi's message for it."""

    pointer: str
    message: str


def schema_digest(config: Any) -> str | None:  # open: the models file (models.json / models.toml), JSON
    """The digest a valid ``config`` is remembered by: its content as read, pi's version and the schema
    module's size and mtime (an edited checkout changes the schema without a version); None when it cannot be
    made (then the file is simply checked)."""
    from pi_core import __version__

    try:
        stamp = os.stat(_SCHEMA)
        text = json.dumps(config, sort_keys=True, ensure_ascii=False, default=repr)
    except (OSError, TypeError, ValueError, RecursionError):
        return None
    key = f"{__version__}\0{stamp.st_size}\0{stamp.st_mtime_ns}\0{text}"
    return _digest(key.encode("utf-8", "surrogatepass")).hexdigest()


def _cache_path() -> Path:
    return default_cache_dir() / CACHE_NAME


def _remembered() -> list[str]:
    try:
        data = json.loads(_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    valid = data.get("valid") if isinstance(data, dict) and data.get("format") == CACHE_FORMAT else None
    return [d for d in valid if isinstance(d, str)] if isinstance(valid, list) else []


def known_valid(digest: str | None) -> bool:
    """Whether a file of this digest passed the schema check before."""
    return digest is not None and digest in _remembered()


def remember_valid(digest: str | None) -> None:
    """Note that the file of ``digest`` passed the schema check (the newest ``KEEP`` are kept)."""
    if digest is None:
        return
    digests = [d for d in _remembered() if d != digest][-(KEEP - 1):] + [digest]
    path = _cache_path()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"format": CACHE_FORMAT, "valid": digests}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def check_semantics(config: dict[str, Any], defaults: Mapping[str, dict[str, Any]]) -> list[Problem]:  # open: the models file (models.json / models.toml), JSON
    """Pi's extra checks (docs/models.md#custom-models), each with Pi's message, on a schema-valid file.

    ``defaults`` maps each built-in provider (and preset) to its api/baseUrl/apiKey defaults: such a
    provider's custom models may leave those out.
    """
    problems: list[Problem] = []

    def add(pointer: str, message: str) -> None:
        problems.append(Problem(pointer, message))

    for name, provider in config["providers"].items():
        where = f"/providers/{name}"
        models = provider.get("models") or []
        builtin = name in defaults
        preset = defaults.get(name, {})
        if not models:
            if not any(provider.get(k) for k in ("baseUrl", "headers", "compat", "modelOverrides")):
                add(where, f'Provider {name}: must specify "baseUrl", "headers", "compat", '
                           f'"modelOverrides", or "models".')
        elif not builtin and not provider.get("baseUrl"):
            # No "apiKey" is fine (a deliberate difference: Pi requires one): local servers need none.
            add(where, f'Provider {name}: "baseUrl" is required when defining custom models.')
        for i, model in enumerate(models):
            if not model.get("id"):
                add(f"{where}/models/{i}", f'Provider {name}: model missing "id"')
                continue
            if not (model.get("api") or provider.get("api") or preset.get("api")):
                add(f"{where}/models/{i}", f'Provider {name}, model {model["id"]}: no "api" specified. '
                                           f"Set at provider or model level.")
            for key in ("contextWindow", "maxTokens"):
                if key in model and model[key] <= 0:
                    add(f"{where}/models/{i}/{key}", f"Provider {name}, model {model['id']}: invalid {key}")
        patches = [(f"{where}/models/{i}", m) for i, m in enumerate(models)] + \
            [(f"{where}/modelOverrides/{k}", m) for k, m in (provider.get("modelOverrides") or {}).items()]
        for pointer, model in patches:
            for tier, seconds in (model.get("promptCache") or {}).items():
                if tier in ("short", "long") and seconds is not None and seconds <= 0:
                    add(f"{pointer}/promptCache/{tier}", "must be > 0")
    return problems
