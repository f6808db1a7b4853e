"""A measurement job: one file type and one codec (or the plain baseline), repeated.

Runs alternate write then read (compress-write, decompress-read) so each read
finds the file its write just flushed.  Every finished run is appended to a
journal at once; a rerun of a job that died finds its runs there and goes on
from the next repeat.  The journal is not a Snakemake output, so Snakemake
never deletes it when it cleans up an interrupted job.

Before every run the caches are made cold without making the tools cold;
after every write the stored files are checked to own their blocks and to
give back the input, all outside the measured region.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wattzip import codec_registry, records, runner, system
from wattzip.codec_registry import Codec
from wattzip.errors import ConfigError
from wattzip.extents import check_owns_blocks
from wattzip.factors import governors_in_effect
from wattzip.inputs import copy_through_user_space, sha256_file
from wattzip.media import Medium
from wattzip.meters import Meter
from wattzip.meters.base import identity_id
from wattzip.meters.coefficients import Coefficients
from wattzip.runner import Operation, measure, sha256_of_command, write_trace
from wattzip.stats import need_more_repeats, relative_half_width
from wattzip.throttle import throttled

MAX_CONSECUTIVE_FAILURES = 2


@dataclass(frozen=True)
class DutyCycle:
    """HPC '14's write phases between compute phases, measured as one run: K times,
    write the input (compressed or not) and flush it, then compute for S seconds,
    idle or busy on one core."""

    phases: int
    compute_s: float
    compute: str = "idle"  # or "busy"

    def compute_argv(self) -> str:
        if self.compute == "busy":
            return (f"timeout {self.compute_s:g} sh -c 'while :; do :; done'; "
                    "[ $? -eq 124 ] || exit 1")
        return f"sleep {self.compute_s:g}"


@dataclass
class Job:
    """Everything one measurement job needs; `codec` None is the plain baseline."""

    testbed: str
    file_type: str
    input_path: str
    input_sha256: str
    input_bytes: int
    medium: Medium
    codec: Codec | None
    min_repeats: int = 3
    max_repeats: int = 10
    ci_target: float = 0.05
    factors: dict = field(default_factory=dict)
    copies: int = 1
    threads: int = 1
    idle_power_w: float | None = None
    # A disk of a chosen speed: the target's and the input's devices capped (None: as is).
    bandwidth_bytes_per_s: int | None = None
    trace_dir: str | None = None
    copy_buffer_bytes: int = runner.DEFAULT_COPY_BUFFER
    # Each copy reads its own input file (made outside the region); [input_path] for one.
    input_paths: list[str] = field(default_factory=list)
    duty: DutyCycle | None = None
    # The meter's identity (wattzip.meters.base.Meter.identity): part of the job's key.
    meter_identity: dict = field(default_factory=dict)
    # The estimate's coefficients on this machine (wattzip.meters.coefficients): every run
    # records what the model would say, so a real meter beside it checks the model.
    model: Coefficients | None = None
    # Verifications shared by every job of a testbed (JSONL), so that identical outputs in
    # other settings are decompressed once.
    verify_cache: str | None = None
    verification: str = field(default="", repr=False, compare=False)
    _verified_digests: set[str] = field(default_factory=set, repr=False, compare=False)

    @property
    def target_dir(self) -> str:
        return self.medium.path

    @property
    def codec_name(self) -> str:
        return self.codec.name if self.codec else "plain"

    @property
    def ops(self) -> tuple[str, ...]:
        if self.duty:
            return ("write-compute",)
        if self.codec:
            return ("compress-write", "decompress-read")
        return ("plain-write", "plain-read")

    def key(self) -> str:
        """Identifies runs that belong to this exact job (input, invocation, factors)."""
        argv = (list(self.codec.compress) + list(self.codec.decompress) if self.codec
                else runner.plain_copy_argv(self.copy_buffer_bytes))
        ident = {
            "testbed": self.testbed, "file_type": self.file_type, "sha": self.input_sha256,
            "codec": self.codec_name, "argv": argv, "factors": self.factors,
            "copies": self.copies, "threads": self.threads, "medium": self.medium.to_spec(),
            "meter": self.meter_identity,
        }
        if self.duty:
            ident["duty"] = vars(self.duty)
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]

    def stored_paths(self) -> list[str]:
        suffix = self.codec.suffix if self.codec else ".raw"
        stem = f"wattzip-{self.file_type}-{self.codec_name}{suffix}"
        if self.duty:
            return [os.path.join(self.target_dir, f"{stem}.phase{k}")
                    for k in range(1, self.duty.phases + 1)]
        return [os.path.join(self.target_dir, f"{stem}.{i}" if self.copies > 1 else stem)
                for i in range(self.copies)]

    def sources(self) -> list[str]:
        return self.input_paths or [self.input_path] * self.copies

    @property
    def copies_plainly(self) -> bool:
        """Plain I/O moves the bytes: the baseline, and filesystem compression (the
        kernel compresses what the plain copy writes)."""
        return self.codec is None or bool(self.codec.filesystem)

    def duty_operation(self) -> Operation:
        """One shell loop: each phase writes the input, flushes it (sync FILE), computes."""
        q = shlex.quote
        ok = "|".join(str(c) for c in sorted(self.codec.ok_exit_codes if self.codec else {0}))
        lines = []
        for path in self.stored_paths():
            if self.copies_plainly:
                writer = f"{shlex.join(runner.plain_copy_argv(self.copy_buffer_bytes))} " \
                         f"< {q(self.input_path)} > {q(path)}"
            elif self.codec.writes_out_path:
                writer = f"{shlex.join(self.codec.compress_argv(path, self.threads))} " \
                         f"< {q(self.input_path)}"
            else:
                writer = f"{shlex.join(self.codec.compress_argv(path, self.threads))} " \
                         f"< {q(self.input_path)} > {q(path)}"
            lines.append(f"{writer}; rc=$?; case $rc in {ok}) ;; *) exit $rc ;; esac; "
                         f"sync {q(path)} || exit 1; {self.duty.compute_argv()}")
        return Operation("write-compute", [["sh", "-c", "\n".join(lines)]], [os.devnull],
                         [None])

    def write_operation(self) -> Operation:
        if self.duty:
            return self.duty_operation()
        stored = self.stored_paths()
        unmount = self.medium if self.medium.flush == "unmount" else None
        if self.copies_plainly:
            argvs = [runner.plain_copy_argv(self.copy_buffer_bytes) for _ in stored]
            return Operation(self.ops[0], argvs, self.sources(), stored, stored,
                             unmount=unmount)
        c = self.codec
        argvs = [c.compress_argv(p, self.threads) for p in stored]
        stdouts = [None] * self.copies if c.writes_out_path else stored
        return Operation("compress-write", argvs, self.sources(), stdouts, stored,
                         c.ok_exit_codes, unmount=unmount)

    def read_operation(self) -> Operation:
        stored = self.stored_paths()
        if self.copies_plainly:
            argvs = [runner.plain_copy_argv(self.copy_buffer_bytes) for _ in stored]
            return Operation(self.ops[1], argvs, stored, [None] * self.copies)
        c = self.codec
        argvs = [c.decompress_argv(p, self.threads) for p in stored]
        stdins = [os.devnull] * self.copies if c.reads_in_path else stored
        return Operation("decompress-read", argvs, stdins, [None] * self.copies)

    def verify(self) -> tuple[bool, str]:
        """Does every stored file give back the original bytes? (outside the region)

        A file whose own sha256 equals that of a file already shown to decompress to
        the input is the same bytes, so it is verified without decompressing again:
        deterministic tools repeat their output, and the slow decompressors (PPMd)
        would otherwise double the study's time. With a verification cache this holds
        across jobs and settings too (`verify_cache`, keyed by the codec's command,
        its version and the input's sha256); `self.verification` says how.
        """
        how = set()
        for path in self.stored_paths():
            stored_digest = sha256_file(path)
            if stored_digest in self._verified_digests:
                how.add("identical bytes verified earlier in this job")
                continue
            cached = self._cached_verification(stored_digest)
            if cached:
                how.add(f"identical bytes verified by job {cached}")
                self._verified_digests.add(stored_digest)
                continue
            if self.copies_plainly:
                ok = stored_digest == self.input_sha256
                if not ok:
                    return False, f"{path}: written bytes differ from the input (sha256 mismatch)"
                how.add("sha256 of the copy")
            else:
                argv = self.codec.decompress_argv(path, self.threads)
                stdin = None if self.codec.reads_in_path else path
                digest, _, why = sha256_of_command(argv, stdin)
                if digest is None:
                    return False, f"{path}: decompression failed ({why})"
                if digest != self.input_sha256:
                    return False, (f"{path}: decompressed bytes differ from the input "
                                   "(sha256 mismatch)")
                how.add("decompressed")
                if self.verify_cache:
                    records.append_journal(self.verify_cache, {
                        "key": self._verification_key(), "output_sha256": stored_digest,
                        "job_key": self.key()})
            self._verified_digests.add(stored_digest)
        self.verification = "; ".join(sorted(how))
        return True, ""

    def _verification_key(self) -> str:
        """What makes two outputs' verification the same: the codec's commands, the tool's
        version and the input's bytes (not the medium, the setting or the meter)."""
        ident = {"compress": list(self.codec.compress), "decompress": list(self.codec.decompress),
                 "version": codec_registry.version(self.codec), "input": self.input_sha256}
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]

    def _cached_verification(self, output_sha256: str) -> str | None:
        """The job that already decompressed these very bytes to the input, if any."""
        if not self.verify_cache or self.copies_plainly:
            return None
        key = self._verification_key()
        for entry in records.read_journal(self.verify_cache, None, ("key", "output_sha256")):
            if entry["key"] == key and entry["output_sha256"] == output_sha256:
                return entry["job_key"]
        return None


