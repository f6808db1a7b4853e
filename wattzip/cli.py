"""The wattzip command line: measure, calibrate, generate, list, collect, analyze."""

from __future__ import annotations

import argparse
import json
import os
import sys

from wattzip import (
    __version__,
    codec_registry,
    design,
    inputs,
    machine,
    meters,
    options,
    records,
    runner,
    system,
    throttle,
)
from wattzip.errors import WattzipError
from wattzip.meters import coefficients
from wattzip.options import log

REFERENCE_HELP = ("a folder of the original papers' tables and claims.yaml (default: the "
                  "copy the package ships)")
SETTINGS_HELP = ("the study's settings.csv (results/<testbed>/settings.csv): the factors and "
                 "the primary setting of every row; needed when the runs hold several settings")


def cmd_meters(a) -> int:
    opts = options.meter_options_of(a)
    rows = []
    for name, reason in meters.probe_all(opts).items():
        cls = meters.METERS[name]
        rows.append({"meter": name, "method": cls.method, "available": reason is None,
                     "why": reason or ""})
    if a.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            state = "available" if r["available"] else "unavailable"
            print(f"{r['meter']:<9} {r['method']:<10} {state:<12} {r['why']}")
    return 0


def cmd_idle(a) -> int:
    from wattzip import idle

    with machine.session("idle", config=f"{os.getcwd()} ({a.setting})",
                         wait_s=a.lock_wait):
        meter = options.open_meter(a)
        try:
            out = idle.calibrate(meter, count=a.count, seconds=a.seconds, setting=a.setting,
                                 target_dir=a.target_dir, min_count=a.min_count,
                                 ci_target=a.ci_target, io_scheduler=a.io_scheduler,
                                 governor=a.governor, max_other_load=a.max_other_load,
                                 journal=a.journal, log=log, medium=options.medium_of(a))
        finally:
            meter.close()
    text = json.dumps(out, indent=2)
    if a.out:
        records.write_text_atomically(a.out, text + "\n")
    half = ("no interval" if out["half_width_w"] is None else
            f"half-width {out['half_width_w']:.2f} W at {100 * out['confidence']:.4g}%")
    print(text if a.json or not a.out else
          f"idle power {out['idle_power_w']:.2f} W ({half}, sd {out['sd_w']:.2f} W, "
          f"{out['count']} x {a.seconds} s, {out['stopped']}; {out['meter_method']})")
    return 0


def cmd_measure(a) -> int:
    from wattzip import measurement

    if not a.command:
        raise WattzipError("nothing to measure: give the command after --, e.g. "
                           "wattzip measure -- gzip -c big.txt")
    with machine.session("measure", config=" ".join(a.command), wait_s=a.lock_wait):
        meter = options.open_meter(a)
        try:
            record = measurement.measure_command(a.command, meter, a.op, a.stdin, a.stdout,
                                                 a.idle_power)
        finally:
            meter.close()
    print(json.dumps(record, indent=2) if a.json else measurement.describe_run(record))
    if record.get("error"):
        log(f"failed: {record['error']}")
    return 0 if record["verified"] else 1


def cmd_gen(a) -> int:
    size = inputs.parse_size(a.size) if a.size else None
    # Generating loads every core (xz, hashing, writing): it holds the machine like a
    # measurement, so another study's runs or idle calibration never run beside it.
    with machine.session("gen", config=f"{os.getcwd()} ({a.type})", wait_s=a.lock_wait):
        entry = inputs.generate(a.type, size, a.out, seed=a.seed, sources=a.source,
                                progress=not a.quiet)
    manifest = a.manifest or f"{a.out}.json"
    inputs.write_manifest_entry(entry, manifest)
    log(f"wrote {entry['size_bytes']} bytes of {a.type} to {a.out} (sha256 {entry['sha256']})")
    return 0


def cmd_stage(a) -> int:
    with machine.session("stage", config=f"{os.getcwd()} ({a.out})", wait_s=a.lock_wait):
        entry = inputs.stage(a.master, a.out, a.manifest)
    log(f"staged {a.out} ({entry['size_bytes']} bytes, sha256 {entry['sha256']}) on "
        f"{entry['host']['hostname']}")
    return 0


