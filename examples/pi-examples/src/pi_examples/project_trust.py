"""project_trust: decide whether a project is trusted with a menu of your own, before pi's built-in prompt.

pi asks ``pi_project_trust`` of user-level and ``-e`` plugins when a folder has protected resources (its
``.pi`` extensions, settings, skills, ...). This plugin says it was asked, then, where the mode can ask
(interactive), offers five answers; without a UI, or for "Let built-in prompt decide", it returns None and
the decision falls through to the saved one, ``defaultProjectTrust`` or pi's own prompt.
"""

from __future__ import annotations

from pi_core import ProjectTrust, ProjectTrustContext, hookimpl
from pi_core.extension import ExtensionContext

load_count = 0  # module state: how many times this process imported the plugin

TRUST_REMEMBER = "Trust and remember"
TRUST_WITH_NOTE = "Trust with note and remember"
TRUST_SESSION = "Trust this session"
DISTRUST_SESSION = "Do not trust this session"
BUILT_IN = "Let built-in prompt decide"
CHOICES = [TRUST_REMEMBER, TRUST_WITH_NOTE, TRUST_SESSION, DISTRUST_SESSION, BUILT_IN]

load_count += 1


@hookimpl
async def pi_project_trust(ctx: ProjectTrustContext) -> ProjectTrust | None:
    ctx.ui.notify(f"project_trust fired for {ctx.cwd} (mode: {ctx.mode}, load: {load_count})", "info")
    if not ctx.has_ui:
        return None
    choice = await ctx.ui.select(f"Project trust for:\n{ctx.cwd}", CHOICES)
    if choice == TRUST_WITH_NOTE:
        note = await ctx.ui.input("Project trust note", "Optional note for this demo")
        ctx.ui.notify(f"Recorded demo note: {note}" if note else "No demo note entered", "info")
        return ProjectTrust(trusted=True, remember=True)
    if choice == TRUST_REMEMBER:
        return ProjectTrust(trusted=True, remember=True)
    if choice == TRUST_SESSION:
        return ProjectTrust(trusted=True)
    if choice == DISTRUST_SESSION:
        return ProjectTrust(trusted=False)
    return None  # "Let built-in prompt decide", or the menu was closed


@hookimpl
def pi_session_start(ctx: ExtensionContext) -> None:
    ctx.ui.notify(f"project-trust example loaded after trust resolution in {ctx.cwd}", "info")
