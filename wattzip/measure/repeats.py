"""A measurement job: one file type and one codec (or the plain baseline), repeated.

Runs alternate write then read (compress-write, decompress-read) so each read
finds the file its write just flushed.  Under the verdict design a codec's job
measures its own plain arm too, interleaved with the codec's in ABBA order
(plain pair, codec pair; codec pair, plain pair; ...), so that drift over time
(heat, the host's cache, a neighbour) falls on both arms alike.  Under the
moderated design the plain arm is one per setting and file type: each codec's
job adds a pair to it, before or after its own pairs in turn (ABBA through the
study's order), and more only while it holds fewer pairs than the job's look.  Every finished
run is appended to a journal at once; a rerun of a job that died finds its runs
(both arms') there and goes on from where it stopped.  The journal is not a
Snakemake output, so Snakemake never deletes it when it cleans up an
interrupted job.

Before every run the caches are made cold without making the tools cold;
after every write the stored files are checked to own their blocks and to
give back the input, all outside the measured region.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from wattzip import records
from wattzip.analysis import stopping
from wattzip.errors import ConfigError, FactorError
from wattzip.machine import factors, system
from wattzip.machine.extents import check_owns_blocks
from wattzip.machine.throttle import throttled
from wattzip.measure import job_summary, runner
from wattzip.measure.cold_cache import ColdCache
from wattzip.measure.interleaving import pairing, plain_arm, repeat_arms
from wattzip.measure.job import MeasurementJob
from wattzip.measure.provenance import who_measured
from wattzip.measure.runner import measure, write_trace
from wattzip.measure.staging import (
    on_disk_bytes,
    prepare_input_copies,
    stage_on_medium,
)
from wattzip.meters import Meter
from wattzip.meters.base import identity_id
from wattzip.run_record import RunRecord, codec_fields, in_effect_fields
from wattzip.workload import codec_registry

MAX_CONSECUTIVE_FAILURES = 2
# A codec-only run's cache: nothing dropped, its input and the stored file read into the
# page cache before it; its output goes to /dev/null, so it is checked by its exit code,
# the same command's stored output having given the input back in the repeat's write.
CACHED = "none: input and stored file cached"
CACHED_VERIFICATION = "exit code; the repeat's write of the same command verified"


def read_journal(path: str | os.PathLike, key: str) -> list[dict]:
    """This job's runs from its journal (records.read_journal names any damaged line)."""
    return records.read_journal(path, key, required=records.RUN_REQUIRED)


class _Arms:
    """A job's arms (the codec's, and under the verdict design a plain one): each arm's
    cold cache, tool version and medium description, and the medium mounted now."""

    def __init__(self, job: MeasurementJob, arms: list[MeasurementJob], version: str | None,
                 medium_info: dict):
        self.job, self.arms, self.medium_info = job, arms, medium_info
        self.cold = {id(a): ColdCache(a) for a in arms}  # each arm's tools kept warm
        self.versions = {id(a): version if a is job else codec_registry.plain_copy_version()
                         for a in arms}
        self.infos: dict[int, dict] = {}
        self.mounted = job.medium

    def enter(self, arm: MeasurementJob) -> tuple[ColdCache, str | None, dict]:
        """Mount the arm's medium (a filesystem codec's compression on or off); its cold
        cache, version and medium description."""
        if arm.medium is not self.mounted:
            self.mounted.unmount()
            arm.medium.mount()
            self.mounted = arm.medium
        if id(arm) not in self.infos:  # a plain arm's own mount options, as mounted
            self.infos[id(arm)] = self.medium_info if arm.medium is self.job.medium else {
                **self.medium_info, "mount_options": arm.medium.describe()["mount_options"]}
        return self.cold[id(arm)], self.versions[id(arm)], self.infos[id(arm)]

    def stored_paths(self) -> list[str]:
        return [p for a in self.arms for p in a.stored_paths()]


