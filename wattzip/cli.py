"""The wattzip command line: measure, calibrate, generate, list, collect, analyze."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from wattzip import (
    __version__,
    codec_registry,
    design,
    inputs,
    machine,
    media,
    meters,
    records,
    runner,
    system,
    throttle,
)
from wattzip.errors import WattzipError
from wattzip.meters import coefficients

DEFAULT_METER_ORDER = "powercap,perf,ipmi,wattsup,trace,model"
SETTINGS_HELP = ("the study's settings.csv (results/<testbed>/settings.csv): the factors and "
                 "the primary setting of every row; needed when the runs hold several settings")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _add_meter_options(p: argparse.ArgumentParser, default_order=DEFAULT_METER_ORDER) -> None:
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
    g.add_argument("--model-idle-w", type=float, metavar="W",
                   help="estimated model: idle power coefficient")
    g.add_argument("--model-max-w", type=float, metavar="W",
                   help="estimated model: full-load power coefficient")
    g.add_argument("--interval", type=float, default=0.1, metavar="S",
                   help="sampling period of polled meters (default: %(default)s)")
    g.add_argument("--trace-wait", type=float, default=5.0, metavar="S",
                   help="how long to wait after a run for a lagging power logger to cover it "
                        "(default: %(default)s)")


def _add_setting_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("factors (set before, restored after)")
    g.add_argument("--setting", default="default", help="name of the factor combination")
    g.add_argument("--io-scheduler", default="keep")
    g.add_argument("--governor", default="keep")
    g.add_argument("--bandwidth", default="unlimited",
                   help="cap the target's and the input's devices, e.g. 30MB/s: a disk of "
                        "that speed, emulated by a block-I/O cgroup (default: %(default)s)")
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
    ("--flush", dict(default="fsync", choices=media.FLUSHES,
                     help="fsync file and directory, or unmount the medium's own filesystem "
                          "inside the measured region as SYSTOR '09 did (default: %(default)s)")),
]


def _medium(a: argparse.Namespace) -> media.Medium:
    return media.Medium(
        name=a.medium, kind=a.medium_kind, path=a.target_dir, image=a.medium_image,
        device=a.medium_device, size=a.medium_size, fs=a.medium_fs,
        mkfs_options=a.mkfs_options, mount_options=a.mount_options, flush=a.flush,
        format=a.format,
    )


def _meter_options(a: argparse.Namespace) -> meters.MeterOptions:
    opts = meters.MeterOptions(
        interval_s=a.interval, powercap_root=a.powercap_root, powercap_psys=a.psys,
        wattsup_port=a.wattsup_port, trace_path=a.trace, trace_wait_s=a.trace_wait,
        trace_timezone=a.trace_timezone,
        model_idle_power_w=a.model_idle_w, model_max_power_w=a.model_max_w,
    )
    if a.ipmi_command:
        opts.ipmi_command = tuple(a.ipmi_command.split())
    return opts


def _open_meter(a: argparse.Namespace) -> meters.Meter:
    meter = meters.open_meter(a.meter.split(","), _meter_options(a), a.require_measured)
    if meter.method == "estimated":
        _log(f"note: energy comes from the {meter.name} meter and is ESTIMATED, not measured")
    if meter.method == "none":
        _log("note: no energy meter is used, so this measures time only (energy is empty)")
    return meter


def cmd_meters(a) -> int:
    opts = _meter_options(a)
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


NOISY_IDLE_WINDOWS = 3  # in a row: the machine is busy, not briefly disturbed


def cmd_idle(a) -> int:
    from wattzip import factors

    with machine.session("idle", config=f"{os.getcwd()} ({a.setting})",
                         wait_s=a.lock_wait):
        meter = _open_meter(a)
        os.makedirs(a.target_dir, exist_ok=True)
        disk = system.scheduler_disk(a.target_dir)
        key = f"{meter.name}|{meter.scope}|{a.setting}|{a.seconds:g}"
        windows = _idle_journal(a.journal, key) if a.journal else []
        if windows:
            _log(f"idle: {len(windows)} window(s) of {a.seconds:g} s found in {a.journal}")
        try:
            with factors.applied(disk, a.io_scheduler, a.governor):
                quiet, noisy = machine.QuietCheck(), 0
                while len(windows) < a.count:
                    result = meters.measure_idle(meter, 1, a.seconds)
                    try:
                        quiet.require_quiet(a.max_other_load, f"idle window {len(windows) + 1}")
                    except machine.MachineError as exc:  # discarded, never averaged in
                        noisy += 1
                        if noisy >= NOISY_IDLE_WINDOWS:
                            raise
                        _log(f"{exc}; discarded, measuring it again")
                        continue
                    noisy = 0
                    windows.append(result.windows_w[0])
                    _log(f"idle window {len(windows)}/{a.count}: {windows[-1]:.2f} W")
                    if a.journal:
                        records.append_journal(a.journal, {"key": key, "watts": windows[-1]})
        finally:
            meter.close()
    result = meters.IdleResult(windows[: a.count], meter.name, meter.scope, meter.method,
                               a.seconds)
    out = {"idle_power_w": result.mean_w, "sd_w": result.sd_w, "windows_w": result.windows_w,
           "count": a.count, "seconds": a.seconds, "setting": a.setting,
           "meter_source": result.source, "meter_scope": result.scope,
           "meter_method": result.method, "measured_at": runner.utc_now()}
    text = json.dumps(out, indent=2)
    if a.out:
        records.write_text_atomically(a.out, text + "\n")
    print(text if a.json or not a.out else
          f"idle power {result.mean_w:.2f} W (sd {result.sd_w:.2f} W, {a.count} x {a.seconds} s, "
          f"{result.method})")
    return 0


def _idle_journal(path: str, key: str) -> list[float]:
    """Idle windows already measured with this meter and setting (a killed calibration)."""
    return [float(e["watts"]) for e in records.read_journal(path, key, ("key", "watts"))]


def cmd_measure(a) -> int:
    if not a.command:
        raise WattzipError("nothing to measure: give the command after --, e.g. "
                           "wattzip measure -- gzip -c big.txt")
    out = a.stdout
    operation = runner.Operation(a.op, [a.command], [a.stdin], [out], [out] if out else [])
    with machine.session("measure", config=" ".join(a.command), wait_s=a.lock_wait):
        meter = _open_meter(a)
        cache = runner.drop_caches([p for p in (a.stdin, out) if p and os.path.exists(p)])
        if cache == "global":
            runner.warm(runner.tool_files(a.command[0]))
        target = os.path.dirname(os.path.abspath(out)) if out else os.getcwd()
        try:
            result = runner.measure(operation, meter, a.idle_power,
                                    system.block_device(target)["disk"])
        finally:
            meter.close()
    record = {k: v for k, v in result.items() if not k.startswith("_")}
    record["factors"] = {"cache_drop": cache}
    record["output_bytes"] = os.path.getsize(out) if out and os.path.exists(out) else None
    record["verified"] = result["succeeded"]
    record["tool_version"] = None
    if a.json:
        print(json.dumps(record, indent=2))
    else:
        wait = "" if record["wait_s"] is None else f", {record['wait_s']:.3f} wait"
        energy = ("energy not measured (no meter)" if record["energy_j"] is None else
                  f"{record['energy_j']:.2f} J {record['meter_method']} by "
                  f"{record['meter_source']} ({record['meter_scope']})")
        print(f"{record['elapsed_s']:.3f} s elapsed ({record['user_s']:.3f} user, "
              f"{record['sys_s']:.3f} sys{wait}; CPU {record['cpu_utilization']:.2f}x), "
              f"{energy}, exit {record['exit_code']}")
        if record.get("error"):
            _log(f"failed: {record['error']}")
    return 0 if result["succeeded"] else 1


def cmd_gen(a) -> int:
    size = inputs.parse_size(a.size) if a.size else None
    entry = inputs.generate(a.type, size, a.out, seed=a.seed, sources=a.source,
                            progress=not a.quiet)
    manifest = a.manifest or f"{a.out}.json"
    inputs.write_manifest_entry(entry, manifest)
    _log(f"wrote {entry['size_bytes']} bytes of {a.type} to {a.out} (sha256 {entry['sha256']})")
    return 0


def cmd_stage(a) -> int:
    """Copy a master input to this machine's disk; its bytes must be the master's."""
    master = records.read_json(a.master, "master input's manifest",
                               ("path", "size_bytes", "sha256"))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    if not (os.path.exists(a.out) and os.path.getsize(a.out) == master["size_bytes"]
            and inputs.sha256_file(a.out) == master["sha256"]):
        digest = inputs.copy_through_user_space(master["path"], a.out)
        if digest != master["sha256"]:
            raise WattzipError(f"{a.out}: the staged copy of {master['path']} has sha256 "
                               f"{digest}, the master {master['sha256']}: this testbed would "
                               "not measure the same bytes as the others")
    entry = {**master, "path": os.path.abspath(a.out), "staged_from": master["path"],
             "host": system.host_identity()}
    Path(a.manifest).parent.mkdir(parents=True, exist_ok=True)
    inputs.write_manifest_entry(entry, a.manifest)
    _log(f"staged {a.out} ({master['size_bytes']} bytes, sha256 {master['sha256']}) on "
         f"{entry['host']['hostname']}")
    return 0


def cmd_codecs(a) -> int:
    chosen = codec_registry.resolve(a.set or ["all"])
    rows = []
    for c in chosen:
        path = codec_registry.binary_path(c)
        rows.append({"name": c.name, "tool": c.tool, "level": c.level,
                     "compress": list(c.compress), "decompress": list(c.decompress),
                     "package": c.package, "available": path is not None,
                     "version": codec_registry.version(c), "sets": list(c.sets), "note": c.note})
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


def cmd_job(a) -> int:
    from wattzip import factors, study

    system.check_host(a.expect_node, a.expect_host)
    manifest = records.read_json(a.manifest, "input manifest",
                                 ("path", "size_bytes", "sha256", "file_type"))
    if not (os.path.exists(manifest["path"])
            and os.path.getsize(manifest["path"]) == manifest["size_bytes"]):
        raise WattzipError(f"the input {manifest['path']} of {a.manifest} is missing or has "
                           "another size on this machine; delete the manifest so that the "
                           "workflow makes it again")
    codec = None if a.codec == "plain" else codec_registry.get(a.codec)
    if codec:
        codec_registry.require(codec)
    a.threads = a.threads or len(os.sched_getaffinity(0))  # the cores it is given
    medium = _medium(a)
    if codec and codec.filesystem:
        if medium.fs != codec.filesystem:
            raise WattzipError(f"codec {codec.name} compresses in {codec.filesystem}: its medium "
                               f"must be a {codec.filesystem} filesystem (kind image, fs "
                               f"{codec.filesystem}), not {medium.fs or medium.kind}")
        medium.mount_options = ",".join(o for o in (medium.mount_options, codec.mount_option)
                                        if o)
    meter = _open_meter(a)
    idle, calibration = a.idle_power, None
    if a.idle:
        calibration = records.read_json(a.idle, "idle calibration",
                                        ("idle_power_w", "meter_source", "meter_scope"))
        meters.check_same_meter(calibration, meter, a.idle)
        idle = calibration["idle_power_w"]
    job = study.Job(
        testbed=a.testbed, file_type=manifest["file_type"], input_path=manifest["path"],
        input_sha256=manifest["sha256"], input_bytes=manifest["size_bytes"], medium=medium,
        codec=codec, min_repeats=a.min_repeats, max_repeats=a.max_repeats,
        ci_target=a.ci_target, copies=a.copies, threads=a.threads, idle_power_w=idle,
        trace_dir=a.trace_dir, copy_buffer_bytes=inputs.parse_size(a.copy_buffer),
        bandwidth_bytes_per_s=throttle.parse_bandwidth(a.bandwidth),
        duty=study.DutyCycle(a.duty_phases, a.duty_compute_s, a.duty_compute)
        if a.duty_phases else None,
        factors={"setting": a.setting, "io_scheduler": a.io_scheduler, "governor": a.governor,
                 "medium": a.medium, "target_dir": medium.path},
        meter_identity=meter.identity(calibration if a.idle else {"idle_power_w": idle}),
        model=(meter.model if meter.name == "model" else coefficients.configured(None, None)),
        verify_cache=a.verify_cache,
    )
    # The session takes the machine's lock, undoes what a killed job left, and undoes
    # this job's own changes (medium, factors, throttle, processes), also on SIGTERM.
    with machine.session("job", a.testbed, f"{os.getcwd()} ({a.setting} {manifest['file_type']} "
                         f"{a.codec})", wait_s=a.lock_wait):
        try:
            medium.attach()
            study.check_free_space(
                medium.path, study.space_needed(job.input_bytes, job.copies,
                                                job.duty.phases if job.duty else 1),
                medium.image, inputs.parse_size(medium.size) if medium.image else 0)
            with factors.applied(system.scheduler_disk(medium.path), a.io_scheduler,
                                 a.governor):
                summary = study.run_job(job, meter, a.journal, log=_log)
        finally:
            try:
                medium.detach()
            finally:
                meter.close()
    if not summary["complete"]:
        # No output: Snakemake sees the job fail and runs it again; the failed runs stay in
        # the journal (and in runs.csv once the job succeeds), never dropped.
        raise WattzipError(f"{job.file_type}/{job.codec_name}: only {summary['repeats']} "
                           f"verified repeat(s) of the {job.min_repeats} needed; "
                           f"{summary['failed']} run(s) failed (see {a.journal}). Fix the "
                           "cause and run the workflow again: the job resumes")
    runs = study.read_journal(a.journal, job.key())
    records.write_text_atomically(a.out, "".join(json.dumps(r, sort_keys=True) + "\n"
                                                 for r in runs))
    met = "met" if summary["ci_met"] else "NOT met"
    _log(f"{job.file_type}/{job.codec_name}: {summary['repeats']} repeats, "
         f"{summary['failed']} failed run(s), CI target {met}")
    return 0


def cmd_collect(a) -> int:
    runs = records.read_jsonl(a.journals)
    n = records.write_runs_csv(runs, a.out)
    failed = sum(not r.get("verified") for r in runs)
    note = f"; {failed} FAILED or unverified (see column failure)" if failed else ""
    _log(f"{n} runs to {a.out}{note}")
    return 0


def cmd_check_overlap(a) -> int:
    rows = records.load_runs(a.runs)
    overlaps = records.find_overlaps(rows)
    for x, y in overlaps:
        _log(f"OVERLAP: {x['file_type']}/{x['codec']} {x['op']} r{x['repeat']} "
             f"[{x['started_at']} .. {x['ended_at']}] and {y['file_type']}/{y['codec']} "
             f"{y['op']} r{y['repeat']} [{y['started_at']} .. {y['ended_at']}]")
    if overlaps:
        raise WattzipError(f"{len(overlaps)} pair(s) of measured runs overlap in time; their "
                           "numbers are not trustworthy. Run measurement jobs one at a time")
    msg = f"no overlap among {len(rows)} runs"
    if a.out:
        Path(a.out).write_text(msg + "\n")
    _log(msg)
    return 0


def cmd_provenance(a) -> int:
    info = system.provenance(a.target_dir)
    info["wattzip"] = __version__
    chosen = codec_registry.resolve(a.codecs)
    info["tool_versions"] = {c.name: codec_registry.version(c) for c in chosen}
    info["codec_argv"] = {c.name: " ".join(c.compress) for c in chosen}
    try:
        meter = _open_meter(a)
        info["meter"] = {"source": meter.name, "scope": meter.scope, "method": meter.method}
        meter.close()
    except WattzipError as exc:
        info["meter"] = {"error": str(exc)}
    info["testbed"] = a.testbed
    info["description"] = a.description
    text = json.dumps(info, indent=2)
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(text + "\n")
    else:
        print(text)
    if a.csv:
        _write_provenance_csv(info, a.csv)
    return 0


def _write_provenance_csv(info: dict, path: str) -> None:
    """The provenance as tidy key,value rows for the paper's table."""
    import csv

    dev = info.get("target_device") or {}
    fs = info.get("filesystem") or {}
    meter = info.get("meter") or {}
    rows = [
        ("testbed", info.get("testbed")), ("description", info.get("description")),
        ("CPU", f"{info.get('cpu_model')} ({info.get('cpu_count')} logical CPUs)"),
        ("memory", f"{(info.get('memory_bytes') or 0) / 2**30:.1f} GiB"),
        ("kernel", info.get("kernel")), ("operating system", info.get("os")),
        ("virtualization", info.get("virtualization")),
        ("CPU governor", ", ".join(info.get("cpu_governors") or []) or "not readable (no cpufreq)"),
        ("turbo", info.get("turbo") or "not readable"),
        ("target directory", info.get("target_dir")),
        ("target disk", f"{dev.get('disk')} ({info.get('target_disk_model') or 'model unknown'}, "
                        f"rotational={info.get('target_disk_rotational')})"),
        ("I/O scheduler", info.get("io_scheduler")),
        ("filesystem", f"{fs.get('fstype')} on {fs.get('source')} at {fs.get('mount_point')}"),
        ("cache drop", "global (drop_caches)" if info.get("drop_caches_writable")
         else "per-file (posix_fadvise)"),
        ("energy meter", meter.get("error")
         or f"{meter.get('source')}, scope {meter.get('scope')}, {meter.get('method')}"),
        ("wattzip", info.get("wattzip")),
    ]
    rows += [(f"version of {name}", version or "missing")
             for name, version in (info.get("tool_versions") or {}).items()]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["key", "value"])
        writer.writerows(rows)


