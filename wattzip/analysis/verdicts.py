"""Verdicts as strong as the data: saves, costs, negligible or undecided, with honest coverage.

At 3-8 repeats a Student-t interval is wide, and looking at it after every run
and stopping once it looks narrow erodes the coverage it claims. The verdict
design plans its looks (say n = 3, 5, 8 runs per arm) and spends alpha / looks at
each (Bonferroni), so a verdict holds at the stated confidence whichever look the
study stops at. A verdict is about the saving of one workload, S = (M_w + n M_r) -
(M_c + n M_d) for n reads per write, against a margin delta of the baseline
(M_w + n M_r) stated in the config and the report:

- saves: S's interval lies above zero and not wholly inside the margin;
- costs: S's interval lies below zero and not wholly inside the margin;
- negligible: S's interval lies wholly inside (-delta, +delta) of the baseline;
- undecided: none of these; it says how many more repeats per arm the data
  suggest would decide it (a projection from the current spread, not a promise).

The break-even read-to-write ratio dw/dr gets Fieller's interval
(wattzip.analysis.breakeven), unbounded ("undetermined") when dr's own interval
reaches zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from wattzip.analysis.uncertainty import widen
from wattzip.stats import Interval, mean, welch_interval

SAVES, COSTS, NEGLIGIBLE, UNDECIDED = "saves", "costs", "negligible", "undecided"


@dataclass(frozen=True)
class Verdict:
    verdict: str
    saving: float  # S, in the metric's unit
    lo: float
    hi: float
    baseline: float
    more_repeats: int | None  # per arm, for an undecided verdict; None when not projectable
    df: float = math.inf  # the interval's degrees of freedom (wattzip.analysis.power reads it)

    def describe(self) -> str:
        if self.verdict != UNDECIDED:
            return self.verdict
        if self.more_repeats is None:
            return "undecided (the saving sits on the margin: more repeats may never decide)"
        return f"undecided (about {self.more_repeats} more repeats per arm would decide it)"


def look_confidence(confidence: float, looks: int) -> float:
    """Each of `looks` planned looks at 1 - alpha/looks: coverage >= `confidence` overall."""
    return 1 - (1 - confidence) / looks


def decide(w: Sequence[float], c: Sequence[float], r: Sequence[float], d: Sequence[float],
           *, reads_per_write: float, margin: float, confidence: float,
           type_b_var: float = 0.0) -> Verdict:
    """The verdict on S = (w + n r) - (c + n d) from the four arms' runs; `type_b_var`
    is S's variance besides the repeats' (energy's budget, wattzip.analysis.uncertainty), which
    widens the interval into the combined one. The workload, margin and level are the
    caller's (the study's AnalysisOptions, a look's level): no defaults to fall back on."""
    n = reads_per_write
    iv = widen(welch_interval([(1, w), (n, r), (-1, c), (-n, d)], confidence), type_b_var,
               confidence)
    return judge(iv, mean(w) + n * mean(r), margin, min(len(x) for x in (w, c, r, d)))


def judge(iv: Interval, baseline: float, margin: float, runs: int) -> Verdict:
    """The verdict on a saving S from its interval `iv`, against `margin` of `baseline`;
    `runs` per arm measured it (for an undecided one's projection). Shared by every
    way of making the interval (Welch's, wattzip.analysis.moderated's)."""
    band = margin * abs(baseline)
    if -band < iv.lo and iv.hi < band:
        verdict = NEGLIGIBLE
    elif iv.lo > 0:
        verdict = SAVES
    elif iv.hi < 0:
        verdict = COSTS
    else:
        verdict = UNDECIDED
    more = None
    if verdict == UNDECIDED and math.isfinite(iv.hi - iv.lo):
        half = (iv.hi - iv.lo) / 2
        # The half-width that would decide it: under |S| (a sign), or under band - |S|
        # (inside the margin); it shrinks as 1/sqrt(repeats).
        target = max(abs(iv.estimate), band - abs(iv.estimate))
        if target > 0:
            more = max(1, math.ceil(runs * (half / target) ** 2) - runs)
    return Verdict(verdict, iv.estimate, iv.lo, iv.hi, baseline, more, iv.df)
