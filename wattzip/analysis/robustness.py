"""Estimated verdicts re-decided at the coefficient table's extremes, and the model checked.

Every estimated energy (E = n_threads * W_min * t + CPU-seconds * (W_max - W_min),
wattzip.meters.coefficients) rests on the ratio of idle to active power that the
coefficients imply. The analysis decides every estimated cell and claim again at the
table's lowest and highest idle share, with the study's own options (margin, reads per
write, looks, confidence: wattzip.analysis.analysis_options); a decision the same at both is
"robust to the model", one that changes is "depends on the model", and the report says
which. A break-even cell's decision is its kind, whether the intervals decide it, and
its verdict; its n_be moves with any coefficient and is not compared. Where a real
meter measured the runs, each run also holds the model's estimate, and the two are
compared run by run.
"""

from __future__ import annotations

import math

from wattzip.meters.coefficients import Coefficients, extremes
from wattzip.stats import mean

BREAKEVEN_DECISION = ("kind", "decided", "verdict")
ROBUST = "robust to the model"
DEPENDS = "depends on the model"
MODEL_DEPENDENT_TEX = r"$^{\dagger}$"


def cell_tex(row: dict) -> str:
    """A break-even cell as the tables print it: its display's LaTeX, with a dagger where
    an estimated decision depends on the model (decided otherwise at an extreme)."""
    marked = row.get("model_robustness") == DEPENDS
    return row["display_tex"] + (MODEL_DEPENDENT_TEX if marked else "")


def _estimated(run: dict) -> bool:
    return run.get("meter_method") == "estimated" and run.get("cpu_busy_s") is not None


def reestimate(runs: list[dict], model: Coefficients) -> list[dict]:
    """The runs as the model would estimate them with other coefficients (same threads)."""
    out = []
    for r in runs:
        if not _estimated(r) or r.get("energy_j") is None:
            out.append(r)
            continue
        m = Coefficients(model.row, model.min_w_per_thread, model.max_w_per_thread,
                         int(r.get("model_threads") or model.threads), model.source, model.how)
        interval = r.get("meter_interval_s") or r["elapsed_s"]
        energy = m.energy_j(interval, r["cpu_busy_s"])
        passive = m.idle_w * interval  # an idle machine under the model: n_threads * W_min
        out.append({**r, "energy_j": energy, "idle_power_w": m.idle_w,
                    "energy_passive_j": passive, "energy_active_j": energy - passive})
    return out


def at_extremes(runs: list[dict]) -> list[tuple[Coefficients, list[dict]]] | None:
    """The runs re-estimated at both extremes of the table, or None when no estimated run
    holds the CPU-seconds to re-estimate (runs from before they were recorded)."""
    estimated = [r for r in runs if _estimated(r)]
    if not estimated:
        return None
    threads = int(estimated[0].get("model_threads") or 1)
    return [(m, reestimate(runs, m)) for m in extremes(threads)]


def _mark(rows: list[dict], variants: list[list[dict]], key: tuple[str, ...],
          outcome: tuple[str, ...]) -> None:
    """`model_robustness` on every estimated row: its `outcome` fields the same in every
    variant (the table's extremes), or not; empty on rows that rest on no estimate."""
    others = [{tuple(r[k] for k in key): r for r in v} for v in variants]

    def decision(row):
        return tuple(row.get(f) for f in outcome) if row else None

    for row in rows:
        if not row.get("estimated"):
            row["model_robustness"] = ""
            continue
        same = all(decision(o.get(tuple(row[k] for k in key))) == decision(row)
                   for o in others)
        row["model_robustness"] = ROBUST if same else DEPENDS


def mark_breakeven(breakeven: list[dict], variants: list[list[dict]]) -> None:
    """A break-even cell's decision at both extremes: its kind, whether the intervals
    decide it, and its verdict on the workload (not its n_be, which any coefficient moves:
    comparing the displayed value marked a cell decided alike at both extremes)."""
    _mark(breakeven, variants, ("testbed", "setting", "file_type", "codec", "metric"),
          BREAKEVEN_DECISION)


def mark_claims(claims: list[dict], variants: list[list[dict]]) -> None:
    """A claim's verdict at both extremes."""
    _mark(claims, variants, ("testbed", "setting", "claim_id"), ("verdict",))


def model_check(runs: list[dict]) -> list[dict]:
    """The model's estimate beside a real meter's measurement, run by run, and overall."""
    pairs = [r for r in runs if r.get("meter_method") == "measured" and r.get("verified")
             and r.get("energy_j") and r.get("estimated_energy_j") is not None]
    rows = [{"testbed": r["testbed"], "setting": r["setting"], "file_type": r["file_type"],
             "codec": r["codec"], "op": r["op"], "repeat": r["repeat"],
             "meter_source": r["meter_source"], "measured_j": r["energy_j"],
             "estimated_j": r["estimated_energy_j"], "model_row": r.get("model_row"),
             "error_pct": 100 * (r["estimated_energy_j"] - r["energy_j"]) / r["energy_j"]}
            for r in pairs]
    if rows:
        errors = [abs(x["error_pct"]) for x in rows]
        rows.append({"testbed": rows[0]["testbed"], "setting": "all", "op": "all runs",
                     "meter_source": rows[0]["meter_source"], "model_row": rows[0]["model_row"],
                     "measured_j": sum(x["measured_j"] for x in rows),
                     "estimated_j": sum(x["estimated_j"] for x in rows),
                     "error_pct": mean(errors), "repeat": len(rows),
                     "file_type": "", "codec": "mean |error| %"})
    return rows


def median_abs_error_pct(rows: list[dict]) -> float:
    errors = sorted(abs(float(r["error_pct"])) for r in rows if r["setting"] != "all")
    return errors[len(errors) // 2] if errors else math.nan
