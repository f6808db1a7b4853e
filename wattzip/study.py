"""A measurement job: one file type and one codec (or the plain baseline), repeated.

Runs alternate write then read (compress-write, decompress-read) so each read
finds the file its write just flushed.  Every finished run is appended to a
journal at once; a rerun of a job that died finds its runs there and goes on
from the next repeat.  The journal is not a Snakemake output, so Snakemake
never deletes it when it cleans up an interrupted job.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wattzip import codecs as codec_registry
from wattzip.codecs import Codec
from wattzip.errors import ConfigError
from wattzip.inputs import sha256_file
from wattzip.meters import Meter
from wattzip.runner import Operation, drop_caches, measure, sha256_of_command, write_trace
from wattzip.statistics import need_more_repeats, relative_half_width

MAX_CONSECUTIVE_FAILURES = 2


@dataclass
class Job:
    """Everything one measurement job needs; `codec` None is the plain baseline."""

    testbed: str
    file_type: str
    input_path: str
    input_sha256: str
    input_bytes: int
    target_dir: str
    codec: Codec | None
    min_repeats: int = 3
    max_repeats: int = 10
    ci_target: float = 0.05
    factors: dict = field(default_factory=dict)
    copies: int = 1
    threads: int = 1
    idle_power_w: float | None = None
    disk_device: str | None = None
    trace_dir: str | None = None
    _verified_digests: set[str] = field(default_factory=set, repr=False, compare=False)

    @property
    def codec_name(self) -> str:
        return self.codec.name if self.codec else "plain"

    @property
    def ops(self) -> tuple[str, str]:
        if self.codec:
            return ("compress-write", "decompress-read")
        return ("plain-write", "plain-read")

    def key(self) -> str:
        """Identifies runs that belong to this exact job (input, invocation, factors)."""
        ident = {
            "testbed": self.testbed, "file_type": self.file_type, "sha": self.input_sha256,
            "codec": self.codec_name,
            "argv": list(self.codec.compress) + list(self.codec.decompress) if self.codec else [],
            "factors": self.factors, "copies": self.copies, "threads": self.threads,
        }
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]

    def stored_paths(self) -> list[str]:
        suffix = self.codec.suffix if self.codec else ".raw"
        stem = f"wattzip-{self.file_type}-{self.codec_name}{suffix}"
        return [os.path.join(self.target_dir, f"{stem}.{i}" if self.copies > 1 else stem)
                for i in range(self.copies)]

    def write_operation(self) -> Operation:
        stored = self.stored_paths()
        if self.codec is None:
            argvs = [["cat"] for _ in stored]
            return Operation("plain-write", argvs, [self.input_path] * self.copies, stored, stored)
        c = self.codec
        argvs = [c.compress_argv(p, self.threads) for p in stored]
        stdouts = [None] * self.copies if c.writes_out_path else stored
        return Operation("compress-write", argvs, [self.input_path] * self.copies, stdouts,
                         stored, c.ok_exit_codes)

    def read_operation(self) -> Operation:
        stored = self.stored_paths()
        if self.codec is None:
            return Operation("plain-read", [["cat"]] * self.copies, stored, [None] * self.copies)
        c = self.codec
        argvs = [c.decompress_argv(p, self.threads) for p in stored]
        stdins = [os.devnull] * self.copies if c.reads_in_path else stored
        return Operation("decompress-read", argvs, stdins, [None] * self.copies)

    def verify(self) -> tuple[bool, str]:
        """Does every stored file give back the original bytes? (outside the region)

        A file whose own sha256 equals that of a file already shown to
        decompress to the input is the same bytes, so it is verified without
        decompressing again: deterministic tools repeat their output, and the
        slow decompressors (PPMd) would otherwise double the study's time.
        """
        for path in self.stored_paths():
            stored_digest = sha256_file(path)
            if stored_digest in self._verified_digests:
                continue
            if self.codec is None:
                ok = stored_digest == self.input_sha256
                if not ok:
                    return False, f"{path}: written bytes differ from the input (sha256 mismatch)"
            else:
                argv = self.codec.decompress_argv(path, self.threads)
                stdin = None if self.codec.reads_in_path else path
                digest, _, why = sha256_of_command(argv, stdin)
                if digest is None:
                    return False, f"{path}: decompression failed ({why})"
                if digest != self.input_sha256:
                    return False, (f"{path}: decompressed bytes differ from the input "
                                   "(sha256 mismatch)")
            self._verified_digests.add(stored_digest)
        return True, ""


def read_journal(path: str | os.PathLike, key: str) -> list[dict]:
    """This job's runs from its journal; a torn last line (a kill mid-write) is skipped."""
    runs = []
    p = Path(path)
    if not p.exists():
        return runs
    for line in p.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("job_key") == key:
            runs.append(record)
    return runs


def _append(path: str | os.PathLike, record: dict) -> None:
    """Append one run durably; a torn last line (a kill mid-write) is closed off first."""
    with open(path, "a+b") as f:
        if f.tell() > 0:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                f.write(b"\n")
        f.write((json.dumps(record, sort_keys=True) + "\n").encode())
        f.flush()
        os.fsync(f.fileno())


