"""Session commands of the interactive UI: /session, /clone, /import, /export, /share, /changelog, /hotkeys."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import style

from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_plugins.interactive.commands import CommandUI

CHANGELOG_HEADING = re.compile(r"^## \[?(?P<version>[^\]\s]+)\]?(?P<rest>.*)$")


def cmd_session(ui: CommandUI, args: str) -> None:
    from rich.table import Table
    from rich.text import Text

    from pi_core.control.stats import add_entry_usage, session_totals

    totals = session_totals(ui.session.messages)
    store = ui.session.store
    add_entry_usage(totals, store.get_branch())
    table = Table.grid(padding=(0, 2))
    table.add_column(style=f"bold {style.fg('accent')}", no_wrap=True)
    table.add_column(overflow="fold")  # a long path wraps whole, never cut to "…"
    table.add_row("File", Text(str(store.session_file) if store.session_file else "(not saved)", overflow="fold"))
    table.add_row("ID", str(store.session_id or "-"))
    if store.session_name:
        table.add_row("Name", store.session_name)
    table.add_row("Directory", Text(str(ui.session.config.cwd), overflow="fold"))
    table.add_row("Messages", f"{totals.user_messages} user, {totals.assistant_messages} assistant, "
                              f"{totals.tool_calls} tool calls, {totals.tool_results} tool results")
    table.add_row("Tokens", f"{totals.input:,} in, {totals.output:,} out, {totals.cache_read:,} cache read, "
                            f"{totals.cache_write:,} cache write")
    table.add_row("Cost", f"${totals.cost:.4f}")
    _cache_warming_rows(ui, table)
    ui.show(table)


def _cache_warming_rows(ui: CommandUI, table: Any) -> None:
    from pi_core.llm.cache_warming import format_status

    warmer = ui.session.cache_warmer
    if warmer is None:
        return
    status = warmer.status
    table.add_row("Cache warming", f"{warmer.mode()}: {format_status(status, warmer.clock.now_ms())}")
    decision = status.decision
    if decision is not None and decision.economics_available:
        table.add_row("Cache miss penalty", f"${decision.miss_cost:.3f}")
        table.add_row("Refresh cost", f"${decision.warm_cost:.3f}")


async def cmd_clone(ui: CommandUI, args: str) -> None:
    before = ui.session.store.session_file
    await ui.control.clone()
    ui.redraw_transcript()
    ui.notify(f"Cloned {before} into {ui.session.store.session_file}", "green")


async def cmd_import(ui: CommandUI, args: str) -> None:
    from pi_core.sessions.store import read_header

    if not args.strip():
        ui.notify("Usage: /import <path.jsonl>", "red")
        return
    source = Path(args.strip().strip("'\"")).expanduser()
    source = source if source.is_absolute() else Path(ui.session.config.cwd) / source
    if not source.is_file():
        ui.notify(f"Failed to import session: File not found: {source}", "red")
        return
    if read_header(source) is None:
        ui.notify(f"Failed to import session: {source} is not a session file (no session header)", "red")
        return
    if not await ui.confirm("Import session", f"Replace current session with {source}?"):
        ui.notify("Import cancelled", "yellow")
        return
    store = ui.session.store
    directory = store.session_dir
    if directory is None:
        raise PiError("Sessions are not saved in this run (--no-session): nothing to import into")
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / source.name
    if target.resolve() != source.resolve():
        counter = 1
        while target.exists():
            target = directory / f"{source.stem}-{counter}{source.suffix}"
            counter += 1
        shutil.copyfile(source, target)
    await ui.control.switch_session(str(target))
    ui.redraw_transcript()
    ui.notify(f"Session imported from: {source}", "green")


def cmd_export(ui: CommandUI, args: str) -> None:
    """HTML (the viewer, in the current theme's colours), or the session file itself for a .jsonl path."""
    target = args.strip()
    if target.endswith(".jsonl"):
        source = ui.session.store.session_file
        if source is None or not Path(source).is_file():
            raise PiError("Nothing to export yet - start a conversation first")
        path = Path(target).expanduser()
        path = path if path.is_absolute() else Path(ui.session.config.cwd) / path
        shutil.copyfile(source, path)
        ui.notify(f"Exported to: {path}", "green")
        return
    ui.notify(f"Exported to: {ui.control.export_html(target or None, colors=style.current().export_colors())}",
              "green")


async def cmd_share(ui: Any, args: str) -> None:
    """The viewer page as a private gist (pi_core.export.share), after a confirmation naming its contents."""
    import asyncio
    import tempfile

    from pi_core.export import share

    source = ui.session.store.session_file
    if source is None or not Path(source).is_file():
        raise PiError("Nothing to share yet - start a conversation first")
    settings = ui.session.settings
    share.check_destination(settings.get("sessionShareDestination") if settings is not None else None,
                            share.radius_signed_in())
    await asyncio.to_thread(share.check_gh)
    if not await ui.confirm("Share this session?", share.contents_warning(Path(source))):
        ui.notify("Share cancelled")
        return
    ui.notify("Creating gist...")
    with tempfile.TemporaryDirectory(prefix="pi-share-") as tmp:
        html = ui.control.export_html(str(Path(tmp) / "session.html"), colors=style.current().export_colors())
        links = await asyncio.to_thread(share.upload_gist, Path(html))
    ui.notify(links.text(), "green")


def changelog_path() -> Path | None:
    """pi's own CHANGELOG.md: shipped inside the package, or at the top of the source tree pi runs from."""
    from pi_core.config_paths import docs_root

    candidate = docs_root() / "CHANGELOG.md"
    return candidate if candidate.is_file() else None


def changelog_sections(text: str) -> list[tuple[str, str]]:
    """(version, section text) per ``## version`` heading, newest first as written."""
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        match = CHANGELOG_HEADING.match(line)
        if match:
            sections.append((match.group("version"), [line]))
        elif sections:
            sections[-1][1].append(line)
    return [(version, "\n".join(lines).strip()) for version, lines in sections]


def condensed(section: str) -> str:
    """A section's heading and one line per entry (first line of each bullet, no sub-bullets)."""
    kept = [line for line in section.splitlines() if line.startswith(("## ", "### ", "- ", "* "))]
    return "\n".join(kept)


def render_changelog(sections: list[tuple[str, str]], collapse: bool) -> Any:
    body = "\n\n".join(condensed(text) if collapse else text for _, text in sections)
    return style.markdown(body)


def cmd_changelog(ui: CommandUI, args: str) -> None:
    path = changelog_path()
    if path is None:
        ui.notify("This installation has no CHANGELOG.md", "yellow")
        return
    sections = changelog_sections(path.read_text(encoding="utf-8"))
    if not sections:
        ui.notify(f"{path} lists no versions", "yellow")
        return
    ui.show(render_changelog(sections, ui.setting("collapseChangelog", False) is True))


def new_since(sections: list[tuple[str, str]], last_seen: str | None) -> list[tuple[str, str]]:
    """The sections above ``last_seen`` (all of them when pi never recorded one)."""
    if last_seen is None:
        return sections
    newer = []
    for version, text in sections:
        if version == last_seen:
            break
        newer.append((version, text))
    return newer


def cmd_hotkeys(ui: CommandUI, args: str) -> None:
    from pi_plugins.interactive.keybindings import ACTIONS
    from rich.table import Table

    table = Table.grid(padding=(0, 2))
    table.add_column(style=f"bold {style.fg('accent')}", no_wrap=True)
    table.add_column()
    table.add_column(style=style.fg("dim"))
    for action, _defaults, text in ACTIONS:
        table.add_row(ui.keybindings.labels(action), text, action)
    extras = [("@", "fuzzy-find a file to mention"), ("!cmd / !!cmd", "run a shell command (!! keeps it out of the context)"),
              ("Up / Down", "browse the prompt history")]
    for key, what in extras:
        table.add_row(key, what, "")
    for shortcut in getattr(ui, "shortcuts", []):
        table.add_row(shortcut.key.label(), shortcut.description, shortcut.plugin)
    if ui.keybindings.path is not None:
        table.add_row("", f"Change them in {ui.keybindings.path}", "")
    ui.show(table)
