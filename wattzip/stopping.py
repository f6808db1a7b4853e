"""When a measurement job has measured enough.

Two designs (config `repeats.design`):

- paper: SYSTOR '09's rule. At least `min` repeats, then more until every 95%
  half-width of T, E and ET is under `ci_target` of its mean, at most `max`. The
  way to reproduce the paper, though looking after every run erodes the coverage
  the intervals claim.
- verdict: planned looks (say n = 3, 5, 8 runs per arm). The plain baseline of a
  setting and file type runs to the last look (its runs are shared by every codec);
  a codec's job stops at the first look where the verdicts of its cell (T, and E
  where there is a meter) are all decided, each look at alpha / looks (Bonferroni,
  wattzip.verdicts), so coverage holds whichever look it stops at. The verdicts
  compare the codec's first n runs with the baseline's first n.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wattzip import verdicts
from wattzip.stats import need_more_repeats

PLAIN_OPS = ("plain-write", "plain-read")


def series(runs: list[dict], ops: Sequence[str]) -> dict[str, list[float]]:
    """What the paper's rule watches: T, E and ET of each operation (T alone without a
    meter), over the verified runs."""
    good = [r for r in runs if r.get("verified")]
    out = {}
    for op in ops:
        mine = [r for r in good if r["op"] == op]
        out[f"{op} elapsed"] = [r["elapsed_s"] for r in mine]
        if any(r.get("energy_j") is not None for r in mine) or not mine:
            out[f"{op} energy"] = [r["energy_j"] for r in mine if r.get("energy_j") is not None]
            out[f"{op} ET"] = [r["energy_j"] * r["elapsed_s"] for r in mine
                               if r.get("energy_j") is not None]
    return out


def first_runs(runs: list[dict], op: str | None, n: int | None) -> list[dict]:
    """The first n verified runs of an operation (every run's, for None), in repeat
    order (all of them, for n None)."""
    return sorted((r for r in runs if r.get("verified") and op in (None, r["op"])),
                  key=lambda r: r["repeat"])[:n]


@dataclass(frozen=True)
class VerdictLooks:
    """The verdict design's stopping rule for one codec's job."""

    looks: tuple[int, ...]
    baseline: list  # the plain arm's runs, same setting and file type
    reads_per_write: float = 1.0
    margin: float = 0.02
    confidence: float = 0.95

    def arms(self, runs: list[dict], ops: Sequence[str], metric: str, n: int) -> tuple:
        """(w, c, r, d) of a metric, each arm's first n runs."""
        def values(rows, op):
            picked = first_runs(rows, op, n)
            if metric == "energy_j":
                return [x["energy_j"] for x in picked if x.get("energy_j") is not None]
            return [x[metric] for x in picked]

        return (values(self.baseline, PLAIN_OPS[0]), values(runs, ops[0]),
                values(self.baseline, PLAIN_OPS[1]), values(runs, ops[1]))

    def decisions(self, runs: list[dict], ops: Sequence[str], n: int) -> dict[str, str]:
        """Each metric's verdict at look n (T always, E where the runs have energy)."""
        each = verdicts.look_confidence(self.confidence, len(self.looks))
        out = {}
        for name, metric in (("T", "elapsed_s"), ("E", "energy_j")):
            arms = self.arms(runs, ops, metric, n)
            if min(map(len, arms)) < n:
                continue  # no meter (E), or too few baseline runs: not decided here
            out[name] = verdicts.decide(*arms, self.reads_per_write, self.margin,
                                        each).verdict
        return out

    def needs_more(self, runs: list[dict], ops: Sequence[str]) -> bool:
        n = min((len(first_runs(runs, op, self.looks[-1])) for op in ops), default=0)
        if n < self.looks[0]:
            return True
        if n >= self.looks[-1]:
            return False
        if n not in self.looks:
            return True  # between two looks (a resumed job): on to the next one
        decided = self.decisions(runs, ops, n)
        return not decided or verdicts.UNDECIDED in decided.values()


def needs_more(runs: list[dict], ops: Sequence[str], min_repeats: int, max_repeats: int,
               ci_target: float, looks: VerdictLooks | None = None) -> bool:
    """Whether the job measures another repeat: the verdict design's looks for a codec
    under that design, else the paper's rule."""
    if looks is not None:
        return looks.needs_more(runs, ops)
    return need_more_repeats(series(runs, ops), min_repeats, max_repeats, ci_target)
