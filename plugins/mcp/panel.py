"""``/mcp`` in the interactive UI: the list of servers opens at once and redraws as they connect, fail or change;
a server's menu reconnects, disables or enables it (saved as ``/mcp enable|disable`` saves), signs in or out,
lists its tools and shows what it wrote to stderr. Actions run in the background, so the list stays usable while a
server takes its time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_plugins.mcp.config import CLIENT_SOURCE
from pi_plugins.mcp.manager import Server, attention_rank, describe_state, source_of

from pi_core.tui import (
    Container,
    DynamicBorder,
    SelectItem,
    SelectList,
    SelectListTheme,
    Spacer,
    Text,
    key_hint,
)
from pi_core.tui.width import truncate_to_width, visible_width

if TYPE_CHECKING:
    from pi_plugins.mcp.config import Exposure
    from pi_plugins.mcp.manager import McpManager

    from pi_core.extension import ExtensionContext

MAX_VISIBLE_ITEMS = 12
_running: set[asyncio.Task[None]] = set()
EXPOSURE_MEANINGS: dict[Exposure, str] = {
    "codemode": "not declared; called from codemode scripts, found with tool_search",
    "deferred": "declared once tool_search loads them",
    "direct": "declared to the model like a built-in tool",
    "hidden": "registered but unreachable",
}


@dataclass
class Menu:
    """One screen of the manager: ``details`` and ``error`` above the items; ``text`` instead of items."""

    title: str
    items: list[SelectItem] = field(default_factory=list)
    details: str = ""
    error: str = ""
    text: str = ""
    empty: str = "Nothing to show."
    selected: str | None = None
    confirm_label: str = "select"
    cancel_label: str = "back"


def transport_of(server: Server) -> str:
    config = server.entry.config
    return config.url if config.transport == "http" else " ".join([config.command, *config.args])


def servers_menu(manager: McpManager) -> Menu:
    servers = sorted(manager.servers, key=lambda s: (attention_rank(s), s.name))
    return Menu(
        title="MCP servers",
        items=[SelectItem(value=s.name, label=s.name,
                          description=f"{describe_state(s)} · {s.entry.config.exposure} · {source_of(s)}")
               for s in servers],
        error="\n".join(f"config: {error}" for error in manager.config.errors),
        empty=f"No MCP servers configured. Add them to {manager.agent_dir / 'mcp.json'} or .pi/mcp.json.",
        confirm_label="manage", cancel_label="close")


def server_menu(manager: McpManager, name: str) -> Menu:
    server = manager.find(name)
    if server is None:
        return Menu(title=name, empty="This server is no longer configured.")
    entry, connection = server.entry, server.connection
    from_editor = entry.source == CLIENT_SOURCE
    saved = "for this session" if from_editor else f"saved to {entry.edit_path}"
    in_project = (entry.scope == "global" and entry.override is None and not from_editor
                  and manager.config.project_path is not None)
    items: list[SelectItem] = []
    if not server.enabled:
        items.append(SelectItem("enable", "Enable", saved))
        if in_project:
            items.append(SelectItem("enable-project", "Enable in this project", "saved to the project mcp.json"))
    else:
        state = connection.state if connection is not None else "connecting"
        if state == "needs-auth":
            items.append(SelectItem("signin", "Sign in", "opens the browser"))
        if state == "connected" and connection is not None:
            items.append(SelectItem("tools", "Tools", f"{len(connection.tools)} offered"))
        if state in ("failed", "disconnected", "connected", "needs-auth"):
            items.append(SelectItem("reconnect", "Reconnect"))
        if state == "connected" and entry.config.uses_oauth:
            items.append(SelectItem("signout", "Sign out", "deletes the stored credentials"))
        items.append(SelectItem("exposure", "Exposure", entry.config.exposure))
        items.append(SelectItem("disable", "Disable", saved))
        if in_project:
            items.append(SelectItem("disable-project", "Disable in this project", "saved to the project mcp.json"))
    if entry.config.transport == "stdio":
        written = connection.stderr_text if connection is not None else ""
        count = len(written.splitlines())
        items.append(SelectItem("stderr", "Stderr", f"{count} line{'s' if count != 1 else ''}" if written else "empty"))
    details = [transport_of(server), f"{entry.scope}: {entry.source}",
               *([f"project override: {entry.override}"] if entry.override else []),
               f"State: {describe_state(server, with_error=False)}"]
    error = "\n".join(line for line in (server.message, connection.error if connection is not None
                                        and connection.state != "connected" else None) if line)
    return Menu(title=f"MCP server {name}", items=items, details="\n".join(details), error=error,
                selected=items[0].value if items else None)


def tools_menu(server: Server) -> Menu:
    config = server.entry.config
    tools = server.connection.tools if server.connection is not None else []
    items = []
    for tool in tools:
        exposure = config.exposure_of(tool.name)
        first = (tool.description or "").strip().split("\n", 1)[0]
        items.append(SelectItem(tool.name, tool.name, first if exposure == config.exposure else f"[{exposure}] {first}"))
    return Menu(title=f"Tools of {server.name}", items=items, details=f"Exposure {config.exposure}",
                empty="The server offers no tools.", confirm_label="back")


def exposure_menu(server: Server) -> Menu:
    entry = server.entry
    current = entry.config.exposure
    where = "Applies to this session (the editor passed the server)." if entry.source == CLIENT_SOURCE \
        else f"Saved to {entry.edit_path}."
    return Menu(title=f"Exposure of {server.name}", details=where,
                items=[SelectItem(exposure, f"{'✓ ' if exposure == current else '  '}{exposure}", meaning)
                       for exposure, meaning in EXPOSURE_MEANINGS.items()],
                selected=current, confirm_label="save")


def stderr_menu(server: Server) -> Menu:
    written = server.connection.stderr_text if server.connection is not None else ""
    return Menu(title=f"Stderr of {server.name}", details=f"{transport_of(server)} (the last 2000 characters)",
                text=written, empty="The server wrote nothing to stderr.")


class ManagerView:
    """The component ``ctx.ui.custom`` shows: one ``Menu`` at a time, rebuilt whenever a server changes."""

    def __init__(self, tui: Any, theme: Any, keybindings: Any, manager: McpManager) -> None:
        self.tui, self.theme, self.keybindings, self.manager = tui, theme, keybindings, manager
        self.content: Container = self._frame("MCP servers", [Text(theme.fg("muted", "Loading…"), 1, 1)])
        self.target: Any = None
        self.focused = False
        self.task: asyncio.Task[None] | None = None  # what the choices run (``Manager.run``)

    def _frame(self, title: str, body: list[Any], footer: str = "") -> Container:
        accent: Callable[[str], str] = lambda text: self.theme.fg("accent", text)
        frame = Container(DynamicBorder(accent), Text(accent(self.theme.bold(title)), 1, 0), *body)
        if footer:
            frame.add_child(Spacer(1))
            frame.add_child(Text(footer, 1, 0))
        frame.add_child(DynamicBorder(accent))
        return frame

    def _hint(self, action: str, label: str) -> str:
        return key_hint(action, label, self.theme, self.keybindings)

    async def menu(self, build: Callable[[], Menu]) -> str | None:
        """Show ``build()`` until an item is chosen (its value) or the screen is left (None); it is built anew
        whenever a server's state changes, keeping the selected item."""
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        selected: list[str | None] = [None]

        def finish(value: str | None) -> None:
            if not answer.done():
                answer.set_result(value)

        def show() -> None:
            if answer.done():
                return
            menu = build()
            body: list[Any] = []
            if menu.details:
                body.append(Text(self.theme.fg("muted", menu.details), 1, 0))
            if menu.error:
                body.append(Text(self.theme.fg("error", menu.error), 1, 0))
            body.append(Spacer(1))
            if not menu.items:
                body.append(Text(menu.text or self.theme.fg("muted", menu.empty), 1, 0))
                self._show(self._frame(menu.title, body, self._hint("tui.select.cancel", menu.cancel_label)),
                           _CancelOnly(self.keybindings, finish))
                return
            chooser = SelectList(menu.items, min(len(menu.items), MAX_VISIBLE_ITEMS),
                                 SelectListTheme.from_theme(self.theme), keybindings=self.keybindings)
            wanted = selected[0] or menu.selected
            index = next((i for i, item in enumerate(menu.items) if item.value == wanted), 0)
            chooser.set_selected_index(index)
            selected[0] = menu.items[index].value

            def remember(item: SelectItem) -> None:
                selected[0] = item.value

            chooser.on_selection_change = remember
            chooser.on_select = lambda item: finish(item.value)
            chooser.on_cancel = lambda: finish(None)
            body.append(chooser)
            footer = (f"{self._hint('tui.select.confirm', menu.confirm_label)} • "
                      f"{self._hint('tui.select.cancel', menu.cancel_label)}")
            self._show(self._frame(menu.title, body, footer), chooser)

        show()
        self.manager.watchers.add(show)
        try:
            return await answer
        finally:
            self.manager.watchers.discard(show)

    def _show(self, content: Container, target: Any) -> None:
        self.content, self.target = content, target
        self.tui.request_render()

    def handle_input(self, data: str) -> None:
        if self.target is not None:
            self.target.handle_input(data)
        self.tui.request_render()

    def render(self, width: int) -> list[str]:
        return [line if visible_width(line) <= width else truncate_to_width(line, width, "")
                for line in self.content.render(width)]

    def invalidate(self) -> None:
        self.content.invalidate()


