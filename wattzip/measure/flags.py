"""The flags the commands that open a meter share (the meter, the machine's lock) and the
argparse pieces they are parsed with. `wattzip job` and `wattzip idle` take none of
them: they run from a spec (wattzip.measure.spec), the workflow's or the one a config
makes."""

from __future__ import annotations

import argparse
import math
import re
import sys

from wattzip import machine, meters
from wattzip.errors import ConfigError, did_you_mean
from wattzip.resources import schema_default

DEFAULT_METER_ORDER = ",".join(schema_default("meter.order"))


class Parser(argparse.ArgumentParser):
    """argparse's parser (its commands' too), a slip said first and alone: the error, the
    closest known flag or command, and where the usage is, not a screen of usage first."""

    def error(self, message: str):
        hint = ""
        if unknown := re.match(r"unrecognized arguments: (\S+)", message):
            hint = did_you_mean(unknown[1], self._option_string_actions)
        elif choice := re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message):
            hint = did_you_mean(choice[1], re.findall(r"'([^']*)'", choice[2]))
        self.exit(2, f"{self.prog}: error: {message}{hint}\n"
                     f"  (`{self.prog} --help` lists its options)\n")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def number(at_least: float = 0, *, above: bool = False, at_most: float | None = None,
           whole: bool = False, unit: str = ""):
    """An argparse type: a finite number from `at_least` (or above it) to `at_most`, so that
    a nonsense value is a usage error before anything runs, not a run that says nonsense."""
    bound = (f"give {'a whole number of ' if whole else ''}"
             f"{'more than' if above else 'at least'} {at_least:g}{unit}"
             + (f" and at most {at_most:g}{unit}" if at_most is not None else ""))

    def parse(text: str) -> float:
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {bound}") from None
        if not math.isfinite(value) or value < at_least or above and value == at_least \
                or at_most is not None and value > at_most:
            raise argparse.ArgumentTypeError(f"{text}: {bound}")
        return value
    return parse


def seconds(at_least: float, above: bool = False):
    """An argparse type: a time in seconds (see `number`)."""
    return number(at_least, above=above, unit=" s")


def watch_list(text: str) -> tuple[str, ...]:
    """An argparse type: what the paper's repeat rule watches, comma-separated
    (elapsed,user,system,wait, as repeats.watch in the config)."""
    from wattzip.analysis.cell_summary import WATCHABLE

    given = tuple(w.strip() for w in text.split(",") if w.strip())
    wrong = [w for w in given if w not in WATCHABLE]
    if wrong or not given or len(set(given)) < len(given):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give some of {','.join(WATCHABLE)}, each once, comma-separated")
    return given


def add_watch_option(s) -> None:
    """--watch, the repeat rule's quantities (the schema's repeats.watch)."""
    default = tuple(schema_default("repeats.watch"))
    s.add_argument("--watch", type=watch_list, default=default,
                   help="what the paper's repeat rule watches, each half-width under "
                        f"--ci-target (default: {','.join(default)}; SYSTOR '09: "
                        "elapsed,user,system,wait)")


WATTS = number(0, unit=" W")
# The meter's settings: each flag and the config's key under `meter:` it stands for
# ("model." the estimated model's coefficients), which a spec carries as the config does
# (wattzip.meters.CONFIG_OPTIONS: the options each key sets).
METER_SETTINGS = [
    ("--interval", "interval_s",
     dict(type=seconds(0, above=True), default=schema_default("meter.interval_s"),
          metavar="S", help="sampling period of polled meters (default: %(default)s)")),
    ("--powercap-root", "powercap_root", dict(metavar="DIR", help="where the powercap tree "
                                              "is (default: /sys/class/powercap)")),
    ("--psys", "psys", dict(action="store_true", help="use the RAPL psys zone alone")),
    ("--wattsup-port", "wattsup_port", dict(metavar="DEV")),
    ("--trace", "trace_path",
     dict(metavar="CSV", help="power log with timestamp,watts columns")),
    ("--trace-timezone", "trace_timezone",
     dict(metavar="ZONE", help="the power logger's IANA time zone, for timestamps without "
                               "an offset")),
    ("--ipmi-command", "ipmi_command",
     dict(metavar="ARGV", help="command printing a DCMI power reading (default: ipmitool "
                               "dcmi power reading)")),
    ("--model-idle-w", "model.idle_power_w",
     dict(type=WATTS, metavar="W", help="estimated model: idle power coefficient")),
    ("--model-max-w", "model.max_power_w",
     dict(type=WATTS, metavar="W", help="estimated model: full-load power coefficient")),
    ("--trace-wait", "trace_wait_s",
     dict(type=seconds(0), default=schema_default("meter.trace_wait_s"), metavar="S",
          help="how long to wait after a run for a lagging power logger to cover it "
               "(default: %(default)s)")),
]


def add_meter_options(p: argparse.ArgumentParser, default_order=DEFAULT_METER_ORDER) -> None:
    g = p.add_argument_group("energy meter")
    g.add_argument("--meter", default=default_order,
                   help="meter name, or comma-separated order to try; 'none' measures time "
                        "only (default: %(default)s)")
    g.add_argument("--require-measured", action="store_true",
                   help="fail rather than fall back to the estimated model")
    for flag, _key, kwargs in METER_SETTINGS:
        g.add_argument(flag, **kwargs)


def meter_config_of(a: argparse.Namespace) -> dict:
    """The meter flags as a testbed's `meter:` config (a spec's meter), the order checked."""
    order = a.meter.split(",")
    meters.check_names(order)
    config: dict = {"order": order, "require_measured": bool(a.require_measured)}
    for flag, key, _kwargs in METER_SETTINGS:
        value = getattr(a, flag.lstrip("-").replace("-", "_"))
        if value is None or value is False:
            continue
        section, _, name = key.rpartition(".")
        (config.setdefault(section, {}) if section else config)[name] = value
    if "model" in config and len(config["model"]) < 2:
        raise ConfigError("give both --model-idle-w and --model-max-w, or neither")
    return config


def add_lock_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lock-wait", type=seconds(0), default=machine.DEFAULT_LOCK_WAIT_S,
                   metavar="S", help="how long to wait for another wattzip command that "
                                     "holds this machine (default: %(default)s)")
