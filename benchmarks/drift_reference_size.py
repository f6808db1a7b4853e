"""Benchmark notes: the drift check's reference operation at other input sizes, measured
side by side: its cost, and the noise between its phases that a job's change is judged by.

    .venv/bin/python benchmarks/drift_reference_size.py [--sizes 2,4,8] [--phases 12]

The drift check (wattzip.measure.drift) measures gzip -6 of a fixed seeded text
`drift.repeats` times at each end of a job, and judges the change against the spread of
phase means a few seconds apart (the idle calibration's 6 phases). A smaller input costs
less per job; it is worth it only if its phases' spread, relative to their mean, stays
well under `drift.max_change`, so that the check still sees a change of that size. This
measures phases of every size interleaved (the order rotated each round, `--gap` seconds
apart, as the calibration's phases are), under the default meter, and prints per size:
the seconds per phase, the phases' relative spread (standard deviation of the phase
means over their mean) and the half-width of a change's 95% interval on 5 degrees of
freedom (the calibration's) as a share of the mean: the smallest change the check can
tell from noise.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

from wattzip import machine
from wattzip.machine import scratch
from wattzip.measure import drift
from wattzip.meters import open_meter
from wattzip.model.study import Study
from wattzip.resources import schema_default
from wattzip.stats import t_ppf
from wattzip.workload.inputs import generate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="2,4,8", help="input sizes in MiB, comma-separated")
    p.add_argument("--phases", type=int, default=12, help="phases of each size")
    p.add_argument("--repeats", type=int, default=schema_default("drift.repeats"))
    p.add_argument("--gap", type=float, default=drift.PHASE_GAP_S)
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    study = Study.from_files([Path("config.yaml")])
    phases: dict[int, list[list[dict]]] = {s: [] for s in sizes}
    with (machine.session("bench", config="drift_reference_size.py"),
          scratch.folder("wattzip-reference-size") as folder):
        meter = open_meter(study.testbeds[study.first_testbed].meter, "config")
        paths = {}
        for s in sizes:
            paths[s] = f"{folder}/text-{s}.bin"
            generate("text", s * 2**20, paths[s], seed=0, progress=False)
        for i in range(args.phases):
            order = sizes[i % len(sizes):] + sizes[:i % len(sizes)]
            for s in order:
                phases[s].append(drift.measure_reference(paths[s], meter, args.repeats))
                time.sleep(args.gap)
    half = t_ppf(0.975, drift.PHASES - 1) * math.sqrt(2)
    print(f"{args.phases} phases of {args.repeats} repeats per size, {args.gap} s apart, "
          f"meter {meter.name} ({meter.method}); limit drift.max_change "
          f"{schema_default('drift.max_change'):.0%}")
    print("| input | s per phase | time: spread | time: smallest change | "
          "energy: spread | energy: smallest change |")
    print("|---|---:|---:|---:|---:|---:|")
    for s in sizes:
        cost = statistics.mean(sum(r["elapsed_s"] for r in ph) for ph in phases[s])
        row = [f"{s} MiB", f"{cost:.2f}"]
        for key in ("elapsed_s", "energy_j"):
            means = [statistics.mean(r[key] for r in ph) for ph in phases[s]]
            rel = statistics.stdev(means) / statistics.mean(means)
            row += [f"{rel:.1%}", f"{half * rel:.1%}"]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
