"""One measurement job on this machine: its input, codec, medium and idle power checked,
then run under the machine's lock with everything it changed undone, and its runs
written atomically (what `wattzip job`, and so every workflow job, does)."""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from wattzip import machine, meters, records, units
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.stopping import METRICS, VerdictLooks
from wattzip.errors import WattzipError
from wattzip.machine import emulated as emulation
from wattzip.machine import factors, system, throttle, trust
from wattzip.machine.emulated import EmulatedMachine
from wattzip.machine.media import Medium
from wattzip.measure import drift, free_space, idle, repeats, runner
from wattzip.measure import spec as specs
from wattzip.measure.job import DutyCycle, MeasurementJob
from wattzip.meters import coefficients
from wattzip.run_record import RunRecord
from wattzip.workload import codec_registry
from wattzip.workload.codec_registry import Codec


def read_input(manifest_path: str) -> dict:
    """The input's manifest entry, refused unless the file it names is here, whole, and
    root's alone in a folder root's alone (a link swapped in would make root read, and
    write out compressed, any file: wattzip.machine.trust)."""
    manifest = records.read_json(manifest_path, "input manifest",
                                 ("path", "size_bytes", "sha256", "file_type"))
    if os.path.lexists(manifest["path"]):
        trust.trusted_file(manifest["path"], f"the input of {manifest_path}")
    if not (os.path.exists(manifest["path"])
            and os.path.getsize(manifest["path"]) == manifest["size_bytes"]):
        raise WattzipError(f"the input {manifest['path']} of {manifest_path} is missing or "
                           "has another size on this machine; delete the manifest so that "
                           "the workflow makes it again")
    return manifest


def codec_on(name: str, medium: Medium) -> Codec | None:
    """The job's codec (None: plain), installed; a filesystem's compression adds its mount
    option to the medium, which must be that filesystem."""
    if name == "plain":
        return None
    codec = codec_registry.get(name)
    codec_registry.require(codec)
    if codec.filesystem:
        if medium.fs != codec.filesystem:
            raise WattzipError(f"codec {codec.name} compresses in {codec.filesystem}: its "
                               f"medium must be a {codec.filesystem} filesystem (kind image, "
                               f"fs {codec.filesystem}), not {medium.fs or medium.kind}")
        medium.mount_options = ",".join(o for o in (medium.mount_options, codec.mount_option)
                                        if o)
    return codec


@dataclass(frozen=True)
class IdleCalibration:
    """What a job takes from its setting's idle calibration, read once: the power to
    subtract, the meter identity it makes, the idle mean's standard uncertainty (sd /
    sqrt(windows), W) and windows for the budget's idle term, and the drift reference's
    phases (wattzip.measure.drift)."""

    power_w: float | None
    meter_identity: dict
    uncertainty_w: float | None = None
    windows: int | None = None
    reference_phases: tuple = ()
    package_temp_c: float | None = None  # the thermal gate's baseline


def idle_calibration(meter: meters.Meter, calibration_path: str | None,
                     given_w: float | None, testbed: str | None = None,
                     log: Callable[[str], None] = lambda _: None) -> IdleCalibration:
    """The job's idle calibration: it must be the same meter's, on this host (a note when
    it was measured in an earlier boot). A number given by hand is recorded as such, with
    no interval to state and no phases (the drift check then judges by Welch's
    interval)."""
    if not calibration_path:
        return IdleCalibration(given_w, meter.identity({"idle_power_w": given_w}))
    calibration = records.read_json(calibration_path, "idle calibration",
                                    ("idle_power_w", "meter_source", "meter_scope"))
    meters.check_same_meter(calibration, meter, calibration_path)
    if note := idle.check_same_machine(calibration, calibration_path, testbed):
        log(note)
    sd, count = calibration.get("sd_w"), calibration.get("count")
    measured = sd is not None and bool(count)
    return IdleCalibration(
        calibration["idle_power_w"], meter.identity(calibration),
        uncertainty_w=sd / count ** 0.5 if measured else None,
        windows=int(count) if measured else None,
        reference_phases=tuple(calibration.get("reference_phases") or ()),
        package_temp_c=calibration.get("package_temp_c"))


