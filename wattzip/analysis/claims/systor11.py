"""SYSTOR '11's claims: levels, file types, factors across settings, system identification.
"""

from __future__ import annotations

import math
from collections import defaultdict

from wattzip.analysis.analysis_options import percent
from wattzip.analysis.claims.evidence import (
    _all_of,
    _needs,
    _sign,
    _unmeasured,
    factor_settings,
    first_measured,
    shown_value,
)
from wattzip.analysis.claims.registry import Outcome, check
from wattzip.stats import fit_percent, least_squares_predict, mean

# --- SYSTOR '11: levels --------------------------------------------------------------------


def _levels(ev, tool_prefix, file_type) -> dict[int, dict]:
    out = {}
    for c in ev.codecs():
        name, _, level = c.partition("-")
        if name == tool_prefix and level.isdigit():
            row = ev.summary_row(file_type, c, "compress-write")
            if row:
                out[int(level)] = row
    return out


@check("lzop_levels_identical")
def lzop_levels_identical(claim, ev):
    tool = claim.parameters["tool"]
    ref = defaultdict(dict)
    for r in ev.reference(claim.reference[0]):
        name, _, level = r["codec"].partition("-")
        if name == tool and level.isdigit():
            ref[r["file_type"]][int(level)] = r["display"]
    found, wrong, missing = [], [], []
    for ftype in sorted(ref):  # every file type of Table 1
        ours = _levels(ev, tool, ftype)
        same = [lv for lv, d in ref[ftype].items() if d == ref[ftype].get(1)]
        if len(same) < 2:
            continue
        if not all(lv in ours for lv in same):
            missing.append(f"{tool}-{min(same)} .. {tool}-{max(same)} on {ftype}")
            continue
        crs = [ours[lv]["compression_ratio"] for lv in same]
        found.append(f"{ftype} {tool}-{min(same)}..{max(same)}: CR {min(crs):.3f}..{max(crs):.3f}")
        if max(crs) - min(crs) > 1e-3 * max(crs):
            wrong.append(ftype)
    if not found:
        return _needs(claim, f"{tool}-1 .. {tool}-6")
    return Outcome(_all_of([not wrong], missing), "; ".join(found), why=_unmeasured(missing),
                   rests_on=found)


def _energy_peak(ev, levels: dict[int, dict], file_type, tool):
    """(level of the highest mean energy, whether it beats every other level decidedly)."""
    top = max(levels, key=lambda lv: levels[lv]["mean_energy_j"])
    sure = all(_sign(ev.difference((file_type, f"{tool}-{top}", "compress-write"),
                                   (file_type, f"{tool}-{lv}", "compress-write"))) == 1
               for lv in levels if lv != top)
    return top, sure


@check("gzip_level_energy_peak")
def gzip_level_energy_peak(claim, ev):
    tool, ftype = claim.parameters["tool"], claim.parameters["file_type"]
    levels = _levels(ev, tool, ftype)
    if len(levels) < 3:
        return _needs(claim, f"three or more levels of {tool} on {ftype}")
    top = max(levels, key=lambda lv: levels[lv]["mean_energy_j"])
    first, last = min(levels), max(levels)
    evidence = "; ".join(f"{tool}-{lv} {levels[lv]['mean_energy_j']:.1f} J"
                         for lv in sorted(levels))
    rises = _sign(ev.difference((ftype, f"{tool}-{top}", "compress-write"),
                                (ftype, f"{tool}-{first}", "compress-write")))
    falls = _sign(ev.difference((ftype, f"{tool}-{top}", "compress-write"),
                                (ftype, f"{tool}-{last}", "compress-write")))
    if top == last:
        _, sure = _energy_peak(ev, levels, ftype, tool)
        return Outcome(False if sure else None, evidence + f"; peak at the last level {last}",
                       why="the last level's lead is within the intervals")
    ok = True if rises == 1 and falls == 1 else None
    return Outcome(ok, evidence + f"; peak at level {top}", why="the rise or the fall is "
                   "within the intervals", rests_on=[f"{ftype} {tool}-{lv}" for lv in levels])


