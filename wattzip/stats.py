"""Means, Student-t confidence half-widths and the repeat-until-confident rule.

The measurement core needs no numerical library: the t quantile is computed
from the regularized incomplete beta function (Numerical Recipes' continued
fraction), which the tests check against scipy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist


def mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs) if xs else float("nan")


def stdev(xs: Sequence[float]) -> float:
    n = len(xs)
    if n < 2:
        return float("nan")
    m = mean(xs)
    return math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (n - 1))


def _betacf(a: float, b: float, x: float) -> float:
    tiny, eps = 1e-300, 3e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t >= 0 else tail


def t_pdf(t: float, df: float) -> float:
    return math.exp(math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0)
                    - 0.5 * math.log(df * math.pi) - (df + 1.0) / 2.0 * math.log1p(t * t / df))


@functools.lru_cache(maxsize=4096)
def t_ppf(p: float, df: float) -> float:
    """The p quantile of Student's t with df degrees of freedom: Newton's steps from the
    normal quantile, kept inside a bracket that halves where a step would leave it
    (an analysis asks for thousands, most of them alike: they are kept)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    if p == 0.5:
        return 0.0
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    x = min(max(NormalDist().inv_cdf(p), lo), hi)
    for _ in range(200):
        below = t_cdf(x, df) - p
        if below < 0:
            lo = x
        else:
            hi = x
        step = below / t_pdf(x, df)
        nxt = x - step if lo < x - step < hi else (lo + hi) / 2.0
        if abs(nxt - x) < 1e-13 * max(1.0, x) or hi - lo < 1e-12 * max(1.0, hi):
            return nxt
        x = nxt
    return x


PAPER_CONFIDENCE = 0.95
"""SYSTOR '09's level: its repeat rule's interval, and every figure's error bars."""
PAPER_CI_TARGET = 0.05
"""SYSTOR '09's precision target: each interval's half-width within 5% of its mean."""


def half_width(xs: Sequence[float], confidence: float = PAPER_CONFIDENCE) -> float:
    """Half-width of the Student-t confidence interval of the mean (NaN below 2 values)."""
    n = len(xs)
    if n < 2:
        return float("nan")
    return t_ppf(0.5 + confidence / 2.0, n - 1) * stdev(xs) / math.sqrt(n)


def relative_half_width(xs: Sequence[float], confidence: float = PAPER_CONFIDENCE) -> float:
    m = mean(xs)
    return half_width(xs, confidence) / abs(m) if m else float("inf")


def ci_met(xs: Sequence[float], target: float, confidence: float = PAPER_CONFIDENCE) -> bool:
    hw = relative_half_width(xs, confidence)
    return not math.isnan(hw) and hw <= target


def need_more_repeats(series: dict[str, Sequence[float]], min_repeats: int, max_repeats: int,
                      ci_target: float) -> bool:
    """The paper's rule: at least min, then until every half-width < target, at most max."""
    n = min((len(v) for v in series.values()), default=0)
    if n < min_repeats:
        return True
    if n >= max_repeats:
        return False
    return not all(ci_met(v, ci_target) for v in series.values())


def pearson_r(xs: Sequence[float], ys: Sequence[float]) -> float:
    n = len(xs)
    if n < 3 or n != len(ys):
        return float("nan")
    mx, my = mean(xs), mean(ys)
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    syy = math.fsum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


@dataclass(frozen=True)
class Interval:
    """An estimate with its Student-t confidence interval (lo, hi) and degrees of freedom."""

    estimate: float
    lo: float
    hi: float
    df: float

    def excludes_zero(self) -> bool:
        return self.lo > 0 or self.hi < 0


def fisher_r_interval(r: float, n: int, confidence: float) -> tuple[float, float] | None:
    """Fisher's z interval of a correlation over n pairs (z = atanh r, se 1/sqrt(n - 3),
    two-sided at `confidence`): None with three pairs or fewer, which decide nothing."""
    if n <= 3:
        return None
    if abs(r) >= 1:  # a perfect line: the interval shrinks to it
        return r, r
    half = NormalDist().inv_cdf(0.5 + confidence / 2) / math.sqrt(n - 3)
    return math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)


def welch_interval(terms: Sequence[tuple[float, Sequence[float]]],
                   confidence: float = PAPER_CONFIDENCE) -> Interval:
    """Interval of sum(coef * mean(values)) over independent groups (Welch-Satterthwaite).

    A difference of two operations' means (dw = M_c - M_w) or the energy saving
    curve (n E_r - n E_d + E_w - E_c) are such sums. A group with fewer than two
    values has unknown spread: the interval is then unbounded. Groups whose
    values are all equal add no spread.
    """
    estimate = math.fsum(a * mean(v) for a, v in terms)
    if any(len(v) < 2 for a, v in terms if a != 0):
        return Interval(estimate, -math.inf, math.inf, 0.0)
    parts = [(a * a * stdev(v) ** 2 / len(v), len(v)) for a, v in terms if a != 0]
    var = math.fsum(p for p, _ in parts)
    if var == 0:
        return Interval(estimate, estimate, estimate, math.inf)
    df = var * var / math.fsum(p * p / (n - 1) for p, n in parts if p > 0)
    half = t_ppf(0.5 + confidence / 2.0, df) * math.sqrt(var)
    return Interval(estimate, estimate - half, estimate + half, df)


