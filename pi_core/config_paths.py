"""Where pi keeps its per-user files (the agent dir: ``PI_CODING_AGENT_DIR``, default ``~/.pi/agent``), its
caches, and where its own documentation is."""

from __future__ import annotations

import os
from pathlib import Path

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


def agent_dir() -> Path:
    """The global agent directory; ``~`` and ``~/...`` in the variable are expanded."""
    configured = os.environ.get(AGENT_DIR_ENV, "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".pi" / "agent"


def default_cache_dir() -> Path:
    """Where pi keeps what it can rebuild (discovered entry points, plugins' flags): ``$XDG_CACHE_HOME/pi``,
    ``~/.cache/pi`` when unset."""
    return (Path(base) if (base := os.environ.get("XDG_CACHE_HOME", "").strip()) else Path.home() / ".cache") / "pi"


def auth_path() -> Path:
    """Credentials (``{"<provider>": {"type": "api_key", "key": "..."}}``), kept at mode 0600."""
    return agent_dir() / "auth.json"


def models_toml_path() -> Path:
    """pi's own custom providers/models file (written with tomli-w when pi edits it)."""
    return agent_dir() / "models.toml"


def sessions_dir() -> Path:
    return agent_dir() / "sessions"


OUTPUTS_SUFFIX = ".outputs"


def session_outputs_dir(session_file: Path) -> Path:
    """Where the full output of a session's long commands is kept: ``<session>.outputs/`` beside its file,
    so it lasts as long as the session can be resumed and goes with it."""
    return session_file.with_name(session_file.stem + OUTPUTS_SUFFIX)


def docs_root() -> Path:
    """The folder holding pi's README.md, CONTRIBUTING.md and docs/: inside the installed package (a wheel
    ships them as ``pi_core/_docs``), else the source checkout an editable install runs from."""
    package = Path(__file__).resolve().parent
    shipped = package / "_docs"
    return shipped if (shipped / "README.md").is_file() else package.parent