def cmd_analyze(a) -> int:
    from wattzip import analysis

    written = analysis.analyze(a.runs, a.out, reference_dir=a.reference,
                               ci_target=a.ci_target, settings_path=a.settings,
                               margin=a.margin, reads_per_write=a.reads_per_write)
    for path in written:
        _log(f"wrote {path}")
    return 0


def cmd_claims(a) -> int:
    import csv

    from wattzip import analysis, records

    rows = analysis.claim_rows(a.runs, a.claim, a.reference, a.ci_target, a.settings)
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
    testbed = study.first_testbed
    names = list(dict.fromkeys(study.codecs + [n for n in (study.duty.codecs if study.duty
                                                           else ()) if n != "plain"]))
    cache = Path(a.cache or f"results/{testbed}/plan/pilot.json")
    _log(f"plan: pilot on {plan.PILOT_BYTES >> 20} MiB samples, cached in {cache} "
         "(runs once per testbed)")
    with machine.session("plan", testbed, os.getcwd(), wait_s=a.lock_wait):
        rates = plan.pilot(study.file_types, names, cache, study.config["seed"],
                           progress=None if a.quiet else _log)
    est = plan.estimate(study, rates)
    text = f"wattzip study '{testbed}': {plan.describe(est)}"
    if a.out:
        Path(a.out).write_text(json.dumps({**vars(est), "wall_min_s": est.wall_min_s,
                                           "wall_max_s": est.wall_max_s, "text": text},
                                          indent=1) + "\n")
    print(text)
    return 0