def modified_z(xs: Sequence[float]) -> list[float]:
    """Iglewicz and Hoaglin's modified Z score, 0.6745 (x - median) / MAD: robust to the
    outlier it looks for; |z| > 3.5 flags one. The MAD is floored at MAD_FLOOR of the
    median, so a run within 2.6% of it is never called an outlier: runs a throttle makes
    all but equal would otherwise flag a 0.4% deviation. All zero when both are zero."""
    med = _median(xs)
    mad = max(_median([abs(x - med) for x in xs]), MAD_FLOOR * abs(med))
    return [0.6745 * (x - med) / mad if mad > 0 else 0.0 for x in xs]


# The MAD's floor as a share of the median (with Z > 3.5: 2.6% of the median).
MAD_FLOOR = 0.005


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return (s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2) if n else math.nan


OUTLIER_Z = 3.5
# Fewer runs leave median/MAD degenerate: of 3 runs, two that happen to agree make the
# third's modified Z huge (MAD is the smaller of its two distances), however ordinary.
OUTLIER_MIN_RUNS = 5
CV_WARNING = 0.10


# --- least squares (SYSTOR '11 4.2: system identification) ------------------------------


def fit_percent(y: list[float], predicted: list[float]) -> float:
    """MATLAB's fit: 100 (1 - |y - y_hat| / |y - mean(y)|), the paper's 'accuracy'."""
    m = mean(y)
    num = math.sqrt(math.fsum((a - b) ** 2 for a, b in zip(y, predicted, strict=True)))
    den = math.sqrt(math.fsum((a - m) ** 2 for a in y))
    return 100 * (1 - num / den) if den > 0 else math.nan


def least_squares_predict(x_train, y_train, x_test) -> list[float]:
    import numpy as np

    coef, *_ = np.linalg.lstsq(np.array(x_train, float), np.array(y_train, float), rcond=None)
    return list(np.array(x_test, float) @ coef)


def fieller(dw: Sequence[float] | tuple, dr: Sequence[float] | tuple,
            confidence: float = PAPER_CONFIDENCE) -> tuple[float, float] | None:
    """Fieller's interval for the ratio dw / dr of two independent estimates.

    `dw` and `dr` are (estimate, variance, degrees of freedom). Returns (lo, hi), or
    None when the interval is unbounded: dr cannot be told from zero, so the ratio (a
    break-even ratio, or a bench's ratio of means) is undetermined, not a number.
    """
    a, va, dfa = dw
    b, vb, dfb = dr
    q = t_ppf(0.5 + confidence / 2.0, max(min(dfa, dfb), 1.0))
    denom = b * b - q * q * vb
    if denom <= 0:
        return None
    disc = (a * b) ** 2 - denom * (a * a - q * q * va)
    root = math.sqrt(max(disc, 0.0))
    return ((a * b - root) / denom, (a * b + root) / denom)


def welch_difference(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, float]:
    """mean(x) - mean(y) as (estimate, variance, Welch degrees of freedom)."""
    vx, vy = stdev(x) ** 2 / len(x), stdev(y) ** 2 / len(y)
    var = vx + vy
    df = var * var / ((vx * vx / (len(x) - 1) if vx else 0) + (vy * vy / (len(y) - 1)
                                                                 if vy else 0) or 1e-300)
    return mean(x) - mean(y), var, df


# Two groups (`two_groups`): each at least this share of the runs (and 2), fewer runs than
# BIMODAL_MIN_RUNS not judged, and the groups' separation (Ashman's D) above this. On
# normal or log-normal runs the best split's D exceeds 6 in about 3.6% of 8 runs, 1% of
# 10 and none of 20 (simulated, 2,000 samples each); two equal groups 2 units apart with
# sd 0.3 exceed it in about 70% of 8 to 20 runs.
BIMODAL_MIN_SHARE = 0.25
BIMODAL_MIN_RUNS = 8
BIMODAL_MIN_SEPARATION = 6.0


@dataclass(frozen=True)
class TwoGroups:
    """Runs that fall in two groups: each group's size and mean, and their separation."""

    low_n: int
    low_mean: float
    high_n: int
    high_mean: float
    separation: float  # Ashman's D: sqrt(2) |m1 - m2| / sqrt(s1^2 + s2^2)


def two_groups(xs: Sequence[float]) -> TwoGroups | None:
    """The runs' two groups when they fall in two (a VM whose speed switches between
    levels, a frequency step): the split of the sorted values into a low and a high group
    with the least within-group sum of squares, each at least BIMODAL_MIN_SHARE of the
    runs, whose separation exceeds BIMODAL_MIN_SEPARATION; else None (also for fewer than
    BIMODAL_MIN_RUNS runs)."""
    xs = sorted(xs)
    n = len(xs)
    if n < BIMODAL_MIN_RUNS:
        return None
    smallest = max(2, math.ceil(n * BIMODAL_MIN_SHARE))
    best = None
    for k in range(smallest, n - smallest + 1):
        low, high = xs[:k], xs[k:]
        within = sum((x - mean(low)) ** 2 for x in low) + sum((x - mean(high)) ** 2
                                                                for x in high)
        if best is None or within < best[0]:
            best = (within, low, high)
    if best is None:
        return None
    _, low, high = best
    spread = math.sqrt(stdev(low) ** 2 + stdev(high) ** 2)
    gap = mean(high) - mean(low)
    if gap <= 0:
        return None
    separation = math.inf if spread == 0 else math.sqrt(2) * gap / spread
    if separation <= BIMODAL_MIN_SEPARATION:
        return None
    return TwoGroups(len(low), mean(low), len(high), mean(high), separation)
