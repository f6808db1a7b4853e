"""Whether the report decides each cell as its job's looks did, on one measured run of
the moderated design.

    .venv/bin/python benchmarks/looks_vs_report.py --results DIR
        --configfile config.yaml config/paper.yaml ...

DIR is a measured moderated study's testbed results (breakeven.csv and
journal/<setting>/ of its primary setting). For every codec cell's T and E break-even,
this replays the job's look at the runs the analysis decided it on (breakeven.csv's n):
the job's own runs of its last measurement and the prior its looks fitted from the
other journals (benchmarks/guard_replay.job_runs, as wattzip.measure.measurement reads
them), and sets the p-value of its kind being decided (claim_families.cell_p) beside
the report's (`p_decided`). A job that stops on a decision the report does not make
spends its runs on a verdict nobody reads, or leaves a claim open.
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

from arguments import existing_dir, existing_file
from claim_families import cell_p
from guard_replay import job_runs, journals, replay_options, up_to

from wattzip.analysis.stopping import METRICS, VerdictLooks
from wattzip.model.study import Study


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", required=True, type=existing_dir, help="results/<study>/<testbed>")
    p.add_argument("--configfile", nargs="+", required=True, type=existing_file)
    a = p.parse_args()
    study = Study.from_files(a.configfile)
    every = journals(str(Path(a.results, "journal", study.primary.name)))
    options = replay_options(study, tuple(study.looks))
    compared, differ = 0, []
    with open(Path(a.results, "breakeven.csv"), newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            cell = (row["file_type"], row["codec"])
            if (row["setting"] != study.primary.name or row["metric"] not in METRICS
                    or not every.get(cell)):
                continue
            own, prior = job_runs(every, cell)
            looks = VerdictLooks(tuple(study.looks), options, prior_runs=prior,
                                 plain_type=cell[0])
            n = int(row["n"])
            mine = cell_p(looks, up_to(own, n), n, row["metric"])
            theirs = float(row["p_decided"]) if row["p_decided"] else 1.0
            compared += 1
            if not math.isclose(mine, theirs, rel_tol=1e-3, abs_tol=1e-6):
                differ.append(f"  {'/'.join(cell)} {row['metric']} at {n} runs: the looks "
                              f"{mine:.4g}, the report {theirs:.4g}")
    print(f"{compared} break-even cells (T, E) of {study.primary.name}: "
          f"{compared - len(differ)} decided on the same p-value by the looks and the report, "
          f"{len(differ)} not")
    print("\n".join(differ))


if __name__ == "__main__":
    main()
