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
Half a minute of calibration can catch a quieter (or busier) stretch than the hours
after it, so the setting's back-to-back pairs the study has measured before the job
(one job's reference after it and the next job's before it, seconds apart, no job
between: `back_to_back`) join the phases, one degree of freedom each.

The reference results go to a journal beside the job's (<journal>.reference.jsonl),
so a job resumed after a kill compares with the reference it started from, and so does
its verdict once decided: a finished job run again keeps it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from wattzip import records
from wattzip.machine import scratch
from wattzip.measure import repeats, runner
from wattzip.measure.disturbance import DriftCheck
from wattzip.meters import Meter
from wattzip.stats import Interval, mean, t_ppf, welch_interval
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
# Two phases of the reference are a back-to-back pair when one job's "after" ended at most
# this long before the next job's "before" did (about 5 s on this project's VM: the next
# job's lock, medium, cache drop and the phase itself); a job of another study between them
# takes longer, and a pair that held one would only widen the noise.
PAIR_GAP_S = 60.0
CONFIDENCE = 0.95  # of the interval of the reference's change that calls a drift


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
    with scratch.folder("wattzip-reference") as folder:
        path = reference_input(folder)
        out = []
        for i in range(phases):
            if i:
                time.sleep(gap_s)
            out.append(measure_reference(path, meter, repeats))
    return out


def between_phases(a: Sequence[float], b: Sequence[float], phase_means: Sequence[float],
                   pair_changes: Sequence[float] = ()) -> Interval:
    """The change mean(b) - mean(a) with its CONFIDENCE interval from the calibration's
    spread of phase means, pooled with back-to-back pairs' changes (each end is one phase: a
    difference of two has twice a phase's variance, so a pair's d gives d**2 / 2 on one
    degree of freedom)."""
    centre = mean(phase_means)
    squares = (sum((m - centre) ** 2 for m in phase_means)
               + sum(d * d / 2 for d in pair_changes))
    df = len(phase_means) - 1 + len(pair_changes)
    half = t_ppf(0.5 + CONFIDENCE / 2, df) * math.sqrt(2 * squares / df)
    change = mean(b) - mean(a)
    return Interval(change, change - half, change + half, df)


def _values(runs: Sequence[dict], key: str) -> list[float]:
    return [r[key] for r in runs if r.get(key) is not None]


def compare(before: list[dict], after: list[dict], max_change: float,
            phases: Sequence[Sequence[dict]] = (),
            pairs: Sequence[tuple[Sequence[dict], Sequence[dict]]] = ()) -> str | None:
    """Why the reference moved beyond its noise and the limit, or None. Its noise is the
    calibration's `phases`, with the study's back-to-back `pairs` before the job, when
    they hold as many repeats as each end, else Welch's interval of the two ends'
    repeats."""
    reasons = []
    estimated = any(r.get("meter_method") == "estimated" for r in (*before, *after))
    energy = "ESTIMATED energy" if estimated else "energy"
    for key, what in (("elapsed_s", "time"), ("energy_j", energy)):
        a, b = _values(before, key), _values(after, key)
        if not a or not b:
            continue
        means = [mean(v) for v in (_values(p, key) for p in phases)
                 if len(v) == len(a) == len(b)]
        changes = [mean(y) - mean(x) for x, y in ((_values(x, key), _values(y, key))
                                                  for x, y in pairs)
                   if len(x) == len(y) == len(a) == len(b)]
        if len(means) >= 3:  # one repeat per end will do: the phases hold the noise
            iv = between_phases(a, b, means, changes)
            noise = f"{len(means)} calibration phases'" + (
                f" and {len(changes)} back-to-back pairs'" if changes else "")
        elif len(a) >= 2 and len(b) >= 2:
            iv, noise = welch_interval([(1, b), (-1, a)], CONFIDENCE), "Welch's"
        else:
            continue  # one repeat per end and no phases: no spread to judge by
        change = iv.estimate / mean(a) if mean(a) else 0.0
        if iv.excludes_zero() and abs(change) > max_change:
            reasons.append(f"the reference operation's {what} changed by {change:+.0%} over "
                           f"the job (limit {max_change:.0%}; {noise} {CONFIDENCE:.0%} "
                           f"interval of the change {iv.lo:+.3g} to {iv.hi:+.3g})")
    return "; ".join(reasons) or None


