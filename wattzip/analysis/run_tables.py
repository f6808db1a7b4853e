"""From a testbed's run records to its analysis tables (`wattzip analyze`): the summary
(each cell's means and intervals: cell_summary), the break-even table (each cell's
read-write model, SYSTOR '09 5.2: breakeven), the energy-saving curve E_sav(n) (Figure 3),
the energy-time correlation, the claims' verdicts, the comparison with the originals, the
Pareto front and the model check; every row labelled with its setting's factors.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from pathlib import Path

from wattzip import records
from wattzip.analysis import (
    breakeven,
    codec_cost,
    family,
    moderated,
    power,
    robustness,
    threads,
    uncertainty,
    verdicts,
)
from wattzip.analysis.analysis_options import AnalysisOptions, breakeven_levels, percent
from wattzip.analysis.arms import FOUR_OPS, four_operations, look_arms, own_runs, shares_plain
from wattzip.analysis.cell_summary import (
    GROUP,
    METRICS,
    correlation_table,
    is_estimated,
    key_of,
    summarize,
)
from wattzip.analysis.claims import decide
from wattzip.analysis.comparison import comparison_table
from wattzip.analysis.pareto import pareto_table
from wattzip.errors import RecordError
from wattzip.latex import tex
from wattzip.records import write_table
from wattzip.resources import ReferenceDir
from wattzip.run_record import FACTOR_PREFIX
from wattzip.stats import (
    welch_interval,
)

BREAKEVEN_METRICS = {"T": "elapsed_s", "E": "energy_j", "ET": "et_js"}
ESAV_MAX_N = 30



# --- the read-write model (paper 5.2) ---------------------------------------------


def breakeven_table(rows: list[dict], options: AnalysisOptions) -> list[dict]:
    """n_be per testbed x setting x file type x codec and metric, with its uncertainty.

    dw and dr each get an interval at options.difference_confidence, so that both hold
    together at options.look_confidence (Bonferroni; wattzip.analysis.breakeven.cell, whose
    rectangle the jobs under planned looks read too); n_be's range is that of
    dw/dr over their rectangle. A cell is decided only when every point of the
    rectangle gives the same kind: at 3-5 repeats that is often not the case,
    and the cell says so (a "?" after its value). Fieller's interval of n_be is given
    too (empty when unbounded: undetermined), and the cell's verdict on the saving of a
    workload of options.reads_per_write reads per write, against options.margin of its
    baseline (saves, costs, negligible, undecided: wattzip.analysis.verdicts). Under the verdict
    design (options.looks planned looks) the verdict is the one its job stopped on: the first n runs
    of its own plain arm against the codec's first n, at alpha / looks; the break-even
    intervals and Fieller's spend alpha / looks too, so the cells the figure frames and
    the claims read hold the coverage they state. Under the moderated design
    (options.moderated) each verdict is its job's at the look it stopped at: its arms'
    variances moderated by the priors its job fitted (wattzip.analysis.moderated), over its own
    arms and those of the cells measured before it.
    """
    levels = tex(breakeven_levels(options))
    cells = four_operations(rows)
    priors = _job_priors(cells, rows) if options.moderated and options.looks else None
    return [_breakeven_row(cell, ops, metric, stem, options,
                           priors and priors[(cell, stem)], levels)
            for cell, ops in cells for metric, stem in BREAKEVEN_METRICS.items()]


def _breakeven_row(cell: tuple, ops: dict, metric: str, stem: str, options: AnalysisOptions,
                   prior: dict | None, levels: str) -> dict:
    """One cell's break-even row for one metric."""
    testbed, setting, file_type, codec = cell
    # Under the verdict design every interval spends alpha / looks, as the job's did.
    overall, each = options.look_confidence, options.difference_confidence
    be = breakeven.cell(ops, stem, METRICS[stem], each, overall, prior)
    n = min(len(runs) for runs in ops.values())
    verdict = _verdict(ops, stem, options, prior)
    dw, dr = be.dw, be.dr
    return {
        "testbed": testbed, "setting": setting, "file_type": file_type, "codec": codec,
        "metric": metric, "dw": dw.estimate, "dw_lo": dw.lo, "dw_hi": dw.hi,
        "dr": dr.estimate, "dr_lo": dr.lo, "dr_hi": dr.hi, "n": n,
        "kind": be.point.kind, "value": be.point.value, "lo": be.lo, "hi": be.hi,
        "possible_kinds": "|".join(be.possible), "decided": be.decided,
        "display": be.display, "display_tex": be.display_tex,
        "estimated": is_estimated(sum(ops.values(), [])) and metric != "T",
        "fieller_lo": be.fieller[0] if be.fieller else math.nan,
        "fieller_hi": be.fieller[1] if be.fieller else math.nan,
        "fieller": "bounded" if be.fieller else "undetermined",
        # p_decided feeds the claims' Holm (wattzip.analysis.family); an undecided verdict
        # says whether it could have seen options.effect of the baseline
        # (wattzip.analysis.power).
        "p_decided": family.cell_p(dw, dr, each, options.looks),
        **power.verdict_columns(verdict, n, options.effect, overall, UNITS[metric]),
        "saving": verdict.saving, "saving_lo": verdict.lo, "saving_hi": verdict.hi,
        "reads_per_write": options.reads_per_write, "margin": options.margin,
        "difference_confidence": each, "joint_confidence": overall,
        "levels_tex": levels, "joint_confidence_text": f"{percent(overall)}%",
    }