def read_journal(path: str | os.PathLike, key: str) -> list[dict]:
    """This job's runs from its journal (records.read_journal names any damaged line)."""
    return records.read_journal(path, key, required=records.RUN_REQUIRED)


def _series(runs: list[dict], ops: tuple[str, str]) -> dict[str, list[float]]:
    """What the repeat rule watches: T, E and ET of each operation (T alone without a meter)."""
    good = [r for r in runs if r.get("verified")]
    series = {}
    for op in ops:
        mine = [r for r in good if r["op"] == op]
        series[f"{op} elapsed"] = [r["elapsed_s"] for r in mine]
        if any(r.get("energy_j") is not None for r in mine) or not mine:
            series[f"{op} energy"] = [r["energy_j"] for r in mine if r.get("energy_j") is not None]
            series[f"{op} ET"] = [r["energy_j"] * r["elapsed_s"] for r in mine
                                  if r.get("energy_j") is not None]
    return series


class ColdCache:
    """Makes the caches cold before each run without making the tools cold.

    A target that is its own filesystem with the unmount flush is unmounted
    and mounted again (which empties its cache alone) and the inputs are
    evicted file by file. Otherwise the page cache is dropped globally when
    permitted; that also evicts the tools and their libraries, which are read
    back at once so that no run loads its tool from disk inside the region.
    Without permission, the job's own files are evicted one by one.
    """

    def __init__(self, job: Job):
        self.job = job
        if job.duty:  # the shell loop's own tools
            writer = "dd" if job.copies_plainly else job.codec.binary
            argv0s = {"sh", "sync", "sleep", "timeout", writer}
        else:
            argv0s = {op.argvs[0][0] for op in (job.write_operation(), job.read_operation())}
        self.tool_files = sorted({f for a in argv0s for f in runner.tool_files(a)})

    def __call__(self) -> tuple[str, bool]:
        """(the method, whether the tools were read back) for the run's record."""
        job = self.job
        if job.medium.flush == "unmount":
            os.sync()
            job.medium.cycle()
            runner.evict(job.sources())
            return "unmount", False
        method = runner.drop_caches([*job.sources(), *job.stored_paths()])
        if method == "global":
            runner.warm(self.tool_files)
            return method, True
        return method, False