@check("level_max_energy_by_type")
def level_max_energy_by_type(claim, ev):
    tool = claim.parameters["tool"]
    expected = claim.parameters["most_expensive_level"]
    results, parts, undecided, missing = [], [], [], []
    for ftype, want in expected.items():
        levels = _levels(ev, tool, ftype)
        if want not in levels or len(levels) < 3:
            missing.append(f"{tool}-{want} on {ftype}" if want not in levels
                           else f"three or more levels of {tool} on {ftype}")
            continue
        top, sure = _energy_peak(ev, levels, ftype, tool)
        parts.append(f"{ftype}: most at {tool}-{top} (paper {tool}-{want})")
        if not sure:
            undecided.append(f"{ftype}: {tool}-{top} leads within the intervals")
        results.append((top == want) if sure else None)
    if not results:
        return _needs(claim, f"levels 1-9 of {tool}")
    why = "; ".join([*(["the top level's lead is within the intervals"] if None in results
                       else []), *([_unmeasured(missing)] if missing else [])])
    return Outcome(_all_of(results, missing), "; ".join(parts), why=why, undecided=undecided,
                   rests_on=parts)


@check("text_more_than_binary")
def text_more_than_binary(claim, ev):
    signs, parts = [], []
    for c in ev.codecs():
        if ev.summary_row("text", c, "compress-write") and ev.summary_row("binary", c,
                                                                          "compress-write"):
            s = _sign(ev.difference(("text", c, "compress-write"),
                                    ("binary", c, "compress-write")))
            signs.append(s)
            parts.append(f"{c} {'>' if s == 1 else '<' if s == -1 else '~'}")
    if not signs:
        return _needs(claim, "text and binary files")
    ok = False if -1 in signs else None if None in signs else True
    return Outcome(ok, "text vs binary compress-write energy: " + ", ".join(parts),
                   why="some codecs' differences are within the intervals",
                   undecided=[p for p in parts if p.endswith("~")], rests_on=parts)


@check("levels_rise_at_both_frequencies")
def levels_rise_at_both_frequencies(claim, ev):
    """At each named governor's setting (the highest and the lowest frequency, each the
    first of its alternatives measured), the tool's compress-write energy on the file type
    at its last level decidedly above its first, and no level decidedly below the one
    before it (Welch's intervals); a step the intervals cannot order is named, and does
    not refute the rise."""
    p = claim.parameters
    tool, ftype, levels = p["tool"], p["file_type"], [int(lv) for lv in p["levels"]]
    by = factor_settings(ev, "governor")
    parts, shown, undecided, missing = [], [], [], []
    for wanted in p["governors"]:
        governor = first_measured(by, wanted) or shown_value(wanted)
        setting = by.get(governor)
        have = [lv for lv in levels if setting and ev.summary_row(
            ftype, f"{tool}-{lv}", "compress-write", setting)]
        if have != levels:
            missing.append(f"{tool}-{','.join(str(lv) for lv in levels if lv not in have)} "
                           f"on {ftype} at {governor}")
            continue

        def step(a, b, s=setting):
            return _sign(ev.difference((ftype, f"{tool}-{a}", "compress-write"),
                                       (ftype, f"{tool}-{b}", "compress-write"),
                                       setting_a=s, setting_b=s))

        rise = step(levels[-1], levels[0])
        parts.append(None if rise is None else rise == 1)
        falls = [f"{a}<{b}" for b, a in zip(levels, levels[1:], strict=False)
                 if step(a, b) == -1]
        parts.append(not falls)
        if rise is None:
            undecided.append(f"{governor}: {tool}-{levels[-1]} against {tool}-{levels[0]}")
        energies = [mean(ev.values(ftype, f"{tool}-{lv}", "compress-write", setting=setting))
                    for lv in levels]
        shown.append(f"{governor}: " + ", ".join(
            f"{tool}-{lv} {e:.0f} J" for lv, e in zip(levels, energies, strict=True))
            + (f" (falls: {', '.join(falls)})" if falls else ""))
    if not shown:
        return _needs(claim, "; ".join(missing))
    return Outcome(_all_of(parts, missing), f"{ftype} compress-write energy by level: "
                   + "; ".join(shown), why="; ".join(
                       [*(["the rise is within the intervals"] if None in parts else []),
                        *([_unmeasured(missing)] if missing else [])]),
                   undecided=undecided, rests_on=shown)

# --- SYSTOR '11: factors across settings ---------------------------------------------------


