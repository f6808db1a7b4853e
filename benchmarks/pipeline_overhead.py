"""Where a finished study's wall time went: measured runs against the pipeline's own time.

    .venv/bin/python benchmarks/pipeline_overhead.py [WORKFLOW_DIR]
        [--runs results/default/local/runs.csv] [--wall SECONDS]

Reads the Snakemake log of the last invocation (.snakemake/log/, job start and
finish times per rule) and the run records (results/<study>/<testbed>/runs.csv: every
run's measured interval), and prints the wall time over the sum of measured
elapsed times, then the pipeline's own time per stage: rules outside
measurement, and inside the measurement jobs the gaps before, between and after
their runs (after a write: verification, the extent check, the cold cache for
the read; after a read: the cold cache for the next write).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import re
from collections import Counter, defaultdict
from pathlib import Path

from arguments import existing_dir

DUTY_CYCLE_OPS = ("write-compute",)  # wattzip.measure.job's duty-cycle operation
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]")


def parse_log(path: Path) -> tuple[dict[str, float], list[tuple[float, float]], float, float]:
    """Seconds per rule (job start to finish), every job's interval, the log's first and
    last time (whole seconds: Snakemake's log stamps)."""
    started, rule_of, per_rule, intervals = {}, {}, defaultdict(float), []
    now = first = last = None
    pending_rule = None
    for line in path.read_text().splitlines():
        m = STAMP.match(line)
        if m:
            now = dt.datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y").timestamp()
            first = first if first is not None else now
            last = now
            continue
        rule = re.match(r"^(?:local)?(?:rule|checkpoint) (\w+):", line)
        if rule:
            pending_rule = rule.group(1)
        job = re.match(r"^\s+jobid: (\d+)", line)
        if job and pending_rule:
            started[job.group(1)], rule_of[job.group(1)] = now, pending_rule
            pending_rule = None
        done = re.match(r"^Finished jobid: (\d+)", line)
        if done and done.group(1) in started:
            per_rule[rule_of[done.group(1)]] += now - started[done.group(1)]
            intervals.append((started[done.group(1)], now))
    return dict(per_rule), intervals, first, last


def union_length(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def set_aside(runs: list[dict]) -> str:
    """The runs the analysis leaves out, by why: a drift or a disturbance is measured
    again, a failure is not, so the three cost the study differently."""
    why = Counter(r["failure"].split(":")[0] for r in runs if r["verified"] != "true")
    kinds = {"drift": why.pop("drift", 0), "disturbed": why.pop("disturbed", 0)}
    return (f"set aside: {sum(kinds.values()) + sum(why.values())} (failed or unverified "
            f"{sum(why.values())}, disturbed {kinds['disturbed']}, drift {kinds['drift']})")


def stamp(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("workflow", nargs="?", default=".", type=existing_dir)
    p.add_argument("--runs", default="results/default/local/runs.csv",
                   help="the study's runs.csv, under the workflow folder")
    p.add_argument("--wall", type=float, help="the invocation's wall time, if measured outside")
    a = p.parse_args()
    root = a.workflow
    logs = sorted((root / ".snakemake" / "log").glob("*.snakemake.log"))
    if not logs:
        p.error(f"no Snakemake log in {root / '.snakemake' / 'log'}: run the study there first")
    if not (root / a.runs).is_file():
        p.error(f"no such file: {root / a.runs}")
    log = logs[-1]
    per_rule, intervals, first, last = parse_log(log)
    wall = a.wall or (last - first)
    with open(root / a.runs, newline="") as f:
        runs = [r for r in csv.DictReader(f) if r["started_at"]]
    measured = sum(float(r["elapsed_s"]) for r in runs)
    print(f"log: {log}")
    print(f"runs: {len(runs)}, {set_aside(runs)}")
    print(f"wall time: {wall:.1f} s; measured elapsed: {measured:.1f} s; "
          f"ratio {wall / measured:.3f}; own time {wall - measured:.1f} s "
          f"({(wall - measured) / measured:.1%} of measured)")

    # Inside the measurement jobs: the gaps around the runs, per job. A cell's duty-cycle
    # runs (rule measure_dutycycle, compute phases between them) are another job, and a
    # drifted job's set-aside runs another attempt: the gap before its measurement again
    # (the drift check) is the job's, not a cold cache's.
    jobs = defaultdict(list)
    for r in runs:
        jobs[(r["setting"], r["file_type"], r["codec"], r["op"] in DUTY_CYCLE_OPS,
              r["disturbed"].startswith("drift"))].append(r)
    after_write = after_read = 0.0
    for (*_, duty_cycle, _drifted), job in jobs.items():
        if duty_cycle:
            continue
        job.sort(key=lambda r: stamp(r["started_at"]))
        for prev, nxt in zip(job, job[1:], strict=False):
            gap = stamp(nxt["started_at"]) - stamp(prev["ended_at"])
            if prev["op"].endswith("write"):
                after_write += gap
            else:
                after_read += gap
    duty_measured = sum(float(r["elapsed_s"]) for r in runs if r["op"] in DUTY_CYCLE_OPS)
    startup = per_rule.pop("measure_runs", 0.0) - (measured - duty_measured) - after_write \
        - after_read
    if "measure_dutycycle" in per_rule:
        per_rule["measure_dutycycle (less its runs' measured time)"] = \
            per_rule.pop("measure_dutycycle") - duty_measured
    rows = [
        ("measure_runs: after each write (verify, extents, cold cache for the read)",
         after_write),
        ("measure_runs: after each read (cold cache for the next write)", after_read),
        ("measure_runs: job start and end (imports, meter, medium, input copies, ldd)",
         startup),
    ]
    rows += [(f"rule {rule}", secs) for rule, secs in sorted(per_rule.items(),
                                                             key=lambda kv: -kv[1])]
    rows.append(("no job running (start-up, DAG, scheduling: wall minus the jobs' union)",
                 wall - union_length(intervals)))
    print(f"\n{'where the own time goes (rules after measurement run 2 at a time)':<78} "
          f"{'s':>7} {'% meas':>7}")
    for name, secs in rows:
        print(f"{name:<78} {secs:7.1f} {secs / measured:7.1%}")


if __name__ == "__main__":
    main()
