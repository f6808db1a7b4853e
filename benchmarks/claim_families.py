"""What it would cost the jobs to stop only where the claims' family-wise tests keep their
cells, replayed side by side on one measured run of the moderated design.

    .venv/bin/python benchmarks/claim_families.py --results DIR --cache PILOT
        --configfile config.yaml config/paper.yaml ... [--kinds E]

DIR is a measured moderated study's testbed results (claims.csv and journal/<setting>/
of its primary setting); PILOT a plan's cached pilot (pilot.json). A claim that rests on
several break-even cells is tested at 95% family-wise: Holm over the cells it rests on
(wattzip.analysis.family), each cell's p-value that of its kind being decided. The jobs
stop when their own cell is decided at the look's level (wattzip.analysis.stopping), so a
cell can be decided alone and undone in its claim's family. This replays every codec job's
looks (benchmarks/guard_replay: its own runs, and the last measurements of the journals
it read when it began) four ways, and prices each stop at the study's file size as
guard_replay does (the family-wise ways from the look at which the cell stops alone):

- per cell: as the jobs stop (their T and E verdicts and asked kinds decided);
- Bonferroni: a cell of a claim's family (claims.csv's rests_on, two cells or more) stops
  only once its p-value is at most alpha / m, m the family's size: then Holm keeps it
  whatever the other cells show;
- Holm so far: it stops once Holm over the family's cells measured before it (their
  p-values on the runs they measured) and its own, m the family's size, keeps it. Cells measured
  later cannot undo that (inserting a p-value never undoes Holm's earlier rejections at a
  fixed m), but an earlier cell that fails its own threshold blocks every cell after it;
- top-up: the jobs stop as they do; then, while Holm over a family's cells at their
  stops undoes a cell decided alone, the cell that blocks it (the first, by p-value,
  that Holm does not keep) goes on to its next look, and nothing more once that cell is
  at its last look. This is the step that would run once every job has stopped.

A way that would look beyond the runs a job measured (the job stopped earlier) counts
its stop at that look: a lower bound of its cost, as in guard_replay. With --kinds, the
jobs' verdict.kind_metrics are replaced as in guard_replay.
"""

from __future__ import annotations

import argparse
import csv
from collections import Counter
from pathlib import Path

from arguments import existing_dir, existing_file
from guard_replay import (
    CODEC_OPS,
    GROUPED,
    job_runs,
    journals,
    pricer,
    replay,
    replay_options,
    up_to,
)

from wattzip.analysis import breakeven, family
from wattzip.analysis.analysis_options import pair_confidence
from wattzip.analysis.stopping import METRICS, VerdictLooks, _codec_of, _values
from wattzip.model.study import Study

ALPHA = 0.05


