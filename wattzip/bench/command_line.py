"""`wattzip bench`'s command line, in hyperfine's words where they fit, and the run it
makes: the machine's lock taken, the meter opened, idle power calibrated or given, the
runs measured, the results shown and exported."""

from __future__ import annotations

import argparse
import os
import sys

from wattzip import __version__, machine, meters, records
from wattzip.bench import commands, export, report, summary
from wattzip.bench.loop import TARGET_SECONDS, Bench, Plan
from wattzip.bench.progress import BenchProgress
from wattzip.errors import WattzipError
from wattzip.measure import flags, provenance
from wattzip.resources import schema_default
from wattzip.stats import PAPER_CONFIDENCE

DEFAULT_LOOKS = "3,5,8,13"
SHELL_HELP = ("the shell that runs each command line, as hyperfine does (default: "
              "%(default)s, i.e. `sh -c CMD`; the line is your own, run as you typed it); "
              "'none' splits it with shlex and runs it without a shell")


class Once(argparse.Action):
    """An option of one value that refuses a second: hyperfine's options do, and the
    second would otherwise replace the first without a word."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, f"_{self.dest}_given", False):
            parser.error(f"{option_string} is given twice: give it once")
        setattr(namespace, f"_{self.dest}_given", True)
        setattr(namespace, self.dest, values)


IGNORE_ALL = "all-non-zero"  # hyperfine's --ignore-failure without a value


def ignored_codes(mode: str) -> frozenset[int] | None:
    """--ignore-failure=MODE: None for every non-zero code, else the codes listed."""
    if mode == IGNORE_ALL:
        return None
    try:
        return frozenset(int(c) for c in mode.split(","))
    except ValueError:
        raise WattzipError(f"--ignore-failure={mode}: give {IGNORE_ALL} or exit codes, "
                           "e.g. --ignore-failure=1,2") from None


class IgnoreFailure(argparse.Action):
    """hyperfine 1.20's -i / --ignore-failure[=MODE]: the mode only after '=', so a word
    after the flag is a command line (`-i 'cmd'`, as hyperfine reads it)."""

    def __call__(self, parser, namespace, values, option_string=None):
        mode = IGNORE_ALL
        if values is not None:
            if values == IGNORE_ALL or all(c.strip().lstrip("-").isdigit()
                                           for c in values.split(",")):
                mode = values
            else:  # a command line the optional value took: the benchmark's first
                namespace._leading_commands = [*getattr(namespace, "_leading_commands", []),
                                               values]
        namespace.ignore_failure = mode


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("command_lines", nargs="*", metavar="CMD",
                   help="command lines to benchmark; {NAME} is replaced by a parameter")
    r = p.add_argument_group("runs")
    r.add_argument("-r", "--runs", action=Once, type=int, metavar="N",
                   help="exactly N timed runs each")
    r.add_argument("-m", "--min-runs", action=Once, type=int, default=10, metavar="N",
                   help="at least N runs (default: %(default)s; without --runs, enough for "
                        "about 3 s)")
    r.add_argument("-M", "--max-runs", action=Once, type=int, metavar="N",
                   help="at most N runs (re-measured outliers included; default: twice the "
                        "planned runs)")
    r.add_argument("-w", "--warmup", action=Once, type=int, default=0, metavar="N",
                   help="N untimed runs before the timed ones (default: %(default)s)")
    r.add_argument("-p", "--prepare", action="append", metavar="CMD",
                   help="run before every run (once for all, or once per command line)")
    r.add_argument("-s", "--setup", action=Once, metavar="CMD",
                   help="run once before each command's runs")
    r.add_argument("-C", "--conclude", action="append", metavar="CMD",
                   help="run after every run (once for all, or once per command line)")
    r.add_argument("-c", "--cleanup", action=Once, metavar="CMD",
                   help="run once after each command's runs")
    r.add_argument("--drop-caches", action="store_true",
                   help="empty the page cache before every run: globally, or where "
                        "drop_caches cannot be written (a container) only the files the "
                        "command names (said once)")
    r.add_argument("-P", "--parameter-scan", nargs=3, action="append",
                   metavar=("NAME", "MIN", "MAX"),
                   help="substitute {NAME} by MIN..MAX (once; more parameters with -L)")
    r.add_argument("-D", "--parameter-step-size", action=Once, metavar="STEP",
                   help="the scan's step (default 1; needed for decimal bounds)")
    r.add_argument("-L", "--parameter-list", nargs=2, action="append",
                   metavar=("NAME", "VALUES"), help="substitute {NAME} by each of a,b,c")
    r.add_argument("-S", "--shell", default="sh", help=SHELL_HELP)
    r.add_argument("-N", dest="shell", action="store_const", const=commands.NO_SHELL,
                   help="same as --shell none")
    r.add_argument("-i", "--ignore-failure", action=IgnoreFailure, nargs="?", metavar="MODE",
                   help="keep runs that exit non-zero (their exit codes are exported); "
                        f"--ignore-failure=1,2 keeps only those codes' ({IGNORE_ALL}: any)")
    r.add_argument("--show-output", action="store_true",
                   help="print each run's standard output after it (outside the timing)")
    r.add_argument("--output", action="append", metavar="WHERE",
                   help="each run's standard output: null (/dev/null, the default), pipe "
                        "(a temporary file, discarded: not /dev/null, which some tools "
                        "detect), inherit (shown after each run, as --show-output), or FILE; "
                        "once for all, or once per command line")
    r.add_argument("--input", action=Once, metavar="WHERE",
                   help="each run's standard input: null (/dev/null, the default) or FILE")
    r.add_argument("--min-benchmarking-time", action=Once, type=float, metavar="S",
                   default=TARGET_SECONDS, help=argparse.SUPPRESS)
    r.add_argument("-n", "--command-name", action="append", metavar="NAME",
                   help="a name per command line for the results")
    _add_comparison_energy_export(p)
    flags.add_meter_options(p, flags.DEFAULT_METER_ORDER + ",none")
    flags.add_lock_option(p)


def _add_comparison_energy_export(p: argparse.ArgumentParser) -> None:
    c = p.add_argument_group("comparison")
    c.add_argument("--reference", action=Once, metavar="CMD",
                   help="the command the others are compared with: one of them, by its name "
                        "(its command line or --command-name), or, as in hyperfine, another "
                        "command line, benchmarked first (default: the first command)")
    c.add_argument("--reference-name", action=Once, metavar="NAME",
                   help="the name of a --reference command line")
    c.add_argument("--margin", action=Once, type=float,
                   default=schema_default("verdict.margin"), metavar="SHARE",
                   help="'the same' within this share of the reference (default: %(default)s)")
    c.add_argument("--confidence", action=Once, type=float, default=PAPER_CONFIDENCE,
                   metavar="LEVEL",
                   help="of every interval and verdict, over all looks (default: %(default)s)")
    c.add_argument("--until-decided", action="store_true",
                   help="run the commands interleaved and stop at the first planned look "
                        "(--looks) that decides every pair")
    c.add_argument("--looks", action=Once, metavar="N,N,...",
                   help=f"runs per command at which --until-decided looks (default: "
                        f"{DEFAULT_LOOKS}; each look at alpha / looks)")
    e = p.add_argument_group("energy")
    e.add_argument("--meter-order", dest="meter", help="same as --meter")
    e.add_argument("--idle-power-w", action=Once, type=float, metavar="W",
                   help="idle power for the active / passive split, given")
    e.add_argument("--idle-windows", action=Once, type=int, metavar="N",
                   help="calibrate idle power first: N windows of --idle-seconds")
    e.add_argument("--idle-seconds", action=Once, type=flags.seconds(0, above=True), default=10.0,
                   metavar="S",
                   help="length of one idle window (default: %(default)s)")
    x = p.add_argument_group("export")
    x.add_argument("--export-json", action=Once, metavar="FILE",
                   help="hyperfine's JSON, with energy")
    x.add_argument("--export-csv", action=Once, metavar="FILE")
    x.add_argument("--export-markdown", action=Once, metavar="FILE")
    x.add_argument("--export-asciidoc", action=Once, metavar="FILE")
    x.add_argument("--export-orgmode", action=Once, metavar="FILE")
    x.add_argument("-u", "--time-unit", action=Once,
                   choices=("microsecond", "millisecond", "second"),
                   help="the time unit of the tables (default: by the first mean)")
    x.add_argument("--sort", action=Once, choices=("auto", "command", "mean-time"),
                   default="auto", help="the order of the tables' rows: command (as given; "
                   "the default, auto, too, since the reference leads) or mean-time")
    p.add_argument("--progress", choices=("auto", "bar", "lines", "none"), default="auto",
                   help="a bar with ETA on a terminal, plain lines otherwise (default: auto)")
    p.add_argument("--style", action=Once,
                   choices=("auto", "basic", "full", "nocolor", "color", "none"),
                   help="hyperfine's: none is --progress none, basic and nocolor plain "
                        "lines, full and color a bar")


def parameters_of(a: argparse.Namespace) -> list[tuple[str, list[str]]]:
    params = []
    if a.parameter_scan:
        if len(a.parameter_scan) > 1:
            raise WattzipError("-P/--parameter-scan is given twice: scan one parameter, and "
                               "list the others with -L NAME a,b,c")
        name, lo, hi = a.parameter_scan[0]
        params.append((name, commands.scan_values(name, lo, hi, a.parameter_step_size)))
    for name, values in a.parameter_list or []:
        params.append((name, commands.list_values(name, values)))
    for name, _ in params:
        if not any(f"{{{name}}}" in line for line in a.command_lines):
            raise WattzipError(f"the parameter {name!r} is used by no command line: write "
                               f"{{{name}}} where its value goes")
    return params


def looks_of(text: str) -> tuple[int, ...]:
    try:
        looks = tuple(int(n) for n in text.split(","))
    except ValueError:
        raise WattzipError(f"--looks {text!r}: give runs per command, e.g. 3,5,8") from None
    if looks[0] < 2 or any(b <= a for a, b in zip(looks, looks[1:], strict=False)):
        raise WattzipError(f"--looks {text}: the looks must increase from 2 runs on")
    return looks


def check_before_runs(a: argparse.Namespace) -> None:
    """What would otherwise fail, or say nonsense, only after every run was measured."""
    if not 0 < a.confidence < 1:
        raise WattzipError(f"--confidence {a.confidence:g}: give a level between 0 and 1, "
                           "e.g. 0.95")
    if not 0 <= a.margin < 1:
        raise WattzipError(f"--margin {a.margin:g}: give a share of the reference from 0 to "
                           "below 1, e.g. 0.02")
    if a.idle_power_w is not None and a.idle_power_w < 0:
        raise WattzipError(f"--idle-power-w {a.idle_power_w:g}: a power is not negative")
    if a.warmup < 0 or a.idle_windows is not None and a.idle_windows < 1:
        raise WattzipError("--warmup must be at least 0, --idle-windows at least 1")
    if a.until_decided and a.runs is not None:
        raise WattzipError("--runs and --until-decided: the looks decide how many runs; give "
                           "the runs per command at each look with --looks, e.g. --looks 3,5,8")
    if a.looks is not None and not a.until_decided:
        raise WattzipError("--looks applies only with --until-decided")
    if a.max_runs is not None and a.max_runs < (a.runs or a.min_runs):
        raise WattzipError(f"--max-runs {a.max_runs} is below the runs asked for "
                           f"({a.runs or a.min_runs})")
    for what, line in [*(("prepare", p) for p in a.prepare or ()),
                       *(("conclude", c) for c in a.conclude or ()),
                       ("setup", a.setup), ("cleanup", a.cleanup)]:
        if line is not None:
            commands.argv_of(line, a.shell, f"--{what} command")
    for kind in export.EXPORTERS:
        path = getattr(a, f"export_{kind}")
        if path is not None:
            records.check_writable(f"--export-{kind}", path)
    if a.input not in (None, "null") and not os.path.isfile(a.input):
        raise WattzipError(f"--input {a.input}: no such file (give null or a file)")
    if a.min_benchmarking_time <= 0:
        raise WattzipError("--min-benchmarking-time must be above 0 seconds")


def outputs_of(where: list[str] | None, show_output: bool) -> list[str]:
    """--output's WHEREs; --show-output is `--output inherit`."""
    if show_output:
        if where:
            raise WattzipError("--show-output and --output: give one (--show-output is "
                               "--output=inherit)")
        return ["inherit"]
    return where or []