def _series(runs: list[dict], ops: tuple[str, str]) -> dict[str, list[float]]:
    good = [r for r in runs if r.get("verified")]
    series = {}
    for op in ops:
        series[f"{op} elapsed"] = [r["elapsed_s"] for r in good if r["op"] == op]
        series[f"{op} energy"] = [r["energy_j"] for r in good if r["op"] == op]
    return series


def run_job(job: Job, meter: Meter, journal: str | os.PathLike,
            log: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)) -> dict:
    """Repeat the job's write/read pair until the paper's stopping rule says enough.

    Returns a summary: repeats done, whether the confidence target was met,
    and failed runs.  Failed or unverified runs are recorded, never dropped.
    """
    Path(journal).parent.mkdir(parents=True, exist_ok=True)
    os.makedirs(job.target_dir, exist_ok=True)
    key = job.key()
    runs = read_journal(journal, key)
    last_repeat = max((r["repeat"] for r in runs), default=0)
    if runs:
        log(f"{job.file_type}/{job.codec_name}: resuming after {last_repeat} repeat(s) "
            f"found in {journal}")
    version = codec_registry.version(job.codec) if job.codec else None
    consecutive_failures = 0
    write_op, read_op = job.write_operation(), job.read_operation()
    # The stopping rule counts verified runs per operation, so a repeat cut
    # short by a kill (a write without its read) is simply made up for.
    while (need_more_repeats(_series(runs, job.ops), job.min_repeats, job.max_repeats,
                             job.ci_target) and last_repeat < 2 * job.max_repeats):
        repeat = last_repeat + 1
        for path in job.stored_paths():
            if os.path.exists(path):
                os.unlink(path)
        pair_ok = True
        written_ok = False
        for operation in (write_op, read_op):
            if operation is read_op and not written_ok:
                record = _skipped_read(job, operation.op, repeat)
            else:
                cache = drop_caches([job.input_path, *job.stored_paths()])
                result = measure(operation, meter, job.idle_power_w, job.disk_device)
                record = _record(job, result, repeat, version, cache, key)
                if operation is write_op:
                    verified, why = job.verify() if result["succeeded"] else (False,
                                                                              result["error"])
                    written_ok = verified
                    record["output_bytes"] = sum(os.path.getsize(p) for p in job.stored_paths()
                                                 if os.path.exists(p))
                else:
                    verified, why = written_ok and result["succeeded"], result["error"]
                    record["output_bytes"] = job.input_bytes * job.copies
                record["verified"] = bool(verified)
                record["failure"] = None if verified else (why or "failed")
                if job.trace_dir:
                    trace = os.path.join(job.trace_dir, f"{operation.op}-r{repeat}.csv.gz")
                    write_trace(trace, result["_power_samples"], result["_disk_samples"])
                    record["trace"] = trace
            _append(journal, record)
            runs.append(record)
            pair_ok &= record["verified"]
            log(_progress_line(job, record))
        last_repeat = repeat
        consecutive_failures = 0 if pair_ok else consecutive_failures + 1
        if consecutive_failures >= MAX_CONSECUTIVE_FAILURES:
            log(f"{job.file_type}/{job.codec_name}: {consecutive_failures} failed repeats in a "
                "row; stopping this job (the failures are recorded)")
            break
    for path in job.stored_paths():
        if os.path.exists(path):
            os.unlink(path)
    series = _series(runs, job.ops)
    repeats_done = min(len(v) for v in series.values())
    widths = {k: relative_half_width(v) for k, v in series.items()}
    met = all(w <= job.ci_target for w in widths.values())
    if not met:
        log(f"{job.file_type}/{job.codec_name}: the 95% half-width target of "
            f"{job.ci_target:.0%} was not reached after {repeats_done} repeats: "
            + ", ".join(f"{k} {w:.1%}" for k, w in widths.items()))
    return {"repeats": repeats_done, "ci_met": met, "failed": sum(not r["verified"] for r in runs),
            "relative_half_widths": widths}


def _record(job: Job, result: dict, repeat: int, version: str | None, cache: str,
            key: str) -> dict:
    record = {k: v for k, v in result.items() if not k.startswith("_")}
    record.update({
        "testbed": job.testbed,
        "file_type": job.file_type,
        "input_bytes": job.input_bytes,
        "input_sha256": job.input_sha256,
        "codec": job.codec_name,
        "tool": job.codec.tool if job.codec else "cat",
        "level": job.codec.level if job.codec else None,
        "repeat": repeat,
        "tool_version": version,
        "threads": job.threads if job.codec and job.codec.multithreaded else 1,
        "factors": {**job.factors, "cache_drop": cache, "copies": job.copies},
        "job_key": key,
    })
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
    return (f"{job.file_type}/{job.codec_name} r{r['repeat']} {r['op']}: "
            f"{r['elapsed_s']:.3f} s, {r['energy_j']:.1f} J ({r['meter_method']}) {status}")


def check_free_space(target_dir: str, needed_bytes: int) -> None:
    """Stop before damage: the target must hold the job's files with a margin."""
    free = shutil.disk_usage(target_dir).free
    if free < needed_bytes:
        raise ConfigError(f"target directory {target_dir} has {free / 2**30:.2f} GiB free; "
                          f"this study needs {needed_bytes / 2**30:.2f} GiB. Free space or "
                          "point target_dir at a larger disk")
