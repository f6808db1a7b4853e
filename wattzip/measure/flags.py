"""Options the wattzip commands share (meter, setting, medium, lock) and what they make."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from wattzip import machine, meters
from wattzip.errors import ConfigError
from wattzip.machine import factors, media

DEFAULT_METER_ORDER = "powercap,perf,ipmi,wattsup,trace,model"


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


SHARE = number(0, at_most=1)  # a share of the CPUs, of a mean, ...
WATTS = number(0, unit=" W")
COUNT = number(1, whole=True)  # windows, repeats: at least one
# The meter's settings under their three names: the flag, the MeterOptions field and the
# config's key (under `meter:`; "model." for the estimated model's coefficients; None: not
# in the config). The study's spec is written (meter_flags) and read (meter_options_of) by
# this table alone, and the pre-flight's meter opened through both (open_configured_meter).
METER_SETTINGS = [
    ("--interval", "interval_s", "interval_s",
     dict(type=seconds(0, above=True), default=0.1, metavar="S",
          help="sampling period of polled meters (default: %(default)s)")),
    ("--powercap-root", "powercap_root", "powercap_root",
     dict(default="/sys/class/powercap", metavar="DIR")),
    ("--psys", "powercap_psys", "psys",
     dict(action="store_true", help="use the RAPL psys zone alone")),
    ("--wattsup-port", "wattsup_port", "wattsup_port", dict(metavar="DEV")),
    ("--trace", "trace_path", "trace_path",
     dict(metavar="CSV", help="power log with timestamp,watts columns")),
    ("--trace-timezone", "trace_timezone", "trace_timezone",
     dict(metavar="ZONE", help="the power logger's IANA time zone, for timestamps without "
                               "an offset")),
    ("--ipmi-command", "ipmi_command", "ipmi_command",
     dict(metavar="ARGV", help="command printing a DCMI power reading (default: ipmitool "
                               "dcmi power reading)")),
    ("--model-idle-w", "model_idle_power_w", "model.idle_power_w",
     dict(type=WATTS, metavar="W", help="estimated model: idle power coefficient")),
    ("--model-max-w", "model_max_power_w", "model.max_power_w",
     dict(type=WATTS, metavar="W", help="estimated model: full-load power coefficient")),
    ("--trace-wait", "trace_wait_s", None,
     dict(type=seconds(0), default=5.0, metavar="S",
          help="how long to wait after a run for a lagging power logger to cover it "
               "(default: %(default)s)")),
]


def dest(flag: str) -> str:
    """A flag's argparse name, which is also its key in a command's spec."""
    return flag.lstrip("-").replace("-", "_")


def flag_value(value, kwargs: dict):
    """A value as its flag would hold it: a switch's bool, or the flag's default for none."""
    if kwargs.get("action") == "store_true":
        return bool(value)
    return kwargs.get("default") if value is None else value


def add_meter_options(p: argparse.ArgumentParser, default_order=DEFAULT_METER_ORDER) -> None:
    g = p.add_argument_group("energy meter")
    g.add_argument("--meter", default=default_order,
                   help="meter name, or comma-separated order to try; 'none' measures time "
                        "only (default: %(default)s)")
    g.add_argument("--require-measured", action="store_true",
                   help="fail rather than fall back to the estimated model")
    for flag, _field, _key, kwargs in METER_SETTINGS:
        g.add_argument(flag, **kwargs)


def meter_flags(meter: dict) -> dict:
    """A testbed's `meter:` config as the meter flags' values (a spec's keys)."""
    def config_value(key: str):
        section, _, name = key.rpartition(".")
        return (meter.get(section) or {} if section else meter).get(name)

    return {"meter": ",".join(meter["order"]),
            "require_measured": bool(meter["require_measured"]),
            **{dest(flag): flag_value(config_value(key), kwargs)
               for flag, _field, key, kwargs in METER_SETTINGS if key}}


def add_setting_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("factors (set before, restored after)")
    g.add_argument("--setting", default="default", help="name of the factor combination")
    for name in factors.MACHINE_FACTORS:  # --io-scheduler, --governor
        g.add_argument(f"--{name.replace('_', '-')}", default=factors.KEEP)
    g.add_argument("--bandwidth", default="unlimited",
                   help="a disk of that speed, e.g. 30MB/s: with --medium-inputs on-medium "
                        "one budget for its reads and writes (FUSE), else a block-I/O cgroup "
                        "capping each device's reads and writes apart (default: %(default)s)")
    m = p.add_argument_group("the medium the runs write to")
    for flag, _field, kwargs in MEDIUM_OPTIONS:
        m.add_argument(flag, **kwargs)


# Each flag of a medium and its field (machine.media.Medium): the study's spec is written
# (medium_flags) and read (medium_of) by this table alone.
MEDIUM_OPTIONS = [
    ("--medium", "name", dict(default="default", help="name of the storage medium")),
    ("--target-dir", "path", dict(default=".", help="directory the runs write to (the mount "
                                                    "point of a medium of its own)")),
    ("--medium-kind", "kind", dict(default="directory", choices=media.KINDS,
                                   help="directory, image (a file the job formats and "
                                        "loop-mounts), block (a device mounted at "
                                        "--target-dir) or tmpfs (default: %(default)s)")),
    ("--medium-image", "image", dict(help="image file (default: TARGET_DIR.img)")),
    ("--medium-device", "device", dict(help="block device (kind block)")),
    ("--medium-size", "size", dict(help="size of an image or tmpfs, e.g. 2GiB")),
    ("--medium-fs", "fs", dict(choices=media.FILESYSTEMS, help="filesystem (default ext2)")),
    ("--mkfs-options", "mkfs_options", dict(default="", help="extra mkfs arguments")),
    ("--mount-options", "mount_options", dict(default="", help="mount -o options, e.g. "
                                                               "compress=zstd:3")),
    ("--format", "format", dict(action="store_true", help="format a block device before "
                                                          "the job (destroys its data)")),
    ("--medium-inputs", "inputs", dict(default="separate", choices=media.INPUT_LAYOUTS,
                                       help="on-medium: stage the input on the medium (an "
                                            "image), so that reading it and writing the "
                                            "output share one disk and, with --bandwidth, "
                                            "one budget (SYSTOR '09's layout); separate: "
                                            "read it where it is (default: %(default)s)")),
    ("--flush", "flush", dict(default="fsync", choices=media.FLUSHES,
                              help="fsync file and directory, or unmount the medium's own "
                                   "filesystem inside the measured region as SYSTOR '09 did "
                                   "(default: %(default)s)")),
]


def medium_flags(medium: dict) -> dict:
    """A medium's fields (media.Medium.to_spec) as its flags' values (a spec's keys)."""
    return {dest(flag): flag_value(medium.get(field), kwargs)
            for flag, field, kwargs in MEDIUM_OPTIONS}


def machine_factors(a: argparse.Namespace) -> dict[str, str]:
    """The machine factors' values a command was given (machine.factors.MACHINE_FACTORS)."""
    return {name: getattr(a, name) for name in factors.MACHINE_FACTORS}


def medium_of(a: argparse.Namespace) -> media.Medium:
    return media.Medium(**{field: getattr(a, dest(flag)) for flag, field, _ in MEDIUM_OPTIONS})


def meter_options_of(a: argparse.Namespace) -> meters.MeterOptions:
    given = {field: getattr(a, dest(flag)) for flag, field, _key, _ in METER_SETTINGS}
    command = given.pop("ipmi_command")
    opts = meters.MeterOptions(**given)
    if command:
        opts.ipmi_command = tuple(command.split())
    return opts


def open_configured_meter(meter: dict) -> meters.Meter:
    """The meter a testbed's `meter:` config opens (the pre-flight's), read as its jobs read
    it: the config as their spec's meter flags, those as MeterOptions."""
    defaults = {dest(flag): flag_value(None, kwargs) for flag, _f, _k, kwargs in METER_SETTINGS}
    a = argparse.Namespace(**{**defaults, **meter_flags(meter)})
    return meters.open_meter(a.meter.split(","), meter_options_of(a), a.require_measured)


def open_meter(a: argparse.Namespace) -> meters.Meter:
    meter = meters.open_meter(a.meter.split(","), meter_options_of(a), a.require_measured,
                              required_by="flag")
    if meter.method == "estimated":
        log(f"note: energy comes from the {meter.name} meter and is ESTIMATED, not measured")
    if meter.method == "none":
        log("note: no energy meter is used, so this measures time only (energy is empty)")
    return meter


def add_lock_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lock-wait", type=seconds(0), default=machine.DEFAULT_LOCK_WAIT_S,
                   metavar="S", help="how long to wait for another wattzip command that "
                                     "holds this machine (default: %(default)s)")