def run_job(job: MeasurementJob, meter: Meter, journal: str | os.PathLike,
            log: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)) -> dict:
    """Repeat the job's write/read pair until its stopping rule says enough (the paper's,
    or the verdict design's looks: then with a plain arm, wattzip.measure.interleaving).

    Returns a summary: repeats done (per arm), whether the confidence target was met,
    and failed runs.  Failed or unverified runs are recorded, never dropped; an outlier
    stays in the runs (wattzip.analysis.stopping says when it keeps the job going).
    The medium is attached first and detached last, also when the job dies.
    """
    key = job.key()
    runs = _resumed_runs(job, key, journal, log)
    last_repeat = max((r["repeat"] for r in runs), default=0)
    version = (codec_registry.version(job.codec) if job.codec
               else codec_registry.plain_copy_version())
    paired = job.looks is not None
    if paired and (job.codec is None or job.duty):
        raise ConfigError("the verdict design's looks are for a codec's job, which measures "
                          "its own plain arm; a plain or duty-cycle job follows the paper's rule")

    def tell(message: str) -> None:
        log(f"{job.file_type}/{job.codec_name}: {message}")

    prepare_input_copies(job, log)
    job.medium.attach()
    stack = contextlib.ExitStack()
    try:
        stage_on_medium(job, log)
        medium_info, devices, throttle = _set_up_medium(job, stack)
        # The verdict design: a plain arm beside the codec's (its own, or pairs of a
        # shared one), in the order wattzip.measure.interleaving.repeat_arms gives.
        arms = _Arms(job, [plain_arm(job), job] if paired else [job], version, medium_info)
        consecutive_failures = 0
        while (upcoming := _next_repeat(job, arms.arms, runs, last_repeat, tell)) is not None:
            repeat, todo = upcoming
            repeat_ok = True
            for arm in todo:
                if job.quiet:  # the thermal gate: each arm starts as cool as idle was
                    job.quiet.wait_until_cool(tell, f"repeat {repeat} ({arm.codec_name})",
                                              job.idle_temp_c)
                for record in _measure_pair(arm, meter, devices, throttle, *arms.enter(arm),
                                            repeat, key, arms.stored_paths(), pairing(job, arm)):
                    records.append_journal(journal, record)
                    runs.append(record)
                    # A disturbed run is no failure of the job: it is measured again.
                    repeat_ok &= record["verified"] or bool(record.get("disturbed"))
                    log(_progress_line(job, record))
                    if record.get("disturbed") and job.quiet:  # measured again when quiet
                        job.quiet.wait_until_quiet(tell, f"repeat {repeat}")
                        if "heat" in record["disturbed"]:  # and cool
                            job.quiet.wait_until_cool(tell, f"repeat {repeat}",
                                                      job.idle_temp_c)
            last_repeat = repeat
            consecutive_failures = 0 if repeat_ok else consecutive_failures + 1
            if consecutive_failures >= MAX_CONSECUTIVE_FAILURES:
                log(f"{job.file_type}/{job.codec_name}: {consecutive_failures} failed repeats "
                    "in a row; stopping this job (the failures are recorded)")
                break
        _remove(arms.stored_paths())
    finally:
        stack.close()
        job.medium.detach()
    return job_summary.summary(job, runs, log)


def _next_repeat(job: MeasurementJob, arms: list[MeasurementJob], runs: list[dict],
                 last_repeat: int, tell: Callable[[str], None]
                 ) -> tuple[int, list[MeasurementJob]] | None:
    """The repeat to measure next and its arms in order, or None when the job is done.

    The stopping rule counts verified runs per operation, so a repeat cut short by a
    kill (a write without its read) is simply made up for; an arm a kill kept from
    starting its repeat runs first, under that repeat, so the order stays ABBA."""
    begun = {(r["codec"], r["repeat"]) for r in runs}
    todo = [a for a in repeat_arms(job, arms, last_repeat, runs)
            if last_repeat and (a.codec_name, last_repeat) not in begun]
    if todo:
        return last_repeat, todo
    if (stopping.needs_more(runs, job.ops, job.repeats, job.looks, log=tell)
            and last_repeat < stopping.repeat_cap(job.repeats.max, runs)):
        return last_repeat + 1, repeat_arms(job, arms, last_repeat + 1, runs)
    return None


def _resumed_runs(job: MeasurementJob, key: str, journal: str | os.PathLike,
                  log: Callable[[str], None]) -> list[dict]:
    """This job's runs already in its journal (a rerun goes on from them), saying so, and
    saying when the journal holds only another identity's runs (left there, unused)."""
    Path(journal).parent.mkdir(parents=True, exist_ok=True)
    runs = read_journal(journal, key)
    # A job measured again after a drift (epoch 1) finds its first measurement's runs,
    # which the drift check has already reported: they are no other identity's.
    own = {key} | {dataclasses.replace(job, epoch=e).key() for e in range(job.epoch)}
    others = [r for r in records.read_journal(journal, required=records.RUN_REQUIRED)
              if r.get("job_key") not in own]
    if others and not runs:
        log(f"{job.file_type}/{job.codec_name}: {len(others)} run(s) in {journal} were "
            "measured under another meter identity or job setup (meter, coefficients, idle "
            "calibration, codec, medium, factors); they stay in the journal, unused, and "
            "this job measures again")
    if runs:
        log(f"{job.file_type}/{job.codec_name}: resuming after "
            f"{max(r['repeat'] for r in runs)} repeat(s) found in {journal}")
    return runs


