"""The commands to benchmark: parameters substituted, names given, argv built.

The default shell mode runs each command line through `sh -c`, as hyperfine does: it is
the user's own command line, typed on the user's own terminal, never a config value.
`--shell none` splits it with shlex and runs the argv directly, without a shell.
"""

from __future__ import annotations

import itertools
import shlex
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from wattzip.errors import EmptyCommandError, EmptyParameterRangeError, WattzipError

NO_SHELL = "none"


@dataclass(frozen=True)
class Command:
    """One command line to benchmark, with the parameter values substituted into it."""

    line: str
    name: str
    parameters: dict[str, str] = field(default_factory=dict)

    def argv(self, shell: str) -> list[str]:
        named = self.name != self.line  # -n NAME; else the message shows the line once
        return argv_of(self.line, shell, what=f"command {self.name!r}" if named else "command")


def argv_of(line: str, shell: str, what: str = "command") -> list[str]:
    """What to execute for a command line: `shell -c line`, or shlex's split for none."""
    if not line.strip():
        raise EmptyCommandError(f"the {what} is empty: give a command line, e.g. "
                                "wattzip bench 'gzip -1 -c big.txt'")
    if shell == NO_SHELL:
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            raise WattzipError(f"--shell none: cannot split the {what}: {exc}: {line!r}") \
                from None
        if not argv or not argv[0]:
            raise EmptyCommandError(f"the {what} {line!r} has no program to run")
        return argv
    return [*shlex.split(shell), "-c", line]


def substitute(text: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def scan_values(name: str, lo: str, hi: str, step: str | None) -> list[str]:
    """hyperfine's --parameter-scan: integers from lo to hi, or decimals by step."""
    try:
        a, b = Decimal(lo), Decimal(hi)
        d = Decimal(step) if step else Decimal(1)
    except InvalidOperation:
        raise WattzipError(f"--parameter-scan {name} {lo} {hi}: the bounds (and the step) "
                           "must be numbers") from None
    if step is None and (a != a.to_integral_value() or b != b.to_integral_value()):
        raise WattzipError(f"--parameter-scan {name} {lo} {hi}: decimal bounds need "
                           "--parameter-step-size")
    if d <= 0:
        raise WattzipError(f"--parameter-step-size {step}: must be above zero")
    if a > b:
        raise EmptyParameterRangeError(f"--parameter-scan {name} {lo} {hi}: the range is "
                                       f"empty ({lo} is above {hi}); give MIN <= MAX")
    values, x = [], a
    while x <= b:
        values.append(str(x))
        x += d
    return values


def list_values(name: str, text: str) -> list[str]:
    values = text.split(",")
    if not text or any(v == "" for v in values):
        raise EmptyParameterRangeError(f"--parameter-list {name} {text!r}: give a "
                                       "comma-separated list of values, none of them empty, "
                                       "e.g. 1,6,9")
    return values


def expand(lines: list[str], names: list[str] | None,
           parameters: list[tuple[str, list[str]]]) -> list[Command]:
    """Every command line with every combination of parameter values (hyperfine's order:
    the commands, then the values, the first parameter the slowest)."""
    if names and len(names) != len(lines):
        raise WattzipError(f"--command-name is given {len(names)} times for {len(lines)} "
                           "commands: give one name per command")
    seen = [p for p, _ in parameters]
    if len(set(seen)) != len(seen):
        raise WattzipError(f"a parameter is defined twice: {', '.join(seen)}")
    combos = [dict(zip(seen, values, strict=True))
              for values in itertools.product(*(v for _, v in parameters))]
    out = []
    for i, line in enumerate(lines):
        if not line.strip():
            raise EmptyCommandError(f"command {i + 1} is empty: give a command line, e.g. "
                                    "wattzip bench 'sleep 0.1'")
        for values in combos:
            text = substitute(line, values)
            name = substitute(names[i], values) if names else text
            out.append(Command(text, name, values))
    return out
