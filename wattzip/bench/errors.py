"""The errors `wattzip bench` names: each says what was wrong and what to do."""

from __future__ import annotations

from wattzip.errors import WattzipError


class EmptyCommandError(WattzipError):
    """A command (or a hook) is empty, or only blanks."""


class CommandFailedError(WattzipError):
    """A benchmarked command or a hook exited with a non-zero code."""


class EmptyParameterRangeError(WattzipError):
    """A --parameter-scan or --parameter-list gives no value to substitute."""
