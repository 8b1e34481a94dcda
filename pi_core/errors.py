"""Exceptions shared by the core and plugins. ``PiError`` subclasses are shown to the user without a traceback."""

from __future__ import annotations


class PiError(Exception):
    """An error meant for the user: the CLI prints its message and exits non-zero."""


class ToolError(Exception):
    """A tool failed in a way the model should read: the message becomes an error tool result.
    A ``structured_content`` attribute, when set, is the failed call's data for scripts (bash's exit code)."""


class ValidationError(ToolError):
    """Tool arguments did not match the tool's schema (exact texts: docs/loop.md#argument-validation)."""


class ProviderError(PiError):
    """A provider request failed. ``retryable`` tells the retry loop whether to try again (None: judge
    by the message text, as for an error the stream itself reported)."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool | None = False,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class MissingApiKey(PiError):
    """No API key for a provider; the message names the environment variable to set."""


class PluginConflict(PiError):
    """Two installed distributions register the same plugin name."""


class AbortedError(Exception):
    """The run was aborted (Ctrl-C, RPC abort). Tools raise it with Pi's texts (`Operation aborted`)."""
