"""Issue 15: no ``ctx.ui`` method is a no-op in interactive mode.

``pi_core.ui.UI`` is the no-UI behaviour (defaults only); the interactive UI must implement every one of its
methods itself, so a method added to the contract without an interactive implementation fails here.
"""

from __future__ import annotations

import inspect

from pi_plugins.interactive.ext_ui import InteractiveUI

from pi_core.ui import UI


def contract_methods() -> list[str]:
    return [name for name, member in vars(UI).items()
            if not name.startswith("_") and inspect.isfunction(member)]


def test_the_contract_has_the_dialogs_chrome_editor_and_themes() -> None:
    names = set(contract_methods())
    assert {"select", "confirm", "input", "editor", "custom", "notify", "set_widget", "set_footer",
            "set_editor_component", "set_theme"} <= names


def test_the_interactive_ui_implements_every_method_of_the_contract() -> None:
    inherited = [name for name in contract_methods()
                 if getattr(InteractiveUI, name) is getattr(UI, name)]
    assert inherited == [], f"no-ops in interactive mode: {inherited}"
    assert InteractiveUI.has_ui is True
