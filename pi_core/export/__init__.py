"""Export of a session as one self-contained HTML file: the viewer, its Markdown and code rendering, stats."""