def cmd_codecs(a) -> int:
    rows = [codec_registry.describe(c) for c in codec_registry.resolve(a.set or ["all"])]
    if a.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        state = f"{r['version']}" if r["available"] else f"MISSING: apt-get install {r['package']}"
        print(f"{r['name']:<10} {' '.join(r['compress']):<60} {state}")
    missing = [r for r in rows if not r["available"]]
    if a.check and missing:
        raise WattzipError("missing codec binaries: " + ", ".join(
            f"{r['name']} (apt-get install {r['package']})" for r in missing))
    return 0


def quiet_limits(max_other_cpu: float | None, max_steal: float | None):
    """The run's disturbance limits: the flags, else the schema's `quiet:` defaults."""
    from wattzip.design import load_schema
    from wattzip.disturbance import QuietLimits

    props = load_schema()["properties"]["quiet"]["properties"]
    return QuietLimits(
        props["max_other_cpu"]["default"] if max_other_cpu is None else max_other_cpu,
        props["max_steal"]["default"] if max_steal is None else max_steal)


def drift_check(repeats: int | None, max_change: float | None):
    """The job's drift check: the flags, else the schema's `drift:` defaults (0 repeats:
    none)."""
    from wattzip.design import load_schema
    from wattzip.disturbance import DriftCheck

    props = load_schema()["properties"]["drift"]["properties"]
    repeats = props["repeats"]["default"] if repeats is None else repeats
    return DriftCheck(repeats, props["max_change"]["default"] if max_change is None
                      else max_change) if repeats else None


def cmd_job(a) -> int:
    from wattzip import measurement
    from wattzip.job import DutyCycle, MeasurementJob

    if not a.testbed or not a.codec:
        raise WattzipError("wattzip job: give --testbed and --codec, or a --spec holding them")
    if not isinstance(a.copies, int) or a.copies < 1:  # a spec's value skips argparse
        raise WattzipError(f"wattzip job: copies {a.copies!r}; give at least 1 (0 would "
                           "record verified runs that wrote nothing)")
    system.check_host(a.expect_node, a.expect_host)
    manifest = measurement.read_input(a.manifest)
    medium = options.medium_of(a)
    codec = measurement.codec_on(a.codec, medium)
    meter = options.open_meter(a)
    idle_w, identity = measurement.idle_power(meter, a.idle, a.idle_power)
    idle_u_w, idle_windows = measurement.idle_uncertainty(a.idle)
    job = MeasurementJob(
        testbed=a.testbed, file_type=manifest["file_type"], input_path=manifest["path"],
        input_sha256=manifest["sha256"], input_bytes=manifest["size_bytes"], medium=medium,
        codec=codec, min_repeats=a.min_repeats, max_repeats=a.max_repeats,
        ci_target=a.ci_target, copies=a.copies,
        threads=a.threads or len(os.sched_getaffinity(0)),  # the cores it is given
        idle_power_w=idle_w, idle_power_u_w=idle_u_w, idle_windows=idle_windows,
        trace_dir=a.trace_dir,
        copy_buffer_bytes=inputs.parse_size(a.copy_buffer),
        bandwidth_bytes_per_s=throttle.parse_bandwidth(a.bandwidth),
        duty=(DutyCycle(a.duty_phases, a.duty_compute_s, a.duty_compute)
              if a.duty_phases else None),
        factors={"setting": a.setting, "io_scheduler": a.io_scheduler, "governor": a.governor,
                 "medium": a.medium, "target_dir": medium.path},
        meter_identity=identity,
        model=meter.model if meter.name == "model" else coefficients.configured(None, None),
        verify_cache=a.verify_cache,
        quiet=quiet_limits(a.max_other_cpu, a.max_steal),
        drift=drift_check(a.drift_repeats, a.drift_max_change),
        # The verdict design's looks are a codec's (its job measures its own plain arm).
        looks=(measurement.verdict_looks(a.looks, a.reads_per_write, a.margin,
                                         a.moderated, a.prior_journals, a.journal)
               if codec and not a.duty_phases else None),
    )
    measurement.run(job, meter, journal=a.journal, out=a.out, io_scheduler=a.io_scheduler,
                    governor=a.governor, lock_wait=a.lock_wait, log=log)
    return 0