UNITS = {"T": "s", "E": "J", "ET": "J s"}


def _verdict(ops: dict, stem: str, options: AnalysisOptions,
             priors: dict | None = None) -> verdicts.Verdict:
    """The cell's verdict on the combined interval: the repeats' spread and, for energy,
    the budget's Type B terms (wattzip.analysis.uncertainty); under the moderated design its arms'
    variances moderated by the priors its job fitted (wattzip.analysis.moderated)."""
    arms = look_arms(ops, options.looks)
    values = {k: [METRICS[stem](r) for r in runs] for k, runs in arms.items()}
    k = options.reads_per_write
    type_b = uncertainty.type_b_variance([(1, arms["w"]), (k, arms["r"]), (-1, arms["c"]),
                                          (-k, arms["d"])], stem)
    if priors is not None:
        return moderated.decide(values["w"], values["c"], values["r"], values["d"], priors,
                                reads_per_write=k, margin=options.margin,
                                confidence=options.look_confidence, type_b_var=type_b)
    return verdicts.decide(values["w"], values["c"], values["r"], values["d"],
                           reads_per_write=k, margin=options.margin,
                           confidence=options.look_confidence, type_b_var=type_b)


def _job_priors(cells: list, rows: list[dict]) -> dict[tuple, dict]:
    """The moderated design's priors of each (cell, metric) as its job fitted them at its
    last look (wattzip.analysis.stopping.VerdictLooks.priors): over its own four arms at the runs
    it stopped at and the verified runs of its testbed and setting's other cells that
    ended before its job began (the journals it read then); a shared plain arm is one
    arm per file type."""
    began = {cell: min(r["started_at"] for r in own_runs(ops, cell[3]))
             for cell, ops in cells}
    pools = defaultdict(list)  # the shared plain arms: (testbed, setting, file type, op)
    for r in rows:
        if r.get("shared_plain_of") and r.get("verified") and r.get("energy_j") is not None:
            pools[key_of(r, GROUP[:3]) + (r["op"],)].append(r)

    def group(codec: str, k: str) -> str:  # a codec's arms are judged with its own
        return codec if k in "cd" else "plain"

    out = {}
    for cell, ops in cells:
        others = [(op, o_ops[k], group(o_cell[3], k)) for o_cell, o_ops in cells
                  if o_cell[:2] == cell[:2] and o_cell != cell
                  for k, op in zip("wcrd", FOUR_OPS, strict=True)
                  if o_ops[k] is not ops[k] and (k in "cd" or not shares_plain(o_ops))]
        others += [(key[3], runs, "plain") for key, runs in pools.items()
                   if key[:2] == cell[:2] and key[2] != cell[2]]
        others = [(op, [r for r in runs if r["ended_at"] <= began[cell]], g)
                  for op, runs, g in others]
        arms = look_arms(ops, True)
        own = {k: (op, arms[k], group(cell[3], k))
               for k, op in zip("wcrd", FOUR_OPS, strict=True)}
        for stem in BREAKEVEN_METRICS.values():
            metric = METRICS[stem]
            out[(cell, stem)] = moderated.cell_priors(
                {k: (op, [metric(r) for r in runs], g) for k, (op, runs, g) in own.items()},
                [(op, [metric(r) for r in runs], g) for op, runs, g in others])
    return out


