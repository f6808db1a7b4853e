"""The wattzip command line: measure, calibrate, generate, list, collect, analyze."""

from __future__ import annotations

import argparse
import os
import sys

from wattzip import __version__, records
from wattzip.cli import commands
from wattzip.errors import WattzipError
from wattzip.machine import trust
from wattzip.measure import flags, runner
from wattzip.resources import schema_default
from wattzip.stats import PAPER_CI_TARGET

REFERENCE_HELP = ("a folder of the original papers' tables and claims.yaml (default: the "
                  "copy the package ships)")
SETTINGS_HELP = ("the study's settings.csv (results/<study>/<testbed>/settings.csv): the "
                 "factors and the primary setting of every row; needed when the runs hold "
                 "several settings")


MARGIN = flags.number(0, at_most=0.99)  # a share of the baseline
CI_TARGET = flags.number(0, above=True)  # a half-width's share of the mean
REPEATS_OR_NONE = flags.number(0, whole=True)  # 0: no drift check


def add_analysis_options(s) -> None:
    """The flags of the analysis's one options object (analyze and claims decide alike)."""
    s.add_argument("--margin", type=MARGIN, default=schema_default("verdict.margin"),
                   help="a cell's saving is negligible within this share of its baseline "
                        "(default: %(default)s, the schema's verdict.margin)")
    s.add_argument("--reads-per-write", type=flags.number(0),
                   default=schema_default("verdict.reads_per_write"),
                   help="the workload a cell's verdict is about (default: %(default)s)")
    s.add_argument("--looks", type=flags.number(0, whole=True), default=0,
                   help="the verdict design's number of planned looks: each verdict at "
                        "alpha / looks on the runs its job stopped at (default 0: the "
                        "paper's design)")
    s.add_argument("--ci-target", type=CI_TARGET, default=PAPER_CI_TARGET)
    s.add_argument("--effect", type=flags.number(0), default=schema_default("verdict.effect"),
                   help="the smallest saving worth reporting, a share of the baseline: an "
                        "undecided cell says whether it could have seen one (default: "
                        "%(default)s, the schema's verdict.effect)")
    s.add_argument("--moderated", action="store_true",
                   help="the moderated design (with --looks): each verdict's arms moderated "
                        "by an empirical-Bayes prior over the study's cells")


def build_parser() -> argparse.ArgumentParser:
    p = flags.Parser(prog="wattzip", description=__doc__)
    p.add_argument("--version", action="version", version=f"wattzip {__version__}")
    sub = p.add_subparsers(dest="subcommand", required=True)
    for add_command in COMMANDS:
        add_command(sub)
    p.command_parsers = sub.choices  # main() names a misspelled flag in its command's usage
    return p


def _add_meters(sub) -> None:
    s = sub.add_parser("meters", help="list every energy meter backend and whether it works here")
    flags.add_meter_options(s)
    flags.add_lock_option(s)
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=commands.cmd_meters)


def _add_idle(sub) -> None:
    s = sub.add_parser("idle", help="measure the average idle power (paper: up to 10 x 10 "
                                    "min, until its interval is narrow enough)")
    flags.add_meter_options(s)
    s.add_argument("--count", type=flags.COUNT, default=10,
                   help="the most windows (default: %(default)s)")
    s.add_argument("--min-count", type=flags.COUNT, default=schema_default("idle.min_count"),
                   metavar="N", help="windows before the first look at the interval "
                                     "(default: the config schema's %(default)s)")
    s.add_argument("--ci-target", type=CI_TARGET, default=schema_default("idle.ci_target"),
                   metavar="SHARE",
                   help="stop once the 95%% interval's half-width is at most this share of "
                        "the mean; each of the count - min-count + 1 looks is at 1 - 0.05 / "
                        "looks (default: the config schema's %(default)s)")
    s.add_argument("--seconds", type=flags.seconds(0, above=True), default=600.0)
    s.add_argument("--out", metavar="JSON")
    s.add_argument("--journal", metavar="JSONL",
                   help="keep each window as it finishes; a rerun reuses them")
    s.add_argument("--json", action="store_true")
    s.add_argument("--max-other-load", type=flags.SHARE,
                   default=schema_default("idle.max_other_load"), metavar="SHARE",
                   help="refuse a window in which other processes used more than this "
                        "share of all CPUs (default: %(default)s)")
    s.add_argument("--drift-repeats", type=REPEATS_OR_NONE,
                   default=schema_default("drift.repeats"),
                   metavar="N",
                   help="also measure the jobs' drift reference in phases of N, seconds "
                        "apart: the noise between phases their drift check compares with "
                        "(0: none; default: the config schema's %(default)s)")
    _add_quiet_wait(s)
    s.add_argument("--testbed", help="the testbed's name, which the calibration records")
    flags.add_setting_options(s)
    flags.add_lock_option(s)
    flags.add_spec_option(s, "out", "journal", "json")
    s.set_defaults(fn=commands.cmd_idle)


