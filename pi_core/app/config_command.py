"""``pi config [-l]``: turn installed plugins on and off, as Pi 1.6.0's ``pi config`` does for package resources.

pi's packages are Python distributions of plugins, so the resources are the plugins pi would discover:
its built-ins, installed packs, the opt-in plugins (group ``pi.optional``) and the extension files in the
agent dir and ``.pi/extensions``. A plugin is switched off by the ``disabledPlugins`` setting of the scope
shown (global ``settings.toml`` or, with ``-l`` / Tab, the project's), an opt-in one on by the global
``enabledPlugins``. Each toggle is saved at once; it takes effect the next time pi starts.

On a terminal a list to move through (type to filter, Space toggles, Tab switches scope, Esc closes);
otherwise the same list is printed once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_core.app.settings import Settings

Scope = Literal["global", "project"]
GROUPS = ("Built-in", "Installed", "Opt-in", "Extension files")
HINTS = "tab switch scope · space toggle · type to filter · esc close"


class Item:
    """One plugin as ``pi config`` lists it."""

    __slots__ = ("group", "locked", "name", "on", "source")

    def __init__(self, group: str, name: str, source: str, on: bool, locked: str | None = None) -> None:
        self.group, self.name, self.source, self.on = group, name, source, on
        self.locked = locked  # why it cannot be toggled in this scope, or None


class ResourceConfig:
    """The plugins and their state in one scope; ``toggle`` saves the change to that scope's settings."""

    def __init__(self, cwd: Path, *, approve: bool | None = None, scope: Scope = "global") -> None:
        from pi_core.app.settings import Settings
        from pi_core.app.trust import saved_trust
        from pi_core.config_paths import agent_dir

        self.cwd, self.agent_dir = cwd, agent_dir()
        self.trusted = saved_trust(cwd, self.agent_dir, approve=approve)
        self.settings: Settings = Settings.load(cwd, self.agent_dir, project_trusted=self.trusted)
        self.scope: Scope = "global"
        self.switch(scope)

    def switch(self, scope: Scope) -> None:
        if scope == "project" and not self.trusted:
            raise PiError(f"The project {self.cwd} is not trusted, so pi config -l cannot read or change "
                          ".pi/settings.toml. Run pi config -l --approve (-a) to trust it for this command.")
        self.scope = scope

    def settings_path(self) -> Path:
        base = self.agent_dir if self.scope == "global" else self.cwd / ".pi"
        toml, json = base / "settings.toml", base / "settings.json"
        return json if json.exists() and not toml.exists() else toml

    def _list(self, scope: Scope, key: str) -> list[str]:
        data = self.settings.scope_data(scope)
        names = [*data.get(key, []), *data.get(key.replace("Plugins", "_plugins"), [])]
        return [n for n in names if isinstance(n, str)]

    def items(self) -> list[Item]:
        from pi_core.loader import discovery

        global_off = set(self._list("global", "disabledPlugins"))
        here_off = set(self._list(self.scope, "disabledPlugins"))
        enabled = set(self._list("global", "enabledPlugins"))

        def state(group: str, name: str, source: str) -> Item:
            if self.scope == "project" and name in global_off:
                return Item(group, name, source, False, "off in the global settings")
            return Item(group, name, source, name not in here_off)

        groups = discovery.discover_groups(("pi", discovery.OPTIONAL_GROUP))
        found: list[Item] = []
        for name, eps in sorted(groups["pi"].items()):
            ep = discovery.chosen_entry_point(eps)
            builtin = discovery.is_builtin(ep)
            found.append(state("Built-in" if builtin else "Installed", name, "" if builtin else discovery.dist_label(ep)))
        for name, eps in sorted(groups[discovery.OPTIONAL_GROUP].items()):
            locked = None if self.scope == "global" else "opt-in plugins are enabled in the global settings"
            found.append(Item("Opt-in", name, discovery.dist_label(eps[0]), name in enabled, locked))
        folders = [self.agent_dir / "extensions"] + ([self.cwd / ".pi" / "extensions"] if self.trusted else [])
        for folder in folders:
            for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
                found.append(state("Extension files", path.stem, _home(path)))
        return found

    def toggle(self, item: Item) -> None:
        """Flip ``item`` in this scope and save it (the key pi reads, in the file ``settings_path`` names)."""
        if item.locked:
            raise PiError(f"{item.name}: {item.locked}")
        if item.group == "Opt-in":
            key, names = "enabledPlugins", self._list("global", "enabledPlugins")
            wanted = not item.on
        else:
            key, names = "disabledPlugins", self._list(self.scope, "disabledPlugins")
            wanted = item.on  # listed means off
        names = [n for n in dict.fromkeys(names) if n != item.name] + ([item.name] if wanted else [])
        scope: Scope = "global" if item.group == "Opt-in" else self.scope
        if key == "disabledPlugins" and "disabled_plugins" in self.settings.scope_data(scope):
            self.settings.set("disabled_plugins", None, scope)  # the old spelling folds into the new one
        self.settings.set(key, names, scope)
        item.on = not item.on


def _home(path: Path) -> str:
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


def listing(items: list[Item], *, cursor: int | None = None) -> list[tuple[int | None, str]]:
    """The list as lines, each with the index of its item (None for a group heading)."""
    lines: list[tuple[int | None, str]] = []
    for group in GROUPS:
        members = [(i, item) for i, item in enumerate(items) if item.group == group]
        if not members:
            continue
        lines.append((None, f"  {group}"))
        for index, item in members:
            mark = "[-]" if item.locked and not item.on else "[x]" if item.on else "[ ]"
            note = f"  ({item.locked})" if item.locked else f"  {item.source}" if item.source else ""
            pointer = ">" if index == cursor else " "
            lines.append((index, f"{pointer}   {mark} {item.name}{note}"))
    return lines


def title(config: ResourceConfig) -> str:
    return f"{'Global' if config.scope == 'global' else 'Project'} plugins"


def print_list(config: ResourceConfig) -> None:
    """What ``pi config`` shows without a terminal (config_tui.browse is the terminal's list)."""
    print(f"{title(config)}: {_home(config.settings_path())}")
    print("\n".join(text for _index, text in listing(config.items())))
    print("Run pi config in a terminal to switch plugins on or off (or edit disabledPlugins in the file above).")