def esav_table(rows: list[dict], options: AnalysisOptions) -> list[dict]:
    """E_sav(n) = n (E_r - E_d) + (E_w - E_c) for n = 0..30 (Figure 3), with its Welch-t band."""
    out = []
    for cell, ops in four_operations(rows):
        testbed, setting, file_type, codec = cell
        estimated = is_estimated(sum(ops.values(), []))
        e = {k: [r["energy_j"] for r in runs] for k, runs in ops.items()}
        for n in range(ESAV_MAX_N + 1):
            curve = uncertainty.widen(  # the combined interval (wattzip.analysis.uncertainty)
                welch_interval([(n, e["r"]), (-n, e["d"]), (1, e["w"]), (-1, e["c"])],
                               options.confidence),
                uncertainty.type_b_variance([(n, ops["r"]), (-n, ops["d"]), (1, ops["w"]),
                                             (-1, ops["c"])], "energy_j"), options.confidence)
            out.append({
                "testbed": testbed, "setting": setting, "file_type": file_type, "codec": codec,
                "n": n, "esav_j": curve.estimate, "lo_j": curve.lo, "hi_j": curve.hi,
                "estimated": estimated,
            })
    return out



# --- the study's factors on every row -------------------------------------------------------

# What a row carries of its setting: the settings table's columns after the name.
SETTING_COLUMNS = records.SETTINGS_COLUMNS[1:]


def settings_of_runs(rows: list[dict]) -> dict[str, dict]:
    """The settings table of runs that came without one: possible only for a single
    setting (which is then the primary one); several need the study's settings.csv."""
    names = list(dict.fromkeys(r["setting"] for r in rows))
    if len(names) > 1:
        raise RecordError(f"these runs hold {len(names)} settings ({', '.join(names)}); "
                          "give the study's settings.csv (--settings) so that every table "
                          "says which setting is the primary one")
    out = {}
    for name in names:
        run = next(r for r in rows if r["setting"] == name)
        # A factor as the run applied it (copies, bandwidth_bytes_per_s) or as its setting
        # asked for it (factor_<name>: the medium, scheduler and governor).
        out[name] = {"setting": name,
                     **{c: run[c] if c in run else run.get(FACTOR_PREFIX + c)
                        for c in records.FACTOR_COLUMNS},
                     "dutycycle": "", "primary": True}
    return out


def label(rows: list[dict], settings: dict[str, dict]) -> list[dict]:
    """Every row with its setting's factors and primary flag right after the setting
    (rows across settings, like a testbed-wide claim's, get empty factors)."""
    out = []
    for row in rows:
        factors = settings.get(row.get("setting"))
        labelled = {}
        for key, value in row.items():
            if key in SETTING_COLUMNS:
                continue
            labelled[key] = value
            if key == "setting":
                labelled.update({c: factors[c] if factors else ("" if c != "primary"
                                                                  else False)
                                 for c in SETTING_COLUMNS})
        out.append(labelled)
    return out


