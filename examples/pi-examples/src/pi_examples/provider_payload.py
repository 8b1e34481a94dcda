"""provider_payload: log every provider payload and each response's status and headers to ``.pi/provider-payload.log``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_core import hookimpl
from pi_core.extension import ExtensionContext


def log_file(ctx: ExtensionContext) -> Path:
    return ctx.cwd / ".pi" / "provider-payload.log"


def append(ctx: ExtensionContext, text: str) -> None:
    target = log_file(ctx)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as out:
        out.write(text)


@hookimpl
def pi_before_provider_request(ctx: ExtensionContext, payload: dict[str, Any]) -> dict[str, Any] | None:
    append(ctx, f"{json.dumps(payload, indent=2, ensure_ascii=False)}\n\n")
    # A plugin may also return a replacement payload, e.g. {**payload, "temperature": 0}.
    return None


@hookimpl
def pi_after_provider_response(ctx: ExtensionContext, status: int, headers: dict[str, str]) -> None:
    append(ctx, f"[{status}] {json.dumps(headers, separators=(',', ':'), ensure_ascii=False)}\n\n")
