"""Errors a user can act on; the CLI prints their message without a traceback."""


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