def add_spec_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--spec", metavar="JSON",
                   help="this command's slice of the study as one JSON object, a file or "
                        "the text itself (what the workflow passes: wattzip.model.study); its "
                        "keys are this command's options, and a flag given beside it wins")
    p.set_defaults(spec_parser=p)


def with_spec(parser: argparse.ArgumentParser, argv: list[str] | None,
              args: argparse.Namespace) -> argparse.Namespace:
    """The arguments again, the spec's values as the subcommand's defaults."""
    try:
        text = (args.spec if args.spec.lstrip().startswith("{")
                else Path(args.spec).read_text(encoding="utf-8"))
        spec = json.loads(text)
    except OSError as exc:
        raise ConfigError(f"--spec {args.spec}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--spec: not a JSON object ({exc})") from None
    if not isinstance(spec, dict):
        raise ConfigError(f"--spec: a JSON object of this command's options was expected, "
                          f"not {type(spec).__name__}")
    sub = args.spec_parser
    actions = {a.dest: a for a in sub._actions}
    unknown = sorted(set(spec) - set(actions))
    if unknown:
        raise ConfigError(f"--spec: keys this command does not take: {unknown}")
    sub.set_defaults(**{key: spec_value(actions[key], value) for key, value in spec.items()})
    return parser.parse_args(argv)


def spec_value(action: argparse.Action, value):
    """A spec's value checked as its flag's would be: its type and its choices."""
    def one(item):
        if action.type is not None and item is not None and not isinstance(item, bool):
            try:
                item = action.type(str(item))
            except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
                raise ConfigError(f"--spec: {action.dest}: {exc}") from None
        if action.choices is not None and item is not None and item not in action.choices:
            raise ConfigError(f"--spec: {action.dest} {item!r} is none of "
                              f"{', '.join(map(str, action.choices))}")
        return item

    many = action.nargs not in (None, "?") or isinstance(action, argparse._AppendAction)
    if isinstance(value, dict) or isinstance(value, list) and not many:
        raise ConfigError(f"--spec: {action.dest} is {type(value).__name__}; one value was "
                          "expected")
    return [one(v) for v in value] if isinstance(value, list) else one(value)
