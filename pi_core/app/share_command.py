"""``pi --export SESSION [OUT]`` (Pi's) and ``pi --share SESSION [--yes]`` (pi's own addition, the ``/share`` of a
session file from a script): no plugin loads for either."""

from __future__ import annotations

import sys
from pathlib import Path

from pi_core.app.args import Args

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pi_core.resources.themes import Theme


def confirm(question: str) -> bool:
    """y/yes on stdin; end of input (a script without --yes) is a no."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer:
        sys.stderr.write("\n")
    return answer.strip().lower() in ("y", "yes")


def run_share(args: Args, cwd: Path, colors: dict[str, str] | None) -> str:
    """The links' text, or a ShareError / SessionError naming what stopped the share."""
    from pi_core.app.settings import Settings
    from pi_core.app.trust import project_trusted
    from pi_core.config_paths import agent_dir
    from pi_core.export import share
    from pi_core.sessions.errors import SessionError

    source = Path(args.share or "").expanduser()
    source = source if source.is_absolute() else cwd / source
    if not source.is_file():
        raise SessionError(f"File not found: {source}")
    settings = Settings.load(cwd, project_trusted=project_trusted(cwd, agent_dir(), approve=args.approve))
    share.check_destination(settings.get("sessionShareDestination"), share.radius_signed_in())
    share.check_gh()
    if not args.yes:
        sys.stderr.write(share.contents_warning(source) + "\n")
        if not confirm("Share this session?"):
            raise share.ShareError("Not shared (pass --yes to share without asking)")
    return share.share_session(source, colors=colors).text()


def export_theme(args: Args, cwd: Path) -> Theme:
    """The page colours of ``--export`` and ``--share``: the ``theme`` setting's theme, as Pi's export uses."""
    from pi_core.app.settings import Settings
    from pi_core.app.trust import project_trusted
    from pi_core.config_paths import agent_dir
    from pi_core.resources.themes import active_theme, setting_theme_paths

    trusted = project_trusted(cwd, agent_dir(), approve=args.approve)  # no plugins load for an export
    settings = Settings.load(cwd, project_trusted=trusted)
    theme, _found, warnings = active_theme(
        cwd, agent_dir(), settings.get("theme"), cli_paths=[Path(p).expanduser() for p in args.themes],
        setting_paths=setting_theme_paths(settings.scope_data("global"), settings.scope_data("project"), agent_dir(), cwd),
        no_themes=args.no_themes, project_trusted=lambda: trusted,
    )
    for warning in warnings:
        sys.stderr.write(f"Warning: {warning}\n")
    return theme


def run_export(args: Args, cwd: Path) -> str:
    """``--export``: the session file as an HTML page (the first message names it, else
    ``pi-session-<stem>.html`` here); the line that says where it went."""
    from pi_core.export.html import export_html

    assert args.export is not None
    out = Path(args.messages[0]) if args.messages else cwd / f"pi-session-{Path(args.export).stem}.html"
    path = export_html(Path(args.export), out, colors=export_theme(args, cwd).export_colors())
    return f"Exported to: {path}"