def pool_phases(folder: str | os.PathLike) -> list[dict]:
    """Every reference phase journaled below a study's journal folder
    (<setting>/<file type>/<codec>.jsonl.reference.jsonl) with the time it ended, each
    with its setting (older phases without that time are left out)."""
    root, out = Path(folder), []
    for side in sorted(root.glob(f"*/*/*{REFERENCE_SUFFIX}")):
        setting = side.relative_to(root).parts[0]
        out += [{**e, "setting": setting} for e in records.read_journal(side) if e.get("at")]
    return out


def back_to_back(phases: Sequence[dict], setting: str, until: str) -> list[tuple[list, list]]:
    """The setting's back-to-back pairs among `phases` (pool_phases) whose later phase
    ended before `until` (a job's own "before"): a job's "after" and the very next phase
    of any setting, the next job's "before" in this one, at most PAIR_GAP_S apart."""
    def stamp(entry: dict) -> float:
        return dt.datetime.fromisoformat(entry["at"]).timestamp()

    timed = sorted(phases, key=stamp)
    limit = dt.datetime.fromisoformat(until).timestamp()
    return [(x["runs"], y["runs"]) for x, y in itertools.pairwise(timed)
            if x["phase"] == "after" and y["phase"] == "before"
            and x["setting"] == y["setting"] == setting
            and stamp(y) < limit and stamp(y) - stamp(x) <= PAIR_GAP_S]


def _phase(journal: str, key: str, phase: str) -> dict | None:
    for entry in records.read_journal(journal, key):
        if entry.get("phase") == phase:
            return entry
    return None


def _verdict(side: str, key: str, decide: Callable[[], str | None]) -> str | None:
    """A job's drift verdict, decided once, when its reference after it is in, and
    journaled (with no time, so no pool reads it as a phase): a finished job resumed later
    keeps the verdict it was measured under, though the idle calibration has measured its
    phases again since or the pool has grown."""
    entry = _phase(side, key, "verdict")
    if entry is None:
        entry = {"key": key, "phase": "verdict", "why": decide()}
        records.append_journal(side, entry)
    return entry["why"]


def _reference(path: str, meter: Meter, repeats: int, side: str, key: str,
               phase: str) -> dict:
    """A job's reference phase from its journal, else measured now and journaled with the
    time it ended (which pairs it with the phases of the jobs beside it)."""
    entry = _phase(side, key, phase)
    if entry is None:
        entry = {"key": key, "phase": phase, "runs": measure_reference(path, meter, repeats),
                 "at": runner.utc_now()}
        records.append_journal(side, entry)
    return entry


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
        before = _reference(path, meter, check.repeats, side, key, "before")
        summary = run_job(job, meter, journal, log=log)
        after = _reference(path, meter, check.repeats, side, key, "after")
        runs = repeats.read_journal(journal, key)

        def decide(before=before, after=after, job=job) -> str | None:
            pairs = (back_to_back(pool_phases(check.pool), job.factors.get("setting", ""),
                                  before["at"]) if check.pool and before.get("at") else [])
            return compare(before["runs"], after["runs"], check.max_change, check.phases,
                           pairs)

        why = _verdict(side, key, decide)
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
        # A run that had failed, or was disturbed already, keeps its own reason: it is
        # counted as what it was, not as the drift's.
        flagged += [{**r, "verified": False, "disturbed": f"drift: {why}",
                     "failure": f"drift: {why}"} if r["verified"] else r for r in runs]
    raise AssertionError("unreachable: the last epoch returns")
