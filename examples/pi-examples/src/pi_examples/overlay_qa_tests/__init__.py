"""overlay_qa_tests: thirteen ``/overlay-*`` commands that exercise overlay placement (anchors, margins,
offsets, percentages, edge, max height, a responsive side panel), stacking, hiding, non-capturing panels,
focus moves and live redraws (streamed child output, a 30 FPS animation, streaming beside inputs)."""

from __future__ import annotations

from pi_core import SlashCommand, hookimpl
from pi_examples.overlay_qa_tests.live import (
    overlay_animation,
    overlay_overflow,
    overlay_stack,
    overlay_toggle,
)
from pi_examples.overlay_qa_tests.panels import (
    overlay_focus,
    overlay_passive,
    overlay_streaming,
)
from pi_examples.overlay_qa_tests.placement import (
    overlay_anchors,
    overlay_edge,
    overlay_margins,
    overlay_maxheight,
    overlay_percent,
    overlay_sidepanel,
)

COMMANDS = [
    SlashCommand(name="overlay-animation", description="Test real-time animation in overlay (~30 FPS)",
                 handler=overlay_animation),
    SlashCommand(name="overlay-anchors", description="Cycle through all anchor positions", handler=overlay_anchors),
    SlashCommand(name="overlay-margins", description="Test margin and offset options", handler=overlay_margins),
    SlashCommand(name="overlay-stack", description="Test stacked overlays", handler=overlay_stack),
    SlashCommand(name="overlay-overflow", description="Test width overflow with streaming process output",
                 handler=overlay_overflow),
    SlashCommand(name="overlay-edge", description="Test overlay positioned at terminal edge", handler=overlay_edge),
    SlashCommand(name="overlay-percent", description="Test percentage-based positioning", handler=overlay_percent),
    SlashCommand(name="overlay-maxheight", description="Test maxHeight truncation", handler=overlay_maxheight),
    SlashCommand(name="overlay-sidepanel", description="Test responsive sidepanel (hides when terminal < 100 cols)",
                 handler=overlay_sidepanel),
    SlashCommand(name="overlay-toggle", description="Test overlay toggle (press 't' to toggle visibility)",
                 handler=overlay_toggle),
    SlashCommand(name="overlay-passive",
                 description="Test non-capturing overlay (passive info panel alongside active overlay)",
                 handler=overlay_passive),
    SlashCommand(name="overlay-focus",
                 description="Test focus cycling, input routing, dismissal, and rendering order with overlays",
                 handler=overlay_focus),
    SlashCommand(name="overlay-streaming",
                 description="Multiple input panels with simulated streaming (Tab to cycle focus)",
                 handler=overlay_streaming),
]


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return list(COMMANDS)
