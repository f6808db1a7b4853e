"""Errors a user can act on; the CLI prints their message without a traceback."""

import contextlib
import sys


class WattzipError(Exception):
    """Base class: the message says what was wrong and what to do."""


class ConfigError(WattzipError):
    """A configuration value is invalid."""


class MissingToolError(WattzipError):
    """A binary the study needs is not installed."""


class MeterError(WattzipError):
    """An energy meter cannot be used on this machine."""


class FactorError(WattzipError):
    """A factor of the design cannot be set on this machine."""


class RecordError(WattzipError):
    """A journal, table or calibration file is damaged or is not what it claims to be."""


class MachineError(WattzipError):
    """The machine could not be locked, changed, or put back as it was."""


class EmptyCommandError(WattzipError):
    """A command of `wattzip bench` (or a hook) is empty, or only blanks."""


class CommandFailedError(WattzipError):
    """A command `wattzip bench` runs or a hook exited with a non-zero code."""


class EmptyParameterRangeError(WattzipError):
    """A --parameter-scan or --parameter-list of `wattzip bench` gives no value to
    substitute."""


def did_you_mean(word: object, known) -> str:
    """"; did you mean X?" naming the known word closest to `word`, or "" when none is
    close: what a typo of a key, a value or a codec name is told (difflib's ratio)."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(k) for k in known], n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def said(exc: BaseException) -> str:
    """A user's error as every wattzip command prints it, alone: no traceback."""
    return f"wattzip: error: {exc}"


@contextlib.contextmanager
def said_alone():
    """Where Snakemake would print a WattzipError with its traceback (the Snakefile as it
    is parsed), its message alone on stderr, and the workflow stops (exit status 1)."""
    try:
        yield
    except WattzipError as exc:
        print(said(exc), file=sys.stderr, flush=True)
        raise SystemExit(1) from None
