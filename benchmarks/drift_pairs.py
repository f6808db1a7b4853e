"""Benchmark notes: how often the drift check flags a job, against how often it would flag
two reference phases measured seconds apart with no job between them.

    .venv/bin/python benchmarks/drift_pairs.py --journal RESULTS/TESTBED/journal

The drift check (wattzip.measure.drift) measures a fixed reference operation a few times
before a job and again after it, and calls a change a drift when the 95% interval of it
excludes zero and it exceeds `drift.max_change`. If the machine is steady over a job,
that test flags at most 5% of jobs (fewer, as a change must also exceed the limit). The
measured jobs of a study run one after another, so the reference measured after one job
and the one measured before the next of the same setting are a pair with no job between
them (only the next job's cache drop and staging; jobs of two settings are not paired,
as their machine factors differ): the same test, applied to those pairs, is its
false-alarm rate on this machine. This prints both side
by side, from one study's journals, with the changes' sizes and the times between the
pairs' phases: by Welch's interval of the repeats alone; where the setting's idle
calibration (RESULTS/TESTBED/idle/SETTING.json) holds the reference's phases, by the
interval from their spread; and by that spread pooled with the back-to-back pairs the
job itself read (drift.pool_phases and drift.back_to_back over the journaled phases'
times; a journal older than those times has none). `--first N` decides as a study with
`drift.repeats: N` would have: each phase cut to its first N repeats.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
from datetime import datetime
from pathlib import Path

from arguments import existing_dir

from wattzip import records
from wattzip.measure.drift import REFERENCE_SUFFIX, back_to_back, compare, pool_phases
from wattzip.resources import schema_default

QUANTILES = (0.5, 0.75, 0.9, 1.0)


def measured_jobs(journal_dir: Path) -> list[dict]:
    """Every measurement of a job with its reference before and after, in time order, and
    its setting's calibration phases (none without them)."""
    jobs, phases_of = [], {}
    for side in sorted(journal_dir.glob(f"*/*/*{REFERENCE_SUFFIX}")):
        runs = records.read_journal(str(side)[:-len(REFERENCE_SUFFIX)])
        phases = records.read_journal(side)
        for key in dict.fromkeys(p["key"] for p in phases):
            ends = {p["phase"]: p for p in phases if p["key"] == key}
            own = [r for r in runs if r.get("job_key") == key]
            if "after" not in ends or not own:
                continue  # killed before its last run: no pair to compare
            setting = side.parent.parent.name
            if setting not in phases_of:
                idle = journal_dir.parent / "idle" / f"{setting}.json"
                phases_of[setting] = (records.read_json(idle, "idle calibration").get(
                    "reference_phases") or []) if idle.exists() else []
            jobs.append({
                "job": f"{setting}/{side.parent.name}/{side.name.split('.')[0]}",
                "setting": setting,
                "phases": phases_of[setting],
                "start": min(datetime.fromisoformat(r["started_at"]) for r in own),
                "end": max(datetime.fromisoformat(r["ended_at"]) for r in own),
                "before": ends["before"]["runs"], "after": ends["after"]["runs"],
                "before_at": ends["before"].get("at")})
    return sorted(jobs, key=lambda j: j["start"])


def change(a: list[dict], b: list[dict]) -> float:
    """The reference's relative change in time from phase a to phase b."""
    before = statistics.mean(r["elapsed_s"] for r in a)
    return (statistics.mean(r["elapsed_s"] for r in b) - before) / before


def read_pairs(jobs: list[dict], journal_dir: Path) -> list[list[tuple[list, list]]]:
    """The back-to-back pairs each job pooled with its calibration's phases, chosen as the
    job chose them (none where its "before" has no journaled time)."""
    phases = pool_phases(journal_dir)
    return [back_to_back(phases, j["setting"], j["before_at"]) if j["before_at"] else []
            for j in jobs]


def share(flags: list[bool]) -> str:
    return f"{sum(flags)} of {len(flags)} ({sum(flags) / len(flags):.0%})"


def quantiles(values: list[float]) -> str:
    v = sorted(values)
    return " / ".join(f"{v[round(q * (len(v) - 1))]:.3g}" for q in QUANTILES)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--journal", required=True, type=existing_dir,
                   help="a study's journal folder (results/<study>/<testbed>/journal)")
    p.add_argument("--max-change", type=float, default=schema_default("drift.max_change"))
    p.add_argument("--first", type=int, default=None, metavar="N",
                   help="use each phase's first N repeats only (as drift.repeats: N would)")
    a = p.parse_args()
    jobs = measured_jobs(a.journal)
    pools = read_pairs(jobs, a.journal)
    if a.first:
        def cut(phase: list[dict]) -> list[dict]:
            return phase[:a.first]

        jobs = [{**j, "before": cut(j["before"]), "after": cut(j["after"]),
                 "phases": [cut(p) for p in j["phases"]]} for j in jobs]
        pools = [[(cut(x), cut(y)) for x, y in pool] for pool in pools]
    pairs = {  # what: (the two phases, seconds between them, phases, earlier pairs) per pair
        "across a job (its runs' seconds)": [
            (j["before"], j["after"], (j["end"] - j["start"]).total_seconds(), j["phases"],
             pool) for j, pool in zip(jobs, pools, strict=True)],
        "back to back, no job between (seconds from one job's last run to the next's first)": [
            (x["after"], y["before"], (y["start"] - x["end"]).total_seconds(), y["phases"],
             pool) for (x, y), pool in zip(itertools.pairwise(jobs), pools[1:], strict=True)
            if x["setting"] == y["setting"]]}
    print(f"{len(jobs)} measured jobs; a drift: the 95% interval excludes zero and the "
          f"change exceeds {a.max_change:.0%}; quantiles {' / '.join(map(str, QUANTILES))}")
    for what, rows in pairs.items():
        if not rows:
            print(f"{what}: none")
            continue
        welch = sum(compare(x, y, a.max_change) is not None for x, y, *_ in rows)
        calibrated = [compare(x, y, a.max_change, p) is not None for x, y, _, p, _ in rows
                      if p]
        pooled = [compare(x, y, a.max_change, p, pool) is not None
                  for x, y, _, p, pool in rows if p]
        print(f"{what}: flagged by Welch's interval {welch} of {len(rows)} "
              f"({welch / len(rows):.0%})"
              + (f", by the calibration phases' {share(calibrated)}, by them pooled "
                 f"with the back-to-back pairs each job read {share(pooled)}" if calibrated else "")
              + f"; |change in time| {quantiles([abs(change(x, y)) for x, y, *_ in rows])}; "
              f"seconds {quantiles([s for _, _, s, *_ in rows])}")


if __name__ == "__main__":
    main()