def load(run_files: list[str], settings_path: str | os.PathLike | None) -> tuple[list, dict]:
    rows = records.load_runs(run_files)
    settings = (records.read_settings_csv(settings_path) if settings_path
                else settings_of_runs(rows))
    identities: dict[tuple, set] = defaultdict(set)
    for r in rows:
        identities[(r["testbed"], r["setting"])].add(r.get("meter_id"))
    mixed = {k: v for k, v in identities.items() if len(v) > 1}
    if mixed:
        (testbed, setting), ids = next(iter(mixed.items()))
        raise RecordError(
            f"testbed {testbed}, setting {setting}: runs of {len(ids)} meter identities "
            f"({', '.join(sorted(map(str, ids)))}, column meter_id; the meter, its "
            "coefficients or the idle calibration changed between jobs). Their energies "
            "cannot be compared: rerun the jobs of the old identity (delete their "
            "results/<study>/<testbed>/runs/ outputs) so that all share one")
    unknown = sorted({r["setting"] for r in rows} - set(settings))
    if unknown:
        raise RecordError(f"runs of setting(s) {', '.join(unknown)} are not in "
                          f"{settings_path}: the runs and the settings table are of "
                          "different studies")
    return rows, settings


def claim_rows(run_files: list[str], claim_ids: list[str] | None,
               reference_dir: ReferenceDir | None, options: AnalysisOptions,
               settings_path: str | os.PathLike | None = None) -> list[dict]:
    """The verdict rows of some claims (all for None), decided from the runs anew by the
    study's options (required: a forgotten one would decide by other rules)."""
    rows, settings = load(run_files, settings_path)
    summary = label(summarize(rows, options), settings)
    claims = decide(summary, breakeven_table(rows, options), correlation_table(rows), rows,
                    reference_dir, options=options)
    return [c for c in label(claims, settings) if not claim_ids or c["claim_id"] in claim_ids]


def analyze(run_files: list[str], out_dir: str | os.PathLike,
            reference_dir: ReferenceDir | None = None, *, options: AnalysisOptions,
            settings_path: str | os.PathLike | None = None) -> list[str]:
    """Write summary, breakeven, esav, correlation, claims, comparison, pareto,
    model_check, codec_io and lzbench (wattzip.analysis.codec_cost) and threads
    (wattzip.analysis.threads) CSVs to out_dir,
    every row labelled with its setting's factors and the primary flag."""
    rows, settings = load(run_files, settings_path)
    summary = label(summarize(rows, options), settings)
    breakeven = label(breakeven_table(rows, options), settings)
    esav = label(esav_table(rows, options), settings)
    correlation = label(correlation_table(rows), settings)
    claims = label(decide(summary, breakeven, correlation, rows, reference_dir,
                          options=options), settings)
    _mark_model_robustness(rows, settings, breakeven, claims, reference_dir, options)
    for row in breakeven:
        row["cell_tex"] = robustness.cell_tex(row)
    comparison = label(comparison_table(summary, breakeven, reference_dir), settings)
    pareto = label(pareto_table(summary), settings)
    model_check = robustness.model_check(rows) or [
        {"testbed": "", "note": "no run measured by a real meter beside the model"}]
    tables = {"summary": summary, "breakeven": breakeven, "esav": esav,
              "correlation": correlation, "claims": claims, "comparison": comparison,
              "pareto": pareto, "model_check": model_check,
              "codec_io": label(codec_cost.split_table(rows, options), settings),
              "lzbench": label(codec_cost.lzbench_table(summary), settings),
              "threads": label(threads.threads_table(rows, options), settings)}
    # A rehearsal's tables say so in every row: the figures and tables drawn from them
    # mark themselves SIMULATED from the data, not from where they were written.
    simulated = any(r.get("simulated") for r in rows)
    out = Path(out_dir)
    return [write_table([{**r, "simulated": True} for r in table] if simulated else table,
                        out / f"{name}.csv") for name, table in tables.items()]


def _mark_model_robustness(rows, settings, breakeven, claims, reference_dir,
                           options: AnalysisOptions):
    """Estimated break-even cells and claims decided again at the coefficient table's
    extremes, with the study's options (margin, workload, looks, confidence): marked
    robust to the model, or depending on it."""
    variants = robustness.at_extremes(rows)
    if not variants:
        return
    cells, decided = [], []
    for _, runs in variants:
        summary = label(summarize(runs, options), settings)
        be = breakeven_table(runs, options)
        cells.append(be)
        decided.append(decide(summary, be, correlation_table(runs), runs, reference_dir,
                              options=options))
    robustness.mark_breakeven(breakeven, cells)
    robustness.mark_claims(claims, decided)