def _paired_cells(ev, a: str, b: str, op: str = "compress-write") -> list[tuple[str, str]]:
    """(file type, codec) cells of `op` measured in both settings."""
    have = {s: {(r["file_type"], r["codec"]) for r in ev.in_setting(ev.summary, s)
                if r["op"] == op and r["n"]} for s in (a, b)}
    return sorted(have[a] & have[b])


def _compare(ev, a: str, b: str, op: str = "compress-write",
             metric: str = "energy_j") -> list[int | None]:
    """Per cell measured in both settings, the sign of a's mean minus b's (None: undecided)."""
    return [_sign(ev.difference((f, c, op), (f, c, op), metric, setting_a=a, setting_b=b))
            for f, c in _paired_cells(ev, a, b, op)]


def _equivalent(ev, a: str, b: str, within: float) -> list[bool | None]:
    """Per compress-write cell measured in both settings: True when the interval of a's
    mean energy minus b's lies within +-`within` of b's mean (equivalent), False when it
    lies wholly outside that bound (they differ by more), None when it straddles the bound.
    An interval that merely excludes zero is a difference smaller than the claim allows."""
    out = []
    for f, c in _paired_cells(ev, a, b):
        iv = ev.difference((f, c, "compress-write"), (f, c, "compress-write"),
                           setting_a=a, setting_b=b)
        bound = within * mean(ev.values(f, c, "compress-write", setting=b))
        out.append(True if -bound < iv.lo and iv.hi < bound
                   else False if iv.lo > bound or iv.hi < -bound else None)
    return out


@check("dvfs_no_saving")
def dvfs_no_saving(claim, ev):
    by = factor_settings(ev, "governor")
    named = claim.parameters["fastest"]
    fastest = next((g for g in named if g in by), None)
    if fastest is None or len(by) < 2:
        return Outcome(None, why=f"needs a governor factor with {' or '.join(named)} and a "
                                 "slower governor or frequency (cpufreq; not in a VM)")
    if ev.estimated():
        return Outcome(None, why="energy here is ESTIMATED by a utilisation model that ignores "
                                 "CPU frequency, so any verdict would be an artefact of it")
    compared = {g: _compare(ev, by[g], by[fastest]) for g in by if g != fastest}
    missing = [f"{g} and {fastest} on the same cells" for g, s in compared.items() if not s]
    signs = [s for g in compared for s in compared[g]]
    part = False if -1 in signs else None if None in signs or not signs else True
    return Outcome(_all_of([part], missing), f"slower governors vs {fastest}: " + ", ".join(
        {1: "more", -1: "less", None: "~"}[s] for s in signs),
        why=_unmeasured(missing) if missing else "within the intervals")


@check("io_scheduler_effect")
def io_scheduler_effect(claim, ev):
    by = factor_settings(ev, "io_scheduler")
    similar = [s for s in claim.parameters["similar"] if s in by]
    different = [s for s in claim.parameters["different"] if s in by]
    if len(similar) < 2 or not different:
        return _needs(claim, "I/O schedulers " + ", ".join(claim.parameters["similar"]
                                                          + claim.parameters["different"]))
    within = claim.parameters["similar_within"]
    same = _equivalent(ev, by[similar[0]], by[similar[1]], within)
    apart = [sign for d in different for s in similar for sign in _compare(ev, by[d], by[s])]
    differ, open_ = sum(s is not None for s in apart), apart.count(None)
    evidence = (f"{similar[0]} vs {similar[1]}: {same.count(True)} of {len(same)} cells "
                f"within {within:.0%}, {same.count(False)} beyond it; "
                f"{', '.join(different)} vs {', '.join(similar)}: {differ} of {len(apart)} "
                "differ")
    if not same or not apart:
        return Outcome(None, evidence, why="no cell measured under both schedulers")
    # Similar: every cell's interval within the bound (an undecided cell is not evidence
    # of similarity), refuted by one wholly beyond it; different: at least half of the
    # cells' intervals exclude zero.
    alike = False if False in same else None if None in same else True
    distinct = (True if differ >= len(apart) / 2
                else False if differ + open_ < len(apart) / 2 else None)
    return Outcome(_all_of([alike, distinct], []), evidence,
                   why=f"some cells' intervals straddle the {within:.0%} bound, or cannot "
                   f"tell {', '.join(different)} from the others")


