"""Benchmark notes: a study's measurement at its own file size if each cell stopped where a
smaller measured run's cell did.

    .venv/bin/python benchmarks/stops_at_scale.py --cache PILOT --runs CSV
        --configfile config.yaml config/paper.yaml ... [--top N]

`wattzip plan` gives a design's minimum (every cell at its first look, or the paper
rule's minimum repeats) and its maximum; where between them a study lands depends on
how many runs its cells need. This prices each cell of the study (a codec's, or a
file type's plain arm) at the plan's cached pilot (PILOT, `wattzip plan --cache`) for
as many write-read pairs as the same cell measured in a smaller run of the same study
and design (CSV, that run's runs.csv: its writes, each a measured pair). Smaller files are noisier
relative to their means, so a cell needs at least as many runs at 64 MiB as at 2 GiB:
read the result as an upper estimate. --top N names the N cells that cost the most.

Both counts are printed side by side: every run measured, and the runs the study kept
(not `disturbed`). The difference is what the drift check's measuring again (and any
run left out as disturbed) cost that run, which the looks' stops alone do not show.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter

from arguments import existing_file

from wattzip.model import plan
from wattzip.model.jobs import Job
from wattzip.model.study import Study


def pair_at_scale(study: Study, rates: dict, setting: str, file_type: str, codec: str) -> float:
    """One write-read pair of the cell in its setting (its copies, its disk's bandwidth and
    layout), at the study's file size and the pilot's rates, as `wattzip plan` prices it."""
    job = Job(study.first_testbed, setting, file_type, codec, study.root())
    return plan.cell_seconds(study, rates)(job) + 2 * plan.RUN_PREPARE_S


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", required=True, type=existing_file,
                   help="the plan's cached pilot (pilot.json)")
    p.add_argument("--runs", required=True, type=existing_file,
                   help="a smaller measured run's runs.csv")
    p.add_argument("--configfile", nargs="+", required=True, type=existing_file)
    p.add_argument("--top", type=int, default=0, help="also name the N costliest cells")
    a = p.parse_args()
    study = Study.from_files(a.configfile)
    with open(a.cache, encoding="utf-8") as f:
        rates = json.load(f)
    measured, kept = Counter(), Counter()  # (setting, file type, codec) -> writes
    with open(a.runs, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["op"] in ("plain-write", "compress-write"):
                cell = (r["setting"], r["file_type"], r["codec"])
                measured[cell] += 1
                kept[cell] += not r.get("disturbed")
    hours = {}
    for what, pairs in (("every run measured", measured), ("the runs kept", kept)):
        cost = {cell: n * pair_at_scale(study, rates, *cell) for cell, n in pairs.items() if n}
        hours[what] = sum(cost.values()) / 3600
        codecs = Counter(n for (*_, codec), n in pairs.items() if codec != "plain" and n)
        print(f"{what}: {sum(codecs.values())} codec cells, stopped at "
              + ", ".join(f"{n} runs: {k}" for n, k in sorted(codecs.items()))
              + f"; plain pairs {sum(n for (*_, c), n in pairs.items() if c == 'plain')}")
        print(f"  at {study.file_size_bytes >> 20} MiB files: {hours[what]:.2f} h of "
              "measurement at those runs")
        for (setting, file_type, codec), s in sorted(cost.items(), key=lambda kv: -kv[1])[:a.top]:
            where = "" if len(study.settings) == 1 else f"{setting} "
            print(f"    {where}{file_type}/{codec}: {pairs[(setting, file_type, codec)]} pairs, "
                  f"{s / 60:.1f} min")
    print(f"every run measured / the runs kept: "
          f"{hours['every run measured'] / hours['the runs kept']:.2f}")

if __name__ == "__main__":
    main()