def _set_up_medium(job: MeasurementJob, stack: contextlib.ExitStack) -> tuple[dict, dict, object]:
    """The attached medium's fields for every run record, the job's block devices, and
    its bandwidth throttle (entered on `stack`, released when the job ends)."""
    medium_info = job.medium.describe()
    scheduler_disk = job.medium.scheduler_disk()
    medium_info.update(scheduler_disk=scheduler_disk,
                       **in_effect_fields(factors.in_effect(scheduler_disk)),
                       bandwidth_bytes_per_s=job.bandwidth_bytes_per_s)
    devices = {"target": system.block_device(job.medium.path)["disk"],
               "input": system.block_device(os.path.dirname(os.path.abspath(
                   job.sources()[0])))["disk"]}
    # An emulated disk with one budget throttles itself (wattzip.machine.onedisk); otherwise
    # a block-I/O cgroup caps each device's reads and writes apart.
    shared = job.medium.shares_budget
    # The job's cgroup also holds the emulated machine's CPUs and memory (config machine:).
    throttle = stack.enter_context(
        throttled(devices, None if shared else job.bandwidth_bytes_per_s, job.machine))
    capped = throttle is not None and throttle.bytes_per_s is not None
    # What the kernel (or the emulated disk) holds, read back; throttled() refuses any
    # other value, and so does the check below for the emulated disk.
    if shared:
        applied = job.medium.budget_applied_bytes_per_s()
        if applied != job.bandwidth_bytes_per_s:
            raise FactorError(f"bandwidth: the emulated disk holds {applied} B/s, not "
                              f"{job.bandwidth_bytes_per_s}")
    else:
        applied = min(throttle.applied_bytes_per_s().values()) if capped else None
    medium_info["bandwidth_applied_bytes_per_s"] = applied
    medium_info["bandwidth_budget"] = (
        "one for reads and writes" if shared else
        "each device's reads and writes apart" if capped else None)
    # The emulated machine as the kernel holds it, read back (None: the machine as it is).
    held = throttle.applied_machine() if throttle else {"cpus": None, "memory_bytes": None}
    medium_info.update(machine_cpus=len(held["cpus"]) if held["cpus"] else None,
                       machine_memory_bytes=held["memory_bytes"])
    return medium_info, devices, throttle


def _measure_pair(arm: MeasurementJob, meter: Meter, devices: dict, throttle, cold_cache: ColdCache,
                  version: str | None, info: dict, repeat: int, key: str,
                  stored: list[str], paired: dict) -> Iterator[dict]:
    """One arm's write and then read in one repeat, then its codec-only operations (the
    codec alone, from the page cache: MeasurementJob.codec_only_operations), each record as
    soon as its run ends (what follows a failed write is recorded as not run). Every
    stored file of the job is removed before the write, so the target holds one arm's
    files at a time."""
    write_op = arm.write_operation()
    read_op = None if arm.duty else arm.read_operation()
    cached = arm.codec_only_operations()
    _remove(stored)
    written_ok = False
    cached_write = cached[0].op if cached else None
    for operation in (write_op, *((read_op,) if read_op else ()), *cached):
        if operation is not write_op and not written_ok:
            record = _skipped_read(arm, operation.op, repeat, version, key)
        else:
            if operation in cached:  # input and stored file in the page cache, tools too
                runner.warm([*cold_cache.tool_files, *operation.stdin_paths,
                             *arm.stored_paths()])
                cache, warmed = CACHED, True
            else:
                cache, warmed = cold_cache()
            moved = arm.medium.disk_moved_bytes()
            result = measure(operation, meter, arm.idle_power_w, devices, throttle=throttle,
                             helpers=arm.medium.helper_pids())
            # What went through the emulated disk's budget in the region (read and written,
            # its own count): a run's bytes seen, not assumed.
            moved = None if moved is None else arm.medium.disk_moved_bytes() - moved
            arm.medium.mount()  # after an unmount flush, outside the region
            record = _record(arm, result, repeat, version, cache, key)
            record.update(info, tools_warmed=warmed, emulated_disk_bytes=moved)
            if operation is write_op:
                verified, why = _check_written(arm, result, record)
                written_ok = verified
            else:
                verified, why = written_ok and result["succeeded"], result["error"]
                record.output_bytes = (arm.input_bytes * arm.copies
                                       if operation.op != cached_write else None)
                if operation in cached:
                    record.verification = CACHED_VERIFICATION
            record.verified = bool(verified)
            record.failure = None if verified else (why or "failed")
            # Another process's load (or a VM neighbour's steal) in the region: flagged and
            # left out of every statistic; the job's loop measures it again.
            # So is a run the CPU's heat disturbed: throttled, or started hot.
            disturbed = None
            if arm.quiet and verified:
                fields = record.to_dict()
                disturbed = "; ".join(reason for reason in (
                    arm.quiet.judge(fields), arm.quiet.judge_heat(fields, arm.idle_temp_c))
                    if reason) or None
            if disturbed:
                record.update(disturbed=disturbed, verified=False,
                              failure=f"disturbed: {disturbed}; measured again")
            if arm.trace_dir:
                trace = os.path.join(arm.trace_dir, f"{operation.op}-r{repeat}.csv.gz")
                write_trace(trace, result["_power_samples"], result["_disk_samples"])
                record.trace = trace
        record.update(paired)
        yield record.to_dict()


