"""``/share`` and ``pi --share``: upload a session's viewer page as a private GitHub gist.

The page is the ``--export`` HTML (already redacted by ``export_html``), created with ``gh gist create
--public=false`` as Pi does; the link printed is Pi's viewer, ``https://pi.dev/session/#<gist id>``
(``PI_SHARE_VIEWER_URL`` overrides the base). ``sessionShareDestination`` (``auto|gist|radius``) is read as Pi
reads it; pi cannot upload to Radius, so ``radius``, and ``auto`` with a Radius sign-in, are refused by name
instead of silently choosing another destination.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pi_core.errors import PiError

DEFAULT_VIEWER_URL = "https://pi.dev/session/"
DESTINATIONS = ("auto", "gist", "radius")
RADIUS_UNSUPPORTED = ("Sharing to Radius is not supported by pi; set sessionShareDestination to \"gist\" "
                      "to share as a private GitHub gist")


class ShareError(PiError):
    """A share that could not be made; the message says why and what to do."""


@dataclass(frozen=True)
class ShareLinks:
    viewer_url: str
    gist_url: str

    def text(self) -> str:
        return f"Share URL: {self.viewer_url}\nGist: {self.gist_url}"


def viewer_url(gist_id: str) -> str:
    return f"{os.environ.get('PI_SHARE_VIEWER_URL') or DEFAULT_VIEWER_URL}#{gist_id}"


def share_destination(setting: object) -> str:
    """The setting's value, ``auto`` for anything Pi would not accept."""
    return setting if isinstance(setting, str) and setting in DESTINATIONS else "auto"


def radius_signed_in() -> bool:
    """A Radius credential in ``auth.json`` (what sends Pi's ``auto`` destination to Radius)."""
    from pi_core.config_paths import agent_dir
    from pi_core.models.auth import AuthStorage

    return AuthStorage.load(agent_dir() / "auth.json").credential("radius") is not None


def check_destination(setting: object, radius_signed_in: bool) -> None:
    """Refuse the destinations pi cannot serve (Radius), before anything is exported."""
    destination = share_destination(setting)
    if destination == "radius" or (destination == "auto" and radius_signed_in):
        raise ShareError(RADIUS_UNSUPPORTED if destination == "radius" else
                         "You are signed in to Radius, where sessionShareDestination \"auto\" shares; " + RADIUS_UNSUPPORTED)


def contents_warning(session_path: Path) -> str:
    """What the session holds, for the confirmation: it may carry file contents and secrets."""
    from pi_core.export.stats import session_stats
    from pi_core.sessions.store import load_file

    stats = session_stats(load_file(session_path).records)
    held = stats.messages_summary() or "no messages"
    calls = f", {stats.tool_calls} tool calls" if stats.tool_calls else ""
    return (f"The session holds {held} messages{calls}.\n"
            "It goes up as a private (unlisted) GitHub gist: anyone with the link can read it.\n"
            "It may hold prompts, replies, tool arguments, command output and file contents.\n"
            "Known API keys and tokens are [REDACTED]; other secrets may remain.")


def _gh(args: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["gh", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    except OSError as exc:
        raise ShareError(f"GitHub CLI (gh) could not start: {exc.strerror or exc}") from None


def check_gh() -> None:
    """``gh`` is installed and signed in, or a ShareError saying which is missing."""
    if shutil.which("gh") is None:
        raise ShareError("GitHub CLI (gh) is not installed. Install it from https://cli.github.com/")
    if _gh(["auth", "status"]).returncode != 0:
        raise ShareError("GitHub CLI is not logged in. Run 'gh auth login' first.")


def upload_gist(html_path: Path) -> ShareLinks:
    result = _gh(["gist", "create", "--public=false", str(html_path)])
    if result.returncode != 0:
        raise ShareError(f"Failed to create gist: {result.stderr.strip() or 'Unknown error'}")
    gist_url = result.stdout.strip().splitlines()[-1].strip() if result.stdout.strip() else ""
    gist_id = gist_url.rstrip("/").rsplit("/", 1)[-1]
    if not gist_id:
        raise ShareError("Failed to parse gist ID from gh output")
    return ShareLinks(viewer_url(gist_id), gist_url)


def share_session(session_path: Path, *, colors: Mapping[str, str] | None = None,
                  system_prompt: str | None = None) -> ShareLinks:
    """Export the session to a temporary ``session.html`` and upload it (callers ``check_gh`` before they ask)."""
    from pi_core.export.html import export_html

    with tempfile.TemporaryDirectory(prefix="pi-share-") as tmp:
        html = export_html(session_path, Path(tmp) / "session.html", colors=colors, system_prompt=system_prompt)
        return upload_gist(html)
