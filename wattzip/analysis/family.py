"""A claim decided over many cells keeps a stated family-wise confidence (Holm).

"Zero files save energy with almost every tool" reads 11 codecs' break-even cells.
Each cell decided at 95% leaves a claim whose chance of one wrong cell grows with
their number. Holm's step-down procedure (Holm 1979) holds the family-wise error at
alpha over a claim's m cells, and is uniformly more powerful than Bonferroni: sort
the cells' p-values, p_(1) <= ... <= p_(m); cell (i) stays decided while every
p_(j), j <= i, is at most alpha / (m - j + 1).

A break-even cell is decided when both dw's and dr's intervals exclude zero, each at
1 - alpha / 2 (and alpha / looks under the verdict design): its p-value is that of
this intersection, 2 * looks * max(p_dw, p_dr), capped at 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from wattzip.stats import Interval, t_cdf, t_ppf


def p_nonzero(iv: Interval, confidence: float) -> float:
    """The two-sided p-value of 'not zero' behind a Student-t interval at `confidence`."""
    if not (math.isfinite(iv.lo) and math.isfinite(iv.hi)):
        return 1.0
    if iv.hi <= iv.lo:
        return 0.0 if iv.estimate else 1.0
    dof = min(iv.df, 1e7) if iv.df > 0 else 1.0
    se = (iv.hi - iv.lo) / 2.0 / t_ppf(0.5 + confidence / 2.0, dof)
    return 2.0 * (1.0 - t_cdf(abs(iv.estimate) / se, dof))


def cell_p(dw: Interval, dr: Interval, confidence: float, looks: int) -> float:
    """A break-even cell's p-value for being decided (see the module's docstring); `looks`
    the study's planned looks (0: the paper's design)."""
    return min(1.0, 2.0 * max(looks, 1) * max(p_nonzero(dw, confidence),
                                              p_nonzero(dr, confidence)))


def holm(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Which hypotheses Holm's step-down procedure rejects at family-wise `alpha`."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    m = len(p_values)
    rejected = [False] * m
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (m - rank):
            break
        rejected[i] = True
    return rejected