def _remove(paths: list[str]) -> None:
    for path in paths:
        if os.path.exists(path):
            os.unlink(path)


def _check_written(job: MeasurementJob, result: dict, record: RunRecord) -> tuple[bool, str]:
    """After a write, outside the region: its size, whether it owns its blocks, its bytes."""
    stored = [p for p in job.stored_paths() if os.path.exists(p)]
    if job.codec and job.codec.filesystem:  # what the filesystem stored, not the file's size
        record.output_bytes = sum(on_disk_bytes(p) for p in stored)
    else:
        record.output_bytes = sum(os.path.getsize(p) for p in stored)
    if not result["succeeded"]:
        return False, result["error"]
    owns, why = check_owns_blocks(stored)
    record.own_blocks = owns
    if owns is False:
        return False, why
    verified = job.verify()
    record.verification = job.verification
    return verified


def _job_fields(job: MeasurementJob, repeat: int, version: str | None, key: str,
                cache: str | None) -> dict:
    """What every record of a job's repeat says of its job, run or not: the input, the
    tool and its level, the factors, the meter and the idle power, the job's key, and
    who measured (host, Slurm node and job, boot, wattzip's version)."""
    return {
        "testbed": job.testbed,
        **who_measured(),
        "file_type": job.file_type,
        "input_bytes": job.input_bytes,
        "input_sha256": job.input_sha256,
        **codec_fields(job.codec_name, job.codec),
        "repeat": repeat,
        "tool_version": version,
        "threads": job.threads if job.codec and job.codec.multithreaded else 1,
        "copy_buffer_bytes": job.copy_buffer_bytes if job.copies_plainly else None,
        "phases": job.duty.phases if job.duty else None,
        "factors": {**job.factors, "cache_drop": cache, "copies": job.copies},
        "job_key": key,
        "meter_identity": job.meter_identity,
        "meter_id": identity_id(job.meter_identity),
        "idle_power_u_w": job.idle_power_u_w,
        "idle_windows": job.idle_windows,
    }


def _record(job: MeasurementJob, result: dict, repeat: int, version: str | None, cache: str,
            key: str) -> RunRecord:
    """A measured region's run record: its result, then its job's fields."""
    record = RunRecord.new(result, _job_fields(job, repeat, version, key, cache))
    if job.model is not None:
        record.update(job.model.record_fields(record.meter_interval_s or record.elapsed_s,
                                              record.cpu_busy_s))
    return record


def _skipped_read(job: MeasurementJob, op: str, repeat: int, version: str | None,
                  key: str) -> RunRecord:
    """An operation after a repeat's write that failed (its read, its codec-only runs):
    not run, recorded with its job's fields."""
    return RunRecord.new(_job_fields(job, repeat, version, key, cache=None), {
        "op": op, "verified": False, "succeeded": False, "exit_code": None,
        "failure": "not run: the write of this repeat failed or did not verify",
        "started_at": None, "ended_at": None, "elapsed_s": None, "energy_j": None,
    })


def _progress_line(job: MeasurementJob, r: dict) -> str:
    name = f"{job.file_type}/{r.get('codec') or job.codec_name}"
    if r.get("elapsed_s") is None:
        return f"{name} r{r['repeat']} {r['op']}: {r['failure']}"
    # A disturbed run is no failure: its output was verified before the disturbance was
    # judged, and it is measured again (wattzip.measure.disturbance).
    disturbed = bool(r.get("disturbed"))
    status = ("ok" if r["verified"] else
              f"{'DISTURBED' if disturbed else 'FAILED'} ({r['failure']})")
    how = r.get("verification")
    if (r["verified"] or disturbed) and how:  # a write: how its output gave the input back
        status += f", {VERIFIED_HOW.get(how, how)}"
    energy = ("no energy" if r.get("energy_j") is None
              else f"{r['energy_j']:.1f} J ({r['meter_method']})")
    return f"{name} r{r['repeat']} {r['op']}: {r['elapsed_s']:.3f} s, {energy} {status}"


VERIFIED_HOW = {"decompressed": "verified by decompression",
                "sha256 of the copy": "verified by the copy's sha256"}


