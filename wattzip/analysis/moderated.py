"""Variance shared across a study's cells: limma's empirical-Bayes moderated t.

Every cell of a study runs on the same machine, with similar noise, yet a cell at
2-3 runs estimates its variance alone from 1-2 degrees of freedom, so its Student-t
interval is wide and it needs more runs. Smyth (2004, "Linear models and empirical
Bayes methods for assessing differential expression in microarray experiments")
treats each of thousands of genes' variances as drawn from a scaled inverse
chi-square prior, s0^2 d0 / chi^2_d0, fitted over all genes by the method of
moments on log variances (digamma and trigamma). Here the genes are a study's arms
(one operation of one cell), grouped by operation kind (writes, reads) and metric:

- each arm's sample variance is taken of its log values, so that a 100 s codec
  and a 1 s codec share one prior on their relative spread (CV^2);
- the prior's d0 is estimated: cells alike give a large d0 (strong sharing),
  cells that differ a small one (little sharing), and it is never more than the
  degrees of freedom of the arms it was fitted from (a study's first cells);
- the moderated variance (d0 s0^2 + d s^2) / (d0 + d) has d + d0 degrees of
  freedom, so a cell can decide at 2 runs when the study shows its noise;
- a codec whose arms of a kind, pooled, are far above the prior (their F = s^2 /
  s0^2 beyond the 1 - GUARD quantile of F(d, d0)) is not moderated towards the
  study: each of its arms is moderated towards its own other arms of that kind (the
  same codec on the other file types), as Phipson et al. (2016) shrink outlying
  genes less. A noisy codec is then judged on its own noise rather than borrowing
  the quiet ones', and its expensive cells, measured last, on the degrees of freedom
  of its cheaper ones rather than on their own one or two;
- an arm far above the prior it is moderated towards (beyond its 1 - ARM_GUARD
  quantile) keeps its own variance and degrees of freedom.

The looks are still accounted for: each look spends alpha / looks (wattzip.analysis.verdicts).
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from wattzip.analysis import verdicts
from wattzip.analysis.uncertainty import widen
from wattzip.resources import operations, operations_where
from wattzip.stats import Interval, _betainc, mean, t_ppf

# A prior needs this many arms with a variance (the method of moments with fewer is noise).
MIN_CELLS = 4
# The share of ordinary codecs (arms of a kind, pooled) the outlier guard takes away from
# the study's prior (its F test's level). Chosen when the guard still judged arm by arm:
# in benchmarks/coverage_moderated.py a codec whose compress and decompress runs are 4x
# noisier than the rest had its cells covered 92% of the time at 0.20, 98% at 0.50; its
# coverage with the arms pooled is in docs/benchmarks.md.
GUARD = 0.50
# The level of the test of one arm against the prior it is moderated towards (the
# study's, or its codec's other arms'): an arm beyond it keeps its own variance.
ARM_GUARD = 0.20
# Degrees of freedom beyond this are a normal distribution for every purpose here.
DF_CAP = 1000.0
# The I/O operations' directions (data/operations.csv): a prior per direction.
KIND = {op: operations()[op]["direction"] for op in operations_where(region="io")}


def digamma(x: float) -> float:
    """psi(x) for x > 0: the recurrence up to 6, then the asymptotic series."""
    out = 0.0
    while x < 6.0:
        out -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    return out + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (
        1 / 240 - f / 132))))


def trigamma(x: float) -> float:
    """psi'(x) for x > 0."""
    out = 0.0
    while x < 6.0:
        out += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    return out + 1 / x + f / 2 + f / x * (1 / 6 - f * (1 / 30 - f * (1 / 42 - f / 30)))


def _tetragamma(x: float) -> float:
    out = 0.0
    while x < 6.0:
        out -= 2.0 / x ** 3
        x += 1.0
    f = 1.0 / (x * x)
    return out - f - f / x - f * f * (1 / 2 - f * (1 / 6 - f * (1 / 6 - f * 3 / 10)))


def trigamma_inverse(y: float) -> float:
    """The x with trigamma(x) = y (limma's Newton iteration, from x = 0.5 + 1/y)."""
    if y > 1e7:
        return 1.0 / math.sqrt(y)
    if y < 1e-6:
        return 1.0 / y
    x = 0.5 + 1.0 / y
    for _ in range(50):
        tri = trigamma(x)
        step = tri * (1.0 - tri / y) / _tetragamma(x)
        x += step
        if -step / x < 1e-8:
            break
    return x


