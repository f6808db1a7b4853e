"""Whether a cell's break-even kind is decided: the rectangle of its two differences.

dw = c - w and dr = r - d (wattzip.analysis.breakeven), each an interval at half the
look's alpha, so that both hold together at its level: Welch's, or under the moderated
design each arm's variance moderated by the prior its job fitted for it
(wattzip.analysis.moderated.cell_priors); either widened by the energy budget's Type B terms
of the runs (wattzip.analysis.uncertainty). The analysis draws a cell's kind and range
from this rectangle, and a job under planned looks measures on while it leaves the kind
open, so the two read the same rectangle: the claims rest on these kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from wattzip.analysis import moderated, uncertainty
from wattzip.analysis.breakeven import break_even_of, possible_kinds
from wattzip.stats import Interval, welch_interval

PAIRS = (("c", "w"), ("r", "d"))  # dw and dr


def differences(runs: Mapping[str, Sequence[dict]], stem: str, value: Callable[[dict], float],
                confidence: float, priors: Mapping[str, moderated.Prior] | None = None
                ) -> tuple[Interval, Interval]:
    """(dw, dr) of the arms' runs `runs` (keys w, c, r, d), a run's value of the metric
    `stem` given by `value`, each interval at `confidence`; `priors` (each arm's, keys
    w, c, r, d: wattzip.analysis.moderated.cell_priors) under the moderated design, None
    for Welch's."""
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
