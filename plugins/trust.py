"""trust: the ``/trust`` command, which saves the project-trust decision for future pi runs in the folder."""

from __future__ import annotations

from pi_core import SlashCommand
from pi_core.app.trust import (
    SavedDecision,
    TrustOption,
    TrustStore,
    TrustStoreError,
    canonical,
    trust_options,
)
from pi_core.config_paths import agent_dir
from pi_core.extension import ExtensionContext
from pi_core.hookspecs import hookimpl


def describe(saved: SavedDecision | None, here: str) -> str:
    if saved is None:
        return "none"
    label = "trusted" if saved.trusted else "untrusted"
    return f"{label} (inherited from {saved.path})" if saved.path != here else f"{label} ({saved.path})"


def _is_saved(option: TrustOption, saved: SavedDecision | None) -> bool:
    return saved is not None and option.saved_path == saved.path and option.trusted == saved.trusted


async def trust_command(args: str, ctx: ExtensionContext) -> None:
    store = TrustStore(agent_dir())
    here = canonical(ctx.cwd)
    try:
        saved = store.saved(here)
    except TrustStoreError as err:
        ctx.ui.notify(str(err), "error")
        return
    options = trust_options(ctx.cwd, session_only=False)
    labels = [("✓ " if _is_saved(option, saved) else "") + option.label for option in options]
    title = (f"Project trust\n{here}\n\nSaved decision: {describe(saved, here)}\n"
             f"Current session: {'trusted' if ctx.is_project_trusted() else 'untrusted'}")
    chosen = await ctx.ui.select(title, labels)
    if chosen not in labels:
        return
    option = options[labels.index(chosen)]
    try:
        store.save(option.updates)
    except TrustStoreError as err:
        ctx.ui.notify(str(err), "error")
        return
    ctx.ui.notify(f"Saved trust decision: {'trusted' if option.trusted else 'untrusted'}. "
                  "Restart pi for this to take effect.", "info")


COMMAND = SlashCommand("trust", "Save project trust decision for future sessions", trust_command)


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [COMMAND]
