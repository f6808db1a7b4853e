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
def add_meter_options(p: argparse.ArgumentParser, default_order=DEFAULT_METER_ORDER) -> None:
    g = p.add_argument_group("energy meter")
    g.add_argument("--meter", default=default_order,
                   help="meter name, or comma-separated order to try; 'none' measures time "
                        "only (default: %(default)s)")
    g.add_argument("--require-measured", action="store_true",
                   help="fail rather than fall back to the estimated model")
    g.add_argument("--powercap-root", default="/sys/class/powercap", metavar="DIR")
    g.add_argument("--psys", action="store_true", help="use the RAPL psys zone alone")
    g.add_argument("--wattsup-port", metavar="DEV")
    g.add_argument("--trace", metavar="CSV", help="power log with timestamp,watts columns")
    g.add_argument("--trace-timezone", metavar="ZONE",
                   help="the power logger's IANA time zone, for timestamps without an offset")
    g.add_argument("--ipmi-command", metavar="ARGV",
                   help="command printing a DCMI power reading (default: ipmitool dcmi power "
                        "reading)")
    g.add_argument("--model-idle-w", type=WATTS, metavar="W",
                   help="estimated model: idle power coefficient")
    g.add_argument("--model-max-w", type=WATTS, metavar="W",
                   help="estimated model: full-load power coefficient")
    g.add_argument("--interval", type=seconds(0, above=True), default=0.1, metavar="S",
                   help="sampling period of polled meters (default: %(default)s)")
    g.add_argument("--trace-wait", type=seconds(0), default=5.0, metavar="S",
                   help="how long to wait after a run for a lagging power logger to cover it "
                        "(default: %(default)s)")


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
    for flag, kwargs in MEDIUM_OPTIONS:
        m.add_argument(flag, **kwargs)


MEDIUM_OPTIONS = [
    ("--medium", dict(default="default", help="name of the storage medium")),
    ("--target-dir", dict(default=".", help="directory the runs write to (the mount point of "
                                            "a medium of its own)")),
    ("--medium-kind", dict(default="directory", choices=media.KINDS,
                           help="directory, image (a file the job formats and loop-mounts), "
                                "block (a device mounted at --target-dir) or tmpfs "
                                "(default: %(default)s)")),
    ("--medium-image", dict(help="image file (default: TARGET_DIR.img)")),
    ("--medium-device", dict(help="block device (kind block)")),
    ("--medium-size", dict(help="size of an image or tmpfs, e.g. 2GiB")),
    ("--medium-fs", dict(choices=media.FILESYSTEMS, help="filesystem (default ext2)")),
    ("--mkfs-options", dict(default="", help="extra mkfs arguments")),
    ("--mount-options", dict(default="", help="mount -o options, e.g. compress=zstd:3")),
    ("--format", dict(action="store_true", help="format a block device before the job "
                                                "(destroys its data)")),
    ("--medium-inputs", dict(default="separate", choices=media.INPUT_LAYOUTS,
                             help="on-medium: stage the input on the medium (an image), so "
                                  "that reading it and writing the output share one disk "
                                  "and, with --bandwidth, one budget (SYSTOR '09's layout); "
                                  "separate: read it where it is (default: %(default)s)")),
    ("--flush", dict(default="fsync", choices=media.FLUSHES,
                     help="fsync file and directory, or unmount the medium's own filesystem "
                          "inside the measured region as SYSTOR '09 did (default: %(default)s)")),
]


def machine_factors(a: argparse.Namespace) -> dict[str, str]:
    """The machine factors' values a command was given (machine.factors.MACHINE_FACTORS)."""
    return {name: getattr(a, name) for name in factors.MACHINE_FACTORS}


def medium_of(a: argparse.Namespace) -> media.Medium:
    return media.Medium(
        name=a.medium, kind=a.medium_kind, path=a.target_dir, image=a.medium_image,
        device=a.medium_device, size=a.medium_size, fs=a.medium_fs,
        mkfs_options=a.mkfs_options, mount_options=a.mount_options, flush=a.flush,
        format=a.format, inputs=a.medium_inputs,
    )


def meter_options_of(a: argparse.Namespace) -> meters.MeterOptions:
    opts = meters.MeterOptions(
        interval_s=a.interval, powercap_root=a.powercap_root, powercap_psys=a.psys,
        wattsup_port=a.wattsup_port, trace_path=a.trace, trace_wait_s=a.trace_wait,
        trace_timezone=a.trace_timezone,
        model_idle_power_w=a.model_idle_w, model_max_power_w=a.model_max_w,
    )
    if a.ipmi_command:
        opts.ipmi_command = tuple(a.ipmi_command.split())
    return opts


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
