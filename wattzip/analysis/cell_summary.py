"""Each cell's mean and interval per operation and metric (SYSTOR '09 section 3), and
the energy-time correlation R: the summary every other table starts from."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

from wattzip.analysis import ratio_to_off, uncertainty
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.breakeven import format_ratio
from wattzip.latex import display_tex
from wattzip.run_record import count_failed
from wattzip.stats import (
    CV_WARNING,
    OUTLIER_MIN_RUNS,
    OUTLIER_Z,
    half_width,
    mean,
    modified_z,
    pearson_r,
    stdev,
    two_groups,
)

METRICS = {  # summary column stem -> per-run value
    "elapsed_s": lambda r: r["elapsed_s"],
    "user_s": lambda r: r["user_s"],
    "sys_s": lambda r: r["sys_s"],
    "wait_s": lambda r: r["wait_s"],
    "cpu_utilization": lambda r: r["cpu_utilization"],
    "energy_j": lambda r: r["energy_j"],
    "energy_active_j": lambda r: r["energy_active_j"],
    "energy_passive_j": lambda r: r["energy_passive_j"],
    "et_js": lambda r: r["energy_j"] * r["elapsed_s"],
}


# What the paper's repeat rule may watch (config repeats.watch) and each one's summary
# stem; the energies only where a meter gives them.
WATCHABLE = {"elapsed": "elapsed_s", "user": "user_s", "system": "sys_s", "wait": "wait_s",
             "energy": "energy_j", "ET": "et_js"}
NEEDS_ENERGY = frozenset({"energy", "ET"})


GROUP = ("testbed", "setting", "file_type", "codec", "op")


CELL = ("testbed", "setting", "file_type", "codec")


def key_of(row: dict, fields: tuple[str, ...]) -> tuple:
    return tuple(row.get(f) for f in fields)


def verified_groups(rows: Iterable[dict]) -> dict[tuple, list[dict]]:
    """The verified runs by cell and operation (GROUP), in the cells' order."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r.get("verified"):
            groups[key_of(r, GROUP)].append(r)
    return dict(sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))))


def is_estimated(rows: Iterable[dict]) -> bool:
    return any(r.get("meter_method") == "estimated" for r in rows)


def summarize(rows: list[dict], options: AnalysisOptions) -> list[dict]:
    """One row per testbed x setting x file type x codec x operation.

    Failed or unverified runs are counted in n_failed and left out of every
    statistic, never dropped silently.
    """
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[key_of(row, GROUP)].append(row)
    out = []
    arms: dict[tuple, dict[str, list[float]]] = {}  # each row's values, for the ratios to off
    for key, group in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        good = [r for r in group if r.get("verified")]
        row = _identity(dict(zip(GROUP, key, strict=True)), group, good)
        for stem, get in METRICS.items():
            values = [get(r) for r in good if has_metric(r, stem)]
            arms.setdefault(key, {})[stem] = values
            row[f"mean_{stem}"] = mean(values) if values else math.nan
            row[f"hw_{stem}"] = (half_width(values, options.confidence) if len(values) > 1
                                  else math.nan)
        # Each energy's GUM budget beside the repeats' half-width (wattzip.analysis.uncertainty).
        for stem in (*uncertainty.STEMS, uncertainty.ET_STEM):
            mine = [r for r in good if has_metric(r, stem)]
            row.update(uncertainty.budget(mine, stem, options.confidence).columns(stem) if mine
                       else uncertainty.empty_columns(stem))
        row.update(_noise(good))
        row.update(_ratio(row, group[0], good))
        row.update(_repeat_rule(row, len(good), options))
        out.append(row)
    for key, row in zip(arms, out, strict=True):  # arms holds the rows' keys in their order
        row.update(ratio_to_off.columns(key, arms, options.confidence))
    return out


def _identity(row: dict, group: list[dict], good: list[dict]) -> dict:
    """The cell's key, its codec and input, its run counts and its meter."""
    first = group[0]
    return {
        **row,
        "tool": first.get("tool"), "level": first.get("level"),
        "bandwidth_bytes_per_s": first.get("bandwidth_bytes_per_s"),
        "input_bytes": first.get("input_bytes"), "n": len(good),
        # Disturbed runs (wattzip.measure.disturbance) are counted apart from failed ones.
        "n_failed": count_failed(group),
        "n_disturbed": sum(1 for r in group if r.get("disturbed")),
        "meter_method": "estimated" if is_estimated(good) else (
            good[0].get("meter_method") if good else None),
        "meter_source": good[0].get("meter_source") if good else None,
        "meter_id": good[0].get("meter_id") if good else None,
        "meter_scope": good[0].get("meter_scope") if good else None,
    }