class _CancelOnly:
    """The keys of a screen without items: only leaving it."""

    def __init__(self, keybindings: Any, finish: Callable[[str | None], None]) -> None:
        self.keybindings, self.finish = keybindings, finish

    def handle_input(self, data: str) -> None:
        if self.keybindings.matches(data, "tui.select.cancel"):
            self.finish(None)


class Manager:
    """What the view's choices do: the manager's own operations, run in the background."""

    def __init__(self, ctx: ExtensionContext, manager: McpManager, view: ManagerView) -> None:
        self.ctx, self.manager, self.view = ctx, manager, view

    async def run(self) -> None:
        while True:
            name = await self.view.menu(lambda: servers_menu(self.manager))
            if name is None:
                return
            while True:
                action = await self.view.menu(lambda: server_menu(self.manager, name))  # noqa: B023
                server = self.manager.find(name)
                if action is None or server is None:
                    break
                await self.act(server, action)

    async def act(self, server: Server, action: str) -> None:
        server.message = None
        if action == "tools":
            await self.view.menu(lambda: tools_menu(server))
        elif action == "stderr":
            await self.view.menu(lambda: stderr_menu(server))
        elif action == "exposure":
            chosen = await self.view.menu(lambda: exposure_menu(server))
            if chosen is not None and chosen != server.entry.config.exposure:
                self.background(server, self.manager.set_exposure(server, chosen))  # type: ignore[arg-type]
        elif action == "reconnect":
            self.background(server, self.manager.reconnect(server))
        elif action in ("enable", "disable", "enable-project", "disable-project"):
            self.background(server, self.manager.set_enabled(server, action.startswith("enable"),
                                                             in_project=action.endswith("-project")))
        elif action == "signin":
            from pi_plugins.mcp.signin import login

            self.background(server, login(self.ctx, self.manager, server))
        elif action == "signout":
            from pi_plugins.mcp.oauth import sign_out

            sign_out(server.entry, self.manager.agent_dir)
            if server.connection is not None:
                self.background(server, server.connection.signed_out())
        self.manager.changed()

    def background(self, server: Server, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` while the list stays usable; a failure is shown on the server's screen."""

        async def run() -> None:
            try:
                await work
            except Exception as err:  # noqa: BLE001 - shown on the server's screen, the session goes on
                server.message = str(err)
            self.manager.ensure_discovery_active()
            self.manager.changed()

        task = asyncio.get_running_loop().create_task(run())
        _running.add(task)  # held until done: they outlive the panel (a reconnect goes on after it closes)
        task.add_done_callback(_running.discard)


async def show_manager(ctx: ExtensionContext, manager: McpManager) -> None:
    """Open the manager in place of the editor until it is closed (Escape on the server list)."""

    def build(tui: Any, theme: Any, keybindings: Any, done: Callable[[Any], None]) -> ManagerView:
        view = ManagerView(tui, theme, keybindings, manager)

        async def manage() -> None:
            try:
                await Manager(ctx, manager, view).run()
            except Exception as err:  # noqa: BLE001 - named to the user, the panel closes
                ctx.ui.notify(str(err) or type(err).__name__, "error")
            done(None)

        view.task = asyncio.get_running_loop().create_task(manage())
        return view

    await ctx.ui.custom(build)