def cmd_collect(a) -> int:
    runs = records.read_jsonl(a.journals)
    n = records.write_runs_csv(runs, a.out)
    failed = sum(not r.get("verified") for r in runs)
    note = f"; {failed} FAILED or unverified (see column failure)" if failed else ""
    log(f"{n} runs to {a.out}{note}")
    return 0


def cmd_check_overlap(a) -> int:
    msg = records.check_no_overlap(records.load_runs(a.runs), log)
    if a.out:
        records.write_text_atomically(a.out, msg + "\n")
    log(msg)
    return 0


def cmd_provenance(a) -> int:
    try:
        meter = options.open_meter(a)
        meter.close()
    except WattzipError as exc:
        meter = exc  # recorded as the meter's error
    info = system.testbed_provenance(a.target_dir, codec_registry.resolve(a.codecs), meter,
                                     a.testbed, a.description)
    text = json.dumps(info, indent=2)
    if a.out:
        records.write_text_atomically(a.out, text + "\n")
    else:
        print(text)
    if a.csv:
        records.write_csv_atomically(system.provenance_rows(info), a.csv, ["key", "value"])
    return 0


def cmd_analyze(a) -> int:
    from wattzip import analysis

    if a.expect or a.testbed:  # what the folder must hold, checked before any writing
        runs = records.load_runs(a.runs)
        if a.expect:
            records.check_stage(runs, a.expect)
        if a.testbed:
            records.check_testbed(runs, a.testbed, a.runs)
    written = analysis.analyze(a.runs, a.out, reference_dir=a.reference,
                               options=_analysis_options(a), settings_path=a.settings)
    for path in written:
        log(f"wrote {path}")
    return 0


def add_analysis_options(s) -> None:
    """The flags of the analysis's one options object (analyze and claims decide alike)."""
    s.add_argument("--margin", type=float, default=0.02,
                   help="a cell's saving is negligible within this share of its baseline "
                        "(default: %(default)s)")
    s.add_argument("--reads-per-write", type=float, default=1.0,
                   help="the workload a cell's verdict is about (default: %(default)s)")
    s.add_argument("--looks", type=int, default=0,
                   help="the verdict design's number of planned looks: each verdict at "
                        "alpha / looks on the runs its job stopped at (default 0: the "
                        "paper's design)")
    s.add_argument("--ci-target", type=float, default=0.05)
    s.add_argument("--effect", type=float, default=0.05,
                   help="the smallest saving worth reporting, a share of the baseline: an "
                        "undecided cell says whether it could have seen one (default: "
                        "%(default)s, the schema's verdict.effect)")
    s.add_argument("--moderated", action="store_true",
                   help="the moderated design (with --looks): each verdict's arms moderated "
                        "by an empirical-Bayes prior over the study's cells")


def _analysis_options(a):
    from wattzip.analysis_options import AnalysisOptions

    return AnalysisOptions(margin=a.margin, reads_per_write=a.reads_per_write, looks=a.looks,
                           ci_target=a.ci_target, effect=a.effect, moderated=a.moderated)


def cmd_claims(a) -> int:
    import csv

    from wattzip import analysis, records

    rows = analysis.claim_rows(a.runs, a.claim, a.reference, _analysis_options(a), a.settings)
    if not rows:
        raise WattzipError(f"no claim {', '.join(a.claim or [])} in the registry "
                           f"({a.reference}/claims.yaml)")
    writer = csv.DictWriter(sys.stdout, list(rows[0]))
    writer.writeheader()
    for row in rows:
        writer.writerow({k: records.table_cell(v) for k, v in row.items()})
    return 0


def cmd_plan(a) -> int:
    from wattzip import plan
    from wattzip.design import Study

    study = (Study.from_config(json.loads(a.config_json)) if a.config_json
             else Study.from_files(a.configfile))
    text = plan.run(study, a.cache, a.out, a.lock_wait, progress=None if a.quiet else log)
    print(text)
    return 0


def cmd_simulate(a) -> int:
    from wattzip import rehearsal
    from wattzip.design import Study

    study = Study.from_config(json.loads(a.config_json))
    written = rehearsal.synthesize(study, a.testbed or study.first_testbed, a.runs)
    log(f"SIMULATED runs of study {study.name} on testbed {a.testbed}: {written}")
    return 0


