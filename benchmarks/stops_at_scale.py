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
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter

from wattzip.model import plan
from wattzip.model.study import Study


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", required=True, help="the plan's cached pilot (pilot.json)")
    p.add_argument("--runs", required=True, help="a smaller measured run's runs.csv")
    p.add_argument("--configfile", nargs="+", required=True)
    p.add_argument("--top", type=int, default=0, help="also name the N costliest cells")
    a = p.parse_args()
    study = Study.from_files(a.configfile)
    with open(a.cache, encoding="utf-8") as f:
        rates = json.load(f)
    pairs = Counter()  # (file type, codec) -> writes measured
    with open(a.runs, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["op"] in ("plain-write", "compress-write"):
                pairs[(r["file_type"], r["codec"])] += 1
    cost = {cell: n * (plan.pair_s(rates["|".join(cell)], study.file_size_bytes, None, False)
                       + 2 * plan.RUN_PREPARE_S) for cell, n in pairs.items()}
    seconds = sum(cost.values())
    codecs = Counter(n for (_, codec), n in pairs.items() if codec != "plain")
    print(f"{sum(codecs.values())} codec cells, stopped at "
          + ", ".join(f"{n} runs: {k}" for n, k in sorted(codecs.items()))
          + f"; plain pairs {sum(n for (_, c), n in pairs.items() if c == 'plain')}")
    print(f"at {study.file_size_bytes >> 20} MiB files: {seconds / 3600:.2f} h of measurement "
          "at those runs")
    for (file_type, codec), s in sorted(cost.items(), key=lambda kv: -kv[1])[:a.top]:
        print(f"  {file_type}/{codec}: {pairs[(file_type, codec)]} pairs, {s / 60:.1f} min")


if __name__ == "__main__":
    main()