def _add_measure(sub) -> None:
    s = sub.add_parser("measure", help="run one command under the meter; print its run record")
    flags.add_meter_options(s, flags.DEFAULT_METER_ORDER + ",none")
    s.add_argument("--idle-power", type=flags.WATTS, metavar="W",
                   help="idle power for the passive/active split")
    s.add_argument("--stdin", default=os.devnull, metavar="FILE")
    s.add_argument("--stdout", metavar="FILE", help="output file, flushed inside the region")
    s.add_argument("--op", default="command", help="label of the operation")
    s.add_argument("--json", action="store_true")
    s.add_argument("command", nargs=argparse.REMAINDER)
    flags.add_lock_option(s)
    s.set_defaults(fn=commands.cmd_measure)


def _add_gen(sub) -> None:
    s = sub.add_parser("gen", help="generate an input file of exact size and its manifest")
    s.add_argument("type", help="zero, text, binary, random, urandom, repeated, mix-N, user, "
                                "silesia (pinned: its 12 files checked first)")
    s.add_argument("--size", help="e.g. 64MiB, 2GiB (user data: default all of it)")
    s.add_argument("--out", required=True)
    s.add_argument("--seed", type=int,
                   default=schema_default("seed"),
                   help="seed of the random and mix-N generators (default: %(default)s, the "
                        "schema's)")
    s.add_argument("--source", action="append", help="source directory (repeatable)")
    s.add_argument("--pinned", metavar="DECLARATION",
                   help="user data pinned: a YAML declaration of its files (name, size, "
                        "sha256), each checked before anything is read (wattzip.workload."
                        "pinned)")
    s.add_argument("--manifest", help="manifest entry path (default: OUT.json)")
    s.add_argument("--quiet", action="store_true")
    flags.add_lock_option(s)
    s.set_defaults(fn=commands.cmd_gen)


def _add_stage(sub) -> None:
    s = sub.add_parser("stage", help="copy a generated input to this machine, sha256 checked")
    s.add_argument("master", help="the master input's manifest (JSON)")
    s.add_argument("--out", required=True, help="where the copy goes on this machine")
    s.add_argument("--manifest", required=True, help="this copy's manifest (JSON)")
    flags.add_lock_option(s)
    s.set_defaults(fn=commands.cmd_stage)


def _add_codecs(sub) -> None:
    s = sub.add_parser("codecs", help="list codec entries with availability and versions")
    s.add_argument("set", nargs="*", help="set names or entries (default: all)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--check", action="store_true", help="fail when any binary is missing")
    s.set_defaults(fn=commands.cmd_codecs)