def cmd_rehearse(a) -> int:
    from wattzip import rehearsal

    extra = a.snakemake_args[1:] if a.snakemake_args[:1] == ["--"] else a.snakemake_args
    return rehearsal.run_workflow(a.configfile, a.cores, a.directory, extra)


def cmd_restore(a) -> int:
    """What killed wattzip commands left changed on this machine: shown, then undone."""
    log(machine.restore(a.lock_wait, log))
    return 0


def cmd_bench(a) -> int:
    from wattzip.bench import options as bench_options

    return bench_options.run(a)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wattzip", description=__doc__)
    p.add_argument("--version", action="version", version=f"wattzip {__version__}")
    sub = p.add_subparsers(dest="command_name", required=True)

    s = sub.add_parser("meters", help="list every energy meter backend and whether it works here")
    options.add_meter_options(s)
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_meters)

    s = sub.add_parser("idle", help="measure the average idle power (paper: up to 10 x 10 "
                                    "min, until its interval is narrow enough)")
    options.add_meter_options(s)
    idle_defaults = design.load_schema()["properties"]["idle"]["properties"]
    s.add_argument("--count", type=int, default=10,
                   help="the most windows (default: %(default)s)")
    s.add_argument("--min-count", type=int, default=idle_defaults["min_count"]["default"],
                   metavar="N", help="windows before the first look at the interval "
                                     "(default: the config schema's %(default)s)")
    s.add_argument("--ci-target", type=float, default=idle_defaults["ci_target"]["default"],
                   metavar="SHARE",
                   help="stop once the 95%% interval's half-width is at most this share of "
                        "the mean; each of the count - min-count + 1 looks is at 1 - 0.05 / "
                        "looks (default: the config schema's %(default)s)")
    s.add_argument("--seconds", type=float, default=600.0)
    s.add_argument("--out", metavar="JSON")
    s.add_argument("--journal", metavar="JSONL",
                   help="keep each window as it finishes; a rerun reuses them")
    s.add_argument("--json", action="store_true")
    s.add_argument("--max-other-load", type=float,
                   default=idle_defaults["max_other_load"]["default"], metavar="SHARE",
                   help="refuse a window in which other processes used more than this "
                        "share of all CPUs (default: %(default)s)")
    options.add_setting_options(s)
    options.add_lock_option(s)
    options.add_spec_option(s)
    s.set_defaults(fn=cmd_idle)

    s = sub.add_parser("measure", help="run one command under the meter; print its run record")
    options.add_meter_options(s, options.DEFAULT_METER_ORDER + ",none")
    s.add_argument("--idle-power", type=float, metavar="W",
                   help="idle power for the passive/active split")
    s.add_argument("--stdin", default=os.devnull, metavar="FILE")
    s.add_argument("--stdout", metavar="FILE", help="output file, flushed inside the region")
    s.add_argument("--op", default="command", help="label of the operation")
    s.add_argument("--json", action="store_true")
    s.add_argument("command", nargs=argparse.REMAINDER)
    options.add_lock_option(s)
    s.set_defaults(fn=cmd_measure)

    s = sub.add_parser("gen", help="generate an input file of exact size and its manifest")
    s.add_argument("type", help="zero, text, binary, random, urandom, mix-N, user")
    s.add_argument("--size", help="e.g. 64MiB, 2GiB (user data: default all of it)")
    s.add_argument("--out", required=True)
    s.add_argument("--seed", type=int,
                   default=design.load_schema()["properties"]["seed"]["default"],
                   help="seed of the random and mix-N generators (default: %(default)s, the "
                        "schema's)")
    s.add_argument("--source", action="append", help="source directory (repeatable)")
    s.add_argument("--manifest", help="manifest entry path (default: OUT.json)")
    s.add_argument("--quiet", action="store_true")
    options.add_lock_option(s)
    s.set_defaults(fn=cmd_gen)

    s = sub.add_parser("stage", help="copy a generated input to this machine, sha256 checked")
    s.add_argument("master", help="the master input's manifest (JSON)")
    s.add_argument("--out", required=True, help="where the copy goes on this machine")
    s.add_argument("--manifest", required=True, help="this copy's manifest (JSON)")
    options.add_lock_option(s)
    s.set_defaults(fn=cmd_stage)

    s = sub.add_parser("codecs", help="list codec entries with availability and versions")
    s.add_argument("set", nargs="*", help="set names or entries (default: all)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--check", action="store_true", help="fail when any binary is missing")
    s.set_defaults(fn=cmd_codecs)

    s = sub.add_parser("job", help="one measurement job with repeats (what the workflow runs)")
    options.add_meter_options(s)
    s.add_argument("--testbed", help="the testbed's name (required, or in --spec)")
    s.add_argument("--manifest", required=True, help="the input's manifest entry (JSON)")
    s.add_argument("--codec", help="codec entry, or 'plain' for the baseline (required, or "
                                   "in --spec)")
    s.add_argument("--journal", required=True, help="append-only JSONL that survives a kill")
    s.add_argument("--out", required=True, help="this job's runs (JSONL), written at the end")
    s.add_argument("--idle", help="idle calibration JSON")
    s.add_argument("--idle-power", type=float)
    s.add_argument("--min-repeats", type=int, default=3)
    s.add_argument("--max-repeats", type=int, default=10)
    s.add_argument("--ci-target", type=float, default=0.05)
    s.add_argument("--looks", metavar="N,N,...",
                   help="the verdict design: measure the codec's own plain arm too, "
                        "interleaved ABBA, and stop at the first of these runs per arm where "
                        "the cell's T and E verdicts are decided")
    s.add_argument("--moderated", action="store_true",
                   help="the moderated design (--looks): each arm's variance shrunk toward a "
                        "prior fitted over this job's arms and the --prior-journal runs")
    s.add_argument("--prior-journals", metavar="DIR",
                   help="the moderated design: the folder of the setting's journals "
                        "(<file type>/<codec>.jsonl), whose other cells' runs written so far "
                        "the prior is fitted over")
    s.add_argument("--margin", type=float, default=0.02,
                   help="the verdicts' negligible margin (--looks; default: %(default)s)")
    s.add_argument("--reads-per-write", type=float, default=1.0,
                   help="the verdicts' workload (--looks; default: %(default)s)")
    s.add_argument("--copies", type=_at_least_one, default=1,
                   help="copies compressed at once (at least 1)")
    s.add_argument("--threads", type=int, default=0,
                   help="threads of multi-threaded codecs (default 0: every core here)")
    s.add_argument("--max-other-cpu", type=float,
                   help="a run in which other processes used more than this share of the "
                        "CPUs is disturbed and measured again (default: config quiet:)")
    s.add_argument("--max-steal", type=float,
                   help="likewise for a hypervisor's steal time (default: config quiet:)")
    s.add_argument("--drift-repeats", type=int,
                   help="the reference operation's repeats before and after the job (0: no "
                        "drift check; default: config drift:)")
    s.add_argument("--drift-max-change", type=float,
                   help="a change of the reference beyond its noise and this share flags "
                        "the job's runs and measures them again (default: config drift:)")
    s.add_argument("--trace-dir")
    s.add_argument("--verify-cache", metavar="JSONL",
                   help="verifications shared across jobs: an output identical to one already "
                        "decompressed to this input (same codec command and version) is not "
                        "decompressed again")
    s.add_argument("--expect-node", help="the Slurm node this job must run on (its testbed's)")
    s.add_argument("--expect-host", help="the host name this job must run on")
    s.add_argument("--duty-phases", type=int, default=0, metavar="K",
                   help="HPC '14's workload instead of write/read runs: K write phases "
                        "between compute phases, measured as one run")
    s.add_argument("--duty-compute-s", type=float, default=10.0, metavar="S",
                   help="length of each compute phase (default: %(default)s)")
    s.add_argument("--duty-compute", choices=("idle", "busy"), default="idle",
                   help="compute phases idle or busy on one core (default: %(default)s)")
    s.add_argument("--copy-buffer", default=str(runner.DEFAULT_COPY_BUFFER),
                   help="buffer of the plain baseline's user-space copy (default: %(default)s)")
    options.add_setting_options(s)
    options.add_lock_option(s)
    options.add_spec_option(s)
    s.set_defaults(fn=cmd_job)

    s = sub.add_parser("collect", help="join run journals into runs.csv")
    s.add_argument("journals", nargs="+")
    s.add_argument("--out", required=True)
    s.set_defaults(fn=cmd_collect)

    s = sub.add_parser("check-overlap", help="fail if any two measured runs overlap in time")
    s.add_argument("runs", nargs="+")
    s.add_argument("--out")
    s.set_defaults(fn=cmd_check_overlap)

    s = sub.add_parser("provenance", help="the testbed's hardware, software and meter")
    options.add_meter_options(s)
    s.add_argument("--target-dir", default=".")
    s.add_argument("--codecs", nargs="*", default=["paper"])
    s.add_argument("--testbed", default=os.uname().nodename)
    s.add_argument("--description", default="")
    s.add_argument("--out")
    s.add_argument("--csv", help="also write key,value rows for the paper's table")
    options.add_spec_option(s)
    s.set_defaults(fn=cmd_provenance)

    s = sub.add_parser("claims", help="decide some claims anew from runs (the appendix's check)")
    s.add_argument("runs", nargs="+", help="runs.csv or journal .jsonl files")
    s.add_argument("--claim", action="append", help="claim id (repeatable; default: all)")
    s.add_argument("--settings", metavar="CSV", help=SETTINGS_HELP)
    s.add_argument("--reference", metavar="DIR", help=REFERENCE_HELP)
    add_analysis_options(s)
    s.set_defaults(fn=cmd_claims)

    s = sub.add_parser("plan", help="how long a study will take here (a short pilot, cached)")
    s.add_argument("--configfile", nargs="+", default=["config.yaml"],
                   help="config.yaml and overlays, as given to snakemake")
    s.add_argument("--config-json", help="the merged config itself (what the workflow passes)")
    s.add_argument("--cache", help="pilot cache (default: "
                                   "results/<study>/<testbed>/plan/pilot.json)")
    s.add_argument("--out", help="also write the estimate as JSON")
    s.add_argument("--quiet", action="store_true")
    options.add_lock_option(s)
    s.set_defaults(fn=cmd_plan)

    s = sub.add_parser("rehearse", help="build the study's whole report from SIMULATED runs "
                                        "(rehearsal/<study>/), measuring nothing")
    s.add_argument("--configfile", nargs="+", default=["config.yaml"],
                   help="config.yaml and overlays, as given to snakemake")
    s.add_argument("--cores", default="all", help="as snakemake's (default: %(default)s)")
    s.add_argument("--directory", default=".", help="the workflow's checkout (default: .)")
    s.add_argument("snakemake_args", nargs=argparse.REMAINDER,
                   help="further snakemake options, after --")
    s.set_defaults(fn=cmd_rehearse)

    s = sub.add_parser("simulate", help="one testbed's SIMULATED runs for the rehearsal "
                                        "(what rule simulate_runs runs)")
    s.add_argument("--config-json", required=True, help="the merged config")
    s.add_argument("--testbed", help="the testbed (default: the study's first)")
    s.add_argument("--runs", required=True, help="runs.csv to write; the other files "
                                                 "go beside it")
    s.set_defaults(fn=cmd_simulate)

    s = sub.add_parser("restore", help="undo what killed wattzip commands left changed on "
                                       "this machine (schedulers, governors, mounts, ...)")
    options.add_lock_option(s)
    s.set_defaults(fn=cmd_restore)

    s = sub.add_parser("analyze", help="summary, break-even, E_sav, correlation, claims")
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
    s.set_defaults(fn=cmd_analyze)

    from wattzip.bench import options as bench_options

    s = sub.add_parser("bench", help="hyperfine with joules: benchmark commands, time and "
                                     "energy, each against the first")
    bench_options.add_arguments(s)
    s.set_defaults(fn=cmd_bench)
    return p


def _at_least_one(text: str) -> int:
    """A count of copies: 0 would record "verified" runs that wrote nothing."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of at least 1")
    return n


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "command", None) and args.command[:1] == ["--"]:
        args.command = args.command[1:]
    try:
        if getattr(args, "spec", None):
            args = options.with_spec(parser, argv, args)
        return args.fn(args)
    except WattzipError as exc:
        print(f"wattzip: error: {exc}", file=sys.stderr)
        return 2
