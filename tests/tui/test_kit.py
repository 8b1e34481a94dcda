"""pi_core.tui, the component kit plugins import: driven through render(width) and handle_input(data)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from pi_core.tui import (
    CURSOR_MARKER,
    BorderedLoader,
    Box,
    CancellableLoader,
    Container,
    DynamicBorder,
    Input,
    Keybindings,
    Loader,
    Markdown,
    SelectItem,
    SelectList,
    SettingItem,
    SettingsList,
    Spacer,
    Text,
    TruncatedText,
    key_id,
    matches_key,
    strip_ansi,
    truncate_to_width,
    visible_width,
    wrap_ansi,
)
from pi_core.ui import WorkingIndicator

UP, DOWN, ENTER, ESC, PGDN = "\x1b[A", "\x1b[B", "\r", "\x1b", "\x1b[6~"
LEFT, RIGHT, BACKSPACE = "\x1b[D", "\x1b[C", "\x7f"


class Theme:
    """Colours each role with its own SGR code, as a real theme would."""

    def fg(self, role: str, text: str) -> str:
        return f"\x1b[3{len(role) % 8}m{text}\x1b[39m"

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[22m"


def plain(lines: list[str]) -> list[str]:
    return [strip_ansi(line) for line in lines]


def assert_fits(lines: list[str], width: int) -> None:
    for line in lines:
        assert visible_width(line) <= width, (line, visible_width(line), width)


# --- width helpers ------------------------------------------------------------------------------------

def test_visible_width_counts_cells_not_characters() -> None:
    assert visible_width("abc") == 3
    assert visible_width("\x1b[31mabc\x1b[0m") == 3
    assert visible_width("日本語") == 6
    assert visible_width("🧪 ok") == 5
    assert visible_width("e\u0301") == 1  # e + combining acute
    assert visible_width(CURSOR_MARKER + "x") == 1
    assert visible_width("\x1b]8;;https://x.org\x07link\x1b]8;;\x07") == 4


def test_truncate_keeps_colour_and_never_splits_a_wide_cell() -> None:
    cut = truncate_to_width("\x1b[31mhello world\x1b[0m", 8)
    assert strip_ansi(cut) == "hello w…" and cut.startswith("\x1b[31m") and visible_width(cut) == 8
    assert visible_width(truncate_to_width("日本語テキスト", 5)) <= 5
    assert strip_ansi(truncate_to_width("日本語テキスト", 5)) == "日本…"
    assert truncate_to_width("short", 10) == "short"
    assert truncate_to_width("short", 8, pad=True) == "short   "
    assert truncate_to_width("abcdef", 4, "") == "abcd"


def test_wrap_ansi_wraps_words_and_carries_colour_to_the_next_line() -> None:
    lines = wrap_ansi("\x1b[32mone two three four\x1b[0m five", 9)
    assert plain(lines) == ["one two", "three", "four five"]
    assert lines[1].startswith("\x1b[32m")  # the colour still open at the end of line 1 goes on
    assert_fits(lines, 9)
    assert wrap_ansi("a\n\nb", 5) == ["a", "", "b"]
    assert_fits(wrap_ansi("x" * 25, 10), 10)


# --- keys ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("data", "name"), [
    ("\x1b[A", "up"), ("\x1bOB", "down"), ("\r", "enter"), ("\x1b", "escape"), ("\x03", "ctrl+c"),
    ("\t", "tab"), ("\x1b[Z", "shift+tab"), ("\x7f", "backspace"), ("\x1b[3~", "delete"), ("\x1b[5~", "pageUp"),
    ("\x1b[1;5C", "ctrl+right"), ("\x1bb", "alt+b"), ("\x1b[117;6u", "ctrl+shift+u"), ("\x1b[13;2u", "shift+enter"),
    ("\x1b[27;2;13~", "shift+enter"), ("a", "a"), ("A", "shift+a"), (" ", "space"), ("\x1b[1;3A", "alt+up"),
])
def test_key_names_from_terminal_data(data: str, name: str) -> None:
    assert key_id(data) == name
    assert matches_key(data, name)


def test_matches_key_rejects_other_keys_and_text() -> None:
    assert matches_key("A", "A") and matches_key("A", "shift+a") and not matches_key("a", "shift+a")
    assert not matches_key("\x1b[B", "up") and not matches_key("hello", "h") and not matches_key("\x03", "ctrl+d")
    assert matches_key("\x1b[117;6u", "shift+ctrl+u")  # modifiers in any order
    assert not matches_key("\x1b[A", "nonsense+key")


def test_keybindings_use_pi_defaults_and_accept_overrides() -> None:
    kb = Keybindings()
    assert kb.matches("\x03", "tui.select.cancel") and kb.matches(ESC, "tui.select.cancel")
    custom = Keybindings({"tui.select.down": ["ctrl+n", "down"]})
    assert custom.matches("\x0e", "tui.select.down") and not kb.matches("\x0e", "tui.select.down")
    assert not kb.matches(ENTER, "no.such.action")


# --- layout ---------------------------------------------------------------------------------------------

def test_text_wraps_pads_and_fills_every_line() -> None:
    text = Text("hello wide world", padding_x=1, padding_y=1)
    lines = text.render(10)
    assert plain(lines) == [" " * 10, " hello    ", " wide     ", " world    ", " " * 10]
    assert all(visible_width(line) == 10 for line in lines)
    assert text.render(10) is lines  # cached until the text or the width changes
    text.set_text("other")
    assert plain(text.render(10))[1] == " other    "
    assert Text("   ").render(10) == []


def test_containers_stack_children_and_cut_wide_lines() -> None:
    class Wide:
        def render(self, width: int) -> list[str]:
            return ["x" * (width + 20)]

    box = Box(padding_x=2, padding_y=1)
    box.add_child(Text("hi", 0, 0))
    box.add_child(Wide())
    lines = box.render(12)
    assert plain(lines)[1] == "  hi        " and len(lines) == 4
    assert_fits(lines, 12)
    column = Container(DynamicBorder(), Spacer(2), TruncatedText("a long line of text"))
    assert plain(column.render(8)) == ["─" * 8, "", "", "a long …"]
    assert Box().render(10) == []  # no children: nothing drawn


# --- SelectList -----------------------------------------------------------------------------------------

def items(n: int) -> list[SelectItem]:
    return [SelectItem(f"item{i}", f"Item {i}", f"description {i}") for i in range(n)]


def test_select_list_moves_wraps_and_selects() -> None:
    chosen: list[str] = []
    cancelled: list[bool] = []
    select = SelectList(items(3), 5)
    select.on_select = lambda item: chosen.append(item.value)
    select.on_cancel = lambda: cancelled.append(True)
    assert plain(select.render(30))[0].startswith("→ Item 0")
    select.handle_input(UP)  # wraps to the bottom
    assert plain(select.render(30))[2].startswith("→ Item 2")
    select.handle_input(DOWN)
    select.handle_input(DOWN)
    select.handle_input(ENTER)
    select.handle_input("\x03")
    assert chosen == ["item1"] and cancelled == [True]


def test_select_list_scrolls_with_a_position_line_and_descriptions() -> None:
    select = SelectList(items(20), 5, theme=None)
    for _ in range(9):
        select.handle_input(DOWN)
    lines = plain(select.render(60))
    assert lines[-1].strip() == "(10/20)" and len(lines) == 6
    assert any(line.startswith("→ Item 9") and "description 9" in line for line in lines)
    select.handle_input(PGDN)
    assert plain(select.render(60))[-1].strip() == "(15/20)"
    assert_fits(select.render(12), 12)


def test_select_list_filters() -> None:
    select = SelectList([SelectItem("alpha"), SelectItem("beta"), SelectItem("alps")], 5)
    select.set_filter("al")
    assert [line.strip(" →") for line in plain(select.render(20))] == ["alpha", "alps"]
    select.set_filter("zz")
    assert plain(select.render(30)) == ["  No matching commands"]
    fuzzy = SelectList([SelectItem("read-file"), SelectItem("write"), SelectItem("remove")], 5, fuzzy=True)
    fuzzy.set_filter("rf")
    assert fuzzy.selected_item() == SelectItem("read-file")


# --- SettingsList ---------------------------------------------------------------------------------------

def test_settings_list_cycles_values_and_reports_changes() -> None:
    changes: list[tuple[str, str]] = []
    closed: list[bool] = []
    settings = [SettingItem("bash", "bash", "enabled", ["enabled", "disabled"], description="Run shell commands"),
                SettingItem("read", "read", "enabled", ["enabled", "disabled"])]
    panel = SettingsList(settings, 10, None, lambda i, v: changes.append((i, v)), lambda: closed.append(True))
    lines = plain(panel.render(40))
    assert lines[0] == "→ bash  enabled" and lines[1] == "  read  enabled"
    assert "  Run shell commands" in lines and lines[-1] == "  Enter/Space to change · Esc to cancel"
    panel.handle_input(ENTER)
    panel.handle_input(DOWN)
    panel.handle_input(" ")
    panel.handle_input(" ")
    assert changes == [("bash", "disabled"), ("read", "disabled"), ("read", "enabled")]
    assert plain(panel.render(40))[0] == "  bash  disabled"
    panel.handle_input(ESC)
    assert closed == [True]


def test_settings_list_search_and_submenu() -> None:
    changes: list[tuple[str, str]] = []
    picked = SelectList([SelectItem("dark"), SelectItem("light")], 5)

    def submenu(current: str, done: object) -> SelectList:
        picked.on_select = lambda item: done(item.value)  # type: ignore[operator]
        return picked

    settings = [SettingItem("theme", "Theme", "dark", submenu=submenu),
                SettingItem("auto", "Auto compact", "on", ["on", "off"])]
    panel = SettingsList(settings, 10, None, lambda i, v: changes.append((i, v)), lambda: None, enable_search=True)
    for char in "aut":
        panel.handle_input(char)
    lines = plain(panel.render(40))
    assert lines[0].startswith("> aut") and "→ Auto compact  on" in lines
    panel.handle_input(BACKSPACE * 3)
    for key in (BACKSPACE, BACKSPACE, BACKSPACE, ENTER):
        panel.handle_input(key)
    assert plain(panel.render(40))[0].startswith("→ dark")  # the submenu is shown in place
    panel.handle_input(DOWN)
    panel.handle_input(ENTER)
    assert changes == [("theme", "light")] and "→ Theme         light" in plain(panel.render(40))


# --- Input ------------------------------------------------------------------------------------------------

def test_input_edits_and_submits() -> None:
    submitted: list[str] = []
    field = Input()
    field.on_submit = submitted.append
    for key in ("h", "e", "l", "o", LEFT, "l", "\x01", "> ", "\x05", "!", BACKSPACE):
        field.handle_input(key)
    assert field.value == "> hello"
    field.handle_input("\x17")  # Ctrl+W: the word before the cursor
    assert field.value == "> "
    field.handle_input("\x1b[200~pasted\nline\x1b[201~")
    assert field.value == "> pastedline"
    field.handle_input(ENTER)
    assert submitted == ["> pastedline"]


def test_input_draws_the_cursor_and_scrolls_long_text() -> None:
    field = Input("abc")
    field.focused = True
    line = field.render(20)[0]
    assert CURSOR_MARKER in line and strip_ansi(line) == "> abc" + " " * 15 and visible_width(line) == 20
    field.set_value("0123456789" * 5)
    lines = field.render(20)
    assert_fits(lines, 20)
    assert strip_ansi(lines[0]).rstrip().endswith("89")  # the end, where the cursor is, stays in view
    for _ in range(50):
        field.handle_input("\x1b[D")
    assert strip_ansi(field.render(20)[0]).startswith("> 0123")
    wide = Input("日本語日本語日本語日本語")
    assert_fits(wide.render(11), 11)
    empty = Input(placeholder="Type here")
    assert strip_ansi(empty.render(20)[0]).startswith("> Type here")


def test_input_escape_calls_on_escape() -> None:
    escaped: list[bool] = []
    field = Input("x")
    field.on_escape = lambda: escaped.append(True)
    field.handle_input(ESC)
    assert escaped == [True] and field.value == "x"


# --- Loader ---------------------------------------------------------------------------------------------

def test_loader_frames_and_messages() -> None:
    class Tui:
        renders = 0

        def request_render(self) -> None:
            self.renders += 1

    tui = Tui()
    loader = Loader(tui, message="Working...")
    assert plain(loader.render(30)) == ["", " ⠋ Working..." + " " * 17]
    loader.tick()
    assert "⠙ Working..." in plain(loader.render(30))[1] and tui.renders >= 2
    loader.set_indicator(WorkingIndicator(["*"]))
    loader.set_message("Other")
    assert plain(loader.render(20))[1].strip() == "* Other"


def test_loader_animates_while_a_loop_runs() -> None:
    async def run() -> int:
        loader = Loader(message="x", indicator=WorkingIndicator(["a", "b"], interval_ms=5))
        await asyncio.sleep(0.1)
        loader.stop()
        return loader.frame + (1 if plain(loader.render(10))[1].strip() in ("a x", "b x") else 100)

    assert asyncio.run(run()) in (1, 2)


def test_cancellable_and_bordered_loaders_abort_on_escape() -> None:
    loader = CancellableLoader(message="Thinking")
    aborted: list[bool] = []
    loader.on_abort = lambda: aborted.append(True)
    loader.handle_input("x")
    assert not loader.aborted
    loader.handle_input(ESC)
    assert loader.signal.aborted and aborted == [True]
    framed = BorderedLoader(None, Theme(), "Generating handoff prompt...")
    lines = plain(framed.render(40))
    assert lines[0] == "─" * 40 and lines[-1] == "─" * 40
    assert any("Generating handoff prompt..." in line for line in lines)
    assert any(line.strip() == "esc cancel" for line in lines)
    framed.handle_input("\x03")
    assert framed.signal.aborted
    fixed = BorderedLoader(None, Theme(), "wait", cancellable=False)
    fixed.handle_input(ESC)
    assert not fixed.signal.aborted and not any("cancel" in line for line in plain(fixed.render(30)))


# --- Markdown ---------------------------------------------------------------------------------------------

def test_markdown_renders_through_rich_within_the_width() -> None:
    md = Markdown("## Summary\n\nSome **bold** text and `code`.\n\n- first point\n- second point that is longer", 1, 0)
    lines = md.render(30)
    text = "\n".join(plain(lines))
    assert "Summary" in text and "bold" in text and "**" not in text and "first point" in text
    assert "•" in text  # rich draws the bullets
    assert any("\x1b[" in line for line in lines)
    assert_fits(lines, 30)
    assert md.render(30) is lines
    assert Markdown("").render(30) == []


def test_importing_the_kit_loads_no_terminal_library() -> None:
    code = "import sys, pi_core.tui; print('rich' in sys.modules, 'prompt_toolkit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