def verdict_looks(spec: Mapping, own_journal: str | None = None,
                  file_type: str | None = None) -> VerdictLooks | None:
    """The verdict design's stopping rule (a job spec's `looks`, decided by its `verdict`
    and `repeats`): the codec's job measures its own plain arm, which the verdicts compare
    with (wattzip.measure.repeats), and stops once they and the break-even kinds of
    `kinds` are decided. Under the moderated design the other cells' journals in
    `prior_journals` (those written so far; not `own_journal`; each one's last
    measurement) give the prior, and the plain arm is the one of the setting's
    `file_type` that every codec's job of it adds to."""
    looks = spec.get("looks")
    if not looks:
        return None
    planned = tuple(looks["runs"])
    if any(b <= a for a, b in zip(planned, planned[1:], strict=False)) or planned[0] < 2:
        raise WattzipError(f"looks {list(planned)}: the looks must increase from 2 runs on, "
                           "e.g. 3,5,8")
    # The study's options of its repeats and verdict: the looks decide by the rules the
    # report decides by (Study.analysis_options).
    options = AnalysisOptions.of_study(spec["repeats"], spec["verdict"])
    prior_journals = looks["prior_journals"] if options.moderated else None
    own = os.path.abspath(own_journal) if own_journal else None
    # The runs' journals, not the drift check's reference journals beside them.
    paths = sorted(p for p in glob.glob(os.path.join(prior_journals, "*", "*.jsonl"))
                   if not p.endswith(drift.REFERENCE_SUFFIX)) if prior_journals else []
    # Each journal's last measurement: the runs the analysis reads of that job (runs.csv),
    # so that the report decides each cell on the prior its job's looks fitted.
    prior = [r for path in paths if os.path.abspath(path) != own
             for r in records.last_measurement(
                 records.read_journal(path, required=records.RUN_REQUIRED))]
    return VerdictLooks(planned, options, prior_runs=tuple(prior),
                        plain_type=file_type if prior_journals else None,
                        kind_metrics=tuple(m for m in METRICS if m in looks["kinds"]))


@dataclass(frozen=True)
class Invocation:
    """What one run of `wattzip job` is given besides its spec: the files of this
    invocation (the input's manifest, the idle calibration, the journal, the runs, the
    traces, the verification cache) and the baseline copy's buffer."""

    manifest: str
    journal: str
    out: str
    idle: str | None = None
    idle_power_w: float | None = None
    trace_dir: str | None = None
    verify_cache: str | None = None
    copy_buffer_bytes: int = runner.DEFAULT_COPY_BUFFER
    lock_wait_s: float = machine.DEFAULT_LOCK_WAIT_S


def run_spec(spec: Mapping, given: Invocation, log: Callable[[str], None]) -> dict:
    """The job a spec describes (wattzip.measure.spec), measured alone on this machine."""
    rule = specs.repeats(spec)
    if rule.max < rule.min:
        raise WattzipError(f"wattzip job: the spec's repeats.max {rule.max} is below its "
                           f"repeats.min {rule.min}")
    system.check_host(*specs.expected(spec))
    trust.trusted_paths({"the input manifest": given.manifest, "the idle calibration":
                         given.idle, "the job's journal": given.journal,
                         "the job's runs": given.out, "the verification cache":
                         given.verify_cache})
    if given.trace_dir:
        trust.trusted_folder(given.trace_dir, "the traces' folder")
    manifest = read_input(given.manifest)
    medium = specs.medium(spec)
    codec = codec_on(spec["codec"], medium)
    meter = meters.open_meter(spec["meter"], "config", log)
    calibration = idle_calibration(meter, given.idle, given.idle_power_w, spec["testbed"], log)
    job = job_of(spec, manifest, medium, codec, meter, calibration, given)
    return run(job, meter, journal=given.journal, out=given.out,
               machine_factors=specs.machine_factors(spec), lock_wait=given.lock_wait_s,
               log=log)


def job_of(spec: Mapping, manifest: Mapping, medium: Medium, codec: Codec | None,
           meter: meters.Meter, calibration: IdleCalibration,
           given: Invocation) -> MeasurementJob:
    """The measurement job of a spec, its input, medium, codec, meter and idle calibration."""
    setting = spec["setting"]
    duty = specs.of_section(DutyCycle, spec["dutycycle"]) if spec.get("dutycycle") else None
    emulated = EmulatedMachine.of(spec.get("machine"))
    return MeasurementJob(
        testbed=spec["testbed"], file_type=manifest["file_type"],
        input_path=manifest["path"], input_sha256=manifest["sha256"],
        input_bytes=manifest["size_bytes"], medium=medium, codec=codec,
        repeats=specs.repeats(spec),
        copies=int(setting.get("copies", 1)),
        # The cores it is given: the emulated machine's, else its affinity's.
        threads=int(spec["threads"]) or emulated.cpus or len(os.sched_getaffinity(0)),
        machine=emulated,
        idle_power_w=calibration.power_w, idle_power_u_w=calibration.uncertainty_w,
        idle_windows=calibration.windows, trace_dir=given.trace_dir,
        copy_buffer_bytes=given.copy_buffer_bytes,
        bandwidth_bytes_per_s=throttle.parse_bandwidth(setting.get("bandwidth", "unlimited")),
        duty=duty,
        factors={"setting": setting["name"], **specs.machine_factors(spec),
                 "medium": medium.name, "target_dir": medium.path},
        meter_identity=calibration.meter_identity,
        model=meter.model if meter.name == "model" else coefficients.configured(None, None),
        verify_cache=given.verify_cache, quiet=specs.quiet(spec),
        idle_temp_c=calibration.package_temp_c,
        drift=specs.drift(spec, calibration.reference_phases),
        codec_only=bool(spec.get("codec_only")),
        # The verdict design's looks are a codec's (its job measures its own plain arm, or
        # under the moderated design adds to its setting and file type's shared one).
        looks=(verdict_looks(spec, given.journal, manifest["file_type"])
               if codec and not duty else None),
    )


