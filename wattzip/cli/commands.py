"""What each wattzip command does: a few lines into the layers below, no decisions."""

from __future__ import annotations

import contextlib
import json
import os
import sys

from wattzip import machine, meters, records, units
from wattzip.errors import ConfigError, WattzipError
from wattzip.machine import system, trust
from wattzip.machine.emulated import EmulatedMachine
from wattzip.measure import flags, provenance, spec
from wattzip.measure.flags import log
from wattzip.workload import codec_registry, inputs


def _held_as_root(what: str, testbed: str, wait_s: float):
    """The machine's lock, as root (whose commands may touch a meter a study uses);
    nothing for another user, who can open no meter of root's."""
    if os.geteuid() != 0:
        return contextlib.nullcontext()
    return machine.session(what, testbed, os.getcwd(), wait_s=wait_s)


def cmd_meters(a) -> int:
    opts = meters.options_of(flags.meter_config_of(a))
    rows = []
    with _held_as_root("meters", "", a.lock_wait):
        probed = meters.probe_all(opts)
    for name, reason in probed.items():
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


def study_slice(a, kind: str) -> dict:
    """The spec `--spec` names, or the one the workflow would write for the testbed,
    setting (and file type and codec) given of the study `--configfile` reads."""
    chosen = [f"--{key.replace('_', '-')}" for key in ("testbed", "setting", "file_type",
                                                       "codec") if getattr(a, key, None)]
    if a.spec is not None:
        if chosen:
            raise ConfigError(f"{', '.join(chosen)}: the spec names its job; give them "
                              "with --configfile")
        return spec.read(a.spec, kind)
    from wattzip.model.config import study_files
    from wattzip.model.study import Study

    study = Study.from_files([trust.trusted_file(path, "--configfile")
                              for path in study_files(a.configfile)])
    testbed = a.testbed or study.first_testbed
    setting = a.setting or study.primary.name
    for name, given, known in (("testbed", testbed, study.testbeds),
                               ("setting", setting, study.settings)):
        if given not in known:
            raise ConfigError(f"--{name} {given}: not one of the study's "
                              f"({', '.join(known)})")
    if kind == spec.IDLE:
        return spec.check(study.idle_spec(testbed, setting), kind, "--configfile")
    jobs = {(j.file_type, j.codec): j for j in study.jobs(testbed) if j.setting == setting}
    job = jobs.get((a.file_type, a.codec))
    if job is None:
        raise ConfigError(f"--file-type {a.file_type} --codec {a.codec}: not a job of the "
                          "study; its jobs: " + ", ".join(f"{t} {c}" for t, c in jobs))
    return spec.check(study.job_spec(job), kind, "--configfile")


def cmd_idle(a) -> int:
    from wattzip.measure import idle

    idle_spec = study_slice(a, spec.IDLE)
    system.check_host(*spec.expected(idle_spec))
    trust.trusted_paths({"--journal": a.journal, "--out": a.out})
    setting = idle_spec["setting"]["name"]
    with machine.session("idle", idle_spec["testbed"] or "", f"{os.getcwd()} ({setting})",
                         wait_s=a.lock_wait):
        meter = meters.open_meter(idle_spec["meter"], "config", log)
        try:
            out = idle.calibrate_spec(meter, idle_spec, a.journal, log)
        finally:
            meter.close()
    text = json.dumps(out, indent=2)
    if a.out:
        records.write_text_atomically(a.out, text + "\n")
    half = ("no interval" if out["half_width_w"] is None else
            f"half-width {out['half_width_w']:.2f} W at {100 * out['confidence']:.4g}%")
    print(text if a.json or not a.out else
          f"idle power {out['idle_power_w']:.2f} W ({half}, sd {out['sd_w']:.2f} W, "
          f"{out['count']} x {out['seconds']} s, {out['stopped']}; {out['meter_method']})")
    return 0


def cmd_measure(a) -> int:
    from wattzip.measure import measurement

    if not a.command:
        raise WattzipError("nothing to measure: give the command after --, e.g. "
                           "wattzip measure -- gzip -c big.txt")
    with machine.session("measure", config=" ".join(a.command), wait_s=a.lock_wait):
        meter = meters.open_meter(flags.meter_config_of(a), "flag", log)
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
    size = units.parse_size(a.size) if a.size else None
    manifest = a.manifest or f"{a.out}.json"
    if os.path.isdir(os.path.dirname(manifest) or "."):  # else made with the input's
        records.check_writable("manifest", manifest)  # before the input's minutes
    # Generating loads every core (xz, hashing, writing): it holds the machine like a
    # measurement, so another study's runs or idle calibration never run beside it.
    with machine.session("gen", config=f"{os.getcwd()} ({a.type})", wait_s=a.lock_wait):
        entry = inputs.generate(a.type, size, a.out, seed=a.seed, sources=a.source,
                                progress=not a.quiet, declared=a.pinned)
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


