"""A slow drift of the machine over a job, caught by a fixed reference operation.

Heat, a VM host's neighbour or a background task that starts mid-job changes every
run after it alike; the runs' spread does not show it, and ABBA interleaving only
balances it between arms. So a job measures a fixed reference operation (gzip -6 of
a fixed 8 MiB text, in the page cache, under the job's meter) `repeats` times before
its first run and again after its last. When the two differ beyond the reference's
own noise (the 95% interval of the change excludes zero) and by more than
`max_change` of it (config `drift:`), the job's runs are flagged (their
`disturbed` field says why, they enter no statistic and are kept in its output) and
the job measures them again, once. A second drift is reported and its runs kept,
each marked `drift_warning` (counted in the report): measuring a third time would
not help, and failing the job would fail every resume of it too.

The reference's noise is its spread between phases, not within one. A machine whose
speed switches between levels every few seconds (a VM among neighbours) gives each
phase's few repeats one level, so their spread is small and a switch between two
phases reads as drift, although it happens as often between phases seconds apart
(benchmarks/drift_pairs.py measured 17 to 36% on this project's VM). So each
setting's idle calibration measures the reference in PHASES phases a few seconds
apart (`calibrate_phases`), and a job compares its change with the spread of those
phases' means (Student's t on PHASES - 1 degrees of freedom); a job without them (an
older calibration, or other repeats) falls back to Welch's interval of its repeats.

The reference results go to a journal beside the job's (<journal>.reference.jsonl),
so a job resumed after a kill compares with the reference it started from.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from wattzip import records
from wattzip.measure import repeats, runner
from wattzip.measure.disturbance import DriftCheck
from wattzip.meters import Meter
from wattzip.stats import Interval, mean, stdev, t_ppf, welch_interval
from wattzip.workload.inputs import generate

REFERENCE_BYTES = 8 * 2**20
REFERENCE_ARGV = ["gzip", "-6", "-c"]
EPOCHS = 2  # the job, and once more after a drift
# The idle calibration's phases of the reference: 5 degrees of freedom for its spread
# between phases, and a gap between phases like the one between one job's end and the
# next job's start (its cache drop and staging; about 4 s on this project's VM).
PHASES = 6
PHASE_GAP_S = 3.0

# The reference results' journal beside a job's (<journal>.reference.jsonl): not runs.
REFERENCE_SUFFIX = ".reference.jsonl"


def reference_input(folder: str | os.PathLike) -> str:
    """The fixed reference input: the same bytes on every machine (seeded text)."""
    path = Path(folder) / f"wattzip-reference-text-{REFERENCE_BYTES}.bin"
    if not (path.exists() and path.stat().st_size == REFERENCE_BYTES):
        generate("text", REFERENCE_BYTES, path, seed=0, progress=False)
    return str(path)


def measure_reference(path: str, meter: Meter, repeats: int) -> list[dict]:
    """The reference operation `repeats` times, its input in the page cache (a CPU-bound
    operation: what drift in the machine's speed and power shows in)."""
    runner.warm([path])
    operation = runner.Operation("reference", [REFERENCE_ARGV], [path], [None])
    out = []
    for _ in range(repeats):
        result = runner.measure(operation, meter)
        out.append({"elapsed_s": result["elapsed_s"], "energy_j": result["energy_j"]})
    return out


def calibrate_phases(meter: Meter, repeats: int, gap_s: float = PHASE_GAP_S,
                     phases: int = PHASES) -> list[list[dict]]:
    """The reference in `phases` phases of `repeats`, `gap_s` apart: its noise between
    phases, which a job's change is compared with. Its input is made afresh in a
    private folder (the same seeded bytes as every job's) and removed after."""
    with tempfile.TemporaryDirectory(prefix="wattzip-reference-") as folder:
        path = reference_input(folder)
        out = []
        for i in range(phases):
            if i:
                time.sleep(gap_s)
            out.append(measure_reference(path, meter, repeats))
    return out


def between_phases(a: Sequence[float], b: Sequence[float],
                   phase_means: Sequence[float]) -> Interval:
    """The change mean(b) - mean(a) with its 95% interval from the calibration's spread
    of phase means (each end is one phase: the difference of two has twice its variance)."""
    half = (t_ppf(0.975, len(phase_means) - 1) * stdev(phase_means) * math.sqrt(2))
    change = mean(b) - mean(a)
    return Interval(change, change - half, change + half, len(phase_means) - 1)


def compare(before: list[dict], after: list[dict], max_change: float,
            phases: Sequence[Sequence[dict]] = ()) -> str | None:
    """Why the reference moved beyond its noise and the limit, or None. Its noise is the
    calibration's `phases` when they hold as many repeats as each end, else Welch's
    interval of the two ends' repeats."""
    reasons = []
    for key, what in (("elapsed_s", "time"), ("energy_j", "energy")):
        a = [r[key] for r in before if r.get(key) is not None]
        b = [r[key] for r in after if r.get(key) is not None]
        if not a or not b:
            continue
        means = [mean(v) for v in ([r[key] for r in p if r.get(key) is not None]
                                   for p in phases) if len(v) == len(a) == len(b)]
        if len(means) >= 3:  # one repeat per end will do: the phases hold the noise
            iv, noise = between_phases(a, b, means), f"{len(means)} calibration phases'"
        elif len(a) >= 2 and len(b) >= 2:
            iv, noise = welch_interval([(1, b), (-1, a)], 0.95), "Welch's"
        else:
            continue  # one repeat per end and no phases: no spread to judge by
        change = iv.estimate / mean(a) if mean(a) else 0.0
        if iv.excludes_zero() and abs(change) > max_change:
            reasons.append(f"the reference operation's {what} changed by {change:+.0%} over "
                           f"the job (limit {max_change:.0%}; {noise} 95% interval of the "
                           f"change {iv.lo:+.3g} to {iv.hi:+.3g})")
    return "; ".join(reasons) or None


def _phase(journal: str, key: str, phase: str) -> list[dict] | None:
    for entry in records.read_journal(journal, key):
        if entry.get("phase") == phase:
            return entry["runs"]
    return None


def checked_job(job, meter: Meter, journal: str | os.PathLike,
                log: Callable[[str], None], run_job=repeats.run_job) -> tuple[dict, list[dict]]:
    """The job's loop between two reference measurements; after a drift, the loop again
    under a new key (its runs measured afresh). Returns the summary and every run of the
    job, flagged ones included."""
    check: DriftCheck | None = job.drift
    if check is None:
        summary = run_job(job, meter, journal, log=log)
        return summary, repeats.read_journal(journal, job.key())
    side = f"{journal}{REFERENCE_SUFFIX}"
    path = reference_input(Path(job.input_path).parent)
    flagged: list[dict] = []
    for epoch in range(EPOCHS):
        job = dataclasses.replace(job, epoch=epoch)
        key = job.key()
        before = _phase(side, key, "before")
        if before is None:
            before = measure_reference(path, meter, check.repeats)
            records.append_journal(side, {"key": key, "phase": "before", "runs": before})
        summary = run_job(job, meter, journal, log=log)
        after = _phase(side, key, "after")
        if after is None:
            after = measure_reference(path, meter, check.repeats)
            records.append_journal(side, {"key": key, "phase": "after", "runs": after})
        runs = repeats.read_journal(journal, key)
        why = compare(before, after, check.max_change, check.phases)
        if why is None:
            return summary, flagged + runs
        if epoch + 1 == EPOCHS:
            # Drifting again: measuring once more would not help, and failing would fail
            # every resume. The runs are kept, each saying so (the report counts them).
            log(f"{job.file_type}/{job.codec_name}: the machine drifted again: {why}; its "
                f"{len(runs)} runs are kept, marked drift_warning: look at what else "
                "runs on this machine")
            return summary, flagged + [{**r, "drift_warning": why} for r in runs]
        log(f"{job.file_type}/{job.codec_name}: the machine drifted: {why}; its "
            f"{len(runs)} runs are flagged and measured again")
        flagged += [{**r, "verified": False, "disturbed": f"drift: {why}",
                     "failure": f"drift: {why}"} for r in runs]
    raise AssertionError("unreachable: the last epoch returns")
