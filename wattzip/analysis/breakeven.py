"""The read-write model of SYSTOR '09 section 5.2: when does compression pay back?

One compressed write costs dw more than a plain write, and each compressed read
saves dr against a plain read, in time, energy or ET. With their confidence
intervals, a cell's kind (always, never, from n_be on, up to n_be) is decided
only when every point of the intervals' rectangle gives the same kind.

One cell's break-even, from its four arms' runs to the text the tables print, is
`cell` here: its two differences, kind, range, Fieller's interval and display. The
analysis draws a cell from it and a job under planned looks measures on while
`open_kinds` leaves its kind open, so both read the same rectangle: the claims rest
on these kinds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from wattzip.analysis import moderated, uncertainty
from wattzip.latex import display_tex
from wattzip.stats import Interval, fieller, welch_difference, welch_interval

PAIRS = (("c", "w"), ("r", "d"))  # dw and dr


@dataclass
class BreakEven:
    kind: str  # always | never | at_least | at_most
    value: float  # n_be for at_least / at_most, NaN otherwise


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


def differences(runs: Mapping[str, Sequence[dict]], stem: str, value: Callable[[dict], float],
                confidence: float, priors: Mapping[str, moderated.Prior] | None = None
                ) -> tuple[Interval, Interval]:
    """(dw, dr) of the arms' runs `runs` (keys w, c, r, d), a run's value of the metric
    `stem` given by `value`, each interval at `confidence`: Welch's, or under the
    moderated design (`priors`, each arm's: wattzip.analysis.moderated.cell_priors) each
    arm's variance moderated by the prior its job fitted; either widened by the energy
    budget's Type B terms of the runs (wattzip.analysis.uncertainty)."""
    v = {k: [value(r) for r in arm] for k, arm in runs.items()}

    def spread(a: str, b: str) -> Interval:
        if priors is None:
            return welch_interval([(1, v[a]), (-1, v[b])], confidence)
        return moderated.interval([(1, v[a], priors.get(a, moderated.NO_PRIOR)),
                                   (-1, v[b], priors.get(b, moderated.NO_PRIOR))], confidence)

    return tuple(uncertainty.widen(spread(a, b),
                                   uncertainty.type_b_variance(
                                       [(1, list(runs[a])), (-1, list(runs[b]))], stem),
                                   confidence)
                 for a, b in PAIRS)


def open_kinds(dw: Interval, dr: Interval) -> list[str]:
    """The kinds the rectangle leaves possible when more than the point's: [] when the
    cell's kind is decided."""
    kinds = possible_kinds(dw, dr)
    return [] if kinds == [break_even_of(dw.estimate, dr.estimate).kind] else kinds


def fieller_interval(values: Mapping[str, Sequence[float]],
                     priors: Mapping[str, moderated.Prior] | None,
                     confidence: float) -> tuple[float, float] | None:
    """Fieller's interval of dw / dr (stats.fieller) from the arms' values, with the
    variances the differences took: Welch's, or each arm's moderated by its prior."""
    if priors is None:
        dw, dr = (welch_difference(values[a], values[b]) for a, b in PAIRS)
    else:
        p = {k: priors.get(k, moderated.NO_PRIOR) for k in "wcrd"}
        dw, dr = (moderated.difference(values[a], values[b], p[a], p[b]) for a, b in PAIRS)
    return fieller(dw, dr, confidence)


@dataclass(frozen=True)
class Cell:
    """One cell's break-even in one metric, as the tables and claims read it."""

    dw: Interval
    dr: Interval
    point: BreakEven  # the kind and n_be of the differences' estimates
    possible: list[str]  # every kind the rectangle allows
    decided: bool
    lo: float  # n_be's range over the rectangle
    hi: float
    fieller: tuple[float, float] | None  # None: undetermined (or one run)
    display: str  # the papers' notation, "?" after an undecided cell
    display_tex: str


def cell(runs: Mapping[str, Sequence[dict]], stem: str, value: Callable[[dict], float],
         difference_confidence: float, joint_confidence: float,
         priors: Mapping[str, moderated.Prior] | None = None) -> Cell:
    """The break-even of one cell from its arms' runs (keys w, c, r, d): dw and dr each
    at `difference_confidence`, so that both hold together at `joint_confidence`,
    which Fieller's interval takes."""
    dw, dr = differences(runs, stem, value, difference_confidence, priors)
    point = break_even_of(dw.estimate, dr.estimate)
    decided = not open_kinds(dw, dr)
    values = {k: [value(r) for r in arm] for k, arm in runs.items()}
    n = min(len(x) for x in values.values())
    ratio = fieller_interval(values, priors, joint_confidence) if n > 1 else None
    shown = display(point.kind, point.value) + ("" if decided else "?")
    return Cell(dw, dr, point, possible_kinds(dw, dr), decided, *n_bounds(point.kind, dw, dr),
                ratio, shown, display_tex(shown))
