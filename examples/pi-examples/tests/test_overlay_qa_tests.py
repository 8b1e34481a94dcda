"""overlay_qa_tests in tmux (110x40): where overlays land, how they stack, hide, and share the keyboard.

Positions are read off the visible screen: row = line index, column = index in that line (the box is drawn with
single-width characters, and nothing to its left is wider than one cell). The longer cases (percentages, the
right edge, the side panel across widths, streamed output, streaming beside inputs, the animation) are ``slow``.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from pi_core.testing.tmux import Tmux, tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def box_at(tmux: Tmux, title: str) -> tuple[int, int]:
    """Row and column of the top-left corner of the box whose top border carries ``title``."""
    for row, line in enumerate(tmux.visible().splitlines()):
        at = line.find(title)
        if at >= 0 and "╭" in line[:at]:
            return row, line.rfind("╭", 0, at)
    raise AssertionError(f"no box titled {title!r}:\n{tmux.visible()}")


def wait_box(tmux: Tmux, title: str, where: tuple[int, int]) -> None:
    """Wait until the box titled ``title`` has its corner at ``where``."""
    tmux.wait_for(title, visible=True)
    for _ in range(50):
        if box_at(tmux, title) == where:
            return
        tmux.wait_for(title, 0.1, visible=True)
    assert box_at(tmux, title) == where


def test_anchors_margins_and_max_height(example) -> None:
    with tmux_pi(example, "oqa-place") as tui:
        tui.start("overlay_qa_tests")
        tmux = tui.tmux
        tmux.wait_for("(fake) fake-model")
        # The nine anchors, 40 wide: top-left is the screen's corner, Space moves it to top-center.
        tui.command("/overlay-anchors")
        tmux.wait_for("Current: top-left", visible=True)
        wait_box(tmux, "Anchor Test", (0, 0))
        tmux.keys("Space")
        tmux.wait_for("Current: top-center", visible=True)
        wait_box(tmux, "Anchor Test", (0, (110 - 40) // 2))
        tmux.keys("Enter")
        tmux.wait_gone("Anchor Test")
        tmux.wait_for("Selected: top-center", visible=True)
        # Margins: none, then 3 on every side, then top 5 / left 10.
        tui.command("/overlay-margins")
        tmux.wait_for("No margin (top-left)", visible=True)
        wait_box(tmux, "Margin Test", (0, 0))
        tmux.keys("Space")
        tmux.wait_for("Margin: 3 all sides", visible=True)
        wait_box(tmux, "Margin Test", (3, 3))
        tmux.keys("Space")
        tmux.wait_for("Margin: top=5, left=10", visible=True)
        wait_box(tmux, "Margin Test", (5, 10))
        tmux.keys("Escape")
        tmux.wait_gone("Margin Test")
        # max_height 10 keeps the first 10 of 23 rows, centred: no bottom border, "Line 7" cut off.
        tui.command("/overlay-maxheight")
        tmux.wait_for("Line 6 of 14", visible=True)
        top, left = (40 - 10) // 2, (110 - 50) // 2
        wait_box(tmux, "MaxHeight Test", (top, left))
        lines = tmux.visible().splitlines()
        rows = [line[left:left + 50] for line in lines[top:top + 10]]
        assert all(row.startswith("│") and row.endswith("│") for row in rows[1:]), rows
        assert "Line 7 of 14" not in tmux.visible()
        assert not lines[top + 10][left:left + 50].startswith(("│", "╰")), lines[top + 10]
        tmux.keys("Escape")
        tmux.wait_gone("MaxHeight Test")


def test_stack_closes_front_to_back_and_toggle_hides_for_a_second(example) -> None:
    with tmux_pi(example, "oqa-stack") as tui:
        tui.start("overlay_qa_tests")
        tmux = tui.tmux
        tmux.wait_for("(fake) fake-model")
        # Three 50x12 overlays, centred and offset by (-8,-4), (0,0), (8,4): the last opened is in front.
        tui.command("/overlay-stack")
        tmux.wait_for("Overlay #3", visible=True)
        middle_top, middle_left = (40 - 12) // 2, (110 - 50) // 2
        front_top, front_left = middle_top + 4, middle_left + 8
        lines = tmux.visible().splitlines()
        assert lines[front_top][front_left:front_left + 50] == "╭" + "─" * 48 + "╮", lines[front_top]
        assert "Overlay #1" in lines[middle_top - 4 + 1] and "Overlay #2" in lines[middle_top + 1]
        # Escape closes the front one (it has the keyboard); the middle one shows through again.
        tmux.keys("Escape")
        tmux.wait_gone("Overlay #3")
        lines = tmux.visible().splitlines()
        assert lines[front_top][front_left:front_left + 3] == "░░░", lines[front_top]
        tmux.keys("Escape")
        tmux.wait_gone("Overlay #2")
        tmux.keys("Enter")
        tmux.wait_gone("Overlay #1")
        tmux.wait_for("Closed in order: Overlay 1, Overlay 2, Overlay 3", visible=True)
        screen = tmux.screen()
        assert screen.index("Showing overlay 1 (back)...") < screen.index("Showing overlay 2 (middle)...") \
            < screen.index("Showing overlay 3 (front)...")
        # 't' hides the overlay through its handle; it comes back by itself a second later, counted.
        tui.command("/overlay-toggle")
        tmux.wait_for("Toggle count: 0", visible=True)
        tmux.type("t")
        tmux.wait_gone("Toggle Demo")
        tmux.wait_for("Toggle count: 1", visible=True)
        tmux.keys("Escape")
        tmux.wait_gone("Toggle Demo")


def test_passive_timer_ticks_while_typing_reaches_the_panel_and_focus_cycles(example) -> None:
    with tmux_pi(example, "oqa-focus") as tui:
        tui.start("overlay_qa_tests")
        tmux = tui.tmux
        tmux.wait_for("(fake) fake-model")
        # A non-capturing 22-wide timer top right (margins top 1, right 2) beside the capturing panel.
        tui.command("/overlay-passive")
        tmux.wait_for("focused=true inputs=0", visible=True)
        wait_box(tmux, "Timer", (1, 110 - 2 - 22))
        tmux.type("hello")
        tmux.wait_for("> hello", visible=True)
        tmux.wait_for("inputs=5", visible=True)
        tmux.wait_for("00:01", visible=True)  # ticking all along
        tmux.keys("Escape")
        tmux.wait_gone("Non-Capturing Demo")
        assert "00:0" not in tmux.visible()  # the timer went with it
        assert "hello" not in tmux.visible()  # the editor never got the typing
        # Three non-capturing panels; the controller has the keyboard first, Tab hands it to Alpha.
        tui.command("/overlay-focus")
        tmux.wait_for("Current focus: Controller", visible=True)
        beta_top, beta_left = 5, 28
        tmux.keys("Tab")
        tmux.wait_for("Current focus: Alpha", visible=True)
        tmux.wait_for("Alpha FOCUSED", visible=True)
        tmux.type("ab")
        tmux.wait_for('Keys: "a" "b"', visible=True)
        tmux.wait_for("Input: > ab", visible=True)
        lines = tmux.visible().splitlines()
        assert lines[beta_top][beta_left] != "╭", lines[beta_top]  # Alpha (focused) is drawn over Beta's corner
        tmux.keys("Tab")
        tmux.wait_for("Current focus: Beta", visible=True)
        tmux.wait_for("Beta FOCUSED", visible=True)
        assert tmux.visible().splitlines()[beta_top][beta_left] == "╭"  # now Beta is in front
        tmux.type("z")
        tmux.wait_for('Keys: "z"', visible=True)
        tmux.keys("BTab")  # Shift+Tab back to Alpha, which kept its text
        tmux.wait_for("Current focus: Alpha", visible=True)
        tmux.keys("Escape")  # dismisses Alpha; the keyboard goes to the next open panel
        tmux.wait_gone("Alpha")
        tmux.wait_for("Current focus: Beta", visible=True)
        tmux.keys("C-c")
        tmux.wait_gone("Focus + Input Demo")
        assert "Beta" not in tmux.visible() and "Gamma" not in tmux.visible()


# --- slow (PI_SLOW_TESTS=1) ----------------------------------------------------------------------------


def started(tui, width: int = 110) -> Tmux:
    tui.start("overlay_qa_tests", width=width)
    tui.tmux.wait_for("(fake) fake-model")
    return tui.tmux


def descendants(pid: int) -> list[str]:
    """Command lines of every process below ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        try:
            found.append((Path("/proc") / str(child) / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
        todo += children.get(child, [])
    return found


@pytest.mark.slow
def test_percentages_and_the_right_edge(example) -> None:
    with tmux_pi(example, "oqa-percent") as tui:
        tmux = started(tui)
        tui.command("/overlay-percent")
        free_rows, free_cols = 40 - 8, 110 - 30  # the 30x8 panel's room
        for name, where in [("rowPercent: 0 (top)", (0, free_cols // 2)),
                            ("rowPercent: 50 (middle)", (free_rows // 2, free_cols // 2)),
                            ("rowPercent: 100 (bottom)", (free_rows, free_cols // 2)),
                            ("colPercent: 0 (left)", (free_rows // 2, 0)),
                            ("colPercent: 100 (right)", (free_rows // 2, free_cols))]:
            tmux.wait_for(name, visible=True)
            wait_box(tmux, "Percent Test", where)
            tmux.keys("Right")
        tmux.wait_for("rowPercent: 0 (top)", visible=True)  # wrapped around
        tmux.keys("Escape")
        tmux.wait_gone("Percent Test")
        tui.command("/overlay-edge")
        tmux.wait_for("right edge of terminal.", visible=True)
        row, col = box_at(tmux, "Edge Test")
        assert (row, col) == ((40 - 11) // 2, 110 - 40)
        assert tmux.visible().splitlines()[row].rstrip().endswith("╮")
        assert len(tmux.visible().splitlines()[row]) == 110
        tmux.keys("Escape")
        tmux.wait_gone("Edge Test")


@pytest.mark.slow
def test_sidepanel_follows_the_terminal_width(example) -> None:
    with tmux_pi(example, "oqa-side") as tui:
        tmux = started(tui, width=120)
        tui.command("/overlay-sidepanel")
        tmux.wait_for("Responsive Sidepanel", visible=True)
        # 25% of 120 = 30 (= min_width), one column from the right edge, centred vertically (14 rows).
        top = (40 - 14) // 2
        line = tmux.visible().splitlines()[top]
        assert line.index("╭") == 120 - 1 - 30 and line.rstrip().endswith("╮") and len(line.rstrip()) == 119
        tmux.keys("Down")
        tmux.wait_for("→ Messages", visible=True)
        tmux.run("resize-window", "-t", tmux.session, "-x", "80", "-y", "40")
        tmux.wait_gone("Responsive Sidepanel")  # visible(80) is False
        tmux.run("resize-window", "-t", tmux.session, "-x", "120", "-y", "40")
        tmux.wait_for("→ Messages", visible=True)  # back, with its state
        tmux.keys("Escape")  # it kept the keyboard: no key came while it was hidden
        tmux.wait_gone("Responsive Sidepanel")


@pytest.mark.slow
def test_streaming_child_output_is_cut_to_the_box_and_killed_on_escape(example) -> None:
    with tmux_pi(example, "oqa-overflow") as tui:
        tmux = started(tui)
        tui.command("/overlay-overflow")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            count = re.search(r"Streaming Output \((\d+) lines\)", tmux.visible())
            if count and int(count.group(1)) >= 20:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(tmux.visible())
        top, left = box_at(tmux, "Streaming Output")
        lines = tmux.visible().splitlines()[top:top + 19]
        assert (top, left) == ((40 - 19) // 2, (110 - 90) // 2)
        assert lines[-1][left:left + 90] == "╰" + "─" * 88 + "╯"
        rows = [line[left:left + 90] for line in lines[1:-1]]
        assert all(row[0] == "│" and row[-1] == "│" for row in rows), rows  # no line pushed the border
        assert sum(row.rstrip("│").endswith("...") for row in rows) >= 10  # long paths were cut
        assert "● Running" in tmux.visible() and "↑" in rows[0]  # following the end
        pane = int(tmux.run("display-message", "-p", "-t", tmux.session, "#{pane_pid}").strip())
        assert any("long-enough-to-overflow" in cmd for cmd in descendants(pane))
        tmux.keys("Escape")
        tmux.wait_gone("Streaming Output")
        for _ in range(50):
            if not any("long-enough-to-overflow" in cmd for cmd in descendants(pane)):
                break
            time.sleep(0.1)
        assert not any("long-enough-to-overflow" in cmd for cmd in descendants(pane)), "the child outlived Escape"


@pytest.mark.slow
def test_streaming_log_beside_input_panels_tab_walks_the_focus(example) -> None:
    with tmux_pi(example, "oqa-stream") as tui:
        tmux = started(tui)
        tui.command("/overlay-streaming")
        tmux.wait_for("Current focus: Controller (this panel)", visible=True)
        tmux.wait_for("Streaming line 2...", visible=True)
        assert tmux.visible().count("○ unfocused") == 3
        tmux.keys("Tab")
        tmux.wait_for("Current focus: Panel A", visible=True)
        tmux.type("hi")
        tmux.wait_for("> hi", visible=True)
        lines = tmux.visible().splitlines()
        assert "● FOCUSED" in lines[1 + 3] and "> hi" in lines[1 + 5]  # in Panel A's box
        tmux.keys("Tab")  # Panel A hands it on to B
        tmux.wait_for("Current focus: Panel B", visible=True)
        assert "● FOCUSED" in tmux.visible().splitlines()[10 + 3]
        tmux.type("yo")
        tmux.wait_for("> yo", visible=True)
        tmux.keys("Tab", "Tab")
        # Focused panels were raised in front of the controller (as in Pi), so its focus line is partly covered.
        tmux.wait_for("Controller (this panel)", visible=True)
        assert tmux.visible().count("○ unfocused") == 3
        tmux.keys("Escape")
        tmux.wait_gone("Streaming + Input Test")
        assert "Panel A" not in tmux.visible()


@pytest.mark.slow
def test_animation_redraws_about_30_times_a_second(example) -> None:
    with tmux_pi(example, "oqa-anim") as tui:
        tmux = started(tui)
        tui.command("/overlay-animation")
        tmux.wait_for("Animation Demo (~30 FPS)", visible=True)
        time.sleep(2.5)
        first = int(re.search(r"Frame: (\d+)", tmux.visible()).group(1))
        fps = int(re.search(r"FPS: (\d+)", tmux.visible()).group(1))
        time.sleep(1)
        second = int(re.search(r"Frame: (\d+)", tmux.visible()).group(1))
        busy = os.getloadavg()[0] > 4  # a loaded CI machine fires the timer less often
        assert fps >= (5 if busy else 20) and second - first >= (5 if busy else 20), (fps, first, second)
        tmux.keys("Escape")
        tmux.wait_gone("Animation Demo")