def check_same_tools(job: MeasurementJob, journal: str) -> None:
    """Refuse to resume a job whose runs were measured by another version of its tool (or
    of dd, for its plain arm): one cell's runs would pool two tools, under one key."""
    if not os.path.exists(journal):
        return
    plain = codec_registry.plain_copy_version()
    now = {"plain": plain,
           job.codec_name: codec_registry.version(job.codec) if job.codec else plain}
    for run in repeats.read_journal(journal, job.key()):
        then, expected = run.get("tool_version"), now.get(run["codec"])
        if then and expected and then != expected:
            raise WattzipError(
                f"{job.file_type}/{job.codec_name}: its runs in {journal} were measured by "
                f"{run['tool']} {then}, and {run['tool']} is {expected} now: one cell's "
                "runs must come from one tool. Put back that version to finish the job, or "
                "remove the journal to measure the job anew")


def run(job: MeasurementJob, meter: meters.Meter, *, journal: str, out: str,
        machine_factors: Mapping[str, str], lock_wait: float,
        log: Callable[[str], None]) -> dict:
    """Measure the job alone on this machine and write its runs to `out`.

    The session takes the machine's lock, undoes what a killed job left, and undoes this
    job's own changes (medium, factors, throttle, processes), also on SIGTERM. With too
    few verified repeats nothing is written: the workflow sees the job fail and runs it
    again, resuming from the journal, where the failed runs stay.
    """
    check_same_tools(job, journal)
    medium = job.medium
    label = f"{os.getcwd()} ({job.factors.get('setting')} {job.file_type} {job.codec_name})"
    with machine.session("job", job.testbed, label, wait_s=lock_wait):
        try:
            medium.attach()
            free_space.check_free_space(
                medium.path, free_space.space_needed(job.input_bytes, job.copies,
                                                job.duty.phases if job.duty else 1,
                                                medium.inputs == "on-medium"),
                medium.image, units.parse_size(medium.size) if medium.image else 0)
            with (emulation.hotplugged(job.machine, log),
                  factors.applied(medium.scheduler_disk(), machine_factors)):
                # The job's loop between two reference measurements (wattzip.measure.drift).
                summary, runs = drift.checked_job(job, meter, journal, log)
        finally:
            try:
                medium.detach()
            finally:
                meter.close()
    if not summary["complete"]:
        raise WattzipError(f"{job.file_type}/{job.codec_name}: only {summary['repeats']} "
                           f"verified repeat(s) of the {job.repeats.min} needed; "
                           f"{summary['failed']} run(s) failed and {summary['disturbed']} "
                           f"were disturbed by other load (see {journal}). Fix the "
                           "cause and run the workflow again: the job resumes")
    records.write_text_atomically(out, "".join(json.dumps(r, sort_keys=True) + "\n"
                                               for r in runs))
    # Under planned looks the job stopped on its verdicts (logged above), not on a width.
    target = ("" if summary["looked"] else
              ", CI target " + ("met" if summary["ci_met"] else "NOT met"))
    log(f"{job.file_type}/{job.codec_name}: {summary['repeats']} repeats, "
        f"{summary['failed']} failed run(s), {summary['disturbed']} disturbed by other "
        f"load or heat ({summary['heat']} by heat) and measured again{target}")
    return summary


def measure_command(argv: list[str], meter: meters.Meter, op: str, stdin: str | None,
                    stdout: str | None, idle_power_w: float | None) -> dict:
    """One command measured as a run is (caches dropped, tools kept warm, output flushed
    inside the region); its record, without a job's verification."""
    operation = runner.Operation(op, [argv], [stdin], [stdout], [stdout] if stdout else [])
    cache = runner.drop_caches([p for p in (stdin, stdout) if p and os.path.exists(p)])
    if cache == "global":
        runner.warm(runner.tool_files(argv[0]))
    target = os.path.dirname(os.path.abspath(stdout)) if stdout else os.getcwd()
    result = runner.measure(operation, meter, idle_power_w, system.block_device(target)["disk"])
    output = os.path.getsize(stdout) if stdout and os.path.exists(stdout) else None
    return RunRecord.new(result, factors={"cache_drop": cache}, output_bytes=output,
                         verified=result["succeeded"], tool_version=None).to_dict()


def describe_run(record: dict) -> str:
    wait = "" if record["wait_s"] is None else f", {record['wait_s']:.3f} wait"
    energy = ("energy not measured (no meter)" if record["energy_j"] is None else
              f"{record['energy_j']:.2f} J {record['meter_method']} by "
              f"{record['meter_source']} ({record['meter_scope']})")
    return (f"{record['elapsed_s']:.3f} s elapsed ({record['user_s']:.3f} user, "
            f"{record['sys_s']:.3f} sys{wait}; CPU {record['cpu_utilization']:.2f}x), "
            f"{energy}, exit {record['exit_code']}")