def prepare_input_copies(job: Job, log: Callable[[str], None]) -> None:
    """One input file per copy (copies > 1), so the N readers do real I/O each.

    Made outside every measured region, through user space (never a reflink),
    beside the input and named by its sha256, and kept for the next job.
    """
    if job.copies == 1:
        job.input_paths = [job.input_path]
        return
    folder = Path(job.input_path).parent / "copies"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(job.copies):
        path = folder / f"{job.input_sha256[:16]}.{i}"
        if not (path.exists() and path.stat().st_size == job.input_bytes):
            log(f"{job.file_type}: making input copy {i + 1}/{job.copies} at {path}")
            digest = copy_through_user_space(job.input_path, path)
            if digest != job.input_sha256:
                raise ConfigError(f"the copy {path} of {job.input_path} differs from it "
                                  "(sha256); the input changed while copying?")
        paths.append(str(path))
    job.input_paths = paths


def run_job(job: Job, meter: Meter, journal: str | os.PathLike,
            log: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)) -> dict:
    """Repeat the job's write/read pair until the paper's stopping rule says enough.

    Returns a summary: repeats done, whether the confidence target was met,
    and failed runs.  Failed or unverified runs are recorded, never dropped.
    The medium is attached first and detached last, also when the job dies.
    """
    Path(journal).parent.mkdir(parents=True, exist_ok=True)
    key = job.key()
    runs = read_journal(journal, key)
    last_repeat = max((r["repeat"] for r in runs), default=0)
    others = [r for r in records.read_journal(journal, required=records.RUN_REQUIRED)
              if r.get("job_key") != key]
    if others and not runs:
        log(f"{job.file_type}/{job.codec_name}: {len(others)} run(s) in {journal} were "
            "measured under another meter identity or job setup (meter, coefficients, idle "
            "calibration, codec, medium, factors); they stay in the journal, unused, and "
            "this job measures again")
    if runs:
        log(f"{job.file_type}/{job.codec_name}: resuming after {last_repeat} repeat(s) "
            f"found in {journal}")
    version = (codec_registry.version(job.codec) if job.codec
               else codec_registry.plain_copy_version())
    prepare_input_copies(job, log)
    job.medium.attach()
    stack = contextlib.ExitStack()
    try:
        medium_info = {**job.medium.describe(), **system.host_identity()}
        scheduler_disk = system.scheduler_disk(job.medium.path)
        medium_info.update(scheduler_disk=scheduler_disk,
                           io_scheduler_in_effect=system.io_scheduler(scheduler_disk),
                           governor_in_effect=governors_in_effect(),
                           bandwidth_bytes_per_s=job.bandwidth_bytes_per_s)
        devices = {"target": system.block_device(job.medium.path)["disk"],
                   "input": system.block_device(os.path.dirname(os.path.abspath(
                       job.sources()[0])))["disk"]}
        throttle = stack.enter_context(throttled(devices, job.bandwidth_bytes_per_s))
        # What the kernel holds, read back (throttled() refuses any other value).
        medium_info["bandwidth_applied_bytes_per_s"] = (
            min(throttle.applied_bytes_per_s().values()) if throttle else None)
        cold_cache = ColdCache(job)
        consecutive_failures = 0
        write_op = job.write_operation()
        read_op = None if job.duty else job.read_operation()
        # The stopping rule counts verified runs per operation, so a repeat cut
        # short by a kill (a write without its read) is simply made up for.
        while (need_more_repeats(_series(runs, job.ops), job.min_repeats, job.max_repeats,
                                 job.ci_target) and last_repeat < 2 * job.max_repeats):
            repeat = last_repeat + 1
            _remove(job.stored_paths())
            pair_ok = True
            written_ok = False
            for operation in (write_op, read_op) if read_op else (write_op,):
                if operation is read_op and not written_ok:
                    record = _skipped_read(job, operation.op, repeat)
                else:
                    cache, warmed = cold_cache()
                    result = measure(operation, meter, job.idle_power_w, devices,
                                     throttle=throttle)
                    job.medium.mount()  # after an unmount flush, outside the region
                    record = _record(job, result, repeat, version, cache, key)
                    record.update(medium_info, tools_warmed=warmed)
                    if operation is write_op:
                        verified, why = _check_written(job, result, record)
                        written_ok = verified
                    else:
                        verified, why = written_ok and result["succeeded"], result["error"]
                        record["output_bytes"] = job.input_bytes * job.copies
                    record["verified"] = bool(verified)
                    record["failure"] = None if verified else (why or "failed")
                    if job.trace_dir:
                        trace = os.path.join(job.trace_dir, f"{operation.op}-r{repeat}.csv.gz")
                        write_trace(trace, result["_power_samples"], result["_disk_samples"])
                        record["trace"] = trace
                records.append_journal(journal, record)
                runs.append(record)
                pair_ok &= record["verified"]
                log(_progress_line(job, record))
            last_repeat = repeat
            consecutive_failures = 0 if pair_ok else consecutive_failures + 1
            if consecutive_failures >= MAX_CONSECUTIVE_FAILURES:
                log(f"{job.file_type}/{job.codec_name}: {consecutive_failures} failed repeats "
                    "in a row; stopping this job (the failures are recorded)")
                break
        _remove(job.stored_paths())
    finally:
        stack.close()
        job.medium.detach()
    series = _series(runs, job.ops)
    repeats_done = min(len(v) for v in series.values())
    widths = {k: relative_half_width(v) for k, v in series.items()}
    met = all(w <= job.ci_target for w in widths.values())
    if not met:
        log(f"{job.file_type}/{job.codec_name}: the 95% half-width target of "
            f"{job.ci_target:.0%} was not reached after {repeats_done} repeats: "
            + ", ".join(f"{k} {w:.1%}" for k, w in widths.items()))
    return {"repeats": repeats_done, "ci_met": met, "failed": sum(not r["verified"] for r in runs),
            "relative_half_widths": widths,
            # Too few good repeats to describe the job: it failed, whatever was recorded.
            "complete": repeats_done >= job.min_repeats}


