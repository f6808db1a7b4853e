"""The read-write model of SYSTOR '09 section 5.2: when does compression pay back?

One compressed write costs dw more than a plain write, and each compressed read
saves dr against a plain read, in time, energy or ET. With their confidence
intervals, a cell's kind (always, never, from n_be on, up to n_be) is decided
only when every point of the intervals' rectangle gives the same kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wattzip.stats import Interval


@dataclass
class BreakEven:
    kind: str  # always | never | at_least | at_most
    value: float  # n_be for at_least / at_most, NaN otherwise


def break_even(m_w: float, m_c: float, m_r: float, m_d: float) -> BreakEven:
    """n_be from the four operations' means of one metric."""
    return break_even_of(m_c - m_w, m_r - m_d)


def break_even_of(dw: float, dr: float) -> BreakEven:
    """dw = M_c - M_w is the extra cost of one compressed write, dr = M_r - M_d the
    saving of one compressed read. Compression pays off at n reads per write when
    dw <= n * dr: for every n (dw <= 0 <= dr), never (dw >= 0 >= dr, not both
    zero: a free write whose every read costs more never pays), from n_be = dw/dr
    on (both positive), or only up to it (both negative: write-heavy workloads).
    """
    if dw <= 0 <= dr:
        return BreakEven("always", math.nan)
    if dw >= 0 >= dr:
        return BreakEven("never", math.nan)
    if dw > 0:
        return BreakEven("at_least", dw / dr)
    return BreakEven("at_most", dw / dr)


def _sign_points(interval: Interval) -> list[float]:
    """One value of every sign the interval holds (negative, zero, positive)."""
    points = [interval.lo, interval.hi]
    if interval.lo <= 0 <= interval.hi:
        points.append(0.0)
    return points


def possible_kinds(dw: Interval, dr: Interval) -> list[str]:
    """Every break-even kind some point of the two intervals' rectangle gives."""
    kinds = {break_even_of(a, b).kind for a in _sign_points(dw) for b in _sign_points(dr)}
    return [k for k in ("always", "at_least", "at_most", "never") if k in kinds]


def n_bounds(kind: str, dw: Interval, dr: Interval) -> tuple[float, float]:
    """The range of n_be over the rectangle of the dw and dr intervals (inf: unbounded)."""
    if kind == "at_least":
        lo = max(dw.lo, 0.0) / dr.hi if dr.hi > 0 else math.inf
        hi = dw.hi / dr.lo if dr.lo > 0 else math.inf
        return lo, hi
    if kind == "at_most":
        lo = max(-dw.hi, 0.0) / -dr.lo if dr.lo < 0 else math.inf
        hi = -dw.lo / -dr.hi if dr.hi < 0 else math.inf
        return lo, hi
    return math.nan, math.nan


def display(kind: str, value: float) -> str:
    """The paper's notation: ∀, ×, one decimal, ~10^k above 100, ≤ x for at_most."""
    if kind == "always":
        return "∀"
    if kind == "never":
        return "×"
    text = format_number(value)
    return f"≤ {text}" if kind == "at_most" else text


MAGNITUDE_ABOVE = 100  # the papers print magnitudes only for values greater than this


def magnitude(value: float) -> int:
    """k of the paper's "~10^k": the floor of log10, not its rounding.

    Table 4's footnote reports "magnitudes" for values over 100, and Table 3 prints
    compress -b 10's zero-file ratio as ~10^2, where today's ncompress gives 344 on 2 GB
    of zeros (log10 2.54 would round to 3); gzip -1 (229) and -6 (1030) agree. Counted
    in integers, so 1000 is 10^3 whatever log10's last bit says.
    """
    k = math.floor(math.log10(value))
    while 10 ** (k + 1) <= value:
        k += 1
    while 10 ** k > value:
        k -= 1
    return k


def format_number(value: float) -> str:
    """A break-even ratio as the papers print it: ~10^k above 100, else one decimal
    (two below 1)."""
    if value > MAGNITUDE_ABOVE:
        return f"~10^{magnitude(value)}"
    if value < 1:
        return f"{value:.2f}"
    return f"{value:.1f}"


def format_ratio(value: float) -> str:
    """A compression ratio as Table 3 prints it: ~10^k above 100, else two decimals.
    The one form of every ratio cell (the ratio table, comparison.csv)."""
    if value is None or math.isnan(value):
        return ""
    if value > MAGNITUDE_ABOVE:
        return f"~10^{magnitude(value)}"
    return f"{value:.2f}"


def parse_display(text: str) -> BreakEven:
    """The inverse of display() for the papers' tables (∀ ✓, × ✗ X, ~10^k, numbers)."""
    t = text.strip()
    if t in ("∀", "✓", "A"):
        return BreakEven("always", math.nan)
    if t in ("×", "✗", "X", "x"):
        return BreakEven("never", math.nan)
    if t.startswith("≤"):
        return BreakEven("at_most", float(t.lstrip("≤ ")))
    if t.startswith("~10^"):
        return BreakEven("at_least", 10 ** float(t[4:]))
    return BreakEven("at_least", float(t))
