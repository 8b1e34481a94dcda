"""Keep secrets out of everything pi writes or shows: session files, exported HTML, logs, error messages.

Two sources of secrets:

- **Known values**: every API key a request is sent with is registered (``register_secret``, called by
  ``pi_core.llm.stream.safe_stream``), and the values of environment variables whose names end in
  ``_API_KEY``, ``_TOKEN``, ``_SECRET`` or ``_PASSWORD`` are read on each call (so a key set after start-up
  counts too). Values shorter than ``MIN_SECRET_LENGTH`` are ignored: ``REDACTED`` in place of every
  ``true`` or ``1`` would destroy text and protect nothing.
- **Patterns** of well-known key and token formats (``sk-...``, ``sk-ant-...`` including OAuth tokens,
  ``AIza...``, GitHub, Slack, JWTs, Copilot ``tid=...`` tokens, Google ``ya29.`` tokens, AWS key ids, any
  ``Bearer`` value), for secrets pi never saw, such as one a tool printed from a config file. OAuth access
  and refresh tokens are also registered as known values the moment pi reads or receives them.

``redact(text)`` replaces both with ``REDACTED``; ``redact_value`` walks JSON-like data. The choke points
that call it: provider error messages (``pi_core.llm.stream``), the session line writer
(``pi_core.sessions.format.serialize_line``), HTML export, and log records (``install_log_redaction``,
installed when this module is imported).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Mapping
from typing import Any

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 8
SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")

# Formats of real keys. Long minimum lengths keep ordinary words such as "sk-learn" out. A pattern text:
# ``re`` compiles and caches it on the first ``redact``, not on import.
SECRET_PATTERN = (
    r"sk-ant-[A-Za-z0-9_\-]{16,}"  # Anthropic
    r"|sk-(?:proj-|svcacct-|or-v1-)?[A-Za-z0-9_\-]{20,}"  # OpenAI, OpenRouter
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"  # GitHub
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*"  # JWTs (OpenAI/ChatGPT OAuth tokens)
    r"|tid=[0-9A-Za-z]+;exp=\d+;[^\s\"']*"  # GitHub Copilot tokens
    r"|ya29\.[0-9A-Za-z_\-]{20,}"  # Google OAuth access tokens (Vertex ADC)
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|(?<=Bearer )[A-Za-z0-9._~+/\-]{20,}=*"  # whatever follows "Bearer " in a header someone printed
)

_lock = threading.Lock()
_known: set[str] = set()


def _usable(value: object) -> bool:
    return isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LENGTH


def register_secret(value: str | None) -> None:
    """Remember ``value`` (an API key, a token) so that ``redact`` removes it from now on."""
    if _usable(value):
        with _lock:
            _known.add(value.strip())  # type: ignore[union-attr]


def forget_secrets() -> None:
    """Drop every registered value (tests)."""
    with _lock:
        _known.clear()


def env_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
    """Values of the environment variables that hold secrets by their name."""
    env = os.environ if environ is None else environ
    return {value.strip() for name, value in env.items()
            if name.upper().endswith(SECRET_ENV_SUFFIXES) and _usable(value)}


def known_secrets() -> list[str]:
    """Registered and environment secrets, longest first (a key that contains another goes whole)."""
    with _lock:
        values = _known | env_secrets()
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every known secret and every key-shaped string replaced by ``REDACTED``."""
    if not text:
        return text
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, REDACTED)
    return re.sub(SECRET_PATTERN, REDACTED, text)


def redact_value(value: Any) -> Any:  # open: a JSON-like value, given back in the same shape
    """A copy of JSON-like ``value`` with every string (keys included) redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v) for v in value)
    if isinstance(value, dict):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    return value


_installed = False


def install_log_redaction() -> None:
    """Redact every log record pi or any library creates, whatever handler later formats it.

    Done in the record factory rather than a ``logging.Filter``: a filter on the ``pi`` logger does not see
    records of its children (``pi.sessions``) or of the HTTP libraries, and handlers come and go.
    """
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format string: the handler will report it as usual
            return record
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return record

    logging.setLogRecordFactory(factory)


install_log_redaction()