def on_disk_bytes(path: str) -> int:
    """Bytes a file takes on a compressing btrfs (compsize's Disk Usage), after a sync."""
    os.sync()
    proc = subprocess.run(["compsize", "-b", path], capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == "TOTAL":
            return int(fields[2])
    raise ConfigError(f"compsize -b {path} gave no TOTAL line ({proc.stderr.strip()[:200]}); "
                      "install btrfs-compsize")


def _remove(paths: list[str]) -> None:
    for path in paths:
        if os.path.exists(path):
            os.unlink(path)


def _check_written(job: Job, result: dict, record: dict) -> tuple[bool, str]:
    """After a write, outside the region: its size, whether it owns its blocks, its bytes."""
    stored = [p for p in job.stored_paths() if os.path.exists(p)]
    if job.codec and job.codec.filesystem:  # what the filesystem stored, not the file's size
        record["output_bytes"] = sum(on_disk_bytes(p) for p in stored)
    else:
        record["output_bytes"] = sum(os.path.getsize(p) for p in stored)
    if not result["succeeded"]:
        return False, result["error"]
    owns, why = check_owns_blocks(stored)
    record["own_blocks"] = owns
    if owns is False:
        return False, why
    verified = job.verify()
    record["verification"] = job.verification
    return verified


def _record(job: Job, result: dict, repeat: int, version: str | None, cache: str,
            key: str) -> dict:
    record = {k: v for k, v in result.items() if not k.startswith("_")}
    record.update({
        "testbed": job.testbed,
        "file_type": job.file_type,
        "input_bytes": job.input_bytes,
        "input_sha256": job.input_sha256,
        "codec": job.codec_name,
        "tool": job.codec.tool if job.codec else "dd",
        "mount_option": job.codec.mount_option if job.codec else None,
        "level": job.codec.level if job.codec else None,
        "repeat": repeat,
        "tool_version": version,
        "threads": job.threads if job.codec and job.codec.multithreaded else 1,
        "copy_buffer_bytes": job.copy_buffer_bytes if job.copies_plainly else None,
        "phases": job.duty.phases if job.duty else None,
        "factors": {**job.factors, "cache_drop": cache, "copies": job.copies},
        "job_key": key,
        "meter_identity": job.meter_identity,
        "meter_id": identity_id(job.meter_identity),
    })
    if job.model is not None:
        interval = record.get("meter_interval_s") or record["elapsed_s"]
        record.update(model_row=job.model.row, model_how=job.model.how,
                      model_min_w_per_thread=job.model.min_w_per_thread,
                      model_max_w_per_thread=job.model.max_w_per_thread,
                      model_threads=job.model.threads, model_source=job.model.source,
                      model_energy_j=job.model.energy_j(interval, record["cpu_busy_s"]))
    return record


def _skipped_read(job: Job, op: str, repeat: int) -> dict:
    return {
        "testbed": job.testbed, "file_type": job.file_type, "input_bytes": job.input_bytes,
        "input_sha256": job.input_sha256, "codec": job.codec_name, "op": op, "repeat": repeat,
        "factors": {**job.factors, "copies": job.copies}, "job_key": job.key(),
        "verified": False, "succeeded": False, "exit_code": None,
        "failure": "not run: the write of this repeat failed or did not verify",
        "started_at": None, "ended_at": None, "elapsed_s": None, "energy_j": None,
    }


def _progress_line(job: Job, r: dict) -> str:
    if r.get("elapsed_s") is None:
        return f"{job.file_type}/{job.codec_name} r{r['repeat']} {r['op']}: {r['failure']}"
    status = "ok" if r["verified"] else f"FAILED ({r['failure']})"
    energy = ("no energy" if r.get("energy_j") is None
              else f"{r['energy_j']:.1f} J ({r['meter_method']})")
    return (f"{job.file_type}/{job.codec_name} r{r['repeat']} {r['op']}: "
            f"{r['elapsed_s']:.3f} s, {energy} {status}")


# A compressed file can outgrow its input (compress on random data: 1.25x), and the
# target holds the stored files of one repeat while the next is written: one rule for
# the pre-flight checks and the job.
SPACE_MARGIN = 2.5


def space_needed(input_bytes: int, copies: int = 1, phases: int = 1) -> int:
    """Bytes a job's target must hold: every copy's (and duty-cycle phase's) file."""
    return int(SPACE_MARGIN * input_bytes * copies * phases)


def check_free_space(target_dir: str, needed_bytes: int, image: str | None = None,
                     image_bytes: int = 0) -> None:
    """Stop before damage: the target must hold the job's files, and the disk under an
    image must have room for the whole image (it is sparse: it grows as it fills)."""
    free = shutil.disk_usage(target_dir).free
    if free < needed_bytes:
        raise ConfigError(f"target directory {target_dir} has {free / 2**30:.2f} GiB free; "
                          f"this study needs {needed_bytes / 2**30:.2f} GiB. Free space, or "
                          "point target_dir (or the medium's size) at something larger")
    if image:
        host = os.path.dirname(os.path.abspath(image))
        held = os.stat(image).st_blocks * 512 if os.path.exists(image) else 0
        room = shutil.disk_usage(host).free + held
        if room < image_bytes:
            raise ConfigError(f"the image {image} is {image_bytes / 2**30:.2f} GiB, but its "
                              f"disk ({host}) has room for {room / 2**30:.2f} GiB; a full "
                              "image would fail mid-run. Free space or make the image smaller")
