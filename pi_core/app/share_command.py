"""``pi --share SESSION [--yes]``: pi's own addition, the ``/share`` of a session file from a script."""

from __future__ import annotations

import sys
from pathlib import Path

from pi_core.app.args import Args


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