@check("media_faster_less_energy")
def media_faster_less_energy(claim, ev):
    by = factor_settings(ev, "medium")
    speed, missing = {}, []
    for medium, setting in by.items():
        rows = [r for r in ev.in_setting(ev.summary, setting) if r["op"] == "plain-write"
                and r["n"]]
        if rows:
            speed[medium] = mean([r["input_bytes"] / r["mean_elapsed_s"] for r in rows])
        else:
            missing.append(f"plain writes on {medium}")
    if len(speed) < 2:
        return _needs(claim, "two or more storage media")
    order = sorted(speed, key=lambda m: -speed[m])
    pairs = list(zip(order, order[1:], strict=False))
    # Which medium is faster is decided too: each plain write's time on the faster below
    # the slower's, at the intervals' level.
    faster = [s for a, b in pairs for s in _compare(ev, by[a], by[b], "plain-write",
                                                    "elapsed_s")]
    signs = [s for a, b in pairs for s in _compare(ev, by[a], by[b])]
    evidence = ("media by plain-write speed: " + ", ".join(
        f"{m} {speed[m] / 2**20:.0f} MiB/s" for m in order) + "; faster one uses less energy "
        f"in {signs.count(-1)} of {len(signs)} cells")
    if not signs or not faster:
        return Outcome(None, evidence, why="no cell measured on two media")
    if any(s != -1 for s in faster):
        return Outcome(None, evidence, why="which medium is faster is within the intervals")
    part = False if 1 in signs else None if None in signs else True
    return Outcome(_all_of([part], missing), evidence,
                   why=_unmeasured(missing) if missing else "some cells are within the intervals")


# --- SYSTOR '11 4.2: system identification ----------------------------------------------


def _design(runs: list[dict]) -> tuple[list[list[float]], dict]:
    """The labels coded as numbers, as the paper tried: algorithm, level, file type, frequency."""
    tools = {t: i for i, t in enumerate(sorted({r["tool"] for r in runs}))}
    types = {t: i for i, t in enumerate(sorted({r["file_type"] for r in runs}))}
    govs = {g: i for i, g in enumerate(sorted({_governor(r) for r in runs}))}
    rows = [[1.0, tools[r["tool"]], _level(r), types[r["file_type"]], govs[_governor(r)]]
            for r in runs]
    return rows, {"tools": tools, "types": types}


def _governor(run: dict) -> str:
    return str(run.get("factor_governor") or "")


def _level(run: dict) -> float:
    try:
        return float(run.get("level") or 0)
    except ValueError:
        return 0.0


def _sysid_predictions(runs: list[dict]) -> dict[str, tuple[list, list, list]] | None:
    """Per output (energy, performance): the held-out runs' values, one linear model's
    predictions of them on the labels, and a model per mode's.

    Compress-write runs (and plain-write as algorithm NONE) are split by repeat
    into two halves of the same size: odd repeats fit, even repeats test. A
    mode is one algorithm on one file type (SYSTOR '11: labels are the modes
    of a hybrid automaton); its model is linear in the level.
    """
    usable = [r for r in runs if r.get("verified") and r["op"] in ("compress-write",
                                                                     "plain-write")
              and r.get("energy_j") is not None]
    train = [r for r in usable if r["repeat"] % 2 == 1]
    test = [r for r in usable if r["repeat"] % 2 == 0]
    if len({r["tool"] for r in usable}) < 2 or len(test) < 8 or len(train) < 8:
        return None
    x_all, _ = _design(train + test)
    x_train, x_test = x_all[:len(train)], x_all[len(train):]
    out = {}
    for output, get in (("energy", lambda r: r["energy_j"]),
                        ("performance", lambda r: 1 / r["elapsed_s"])):
        y_train, y_test = [get(r) for r in train], [get(r) for r in test]
        per_mode = []
        for r in test:
            mode = [(i, t) for i, t in enumerate(train)
                    if (t["tool"], t["file_type"]) == (r["tool"], r["file_type"])]
            if not mode:
                per_mode.append(mean(y_train))
                continue
            xs = [[1.0, _level(t)] for _, t in mode]
            ys = [y_train[i] for i, _ in mode]
            per_mode.append(least_squares_predict(xs, ys, [[1.0, _level(r)]])[0])
        out[output] = (y_test, least_squares_predict(x_train, y_train, x_test), per_mode)
    return out