def plan_of(a: argparse.Namespace) -> Plan:
    # A command line hyperfine's `--ignore-failure CMD` put before the others.
    a.command_lines = [*getattr(a, "_leading_commands", []), *a.command_lines]
    if not a.command_lines:
        raise WattzipError("no command to benchmark: give one or more command lines, e.g. "
                           "wattzip bench 'sleep 0.1'")
    check_before_runs(a)
    cmds = commands.expand(a.command_lines, a.command_name, parameters_of(a))
    reference = 0
    if a.reference is not None:
        names = [c.name for c in cmds]
        if a.reference in names:
            reference = names.index(a.reference)
        else:  # hyperfine's reference: a command line of its own, benchmarked first
            cmds = [*commands.expand([a.reference], [a.reference_name or a.reference], []),
                    *cmds]
    elif a.reference_name is not None:
        raise WattzipError("--reference-name names a --reference command line: give "
                           "--reference CMD too")
    for cmd in cmds:
        cmd.argv(a.shell)  # an empty or unsplittable command fails before any run
    if a.runs is not None and a.runs < 1 or a.min_runs < 2 and a.runs is None:
        raise WattzipError("--runs must be at least 1, --min-runs at least 2")
    for what, hooks in (("prepare", a.prepare), ("conclude", a.conclude),
                        ("output", a.output)):
        if hooks and len(hooks) not in (1, len(a.command_lines)):
            raise WattzipError(f"--{what} is given {len(hooks)} times for "
                               f"{len(a.command_lines)} command lines: give it once, or once "
                               "per command line")
    return Plan(cmds, shell=a.shell, runs=a.runs, min_runs=a.min_runs, max_runs=a.max_runs,
                warmup=a.warmup, prepare=a.prepare or [], setup=a.setup, cleanup=a.cleanup,
                outputs=outputs_of(a.output, a.show_output),
                input=None if a.input in (None, "null") else a.input,
                conclude=a.conclude or [], min_benchmarking_s=a.min_benchmarking_time,
                ignore_failure=a.ignore_failure is not None,
                ignored_codes=ignored_codes(a.ignore_failure) if a.ignore_failure else None,
                drop_caches=a.drop_caches,
                looks=looks_of(a.looks or DEFAULT_LOOKS) if a.until_decided else None,
                margin=a.margin,
                confidence=a.confidence, reference=reference, idle_power_w=a.idle_power_w)


