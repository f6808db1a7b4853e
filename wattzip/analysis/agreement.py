"""Does a reproduced cell agree with the original's, in magnitude and not only in kind?

A cell set beside an original (a compression ratio, a break-even value in E, T or ET)
agrees when the original lies in the reproduced interval (the break-even's range over
the rectangle of the dw and dr intervals), or, where the reproduced value has no
interval (a compression ratio), when the reproduced point lies within the original's
own rounding: "12.3" stands for [12.25, 12.35), "~10^2" for [100, 1000). Otherwise the
cell is of the same kind at another magnitude (by a factor, the reproduced point against
the original), of another kind, or undecided where the reproduced kind is. One function
decides every cell, for comparison.csv and for the report's tables alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wattzip.analysis.breakeven import parse_display

AGREES = "agrees"
OTHER_MAGNITUDE = "same kind, other magnitude"
OTHER_KIND = "other kind"
UNDECIDED = "undecided"
AGREEMENTS = (AGREES, OTHER_MAGNITUDE, OTHER_KIND, UNDECIDED)

# The marks the report's tables set after a reproduced cell, and their legend's words.
MARKS_TEX = {AGREES: r"$^{=}$", OTHER_KIND: r"$^{\neq}$", UNDECIDED: r"$^{\circ}$"}
LEGEND_TEX = (r"Beside the original: $^{=}$ agrees in magnitude (the original lies in this "
              r"cell's interval, or within its own rounding of this cell's value); "
              r"$^{\uparrow k}$ / $^{\downarrow k}$ the same kind, $k$ times higher / lower; "
              r"$^{\neq}$ another kind; $^{\circ}$ undecided here.")


@dataclass(frozen=True)
class Agreement:
    """One cell's agreement with its original; factor: how many times the reproduced
    point is above (> 1) or below (< 1) the original, where the magnitude differs."""

    agreement: str
    factor: float = math.nan

    @property
    def factor_text(self) -> str:
        """"x6.6 lower", "x1.2 higher"; empty where the magnitudes agree or no factor."""
        if math.isnan(self.factor) or self.factor <= 0:
            return ""
        times = self.factor if self.factor >= 1 else 1 / self.factor
        shown = f"{times:.3f}" if times < 1.1 else f"{times:.1f}" if times < 100 else \
            f"{times:.0f}"
        return f"x{shown} {'higher' if self.factor >= 1 else 'lower'}"

    @property
    def text(self) -> str:
        """The agreement with its factor, as comparison.csv states it."""
        factor = self.factor_text
        return f"{self.agreement} ({factor})" if factor else self.agreement

    @property
    def mark_tex(self) -> str:
        """The mark a table sets after the reproduced cell (LEGEND_TEX)."""
        if self.agreement != OTHER_MAGNITUDE:
            return MARKS_TEX[self.agreement]
        times = self.factor if self.factor >= 1 else 1 / self.factor
        arrow = r"\uparrow" if self.factor >= 1 else r"\downarrow"
        shown = f"{times:.1f}" if times < 100 else f"{times:.0f}"
        return rf"$^{{{arrow}{shown}}}$"

    @property
    def agrees_in_kind(self) -> bool:
        return self.agreement in (AGREES, OTHER_MAGNITUDE)


def original_range(display: str) -> tuple[float, float, float]:
    """The values an original's printed number stands for, and the value a factor is
    taken against: "~10^k" is [10^k, 10^(k+1)), a number plus or minus half its last
    printed digit ("12.3": 12.25 to 12.35; "≤ 2.0" likewise)."""
    text = display.strip().lstrip("≤").strip()
    if text.startswith("~10^"):
        k = float(text[4:])
        return 10 ** k, 10 ** (k + 1), math.nan
    value = float(text)
    decimals = len(text.split(".")[1]) if "." in text else 0
    half = 0.5 * 10 ** -decimals
    return value - half, value + half, value


def _magnitude(point: float, lo: float, hi: float, display: str) -> Agreement:
    """Agrees when [lo, hi] (or, without one, the point) meets the original's range."""
    low, high, value = original_range(display)
    if math.isnan(lo) or math.isnan(hi):
        lo = hi = point
    if lo <= high and hi >= low:
        return Agreement(AGREES)
    if math.isnan(point) or point <= 0:
        return Agreement(OTHER_MAGNITUDE)
    # against the printed value, or a magnitude's nearer edge
    reference = value if not math.isnan(value) else (low if point < low else high)
    return Agreement(OTHER_MAGNITUDE, point / reference)


def _as_bool(value) -> bool:
    return value is True or str(value).lower() == "true"


def _as_float(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def breakeven_agreement(original_display: str, kind: str, value, lo, hi,
                        decided) -> Agreement:
    """A break-even cell (its point's kind and n_be, n_be's range, whether the kind is
    decided) against the original's printed cell."""
    if not _as_bool(decided):
        return Agreement(UNDECIDED)
    original = parse_display(original_display)
    if original.kind != kind:
        return Agreement(OTHER_KIND)
    if kind in ("always", "never"):
        return Agreement(AGREES)
    return _magnitude(_as_float(value), _as_float(lo), _as_float(hi), original_display)


def _side(lo: float, hi: float) -> int:
    """Which side of 1 [lo, hi] lies on: 1 above, -1 below, 0 holding it."""
    return 1 if lo > 1 else -1 if hi < 1 else 0


def _other_side(lo: float, hi: float, low: float, high: float) -> bool:
    """Another kind: the reproduced [lo, hi] and the original's [low, high] wholly on
    either side of 1 (compresses or not; slower or faster than off)."""
    mine, theirs = _side(lo, hi), _side(low, high)
    return mine != 0 and theirs != 0 and mine != theirs


def ratio_agreement(original_display: str, value) -> Agreement:
    """A compression ratio (no interval: the files are fixed) against the original's:
    of another kind when one compresses (above 1) and the other expands, the original's
    rounding wholly on its side of 1 ("1.00" is of either kind)."""
    point = _as_float(value)
    if math.isnan(point):
        return Agreement(UNDECIDED)
    low, high, _ = original_range(original_display)
    if _other_side(point, point, low, high):
        return Agreement(OTHER_KIND)
    return _magnitude(point, math.nan, math.nan, original_display)


def ratio_to_off_agreement(original_display: str, value, lo, hi) -> Agreement:
    """A ratio to compression off (HPC '14's runtime / off) with Fieller's interval
    against the original's: of the same kind when both lie on the same side of 1 (slower
    or faster than off); undecided where the interval holds 1 and not the original."""
    point, lo, hi = _as_float(value), _as_float(lo), _as_float(hi)
    if math.isnan(point):
        return Agreement(UNDECIDED)
    low, high, _ = original_range(original_display)
    if not (math.isnan(lo) or math.isnan(hi)) and lo <= high and hi >= low:
        return Agreement(AGREES)
    if not (math.isnan(lo) or math.isnan(hi)) and lo <= 1 <= hi:
        return Agreement(UNDECIDED)
    if _other_side(*((point, point) if math.isnan(lo) or math.isnan(hi) else (lo, hi)),
                   low, high):
        return Agreement(OTHER_KIND)
    return _magnitude(point, lo, hi, original_display)


def count_text(agreements: list[Agreement]) -> str:
    """A table's count: "12 of 40 cells agree in magnitude, 31 in kind"."""
    n = len(agreements)
    magnitude = sum(a.agreement == AGREES for a in agreements)
    kind = sum(a.agrees_in_kind for a in agreements)
    return f"{magnitude} of {n} cells agree in magnitude, {kind} in kind"