def _noise(good: list[dict]) -> dict:
    """Noise, said rather than hidden: runs whose time or energy is an outlier
    (modified Z > 3.5, kept and counted), and a coefficient of variation of 10% or more.

    A plain row pools every plain run of its setting and file type: a run measured
    in a codec's job (the verdict design) is named by that job, e.g. gz-1:3.
    """
    flagged = set()
    cvs = []
    for stem in ("elapsed_s", "energy_j"):
        pairs = [(f"{paired_with(r)}:{r.get('repeat')}" if paired_with(r)
                  else r.get("repeat"), METRICS[stem](r)) for r in good if has_metric(r, stem)]
        if len(pairs) >= OUTLIER_MIN_RUNS:
            z = modified_z([v for _, v in pairs])
            flagged |= {rep for (rep, _), zi in zip(pairs, z, strict=True)
                        if abs(zi) > OUTLIER_Z}
        if len(pairs) >= 2 and mean([v for _, v in pairs]):
            cvs.append(stdev([v for _, v in pairs]) / abs(mean([v for _, v in pairs])))
    return {"outlier_repeats": " ".join(str(x) for x in sorted(flagged, key=str)),
            "cv_max": max(cvs) if cvs else math.nan,
            "cv_warning": bool(cvs) and max(cvs) >= CV_WARNING,
            "two_groups": two_groups_said(good)}


def two_groups_said(runs: list[dict]) -> str:
    """The cell's runs, in time or energy, when they fall in two groups (stats.two_groups:
    a VM whose speed switches between levels): each group's size and mean; "" when not."""
    said = []
    for stem in ("elapsed_s", "energy_j"):
        groups = two_groups([METRICS[stem](r) for r in runs if has_metric(r, stem)])
        if groups:
            said.append(f"{stem}: {groups.low_n} runs around {groups.low_mean:#.4g}, "
                        f"{groups.high_n} around {groups.high_mean:#.4g}")
    return "; ".join(said)


def describe_two_groups(summary: list[dict]) -> str:
    """The report's sentence on the cells whose runs fall in two groups (summary rows)."""
    cells = [r for r in summary if r.get("two_groups")]
    if not cells:
        return ""
    named = "; ".join(f"{r.get('setting', '')} {r.get('file_type')} {r.get('codec')} "
                      f"{r.get('op')} ({r['two_groups']})".strip() for r in cells)
    return (f"The runs of {len(cells)} cell(s) fall in two groups, as a machine switching "
            f"between speeds gives; each mean lies between its groups and describes neither: "
            f"{named}.")


def _ratio(row: dict, first: dict, good: list[dict]) -> dict:
    """The cell's copies, stored bytes and compression ratio, with the ratio table's cell."""
    out_bytes = [r["output_bytes"] for r in good if r.get("output_bytes")]
    copies = int(first.get("copies") or 1)
    files = copies * int(first.get("phases") or 1)
    if row["op"] in ("compress-write", "write-compute") and out_bytes:
        # output_bytes is every copy's (or phase's) file together: the ratio of totals.
        output_bytes = mean(out_bytes)
        ratio = row["input_bytes"] * files / output_bytes
    else:
        output_bytes = mean(out_bytes) if out_bytes else math.nan
        ratio = 1.0 if row["op"].startswith("plain") else math.nan
    # The ratio table's cell, set here by the one formatter so that R only places it.
    return {"copies": copies, "output_bytes": output_bytes, "compression_ratio": ratio,
            "compression_ratio_tex": display_tex(format_ratio(ratio))}


def _repeat_rule(row: dict, n: int, options: AnalysisOptions) -> dict:
    """Whether the paper's repeat rule is met on what it watched (repeats.watch, those
    with a value), and whether active energy's half-width is over the target."""
    ci_target = options.ci_target
    targeted = [s for s in map(WATCHABLE.get, options.watch)
                if not math.isnan(row[f"mean_{s}"])]
    ci_met = all(
        row[f"hw_{s}"] <= ci_target * abs(row[f"mean_{s}"]) for s in targeted
    ) if n > 1 and targeted else False
    # Active energy of I/O-bound work is a small difference of two large numbers:
    # its half-width is reported and flagged, never chased with more repeats.
    active_hw = row["hw_energy_active_j"]
    return {"ci_met": ci_met, "active_hw_over_target": bool(
        not math.isnan(active_hw) and active_hw > ci_target * abs(row["mean_energy_active_j"]))}


def has_metric(run: dict, stem: str) -> bool:
    needed = ("energy_j", "elapsed_s") if stem == "et_js" else (stem,)
    return all(run.get(k) is not None for k in needed)


def paired_with(run: dict) -> str:
    """The codec whose job measured this plain run beside it (the verdict design's
    interleaved arms), or "" for a plain baseline job's run (runs.csv's paired_with)."""
    return run.get("paired_with") or ""


def correlation_table(rows: list[dict]) -> list[dict]:
    """Pearson R of energy against time over all runs, per file type and overall."""
    good = [r for r in rows if r.get("verified") and r.get("energy_j") is not None]
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in good:
        groups[(r["testbed"], r["setting"], r["file_type"])].append(r)
        groups[(r["testbed"], r["setting"], "all")].append(r)
    return [
        {"testbed": t, "setting": s, "file_type": f, "n": len(g),
         "r": pearson_r([x["elapsed_s"] for x in g], [x["energy_j"] for x in g]),
         "estimated": is_estimated(g)}
        for (t, s, f), g in sorted(groups.items())
    ]