@dataclass(frozen=True)
class Prior:
    """The scaled inverse chi-square prior of one group's variances (log scale): d0
    degrees of freedom (0: no prior, each arm alone)."""

    d0: float
    s0_sq: float
    arms: int = 0
    guard: float = GUARD

    def outlying(self, s2: float, d: float) -> bool:
        """Is s2 above the prior's 1 - guard quantile of s0^2 F(d, d0)?"""
        if not self.d0 or d < 1 or not self.s0_sq > 0:
            return False
        f = s2 / self.s0_sq
        d0 = min(self.d0, DF_CAP)
        upper = 1.0 - _betainc(d / 2.0, d0 / 2.0, d * f / (d * f + d0))
        return upper < self.guard

    def moderate(self, s2: float, d: int) -> tuple[float, float]:
        """(moderated variance, its degrees of freedom) of an arm's s2 on d df."""
        if not self.d0 or d < 1 or self.outlying(s2, d):
            return s2, float(d)
        return (self.d0 * self.s0_sq + d * s2) / (self.d0 + d), min(self.d0 + d, DF_CAP)


NO_PRIOR = Prior(0.0, math.nan)


def log_variance(values: Sequence[float]) -> tuple[float, int]:
    """(sample variance of the log values, its degrees of freedom)."""
    n = len(values)
    if n < 2 or min(values) <= 0:
        return math.nan, 0
    logs = [math.log(v) for v in values]
    m = mean(logs)
    return math.fsum((x - m) ** 2 for x in logs) / (n - 1), n - 1


def fit_prior(variances: Iterable[tuple[float, int]]) -> Prior:
    """Smyth's method of moments: d0 and s0^2 from arms' (s2, d), fewer than MIN_CELLS
    arms with a positive variance giving NO_PRIOR.

    d0 is at most the arms' degrees of freedom together less the largest arm's: a
    prior fitted from a few arms (a study's first cells) knows no more than they do, so
    an arm moderated by it never counts more degrees of freedom than all of them hold.
    Smyth's d0 is unbounded (infinite when the arms spread no more than sampling
    alone), which over thousands of genes is harmless and over four arms of 1 df each
    would take their pooled variance as known."""
    pairs = [(s2, d) for s2, d in variances if d >= 1 and s2 > 0]
    if len(pairs) < MIN_CELLS:
        return NO_PRIOR
    e = [math.log(s2) - digamma(d / 2) + math.log(d / 2) for s2, d in pairs]
    e_mean = mean(e)
    k = len(e)
    e_var = (math.fsum((x - e_mean) ** 2 for x in e) / (k - 1)
             - mean([trigamma(d / 2) for _, d in pairs]))
    ceiling = float(sum(d for _, d in pairs) - max(d for _, d in pairs))
    # No more spread than sampling alone: one common variance, on the ceiling's df.
    d0 = ceiling if e_var <= 0 else min(2 * trigamma_inverse(e_var), ceiling)
    return Prior(d0, math.exp(e_mean + digamma(d0 / 2) - math.log(d0 / 2)), k)


def fit_priors(arms: Iterable[tuple[str, Sequence[float]]]) -> dict[str, Prior]:
    """One prior per operation kind (write, read) over arms given as (op, values)."""
    grouped = defaultdict(list)
    for op, values in arms:
        grouped[KIND.get(op, op)].append(log_variance(values))
    return {kind: fit_prior(pairs) for kind, pairs in grouped.items()}


def pooled(pairs: Sequence[tuple[float, int]]) -> tuple[float, int]:
    """Arms' (s2, d) pooled into one variance on the sum of their degrees of freedom."""
    d = sum(k for _, k in pairs)
    return (math.fsum(s2 * k for s2, k in pairs) / d if d else math.nan), d


def arm_prior(kind_prior: Prior, own: tuple[float, int], group: Sequence[tuple[float, int]]
              ) -> Prior:
    """The prior one arm is moderated towards, given its codec's other arms of its kind
    (`group`, each (s2, d)): the study's, unless the codec's arms pooled are outlying,
    then the codec's other arms pooled (none: no prior); either tests the arm itself at
    ARM_GUARD."""
    if not kind_prior.d0:
        return kind_prior
    group = [(s2, d) for s2, d in group if d >= 1 and s2 > 0]
    if not kind_prior.outlying(*pooled([own, *group])):
        return dataclasses.replace(kind_prior, guard=ARM_GUARD)
    if not group:
        return NO_PRIOR
    s2, d = pooled(group)
    return Prior(float(d), s2, len(group), ARM_GUARD)


