"""Theme colours and files in Pi's format: conversions checked against Pi 1.6.0, validation, discovery, choice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_core.resources.colors import ColorError, parse_color, xterm_to_rgb
from pi_core.resources.themes import (
    REQUIRED_COLORS,
    ThemeError,
    active_theme,
    builtin_themes,
    choose_theme,
    discover_themes,
    load_theme_file,
    parse_theme,
    setting_theme_paths,
    terminal_appearance,
)

# Computed by Pi 1.6.0's own parseColor/colorToHex (pi-tui colors.js).
PI_CONVERSIONS = [
    ("okhsl(234 3% 89%)", "#dee0e1"), ("okhsl(295 50% 67%)", "#a798d7"), ("okhsl(20 72% 67%)", "#ea7f81"),
    ("okhsl(83 88% 67%)", "#cd9a22"), ("okhsl(233 41% 24%)", "#213b49"), ("okhsl(20 99% 63%)", "#fe5462"),
    ("okhsl(159 64% 65%)", "#5eb286"), ("okhsl(0 100% 50%)", "#d70071"), ("okhsl(120 100% 90%)", "#d1f600"),
    ("okhsl(264 13% 19%)", "#282c34"), ("okhsl(250 60% 55%)", "#4e88c2"), ("oklch(62% 0.1 200)", "#1c989e"),
    ("oklch(0.7 0.4 30)", "#ff6551"), ("oklch(95% 0.3 140)", "#cdffc2"), ("oklch(20% 0.2 300)", "#1f003e"),
    ("#0af", "#00aaff"), ("#A0B1C2", "#a0b1c2"),
]


@pytest.mark.parametrize(("value", "expected"), PI_CONVERSIONS)
def test_colour_forms_convert_like_pi(value: str, expected: str) -> None:
    assert parse_color(value).hex == expected


@pytest.mark.parametrize(("index", "expected"), [(1, "#800000"), (39, "#00afff"), (200, "#ff00d7"), (250, "#bcbcbc")])
def test_256_colour_indexes(index: int, expected: str) -> None:
    assert xterm_to_rgb(index).hex == expected


@pytest.mark.parametrize("bad", ["#12", "rgb(1,2,3)", "okhsl(1 2)", "oklch(a b c)", "blue"])
def test_bad_colours_are_named(bad: str) -> None:
    with pytest.raises(ColorError, match="colour|three values|not a number"):
        parse_color(bad)


def theme_data(name: str = "mine", **overrides: Any) -> dict[str, Any]:
    colors: dict[str, Any] = {role: "base" for role in REQUIRED_COLORS}
    colors.update(accent="#ff0000", userMessageBg=236, text="")
    data: dict[str, Any] = {"$schema": "https://pi.dev/schemas/theme.schema.json", "name": name,
                            "vars": {"base": "okhsl(250 60% 55%)"}, "colors": colors}
    data.update(overrides)
    return data


def test_a_theme_resolves_variables_indexes_defaults_and_fallbacks() -> None:
    theme = parse_theme(theme_data(), "mine.json")
    assert theme.color("accent") == "#ff0000" and theme.color("border") == "#4e88c2"
    assert theme.color("userMessageBg") == "#303030" and theme.color("text") == ""
    assert theme.color("thinkingMax") == theme.color("thinkingXhigh") and theme.color("searchMatchBg") == theme.color("selectedBg")
    assert theme.appearance == "dark"  # from the dark user-message background
    css = theme.export_colors()
    assert css["text"] == "#e5e5e5"  # the terminal default made concrete for HTML
    assert css["exportCardBg"] == "#292929" and css["exportPageBg"] == "#222222"  # derived from userMessageBg


@pytest.mark.parametrize(("change", "message"), [
    ({"name": "a/b"}, 'contains "/"'),
    ({"name": "system"}, "reserved"),
    ({"extra": 1}, "unknown top-level field"),
    ({"appearance": "dim"}, '"appearance" must be'),
    ({"vars": {"base": "nope"}}, "unknown variable 'nope'"),
    ({"vars": {"base": "loop", "loop": "base"}}, "circular variable reference"),
    ({"export": {"pageBg": "#000", "other": "#fff"}}, "unknown export field"),
])
def test_invalid_themes_say_what_is_wrong(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ThemeError, match=message):
        parse_theme(theme_data(**change), "bad.json")


def test_missing_and_unknown_colours() -> None:
    data = theme_data()
    del data["colors"]["accent"]
    data["colors"]["sparkle"] = "#fff"
    with pytest.raises(ThemeError, match="missing colour.*accent"):
        parse_theme(data, "bad.json")
    data["colors"]["accent"] = "#fff"
    with pytest.raises(ThemeError, match="unknown colour.*sparkle"):
        parse_theme(data, "bad.json")


def test_builtin_themes_are_valid_and_opposite() -> None:
    themes = builtin_themes()
    assert themes["dark"].appearance == "dark" and themes["light"].appearance == "light"
    assert set(themes["dark"].colors) == set(themes["light"].colors)


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_discovery_order_collisions_trust_and_no_themes(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    write(agent / "themes" / "user.json", theme_data("user"))
    write(agent / "themes" / "broken.json", "{not json")
    write(agent / "themes" / "dark.json", theme_data("dark"))
    write(cwd / ".pi" / "themes" / "proj.json", theme_data("proj"))
    write(cwd / ".pi" / "themes" / "user.json", theme_data("user", colors={**theme_data()["colors"], "accent": "#00ff00"}))
    cli = write(tmp_path / "cli.json", theme_data("cli"))
    asked: list[bool] = []

    def trusted() -> bool:
        asked.append(True)
        return True

    found = discover_themes(agent, cwd, cli_paths=[cli], project_trusted=trusted)
    assert {"dark", "light", "user", "proj", "cli"} <= set(found.themes) and asked == [True]
    assert found.themes["user"].color("accent") == "#00ff00"  # the project's copy came first
    assert found.themes["dark"].path is None  # a built-in name cannot be taken
    assert any("Failed to parse theme" in d and "broken.json" in d for d in found.diagnostics)
    assert any('"dark"' in d and "taken by built-in" in d for d in found.diagnostics)
    assert found.names()[0] == "system"

    untrusted = discover_themes(agent, cwd, project_trusted=lambda: False)
    assert "proj" not in untrusted.themes and untrusted.themes["user"].color("accent") == "#ff0000"
    bare = discover_themes(agent, cwd, cli_paths=[cli], no_themes=True, project_trusted=trusted)
    assert set(bare.themes) == {"dark", "light", "cli"}


def test_settings_paths_resolve_from_their_own_scope(tmp_path: Path) -> None:
    paths = setting_theme_paths({"themes": ["mine", "/abs/t.json"]}, {"themes": ["local.json"]}, tmp_path / "agent",
                                tmp_path / "p")
    assert paths == [tmp_path / "p" / ".pi" / "local.json", tmp_path / "agent" / "mine", Path("/abs/t.json")]


def test_choosing_pairs_system_and_unknown_names(tmp_path: Path) -> None:
    found = discover_themes(tmp_path, tmp_path, project_trusted=lambda: False)
    assert choose_theme("light/dark", found, "light")[0].name == "light"
    assert choose_theme("light/dark", found, "dark")[0].name == "dark"
    assert choose_theme(None, found, "light")[0].name == "light"  # "system" follows the terminal
    theme, warning = choose_theme("nope", found, "dark")
    assert theme.name == "dark" and warning and 'Theme "nope" not found' in warning
    assert terminal_appearance({"COLORFGBG": "0;15"}) == "light" and terminal_appearance({}) == "dark"
    write(tmp_path / "themes" / "mine.json", theme_data("mine"))
    theme, _found, warnings = active_theme(tmp_path, tmp_path, "light", use_theme="mine", project_trusted=lambda: False)
    assert theme.name == "mine" and warnings == []


def test_a_file_error_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ThemeError, match="Cannot read theme"):
        load_theme_file(tmp_path / "none.json")
