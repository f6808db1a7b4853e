"""The flags the measuring commands share (meter, setting, medium, lock), and the spec
they write for hand use: `wattzip job` and `wattzip idle` run from the same document
(wattzip.measure.spec) whether the workflow gives it or the flags make it."""

from __future__ import annotations

import argparse
import math
import re
import sys

from wattzip import machine, meters
from wattzip.errors import ConfigError, did_you_mean
from wattzip.machine import factors, media
from wattzip.measure import spec
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


SHARE = number(0, at_most=1)  # a share of the CPUs, of a mean, ...
WATTS = number(0, unit=" W")
COUNT = number(1, whole=True)  # windows, repeats: at least one
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


def dest(flag: str) -> str:
    """A flag's argparse name."""
    return flag.lstrip("-").replace("-", "_")


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
        value = getattr(a, dest(flag))
        if value is None or value is False:
            continue
        section, _, name = key.rpartition(".")
        (config.setdefault(section, {}) if section else config)[name] = value
    if "model" in config and len(config["model"]) < 2:
        raise ConfigError("give both --model-idle-w and --model-max-w, or neither")
    return config


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


# Each flag of a medium and its field (machine.media.Medium), as a spec's medium holds it.
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


def medium_of(a: argparse.Namespace) -> dict:
    """The medium flags as a spec's medium (media.Medium's fields), its paths as given:
    the job checks every link on their way (wattzip.machine.trust)."""
    return {field: getattr(a, dest(flag)) for flag, field, _ in MEDIUM_OPTIONS}


def setting_of(a: argparse.Namespace) -> dict:
    """The setting flags as a spec's setting: its name and the machine factors' values."""
    return {"name": a.setting, **{name: getattr(a, name) for name in factors.MACHINE_FACTORS}}


def job_spec_of(a: argparse.Namespace) -> dict:
    """`wattzip job`'s flags as the spec the workflow would give it (wattzip.measure.spec)."""
    if not a.testbed or not a.codec:
        raise ConfigError("wattzip job: give --testbed and --codec, or a --spec holding them")
    if a.max_repeats < a.min_repeats:
        raise ConfigError(f"wattzip job: --max-repeats {a.max_repeats} is below "
                          f"--min-repeats {a.min_repeats}")
    looks = None
    if a.looks:
        try:
            runs = [int(n) for n in a.looks.split(",")]
        except ValueError:
            raise ConfigError(f"--looks {a.looks!r}: give runs per arm, e.g. 3,5,8") from None
        looks = {"runs": runs, "margin": a.margin, "reads_per_write": a.reads_per_write,
                 "kinds": [m.strip() for m in a.kinds.split(",") if m.strip()],
                 "moderated": a.moderated, "prior_journals": a.prior_journals}
    duty = ({"phases": a.duty_phases, "compute_s": a.duty_compute_s,
             "compute": a.duty_compute} if a.duty_phases else None)
    given = {
        "spec": spec.JOB, "testbed": a.testbed, "codec": a.codec,
        "meter": meter_config_of(a),
        "setting": {**setting_of(a), "bandwidth": a.bandwidth, "copies": a.copies},
        "medium": medium_of(a),
        "repeats": {"min": a.min_repeats, "max": a.max_repeats, "ci_target": a.ci_target},
        "threads": a.threads, "codec_only": a.codec_only, "looks": looks, "duty": duty,
        "quiet": {key: schema_default(f"quiet.{key}") if value is None else value
                  for key, value in (("max_other_cpu", a.max_other_cpu),
                                     ("max_steal", a.max_steal), ("wait_s", a.quiet_wait),
                                     ("max_heat_c", None))},
        "drift": {"repeats": schema_default("drift.repeats") if a.drift_repeats is None
                  else a.drift_repeats,
                  "max_change": schema_default("drift.max_change")
                  if a.drift_max_change is None else a.drift_max_change,
                  "pool": a.drift_pool},
        "expect": {"node": a.expect_node, "host": a.expect_host},
    }
    return spec.check(given, spec.JOB, "wattzip job")


def idle_spec_of(a: argparse.Namespace) -> dict:
    """`wattzip idle`'s flags as the spec the workflow would give it."""
    given = {
        "spec": spec.IDLE, "testbed": a.testbed, "meter": meter_config_of(a),
        "setting": setting_of(a), "medium": medium_of(a),
        "windows": {"count": a.count, "min_count": a.min_count, "ci_target": a.ci_target,
                    "seconds": a.seconds, "max_other_load": a.max_other_load},
        "quiet_wait_s": schema_default("quiet.wait_s") if a.quiet_wait is None
        else a.quiet_wait,
        "drift_repeats": a.drift_repeats,
    }
    return spec.check(given, spec.IDLE, "wattzip idle")


def add_lock_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lock-wait", type=seconds(0), default=machine.DEFAULT_LOCK_WAIT_S,
                   metavar="S", help="how long to wait for another wattzip command that "
                                     "holds this machine (default: %(default)s)")


def add_spec_option(p: argparse.ArgumentParser, *beside: str) -> None:
    """--spec, and the flags that may be given beside it (this invocation's files); the
    others are the spec's, given in it or as flags, never both."""
    p.add_argument("--spec", metavar="JSON",
                   help="this command's slice of the study as one JSON document, a file or "
                        "the text itself (what the workflow passes: wattzip.measure.spec); "
                        "the flags that describe the same are then refused")
    p.set_defaults(spec_parser=p, beside_spec=frozenset({"spec", "lock_wait", *beside}))


def refuse_beside_spec(args: argparse.Namespace) -> None:
    """A flag that the spec holds too, given beside it, is an error, not a silent choice
    of one of the two."""
    given = [action.option_strings[0] for action in args.spec_parser._actions
             if action.option_strings and action.dest not in args.beside_spec
             and action.dest not in ("help", "fn", "spec_parser", "beside_spec")
             and getattr(args, action.dest, None) != action.default]
    if given:
        raise ConfigError(f"--spec holds what {', '.join(given)} would say: give those in "
                          "the spec, or flags without --spec")
