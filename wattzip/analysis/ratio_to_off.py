"""Each write's time and energy against compression off: plain's write of the same file in
the same setting (HPC '14's "runtime / off" and "energy / off"), with Fieller's interval
of the ratio of the two means.

A ratio of two means printed alone cannot say whether a codec's write is faster or
slower than plain's. Its interval is Fieller's, from each arm's mean, its variance and
its degrees of freedom (its repeats: runs of the two arms are independent), at the
confidence of the summary's half-widths. Plain's own row is 1 with no interval: it is
its own arm, not an independent one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from wattzip.stats import fieller, mean, stdev

# The operation whose plain row is each write's "off".
OFF_OP = {"compress-write": "plain-write", "plain-write": "plain-write",
          "write-compute": "write-compute"}
# summary stem -> the ratio's columns' stem
STEMS = {"elapsed_s": "elapsed_vs_off", "energy_j": "energy_vs_off"}
COLUMNS = [f"{stem}{end}" for stem in STEMS.values() for end in ("", "_lo", "_hi")]
PLAIN = "plain"

Moments = tuple[float, float, float]  # a mean, its variance, its degrees of freedom


def moments(values: Sequence[float]) -> Moments:
    """An arm's mean with its variance and degrees of freedom (two runs or more)."""
    return mean(values), stdev(values) ** 2 / len(values), len(values) - 1.0


def against(values: Sequence[float], off: Sequence[float],
            confidence: float) -> tuple[float, float, float]:
    """The ratio of the two means, and Fieller's interval where both arms have two runs
    or more (-inf to inf where off's mean cannot be told from zero)."""
    if not values or not off or not mean(off):
        return math.nan, math.nan, math.nan
    ratio = mean(values) / mean(off)
    if len(values) < 2 or len(off) < 2:
        return ratio, math.nan, math.nan
    lo, hi = fieller(moments(values), moments(off), confidence) or (-math.inf, math.inf)
    return ratio, lo, hi


def columns(key: tuple, arms: Mapping[tuple, Mapping[str, Sequence[float]]],
            confidence: float) -> dict:
    """The ratios to off of a summary row (its GROUP key: testbed, setting, file type,
    codec, operation), from every row's runs' values by stem: empty for a read, or where
    plain's write of the row's file and setting was not measured."""
    out = dict.fromkeys(COLUMNS, math.nan)
    off_op = OFF_OP.get(key[4])
    off_key = (*key[:3], PLAIN, off_op)
    if off_op is None or off_key not in arms:
        return out
    for stem, name in STEMS.items():
        values = arms[key][stem]
        if key == off_key:  # plain's own row: 1 (where it has a mean), with no interval
            out[name] = 1.0 if values and mean(values) else math.nan
            continue
        triple = against(values, arms[off_key][stem], confidence)
        out.update(zip((name, f"{name}_lo", f"{name}_hi"), triple, strict=True))
    return out