def _add_job(sub) -> None:
    s = sub.add_parser("job", help="one measurement job with repeats (what the workflow runs)")
    flags.add_meter_options(s)
    s.add_argument("--testbed", help="the testbed's name (required, or in --spec)")
    s.add_argument("--manifest", required=True, help="the input's manifest entry (JSON)")
    s.add_argument("--codec", help="codec entry, or 'plain' for the baseline (required, or "
                                   "in --spec)")
    s.add_argument("--journal", required=True, help="append-only JSONL that survives a kill")
    s.add_argument("--out", required=True, help="this job's runs (JSONL), written at the end")
    s.add_argument("--idle", help="idle calibration JSON")
    s.add_argument("--idle-power", type=flags.WATTS)
    s.add_argument("--min-repeats", type=flags.COUNT, default=3)
    s.add_argument("--max-repeats", type=flags.COUNT, default=10)
    s.add_argument("--ci-target", type=CI_TARGET, default=PAPER_CI_TARGET)
    _add_design_options(s)
    s.add_argument("--copies", type=flags.COUNT, default=1,
                   help="copies compressed at once (at least 1)")
    s.add_argument("--threads", type=flags.number(0, whole=True),
                   default=schema_default("threads"),
                   help="threads of multi-threaded codecs (default 0: every core here)")
    s.add_argument("--codec-only", action="store_true",
                   default=schema_default("codec_only"),
                   help="measure the codec alone too, from the page cache to /dev/null "
                        "(compress-only, decompress-only)")
    _add_quiet_options(s)
    s.add_argument("--trace-dir")
    s.add_argument("--verify-cache", metavar="JSONL",
                   help="verifications shared across jobs: an output identical to one already "
                        "decompressed to this input (same codec command and version) is not "
                        "decompressed again")
    s.add_argument("--expect-node", help="the Slurm node this job must run on (its testbed's)")
    s.add_argument("--expect-host", help="the host name this job must run on")
    _add_duty_options(s)
    s.add_argument("--copy-buffer", default=str(runner.DEFAULT_COPY_BUFFER),
                   help="buffer of the plain baseline's user-space copy (default: %(default)s)")
    flags.add_setting_options(s)
    flags.add_lock_option(s)
    flags.add_spec_option(s, "manifest", "journal", "out", "idle", "idle_power", "trace_dir",
                          "verify_cache", "copy_buffer")
    s.set_defaults(fn=commands.cmd_job)


def _add_design_options(s) -> None:
    """A job's verdict or moderated design: its looks and what its verdicts are about."""
    s.add_argument("--looks", metavar="N,N,...",
                   help="the verdict design: measure the codec's own plain arm too, "
                        "interleaved ABBA, and stop at the first of these runs per arm where "
                        "the cell's T and E verdicts and the --kinds break-even kinds are "
                        "decided")
    s.add_argument("--kinds", default=",".join(schema_default("verdict.kind_metrics")),
                   metavar="M,...",
                   help="the metrics whose break-even kind the looks must decide (T, E, "
                        "both, or none: ''; default: %(default)s)")
    s.add_argument("--moderated", action="store_true",
                   help="the moderated design (--looks): each arm's variance shrunk toward a "
                        "prior fitted over this job's arms and the --prior-journals runs")
    s.add_argument("--prior-journals", metavar="DIR",
                   help="the moderated design: the folder of the setting's journals "
                        "(<file type>/<codec>.jsonl), whose other cells' runs written so far "
                        "the prior is fitted over")
    s.add_argument("--margin", type=MARGIN, default=schema_default("verdict.margin"),
                   help="the verdicts' negligible margin (--looks; default: %(default)s)")
    s.add_argument("--reads-per-write", type=flags.number(0),
                   default=schema_default("verdict.reads_per_write"),
                   help="the verdicts' workload (--looks; default: %(default)s)")


def _add_quiet_wait(s) -> None:
    s.add_argument("--quiet-wait", type=flags.seconds(0), metavar="SECONDS",
                   help="after a disturbed run or idle window, wait up to this long for the "
                        "machine to be quiet before measuring again; longer is refused "
                        "(default: config quiet.wait_s)")