def cmd_restore(a) -> int:
    """What killed wattzip commands left changed on this machine: shown, then undone."""
    with machine.session("restore", wait_s=a.lock_wait):  # undoes leftovers on entry
        pass
    live = machine.pending()
    for entry in live:
        _log(f"in use by a running wattzip command: {machine.describe(entry)}")
    _log(f"the machine is as wattzip found it (journal {machine.journal_path()})"
         if not live else f"{len(live)} change(s) belong to running commands")
    return 0


def _add_lock_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lock-wait", type=float, default=machine.DEFAULT_LOCK_WAIT_S,
                   metavar="S", help="how long to wait for another wattzip command that "
                                     "holds this machine (default: %(default)s)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wattzip", description=__doc__)
    p.add_argument("--version", action="version", version=f"wattzip {__version__}")
    sub = p.add_subparsers(dest="command_name", required=True)

    s = sub.add_parser("meters", help="list every energy meter backend and whether it works here")
    _add_meter_options(s)
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_meters)

    s = sub.add_parser("idle", help="measure the average idle power (paper: 10 x 10 min)")
    _add_meter_options(s)
    s.add_argument("--count", type=int, default=10)
    s.add_argument("--seconds", type=float, default=600.0)
    s.add_argument("--out", metavar="JSON")
    s.add_argument("--journal", metavar="JSONL",
                   help="keep each window as it finishes; a rerun reuses them")
    s.add_argument("--json", action="store_true")
    s.add_argument("--max-other-load", type=float, default=0.1, metavar="SHARE",
                   help="refuse a window in which other processes used more than this "
                        "share of all CPUs (default: %(default)s)")
    _add_setting_options(s)
    _add_lock_option(s)
    s.set_defaults(fn=cmd_idle)

    s = sub.add_parser("measure", help="run one command under the meter; print its run record")
    _add_meter_options(s, DEFAULT_METER_ORDER + ",none")
    s.add_argument("--idle-power", type=float, metavar="W",
                   help="idle power for the passive/active split")
    s.add_argument("--stdin", default=os.devnull, metavar="FILE")
    s.add_argument("--stdout", metavar="FILE", help="output file, flushed inside the region")
    s.add_argument("--op", default="command", help="label of the operation")
    s.add_argument("--json", action="store_true")
    s.add_argument("command", nargs=argparse.REMAINDER)
    _add_lock_option(s)
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
    s.set_defaults(fn=cmd_gen)

    s = sub.add_parser("stage", help="copy a generated input to this machine, sha256 checked")
    s.add_argument("master", help="the master input's manifest (JSON)")
    s.add_argument("--out", required=True, help="where the copy goes on this machine")
    s.add_argument("--manifest", required=True, help="this copy's manifest (JSON)")
    s.set_defaults(fn=cmd_stage)

    s = sub.add_parser("codecs", help="list codec entries with availability and versions")
    s.add_argument("set", nargs="*", help="set names or entries (default: all)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--check", action="store_true", help="fail when any binary is missing")
    s.set_defaults(fn=cmd_codecs)

    s = sub.add_parser("job", help="one measurement job with repeats (what the workflow runs)")
    _add_meter_options(s)
    s.add_argument("--testbed", required=True)
    s.add_argument("--manifest", required=True, help="the input's manifest entry (JSON)")
    s.add_argument("--codec", required=True, help="codec entry, or 'plain' for the baseline")
    s.add_argument("--journal", required=True, help="append-only JSONL that survives a kill")
    s.add_argument("--out", required=True, help="this job's runs (JSONL), written at the end")
    s.add_argument("--idle", help="idle calibration JSON")
    s.add_argument("--idle-power", type=float)
    s.add_argument("--min-repeats", type=int, default=3)
    s.add_argument("--max-repeats", type=int, default=10)
    s.add_argument("--ci-target", type=float, default=0.05)
    s.add_argument("--copies", type=int, default=1)
    s.add_argument("--threads", type=int, default=0,
                   help="threads of multi-threaded codecs (default 0: every core here)")
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
    _add_setting_options(s)
    _add_lock_option(s)
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
    _add_meter_options(s)
    s.add_argument("--target-dir", default=".")
    s.add_argument("--codecs", nargs="*", default=["paper"])
    s.add_argument("--testbed", default=os.uname().nodename)
    s.add_argument("--description", default="")
    s.add_argument("--out")
    s.add_argument("--csv", help="also write key,value rows for the paper's table")
    s.set_defaults(fn=cmd_provenance)

    s = sub.add_parser("claims", help="decide some claims anew from runs (the appendix's check)")
    s.add_argument("runs", nargs="+", help="runs.csv or journal .jsonl files")
    s.add_argument("--claim", action="append", help="claim id (repeatable; default: all)")
    s.add_argument("--settings", metavar="CSV", help=SETTINGS_HELP)
    s.add_argument("--reference", default="paper/reference")
    s.add_argument("--ci-target", type=float, default=0.05)
    s.set_defaults(fn=cmd_claims)

    s = sub.add_parser("plan", help="how long a study will take here (a short pilot, cached)")
    s.add_argument("--configfile", nargs="+", default=["config.yaml"],
                   help="config.yaml and overlays, as given to snakemake")
    s.add_argument("--config-json", help="the merged config itself (what the workflow passes)")
    s.add_argument("--cache", help="pilot cache (default: results/<testbed>/plan/pilot.json)")
    s.add_argument("--out", help="also write the estimate as JSON")
    s.add_argument("--quiet", action="store_true")
    _add_lock_option(s)
    s.set_defaults(fn=cmd_plan)

    s = sub.add_parser("restore", help="undo what killed wattzip commands left changed on "
                                       "this machine (schedulers, governors, mounts, ...)")
    _add_lock_option(s)
    s.set_defaults(fn=cmd_restore)

    s = sub.add_parser("analyze", help="summary, break-even, E_sav, correlation, claims")
    s.add_argument("runs", nargs="+", help="runs.csv or journal .jsonl files")
    s.add_argument("--margin", type=float, default=0.02,
                   help="a cell's saving is negligible within this share of its baseline "
                        "(default: %(default)s)")
    s.add_argument("--reads-per-write", type=float, default=1.0,
                   help="the workload a cell's verdict is about (default: %(default)s)")
    s.add_argument("--settings", metavar="CSV", help=SETTINGS_HELP)
    s.add_argument("--out", required=True)
    s.add_argument("--reference", default="paper/reference")
    s.add_argument("--ci-target", type=float, default=0.05)
    s.set_defaults(fn=cmd_analyze)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "command", None) and args.command[:1] == ["--"]:
        args.command = args.command[1:]
    try:
        return args.fn(args)
    except WattzipError as exc:
        print(f"wattzip: error: {exc}", file=sys.stderr)
        return 2
