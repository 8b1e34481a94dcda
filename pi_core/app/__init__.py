"""The ``pi`` command: argument parsing, start-up, settings, the system prompt, sub-commands, pi install."""