def _add_quiet_options(s) -> None:
    """What makes a run disturbed, and the drift check around a job."""
    s.add_argument("--max-other-cpu", type=flags.SHARE,
                   help="a run in which other processes used more than this share of the "
                        "CPUs is disturbed and measured again (default: config quiet:)")
    s.add_argument("--max-steal", type=flags.SHARE,
                   help="likewise for a hypervisor's steal time (default: config quiet:)")
    _add_quiet_wait(s)
    s.add_argument("--drift-repeats", type=REPEATS_OR_NONE,
                   help="the reference operation's repeats before and after the job (0: no "
                        "drift check; default: config drift:)")
    s.add_argument("--drift-max-change", type=flags.number(0),
                   help="a change of the reference beyond its noise and this share flags "
                        "the job's runs and measures them again (default: config drift:)")
    s.add_argument("--drift-pool", metavar="DIR",
                   help="a study's journal folder (DIR/SETTING/TYPE/CODEC.jsonl): the "
                        "reference's back-to-back pairs of this --setting measured there "
                        "before the job join the calibration's phases as its noise")


def _add_duty_options(s) -> None:
    """HPC '14's duty cycle: write phases between compute phases."""
    s.add_argument("--duty-phases", type=flags.number(0, whole=True), default=0,
                   metavar="K",
                   help="HPC '14's workload instead of write/read runs: K write phases "
                        "between compute phases, measured as one run")
    s.add_argument("--duty-compute-s", type=flags.seconds(0, above=True), default=10.0,
                   metavar="S",
                   help="length of each compute phase (default: %(default)s)")
    s.add_argument("--duty-compute", choices=("idle", "busy"), default="idle",
                   help="compute phases idle or busy on one core (default: %(default)s)")


def _add_collect(sub) -> None:
    s = sub.add_parser("collect", help="join run journals into runs.csv")
    s.add_argument("journals", nargs="+")
    s.add_argument("--out", required=True)
    s.set_defaults(fn=commands.cmd_collect)


def _add_check_overlap(sub) -> None:
    s = sub.add_parser("check-overlap", help="fail if any two measured runs overlap in time")
    s.add_argument("runs", nargs="+")
    s.add_argument("--out")
    s.set_defaults(fn=commands.cmd_check_overlap)


def _add_provenance(sub) -> None:
    s = sub.add_parser("provenance", help="the testbed's hardware, software and meter")
    flags.add_meter_options(s)
    flags.add_lock_option(s)
    s.add_argument("--target-dir", default=".")
    s.add_argument("--medium", metavar="JSON",
                   help="the primary medium as a job's spec holds it (what the workflow "
                        "passes): an image, tmpfs or block device is described as its jobs "
                        "see it, not as the folder under its mount point")
    s.add_argument("--codecs", nargs="*", default=["paper"])
    s.add_argument("--testbed", default=os.uname().nodename)
    s.add_argument("--description", default="")
    s.add_argument("--out")
    s.add_argument("--csv", help="also write key,value rows for the paper's table")
    s.add_argument("--meter-config", metavar="JSON",
                   help="the testbed's `meter:` config as JSON (what the workflow passes), "
                        "in place of the meter flags")
    s.add_argument("--machine", metavar="JSON",
                   help="the config's `machine:` as JSON (what the workflow passes): the "
                        "emulated machine, stated beside the real one")
    s.set_defaults(fn=commands.cmd_provenance)


def _add_claims(sub) -> None:
    s = sub.add_parser("claims", help="decide some claims anew from runs (the appendix's check)")
    s.add_argument("runs", nargs="+", help="runs.csv or journal .jsonl files")
    s.add_argument("--claim", action="append", help="claim id (repeatable; default: all)")
    s.add_argument("--settings", metavar="CSV", help=SETTINGS_HELP)
    s.add_argument("--reference", metavar="DIR", help=REFERENCE_HELP)
    add_analysis_options(s)
    s.set_defaults(fn=commands.cmd_claims)


def _add_plan(sub) -> None:
    s = sub.add_parser("plan", help="how long a study will take here (a short pilot, cached)")
    s.add_argument("--configfile", nargs="+", default=[],
                   help="overlays, read after the current directory's config.yaml as "
                        "snakemake reads them")
    s.add_argument("--config-file", metavar="JSON",
                   help="the merged config in one file, instead of --configfile (what the "
                        "workflow writes: <tree>/<study>/config.json)")
    s.add_argument("--cache", help="pilot cache (default: "
                                   "results/<study>/<testbed>/plan/pilot.json)")
    s.add_argument("--out", help="also write the estimate as JSON")
    s.add_argument("--quiet", action="store_true")
    flags.add_lock_option(s)
    s.set_defaults(fn=commands.cmd_plan)