def idle_of(a, meter, log) -> tuple[float | None, str]:
    """The idle power the passive energy subtracts: given, calibrated here, or none."""
    if meter.method == "none" and (a.idle_windows or a.idle_power_w is not None):
        raise WattzipError("--idle-power-w and --idle-windows split energy, and the meter is "
                           "'none' (time only): give a meter, or neither option")
    if a.idle_windows:
        if a.idle_power_w is not None:
            raise WattzipError("give --idle-power-w or --idle-windows, not both")
        import tempfile

        from wattzip.measure import idle

        with tempfile.TemporaryDirectory(prefix="wattzip-bench-idle-") as tmp:
            out = idle.calibrate(meter, count=a.idle_windows, seconds=a.idle_seconds,
                                 setting="bench", target_dir=tmp, min_count=a.idle_windows,
                                 ci_target=1.0, log=log)
        spread = (f"sd {out['sd_w']:.2f} W" if out["count"] > 1
                  else "one window, so no spread")
        return out["idle_power_w"], (f"calibrated here: {out['count']} x "
                                     f"{a.idle_seconds:g} s, {spread}")
    if a.idle_power_w is not None:
        return a.idle_power_w, "given by --idle-power-w"
    return None, ""


STYLES = {"none": "none", "basic": "lines", "nocolor": "lines", "full": "bar",
          "color": "bar", "auto": "auto"}