# An arm as a prior sees it: its operation, its values and its group (the codec's name,
# or "plain" for the plain copies, whatever their job).
Arm = tuple[str, Sequence[float], str]


def cell_priors(own: Mapping[str, Arm], others: Iterable[Arm]) -> dict[str, Prior]:
    """The prior of each of a cell's arms (keys as `own`'s: w, c, r, d), fitted over its
    own arms and `others` (the study's arms measured before it): its kind's prior
    (fit_priors), or its codec's own (arm_prior)."""
    others = list(others)
    kinds = fit_priors([(op, v) for op, v, _ in (*own.values(), *others)])
    out = {}
    for key, (op, values, group) in own.items():
        kind = KIND.get(op, op)
        same = [log_variance(v) for o, v, g in others if g == group and KIND.get(o, o) == kind]
        out[key] = arm_prior(kinds.get(kind, NO_PRIOR), log_variance(values), same)
    return out


def combination(terms: Sequence[tuple[float, Sequence[float], Prior]]
                ) -> tuple[float, float, float]:
    """sum(coef * mean(values)) as (estimate, variance, degrees of freedom), each arm's
    variance moderated (Welch-Satterthwaite over the arms' d + d0 degrees of freedom);
    an infinite variance on 0 df when an arm has no spread to moderate."""
    estimate = math.fsum(a * mean(v) for a, v, _ in terms)
    parts = []
    for a, values, prior in terms:
        if a == 0:
            continue
        s2, d = prior.moderate(*log_variance(values))
        if not d or math.isnan(s2):
            return estimate, math.inf, 0.0
        parts.append((a * a * mean(values) ** 2 * s2 / len(values), d))
    var = math.fsum(p for p, _ in parts)
    if var == 0:
        return estimate, 0.0, DF_CAP
    return estimate, var, min(var * var / math.fsum(p * p / d for p, d in parts if p > 0),
                              DF_CAP)


def difference(x: Sequence[float], y: Sequence[float], x_prior: Prior, y_prior: Prior
               ) -> tuple[float, float, float]:
    """mean(x) - mean(y) with each arm's variance moderated by its prior, as
    wattzip.stats.welch_difference gives it to Fieller's interval."""
    return combination([(1, x, x_prior), (-1, y, y_prior)])


def interval(terms: Sequence[tuple[float, Sequence[float], Prior]],
             confidence: float) -> Interval:
    """sum(coef * mean(values)) with each arm's moderated variance (combination), at the
    caller's level (a look's, a difference's); unbounded when an arm has no spread."""
    estimate, var, df = combination(terms)
    if math.isinf(var):
        return Interval(estimate, -math.inf, math.inf, 0.0)
    if var == 0:
        return Interval(estimate, estimate, estimate, math.inf)
    half = _quantile(0.5 + confidence / 2.0, math.floor(df * 100)) * math.sqrt(var)
    return Interval(estimate, estimate - half, estimate + half, df)


@lru_cache(maxsize=8192)
def _quantile(p: float, df_hundredths: int) -> float:
    """t's p quantile at df floored to a hundredth (a wider interval, never a narrower),
    cached: a study's looks ask for the same few."""
    return t_ppf(p, max(df_hundredths, 1) / 100)


def decide(w: Sequence[float], c: Sequence[float], r: Sequence[float], d: Sequence[float],
           priors: Mapping[str, Prior], *, reads_per_write: float, margin: float,
           confidence: float, type_b_var: float = 0.0) -> verdicts.Verdict:
    """wattzip.analysis.verdicts.decide with each arm's variance moderated by its prior
    (cell_priors: keys w, c, r, d); `type_b_var` (energy's budget) widens the interval as
    it does Welch's."""
    n = reads_per_write
    p = {k: priors.get(k, NO_PRIOR) for k in "wcrd"}
    iv = widen(interval([(1, w, p["w"]), (n, r, p["r"]), (-1, c, p["c"]), (-n, d, p["d"])],
                        confidence), type_b_var, confidence)
    return verdicts.judge(iv, mean(w) + n * mean(r), margin, min(map(len, (w, c, r, d))))