def _add_rehearse(sub) -> None:
    s = sub.add_parser("rehearse", help="build the study's whole report from SIMULATED runs "
                                        "(rehearsal/<study>/), measuring nothing")
    s.add_argument("--configfile", nargs="+", default=["config.yaml"],
                   help="config.yaml and overlays, as given to snakemake")
    s.add_argument("--cores", default="all", help="as snakemake's (default: %(default)s)")
    s.add_argument("--directory", default=".", help="the workflow's checkout (default: .)")
    s.add_argument("snakemake_args", nargs=argparse.REMAINDER,
                   help="further snakemake options, after --")
    s.set_defaults(fn=commands.cmd_rehearse)


def _add_simulate(sub) -> None:
    s = sub.add_parser("simulate", help="one testbed's SIMULATED runs for the rehearsal "
                                        "(what rule simulate_runs runs)")
    s.add_argument("--config-file", required=True, metavar="JSON",
                   help="the merged config in one file (what the workflow writes)")
    s.add_argument("--testbed", help="the testbed (default: the study's first)")
    s.add_argument("--runs", required=True, help="runs.csv to write; the other files "
                                                 "go beside it")
    s.set_defaults(fn=commands.cmd_simulate)


def _add_restore(sub) -> None:
    s = sub.add_parser("restore", help="undo what killed wattzip commands left changed on "
                                       "this machine (schedulers, governors, mounts, ...)")
    flags.add_lock_option(s)
    s.set_defaults(fn=commands.cmd_restore)


def _add_analyze(sub) -> None:
    s = sub.add_parser("analyze", help="a testbed's analysis tables: summary, break-even, "
                                       "E_sav, correlation, claims, comparison, ...")
    s.add_argument("runs", nargs="+", help="runs.csv or journal .jsonl files")
    add_analysis_options(s)
    s.add_argument("--settings", metavar="CSV", help=SETTINGS_HELP)
    s.add_argument("--out", required=True)
    s.add_argument("--reference", metavar="DIR", help=REFERENCE_HELP)
    s.add_argument("--expect", choices=sorted(records.STAGES),
                   help="the tree the runs come from: results (measured runs only) or "
                        "rehearsal (simulated runs only); runs of the other kind are refused")
    s.add_argument("--testbed", help="the testbed the runs' folder is named for: runs of "
                                     "another (a folder copied under a new name) are refused")
    s.set_defaults(fn=commands.cmd_analyze)


def _add_bench(sub) -> None:
    from wattzip.bench import command_line

    s = sub.add_parser("bench", help="hyperfine with joules: benchmark commands, time and "
                                     "energy, each against the first")
    command_line.add_arguments(s)
    s.set_defaults(fn=commands.cmd_bench)


# Each command's parser, in the order `wattzip --help` lists them.
COMMANDS = (_add_meters, _add_idle, _add_measure, _add_gen, _add_stage, _add_codecs, _add_job,
            _add_collect, _add_check_overlap, _add_provenance, _add_claims, _add_plan,
            _add_rehearse, _add_simulate, _add_restore, _add_analyze, _add_bench)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # argparse would print wattzip's usage, not the command's
        parser.command_parsers[args.subcommand].error(
            f"unrecognized arguments: {' '.join(unknown)}")
    if getattr(args, "command", None) and args.command[:1] == ["--"]:
        args.command = args.command[1:]
    for left_out in trust.keep_path_trusted():
        print(f"wattzip: PATH: left out {left_out}", file=sys.stderr)
    try:
        if getattr(args, "spec", None):
            flags.refuse_beside_spec(args)
        return args.fn(args)
    except WattzipError as exc:
        print(f"wattzip: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file given, or written, that the system refused: named
        where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f)
        print(f"wattzip: error: {where + ': ' if where else ''}{exc.strerror or exc}",
              file=sys.stderr)
        return 2
