"""Pi 1.6.0's example extensions, written again as pi plugins: one module (or package) per example.

They ship with pi in the opt-in entry-point group ``pi.optional``: installed, but off until enabled by name,
``pi -e plugin:permission_gate`` for one run or ``enabledPlugins = ["permission_gate"]`` in settings.
``examples/pi-examples/README.md`` lists them with the Pi example each one follows.
"""
