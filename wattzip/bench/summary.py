"""A benchmark's numbers: each command's time and energy, and each against the reference.

Time as hyperfine reports it (mean, sd, median, min, max, user, system over the runs).
Energy with the 95 % Student-t half-width of its mean, its active / passive split when
an idle power is known, and the mean power. A comparison is a ratio of means with
Fieller's interval and a verdict (wattzip.analysis.verdicts) on the difference, against a margin
of the reference's mean: at the confidence of one look when the runs stopped at planned
looks (Bonferroni), so that the verdict holds whichever look stopped them. An estimated
energy verdict is decided again at the coefficient table's extremes, as a study's cells
are (wattzip.analysis.robustness), and its words say when it depends on the model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from wattzip import stats
from wattzip.analysis import cell_summary, robustness, verdicts
from wattzip.analysis.stopping import outliers

# A verdict's words, per metric: the reference minus the command saves / costs.
WORDS = {
    "time": {verdicts.SAVES: "faster", verdicts.COSTS: "slower",
             verdicts.NEGLIGIBLE: "same time", verdicts.UNDECIDED: "undecided"},
    "energy": {verdicts.SAVES: "less energy", verdicts.COSTS: "more energy",
               verdicts.NEGLIGIBLE: "same energy", verdicts.UNDECIDED: "undecided"},
}
METRIC_KEYS = {"time": "elapsed_s", "energy": "energy_j"}


def _or_none(x: float) -> float | None:
    return None if x is None or math.isnan(x) else x


def _values(runs: list[dict], key: str) -> list[float]:
    return [r[key] for r in runs if r.get(key) is not None]


def _spread(xs: Sequence[float]) -> dict:
    return {"mean": _or_none(stats.mean(xs)), "stddev": _or_none(stats.stdev(xs)),
            "median": _or_none(stats._median(xs)) if xs else None,
            "min": min(xs) if xs else None, "max": max(xs) if xs else None}


def _mean_power(runs: list[dict]) -> float | None:
    """Energy over the time it covers: the meter's interval, which brackets the command
    (its elapsed time alone would overstate the power)."""
    pairs = [(r["energy_j"], r.get("meter_interval_s")) for r in runs
             if r.get("energy_j") is not None and r.get("meter_interval_s")]
    return sum(e for e, _ in pairs) / sum(t for _, t in pairs) if pairs else None


def summarize(command, runs: list[dict], confidence: float = stats.PAPER_CONFIDENCE,
              flagged: Iterable[int] = ()) -> dict:
    """One command's result: hyperfine's fields (command, mean, stddev, median, user,
    system, min, max, times, memory_usage_byte, exit_codes, parameters) and the energy
    beside them; the outliers of the final runs, and every run flagged while measuring
    (`flagged`)."""
    times = [r["elapsed_s"] for r in runs]
    out = {"command": command.name, **_spread(times),
           "user": _or_none(stats.mean([r["user_s"] for r in runs])),
           "system": _or_none(stats.mean([r["sys_s"] for r in runs])),
           "times": times, "exit_codes": [r["exit_code"] for r in runs]}
    # hyperfine's peak memory per run (wait4's ru_maxrss), left out where a run has none.
    memory = [r.get("peak_rss_bytes") for r in runs]
    if memory and None not in memory:
        out["memory_usage_byte"] = memory
    if command.parameters:  # hyperfine leaves the key out without parameters
        out["parameters"] = dict(command.parameters)
    energies = _values(runs, "energy_j")
    active, passive = _values(runs, "energy_active_j"), _values(runs, "energy_passive_j")
    energy = _spread(energies)
    out.update({f"energy_{k}_j": v for k, v in energy.items()})
    out["energy_half_width_j"] = _or_none(stats.half_width(energies, confidence))
    out["energy_confidence"] = confidence
    out["energy_active_mean_j"] = _or_none(stats.mean(active))
    out["energy_passive_mean_j"] = _or_none(stats.mean(passive))
    out["mean_power_w"] = _mean_power(runs)
    out["energies_j"], out["energies_active_j"] = energies, active
    out["energies_passive_j"] = passive
    out["outlier_runs"] = sorted({o.repeat for o in outliers(runs, [runs[0]["op"]])}
                                 if runs else ())
    out["flagged_runs"] = sorted(set(flagged) | set(out["outlier_runs"]))
    # Runs in two groups (wattzip.stats.two_groups), in time or energy: "" when not.
    out["two_groups"] = cell_summary.two_groups_said(runs)
    return out


def ratio_interval(x: Sequence[float], ref: Sequence[float],
                   confidence: float) -> tuple[float | None, float | None, float | None]:
    """mean(x) / mean(ref) with Fieller's interval; (ratio, None, None) when unbounded
    (the reference's mean cannot be told from zero) or too few runs."""
    if not x or not ref or not stats.mean(ref):
        return None, None, None
    ratio = stats.mean(x) / stats.mean(ref)
    if len(x) < 2 or len(ref) < 2:
        return ratio, None, None
    num = (stats.mean(x), stats.stdev(x) ** 2 / len(x), len(x) - 1)
    den = (stats.mean(ref), stats.stdev(ref) ** 2 / len(ref), len(ref) - 1)
    bounds = stats.fieller(num, den, confidence)
    return (ratio, None, None) if bounds is None else (ratio, *bounds)


def ratio_text(cell: dict, places: int = 3) -> str:
    """A compared metric's ratio with its interval, as the terminal and the tables say it."""
    ratio = f"{cell['ratio']:.{places}f}"
    if cell.get("one_run"):
        return f"{ratio} [no interval from one run]"
    if cell["ratio_lo"] is None:
        return f"{ratio} [interval unbounded]"
    return f"{ratio} [{cell['ratio_lo']:.{places}f}, {cell['ratio_hi']:.{places}f}]"


def compare(runs: list[dict], ref_runs: list[dict], metric: str, margin: float,
            confidence: float) -> dict | None:
    """One metric of one pair: the ratio with its interval, and the verdict on the
    difference (the reference's mean minus the command's) within the margin."""
    key = METRIC_KEYS[metric]
    x, ref = _values(runs, key), _values(ref_runs, key)
    if not x or not ref:
        return None  # no meter: no energy to compare
    ratio, lo, hi = ratio_interval(x, ref, confidence)
    if len(x) < 2 or len(ref) < 2:  # one run has no spread: the ratio, and no verdict
        return {"ratio": ratio, "ratio_lo": None, "ratio_hi": None, "one_run": True,
                "verdict": verdicts.UNDECIDED,
                "verdict_text": "undecided (one run: a verdict needs at least 2 per command)",
                "more_runs": None, "difference": stats.mean(x) - stats.mean(ref),
                "difference_lo": None, "difference_hi": None}
    # As one cell of the study with no reads: S = M_ref - M_cmd, its baseline M_ref.
    v = verdicts.decide(ref, x, ref, ref, reads_per_write=0.0, margin=margin,
                        confidence=confidence)
    word = WORDS[metric][v.verdict]
    if v.verdict == verdicts.NEGLIGIBLE:
        word += f" within ±{margin:.0%}"
    elif v.verdict == verdicts.UNDECIDED:
        word += (" (the difference sits on the margin: more runs may never decide it)"
                 if v.more_repeats is None else
                 f" (about {v.more_repeats} more run{'s' * (v.more_repeats != 1)} per "
                 "command would decide it)")
    return {"ratio": ratio, "ratio_lo": lo, "ratio_hi": hi, "verdict": v.verdict,
            "verdict_text": word, "more_runs": v.more_repeats,
            "difference": -v.saving, "difference_lo": -v.hi, "difference_hi": -v.lo}


def comparisons(results: list[list[dict]], names: list[str], reference: int, margin: float,
                confidence: float) -> list[dict]:
    """Every command against the reference, in time and in energy."""
    out = []
    for i, runs in enumerate(results):
        if i == reference:
            continue
        row = {"index": i, "command": names[i], "reference": names[reference],
               "confidence": confidence, "margin": margin}
        for metric in ("time", "energy"):
            row[metric] = compare(runs, results[reference], metric, margin, confidence)
        if row["energy"] and not row["energy"].get("one_run"):
            row["energy"].update(model_robustness(runs, results[reference], row["energy"],
                                                  margin, confidence))
        out.append(row)
    return out


def model_robustness(runs: list[dict], ref_runs: list[dict], cell: dict, margin: float,
                     confidence: float) -> dict:
    """An estimated energy verdict decided again with the runs re-estimated at the
    coefficient table's lowest and highest idle share: a verdict that changes there rests
    on the model's coefficients, not on the commands, and says so."""
    variants = robustness.at_extremes(runs + ref_runs)
    if variants is None:
        return {"model_robustness": ""}  # measured energy: no model to depend on
    n = len(runs)
    at = [(m.row, compare(v[:n], v[n:], "energy", margin, confidence)) for m, v in variants]
    if all(other["verdict"] == cell["verdict"] for _, other in at):
        return {"model_robustness": robustness.ROBUST}
    extremes = ", ".join(f"{WORDS['energy'][other['verdict']]} with {row}'s coefficients"
                         for row, other in at)
    return {"model_robustness": robustness.DEPENDS,
            "verdict_text": f"{cell['verdict_text']} ({robustness.DEPENDS}: {extremes})"}


def decided(rows: list[dict]) -> bool:
    """Every pair decided: in energy where there is a meter, else in time."""
    for row in rows:
        main = row["energy"] or row["time"]
        if main is None or main["verdict"] == verdicts.UNDECIDED:
            return False
    return True