def families(claims_csv: Path, setting: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(claim, metric, cells) of every claim of the setting tested over two cells or more."""
    out = []
    with open(claims_csv, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["setting"] != setting or int(row["family_cells"] or 0) < 2:
                continue
            cells = [tuple(c.split()) for c in row["rests_on"].split("; ")]
            out.append((row["claim_id"], cells[0][2], [(ft, codec) for ft, codec, _ in cells]))
    return out


def cell_p(looks: VerdictLooks, runs: list[dict], n: int, metric: str) -> float:
    """The p-value of the cell's kind being decided at look n (wattzip.analysis.family.cell_p),
    its differences as the job's looks take them."""
    stem = METRICS[metric]
    each = pair_confidence(looks.look_confidence(n))
    picked = looks.arm_runs(runs, CODEC_OPS, stem, n)
    if min(map(len, picked)) < n:
        return 1.0
    priors = looks.priors(_values(picked, stem), CODEC_OPS, stem, _codec_of(runs, CODEC_OPS))
    dw, dr = breakeven.differences(dict(zip("wcrd", picked, strict=True)), stem,
                                   lambda r: r[stem], each, priors)
    return family.cell_p(dw, dr, each, len(looks.looks))


def holm_keeps(own: float, known: list[float], m: int) -> bool:
    """Whether Holm at ALPHA over `known` and `own`, of a family of m, rejects `own`."""
    for rank, p in enumerate(sorted([*known, own])):
        if p > ALPHA / (m - rank):
            return False
        if p >= own:
            return True
    return True


def top_up(stops: dict, fams: list, p_at, last: int, looks: list[int]) -> dict:
    """The stops after topping up every family's blocking cells (see the module's
    docstring); p_at(cell, n, metric) is None beyond the runs the job measured, where the
    top-up is counted at that look and taken to decide (a lower bound)."""
    stops, beyond = dict(stops), set()
    changed = True
    while changed:
        changed = False
        for _, metric, cells in fams:
            cells = [c for c in cells if c in stops]
            p = {c: 0.0 if c in beyond else p_at(c, stops[c], metric) for c in cells}
            p = {c: 0.0 if q is None else q for c, q in p.items()}
            keep = dict(zip(cells, family.holm([p[c] for c in cells], ALPHA), strict=True))
            if all(keep[c] or p[c] > ALPHA for c in cells):
                continue  # Holm undoes no cell decided alone
            blocking = min((c for c in cells if not keep[c]), key=lambda c: p[c])
            if stops[blocking] >= last:
                continue
            stops[blocking] = next(n for n in looks if n > stops[blocking])
            if p_at(blocking, stops[blocking], metric) is None:
                beyond.add(blocking)
            changed = True
    return stops, len(beyond)


def family_stop(study, way, cell, fams, job, stops, base) -> tuple[int, bool]:
    """Where a cell's job stops when its p-value is judged within each claim's family
    (Bonferroni; or Holm over the cells of the family decided so far), and whether that
    look lies beyond the runs the job measured (counted at that look, a lower bound)."""
    looks, own, began, _ = job(cell)
    mine = [(metric, cells) for _, metric, cells in fams if cell in cells]
    for n in (x for x in study.looks if x >= stops["per cell"][cell]):
        if not up_to(own, n):
            return n, True
        kept = True
        for metric, cells in mine:
            known = [] if way == "Bonferroni" else [
                cell_p(other[0], other[1], other[0].runs_per_arm(other[1], CODEC_OPS), metric)
                for k in cells if k != cell and k in base and job(k)[3] <= began
                for other in [job(k)]]
            kept &= holm_keeps(cell_p(looks, up_to(own, n), n, metric), known, len(cells))
        if kept:
            return n, False
    return study.looks[-1], False


def print_ways(study, base, fams, stops, beyond, price) -> None:
    """Each way's stops, priced as a multiple of every cell at its first look, and the
    cells whose stop differs between ways."""
    floor = sum(price(c, study.looks[0]) for c in base)
    print(f"{len(base)} codec cells replayed; looks {study.looks}; families: "
          + "; ".join(f"{c} ({len(cells)} {m} cells)" for c, m, cells in fams))
    for way, stop in stops.items():
        total = sum(price(c, n) for c, n in stop.items())
        print(f"{way:12} stopped at " + ", ".join(
            f"{n} runs: {k}" for n, k in sorted(Counter(stop.values()).items()))
            + f" ({beyond[way]} beyond the runs measured, counted at that look); "
            f"{total / 3600:.2f} h or more, {total / floor:.2f} times every cell at its first look")
    for cell in base:
        if len({s[cell] for s in stops.values()}) > 1:
            print(f"  {'/'.join(cell)}: " + ", ".join(f"{w} {s[cell]}" for w, s in stops.items())
                  + f" runs ({price(cell, 1) / 60:.1f} min a pair)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", required=True, type=existing_dir, help="results/<study>/<testbed>")
    p.add_argument("--cache", required=True, type=existing_file,
                   help="the plan's cached pilot (pilot.json)")
    p.add_argument("--configfile", nargs="+", required=True, type=existing_file)
    p.add_argument("--kinds", default=None, metavar="M,...",
                   help="verdict.kind_metrics to replay in place of the study's")
    a = p.parse_args()
    study = Study.from_files(a.configfile)
    folder = Path(a.results, "journal", study.primary.name)
    every = journals(str(folder))
    kinds = tuple(a.kinds.split(",")) if a.kinds is not None else None
    base = replay(study, str(folder), [("per cell", GROUPED, tuple(study.looks), kinds, None)])
    fams = families(Path(a.results, "claims.csv"), study.primary.name)
    options = replay_options(study, tuple(study.looks))

    def job(cell):
        """The job's looks as it ran them, its own runs, and when it began and ended."""
        own, prior = job_runs(every, cell)
        looks = VerdictLooks(tuple(study.looks), options, prior_runs=prior,
                             plain_type=cell[0])
        return (looks, own, min(r["started_at"] for r in own),
                max(r["ended_at"] for r in own))

    def p_at(cell, n, metric):
        looks, own, _, _ = job(cell)
        return cell_p(looks, up_to(own, n), n, metric) if up_to(own, n) else None

    stops = {"per cell": {c: s["per cell"][0] for c, s in base.items()},
             "Bonferroni": {}, "Holm so far": {}}
    beyond = Counter({"per cell": sum(not s["per cell"][1] for s in base.values())})
    for cell in sorted(base, key=lambda c: job(c)[2]):
        for way in ("Bonferroni", "Holm so far"):
            stops[way][cell], past = family_stop(study, way, cell, fams, job, stops, base)
            beyond[way] += past
    stops["top-up"], beyond["top-up"] = top_up(stops["per cell"], fams, p_at,
                                               study.looks[-1], list(study.looks))
    print_ways(study, base, fams, stops, beyond, pricer(study, a.cache))

if __name__ == "__main__":
    main()