def progress_of(a) -> BenchProgress:
    """--progress, or hyperfine's --style where --progress is left at auto."""
    mode = STYLES[a.style] if a.style and a.progress == "auto" else a.progress
    return BenchProgress(tty=None if mode == "auto" else mode == "bar", quiet=mode == "none")


def document_of(bench: Bench, meter, identity: dict, idle_w, idle_how,
                time_unit: str | None = None, sort: str = "auto") -> dict:
    plan = bench.plan
    confidence = plan.look_confidence()
    results = [summary.summarize(cmd, runs, confidence, flagged)
               for cmd, runs, flagged in zip(plan.commands, bench.results, bench.flagged,
                                             strict=True)]
    return {"results": results, "comparisons": bench.compare(),
            "reference": plan.commands[plan.reference].name,
            "meter": identity, "idle_power_w": idle_w, "idle_power_how": idle_how,
            "margin": plan.margin, "stopped": bench.stopped,
            "looks": list(plan.looks) if plan.looks else None, "looks_log": bench.looks_log,
            "shell": plan.shell, "time_unit": time_unit, "sort": sort,
            "runs": bench.results, "wattzip_version": __version__,
            "source": provenance.source_of_code()}


def run(a: argparse.Namespace) -> int:
    """`wattzip bench`: everything under the machine's lock, every change undone."""
    if a.meter is None:
        a.meter = flags.DEFAULT_METER_ORDER + ",none"
    plan = plan_of(a)
    progress = progress_of(a)
    with machine.session("bench", config=f"{os.getcwd()} ({len(plan.commands)} commands)",
                         wait_s=a.lock_wait):
        meter = meters.open_meter(flags.meter_config_of(a), "flag", flags.log)
        try:
            idle_w, idle_how = idle_of(a, meter, progress.line)
            plan.idle_power_w = idle_w
            identity = meter.identity({"idle_power_w": idle_w})
            bench = Bench(plan, meter, progress, progress.line)
            bench.run()
        finally:
            meter.close()
    document = document_of(bench, meter, identity, idle_w, idle_how, a.time_unit, a.sort)
    print(report.render(document["results"], document["comparisons"], meter, idle_w,
                        idle_how, bench.stopped))
    for kind in export.EXPORTERS:
        path = getattr(a, f"export_{kind}")
        if path:
            try:
                export.write(kind, path, document)
            except OSError as exc:
                raise WattzipError(f"--export-{kind} {path}: not written ({exc.strerror}); "
                                   "the results above are every run's") from None
    sys.stdout.flush()
    return 0