def cmd_job(a) -> int:
    from wattzip.measure import measurement

    job_spec = study_slice(a, spec.JOB)
    given = measurement.Invocation(
        manifest=a.manifest, journal=a.journal, out=a.out, idle=a.idle,
        idle_power_w=a.idle_power, trace_dir=a.trace_dir, verify_cache=a.verify_cache,
        copy_buffer_bytes=units.parse_size(a.copy_buffer), lock_wait_s=a.lock_wait)
    measurement.run_spec(job_spec, given, log)
    return 0


def cmd_collect(a) -> int:
    missing = [j for j in a.journals if not os.path.isfile(j)]
    if missing:  # a journal not yet written is empty, but one named here must be there
        raise WattzipError(f"no such journal: {', '.join(missing)}")
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

    # A meter is opened (a port, a BMC queried) only under the machine's lock, as root:
    # never beside a study measuring with it.
    with _held_as_root("provenance", a.testbed, a.lock_wait):
        try:
            meter = (meters.open_meter(spec.read_json(a.meter_config, "--meter-config"),
                                       "config", log)
                     if a.meter_config else meters.open_meter(flags.meter_config_of(a), "flag",
                                                              log))
            meter.close()
        except WattzipError as exc:
            meter = exc  # recorded as the meter's error
    medium = spec.medium({"medium": spec.read_json(a.medium, "--medium")}) if a.medium else None
    info = provenance.testbed_provenance(a.target_dir, codec_registry.resolve(a.codecs), meter,
                                         a.testbed, a.description, medium)
    # What the measured tools saw (config machine:), beside the real machine above.
    info["emulated_machine"] = EmulatedMachine.of(
        spec.read_json(a.machine, "--machine") if a.machine else None).describe()
    text = json.dumps(info, indent=2)
    if a.out:
        records.write_text_atomically(a.out, text + "\n")
    else:
        print(text)
    if a.csv:
        records.write_csv_atomically(system.provenance_rows(info), a.csv, ["key", "value"])
    return 0


def cmd_analyze(a) -> int:
    from wattzip.analysis import run_tables

    if a.expect or a.testbed:  # what the folder must hold, checked before any writing
        runs = records.load_runs(a.runs)
        if a.expect:
            records.check_stage(runs, a.expect)
        if a.testbed:
            records.check_testbed(runs, a.testbed, a.runs)
    options = _analysis_options(a)
    written = run_tables.analyze(a.runs, a.out, reference_dir=a.reference,
                               options=options, settings_path=a.settings)
    # The lzbench-shaped table as Markdown beside its CSV, to paste beside lzbench's.
    from wattzip.analysis.analysis_options import percent
    from wattzip.report import codec_cells, tables

    markdown = os.path.join(a.out, "lzbench.md")
    records.write_text_atomically(markdown, codec_cells.lzbench_markdown(
        tables.rows(os.path.join(a.out, "lzbench.csv")), f"{percent(options.confidence)}%"))
    written.append(markdown)
    for path in written:
        log(f"wrote {path}")
    return 0


def _analysis_options(a):
    from wattzip.analysis.analysis_options import AnalysisOptions

    return AnalysisOptions(margin=a.margin, reads_per_write=a.reads_per_write, looks=a.looks,
                           ci_target=a.ci_target, watch=a.watch, effect=a.effect,
                           moderated=a.moderated)


def cmd_claims(a) -> int:
    import csv

    from wattzip import records
    from wattzip.analysis import run_tables

    rows = run_tables.claim_rows(a.runs, a.claim, a.reference, _analysis_options(a), a.settings)
    if not rows:
        raise WattzipError(f"no claim {', '.join(a.claim or [])} in the registry "
                           f"({a.reference}/claims.yaml)")
    writer = csv.DictWriter(sys.stdout, list(rows[0]))
    writer.writeheader()
    for row in rows:
        writer.writerow({k: records.table_cell(v) for k, v in row.items()})
    return 0


def cmd_plan(a) -> int:
    from wattzip.model import plan
    from wattzip.model.config import config_from_file, study_files
    from wattzip.model.study import Study

    study = (Study(config_from_file(a.config_file)) if a.config_file
             else Study.from_files(study_files(a.configfile)))
    text = plan.run(study, a.cache, a.out, a.lock_wait, progress=None if a.quiet else log)
    print(text)
    return 0


def cmd_simulate(a) -> int:
    from wattzip.model import rehearsal
    from wattzip.model.config import config_from_file
    from wattzip.model.study import Study

    study = Study(config_from_file(a.config_file))
    written = rehearsal.synthesize(study, a.testbed or study.first_testbed, a.runs)
    log(f"SIMULATED runs of study {study.name} on testbed {a.testbed}: {written}")
    return 0


def cmd_rehearse(a) -> int:
    from wattzip.model import rehearsal

    extra = a.snakemake_args[1:] if a.snakemake_args[:1] == ["--"] else a.snakemake_args
    return rehearsal.run_workflow(a.configfile, a.cores, a.directory, extra)


def cmd_restore(a) -> int:
    """What killed wattzip commands left changed on this machine: shown, then undone."""
    log(machine.restore(a.lock_wait, log))
    return 0


def cmd_bench(a) -> int:
    from wattzip.bench import command_line

    return command_line.run(a)
