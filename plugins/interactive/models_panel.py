"""/scoped-models: which models Ctrl+P cycles through, in which order; Ctrl+S saves them as ``enabledModels``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import panel, style
from pi_plugins.interactive.panel import Done, PanelKey

from pi_core.tui.fuzzy import fuzzy_filter

if TYPE_CHECKING:
    from pi_plugins.interactive.commands import CommandUI


def model_key(model: Any) -> str:
    return f"{model.provider}/{model.id}"


class ScopedModelsPanel(panel.SearchCursor):
    title = "Scoped models"

    def __init__(self, app: CommandUI) -> None:
        self.app = app
        self.models = list(app.control.available_models())
        scoped = app.session.config.scoped_models
        self.enabled: list[str] = [model_key(s.model) for s in scoped]  # in cycle order
        self.message = ""

    def visible(self) -> list[Any]:
        # enabled models first, in cycle order, then the rest
        order = {key: i for i, key in enumerate(self.enabled)}
        ranked = sorted(self.models, key=lambda m: (order.get(model_key(m), len(order)), model_key(m)))
        return fuzzy_filter(self.query, ranked, key=lambda m: f"{model_key(m)} {m.name}") if self.query else ranked

    def _toggle(self, keys: list[str], on: bool | None = None) -> None:
        for key in keys:
            if key in self.enabled and on is not True:
                self.enabled.remove(key)
            elif key not in self.enabled and on is not False:
                self.enabled.append(key)

    def handle(self, key: PanelKey) -> Done | None:
        shown = self.visible()
        current = shown[self.index] if shown else None
        self.message = ""
        if key.is_("tui.select.cancel"):
            return self.clear_or_close()
        if key.is_("tui.select.confirm"):
            return Done(list(self.enabled))
        if key.is_("app.models.save"):
            self.save()
        elif key.is_("app.models.enableAll"):
            self._toggle([model_key(m) for m in shown], True)
        elif key.is_("app.models.clearAll"):
            self._toggle([model_key(m) for m in shown], False)
        elif key.is_("app.models.toggleProvider") and current is not None:
            same = [model_key(m) for m in self.models if m.provider == current.provider]
            self._toggle(same, not all(k in self.enabled for k in same))
        elif key.is_("app.models.reorderUp", "app.models.reorderDown") and current is not None:
            name = model_key(current)
            if name in self.enabled:
                at = self.enabled.index(name)
                to = at - 1 if key.is_("app.models.reorderUp") else at + 1
                if 0 <= to < len(self.enabled):
                    self.enabled[at], self.enabled[to] = self.enabled[to], self.enabled[at]
                    self.index = max(0, min(len(shown) - 1, self.index + (to - at)))
        elif key.text == " " and current is not None:
            self._toggle([model_key(current)])
        else:
            self.move_or_type(key, len(shown))
        return None

    def save(self) -> None:
        settings = self.app.session.settings
        if settings is None:
            self.message = "No settings file in this run"
            return
        settings.set("enabledModels", list(self.enabled) or None, "global")
        self.message = f"Saved enabledModels ({len(self.enabled)} models)" if self.enabled else "Cleared enabledModels"

    def lines(self, width: int) -> list[tuple[str, str]]:
        muted, accent = style.pt("muted"), style.pt("accent")
        frags: list[tuple[str, str]] = [("bold", "Scoped models"), (muted, "  (the models Ctrl+P cycles through)\n"),
                                        *panel.query_line(self.query)]
        shown = self.visible()
        height = max(3, self.app.screen_rows() - 14)
        for position in panel.visible_window(self.index, len(shown), height):
            model = shown[position]
            name = model_key(model)
            selected = position == self.index
            mark = f"[{self.enabled.index(name) + 1}]" if name in self.enabled else "[ ]"
            frags.append((f"bold {accent}" if selected else "", f"{'› ' if selected else '  '}{mark} {name}"[:width]))
            frags.append((muted, f"  {model.name}"[: max(0, width - len(name) - 8)] + "\n"))
        if not self.enabled:
            frags.append((muted, "  none enabled: Ctrl+P cycles through every available model\n"))
        frags.extend(panel.notices(self.message))
        frags.append((muted, "space toggle · ctrl+a all · ctrl+x none · ctrl+p provider · alt+↑↓ order · ctrl+s save"
                             + " · enter apply · esc cancel"))
        return frags


async def cmd_scoped_models(ui: CommandUI, args: str) -> None:
    from pi_core.types import ScopedModel

    enabled = await ui.open_panel(ScopedModelsPanel(ui))
    if enabled is None:
        return
    by_key = {model_key(m): m for m in ui.control.available_models()}
    scoped = ui.session.config.scoped_models
    scoped[:] = [ScopedModel(by_key[key]) for key in enabled if key in by_key]
    ui.notify(f"Cycling through {len(scoped)} models: {', '.join(enabled)}" if scoped
              else "Cycling through every available model", "green")
