"""What an undecided verdict says: the study could not have seen the effect, or there is none.

"Undecided" alone is too binary (EuroSys' evaluators). An interval that straddles
zero means one of two things, and a reproduction can tell them apart:

- underpowered: the smallest saving the study could have detected (two-sided at the
  verdict's confidence, at the power POWER) is larger than the effect of interest (config
  `verdict.effect`, a share of the baseline): it could not have seen an effect of
  that size; the runs per arm that would (the spread projected as 1/sqrt(n)) are said;
- no effect larger than x: the study could have detected the effect of interest and
  did not; its interval bounds any effect by x = max(|lo|, |hi|).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wattzip.stats import t_ppf

POWER = 0.8
UNDERPOWERED = "underpowered"
NO_EFFECT = "no effect larger than"


@dataclass(frozen=True)
class Power:
    kind: str  # UNDERPOWERED or NO_EFFECT
    detectable: float  # the smallest saving detectable at this n (metric unit)
    effect: float  # the effect of interest (metric unit)
    bound: float  # |S| below this at the verdict's confidence
    runs_for_effect: int | None  # runs per arm that would detect `effect`

    def describe(self, unit: str = "") -> str:
        u = f" {unit}" if unit else ""
        if self.kind == NO_EFFECT:
            return (f"no effect larger than {self.bound:.3g}{u} (it could have detected "
                    f"{self.detectable:.3g}{u})")
        more = (f"; about {self.runs_for_effect} runs per arm would detect "
                f"{self.effect:.3g}{u}" if self.runs_for_effect else "")
        return f"underpowered (smallest detectable saving {self.detectable:.3g}{u}{more})"


def assess(lo: float, hi: float, df: float, baseline: float, runs_per_arm: int,
           effect_fraction: float, confidence: float) -> Power | None:
    """The power statement of an undecided interval [lo, hi] of a saving, at the level
    the interval was made at (None when the interval is unbounded: too few runs to say
    anything)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or df <= 0 or runs_per_arm < 1:
        return None
    dof = min(df, 1e7)
    q = t_ppf(0.5 + confidence / 2.0, dof)
    se = (hi - lo) / 2.0 / q
    detectable = (q + t_ppf(POWER, dof)) * se
    effect = effect_fraction * abs(baseline)
    bound = max(abs(lo), abs(hi))
    if effect > 0 and detectable <= effect:
        return Power(NO_EFFECT, detectable, effect, bound, None)
    runs = math.ceil(runs_per_arm * (detectable / effect) ** 2) if effect > 0 else None
    return Power(UNDERPOWERED, detectable, effect, bound, runs)


def verdict_columns(verdict, runs_per_arm: int, effect_fraction: float, confidence: float,
                    unit: str) -> dict:
    """A break-even row's verdict columns, an undecided one with its power statement
    (`verdict` a wattzip.analysis.verdicts.Verdict at `confidence`)."""
    said = (assess(verdict.lo, verdict.hi, verdict.df, verdict.baseline, runs_per_arm,
                   effect_fraction, confidence)
            if verdict.verdict == "undecided" else None)
    return {"verdict": verdict.verdict,
            "verdict_note": verdict.describe() + (f"; {said.describe(unit)}" if said else ""),
            "undecided_as": said.kind if said else "",
            "detectable_saving": said.detectable if said else math.nan,
            "effect_of_interest": said.effect if said else math.nan,
            "runs_for_effect": said.runs_for_effect if said else None}