def sysid_fits(runs: list[dict]) -> dict[str, float] | None:
    """Held-out fit % of one linear model on the labels, and of a model per mode."""
    predicted = _sysid_predictions(runs)
    if predicted is None:
        return None
    return {f"{model}_{output}": fit_percent(y, guess)
            for output, (y, linear, per_mode) in predicted.items()
            for model, guess in (("linear", linear), ("per_mode", per_mode))}


BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED = 2000, 0  # a fixed seed: a verdict is reproducible


def _bootstrap_fits(y, linear, per_mode, confidence: float) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals over the held-out runs (drawn with replacement) of the
    linear model's fit % and of the per-mode models' fit % less it, paired on each draw.
    The models stay as fitted: the intervals are the held-out half's sampling alone."""
    import numpy as np

    y, linear, per_mode = (np.asarray(v, float) for v in (y, linear, per_mode))
    draws = np.random.default_rng(BOOTSTRAP_SEED).integers(
        0, len(y), size=(BOOTSTRAP_RESAMPLES, len(y)))
    ys = y[draws]
    spread = np.sqrt(((ys - ys.mean(axis=1, keepdims=True)) ** 2).sum(axis=1))

    def fit(guess):
        with np.errstate(divide="ignore", invalid="ignore"):
            return 100 * (1 - np.sqrt(((ys - guess[draws]) ** 2).sum(axis=1)) / spread)

    def bounds(values) -> tuple[float, float]:
        values = values[np.isfinite(values)]  # a draw of equal values has no fit
        tail = 50 * (1 - confidence)
        return (tuple(float(q) for q in np.percentile(values, [tail, 100 - tail]))
                if len(values) else (math.nan, math.nan))

    with np.errstate(invalid="ignore"):  # inf - inf: a draw with no spread, left out
        gain = fit(per_mode) - fit(linear)
    return {"linear": bounds(fit(linear)), "gain": bounds(gain)}


@check("sysid_linear_poor")
def sysid_linear_poor(claim, ev):
    """Poor: the linear model's held-out fit decidedly below fit_max_pct; better: the
    per-mode models' decidedly above it; each for energy and performance, by percentile
    bootstrap intervals over the held-out runs, each one comparison of the claim's family."""
    runs = [r for r in ev.runs if r.get("testbed") == ev.testbed]
    predicted = _sysid_predictions(runs)
    if predicted is None:
        return _needs(claim, "two or more algorithms with repeated runs")
    limit, parts, shown, open_ = claim.parameters["fit_max_pct"], [], [], []
    for output, (y, linear, per_mode) in predicted.items():
        level = ev.comparison_level(2)  # the linear fit against the limit, and the gain
        iv = _bootstrap_fits(y, linear, per_mode, level)
        (lo, hi), (gain_lo, gain_hi) = iv["linear"], iv["gain"]
        poor = True if hi < limit else False if lo >= limit else None
        better = True if gain_lo > 0 else False if gain_hi < 0 else None
        parts += [poor, better]
        open_ += [f"{output}: {what}" for what, part in (
            (f"linear fit against {limit:g}%", poor), ("per mode against linear", better))
            if part is None]
        shown.append(f"{output} linear {fit_percent(y, linear):.0f}% [{lo:.0f}, {hi:.0f}], "
                     f"per mode {fit_percent(y, per_mode):.0f}% (gain "
                     f"[{gain_lo:+.0f}, {gain_hi:+.0f}])")
    # A label that takes one value here is not in the model: the claim is tested on fewer.
    labels = {"algorithm": {r["tool"] for r in runs}, "level": {_level(r) for r in runs},
              "file type": {r["file_type"] for r in runs},
              "frequency": {_governor(r) for r in runs}}
    fixed = [name for name, values in labels.items() if len(values) < 2]
    held_out = len(predicted["energy"][0])
    return Outcome(
        _all_of(parts, []), "held-out fit: " + "; ".join(shown)
        + f" (percentile bootstrap {percent(level)}% over the {held_out} held-out runs)"
        + (f"; not varied here: {', '.join(fixed)}" if fixed else ""),
        why="the bootstrap intervals cannot decide " + ", ".join(open_), undecided=open_,
        rests_on=[f"{len(runs)} runs, odd repeats fit, even repeats test"])
