"""The original papers' claims: a registry, the evidence, and one module of checks per paper.
"""

from __future__ import annotations

import dataclasses

from wattzip.analysis.analysis_options import AnalysisOptions, percent
from wattzip.analysis.claims import hpc14, magnitudes, scope, systor09, systor11  # noqa: F401 (they register their checks)
from wattzip.analysis.claims.evidence import Evidence, _cell_name
from wattzip.analysis.claims.registry import CHECKS, Claim, Outcome, check, load_claims
from wattzip.analysis.claims.systor11 import sysid_fits
from wattzip.analysis.family import holm
from wattzip.meters.base import not_comparable
from wattzip.resources import ReferenceDir
from wattzip.stats import fit_percent

__all__ = ["CHECKS", "Claim", "Evidence", "Outcome", "check", "decide", "fit_percent",
           "load_claims", "sysid_fits"]


def decide(summary: list[dict], breakeven: list[dict], correlation: list[dict],
           runs: list[dict], reference_dir: ReferenceDir | None = None, *,
           options: AnalysisOptions) -> list[dict]:
    """One row per testbed x setting x claim (testbed-scoped claims: setting 'all')."""
    claims = load_claims(reference_dir)
    rows = []
    for testbed in sorted({s["testbed"] for s in summary}):
        settings = sorted({s["setting"] for s in summary if s["testbed"] == testbed})
        for claim in claims:
            for setting in (settings if claim.scope == "setting" else [None]):
                ev = Evidence(testbed, setting, summary, breakeven, correlation, runs,
                              reference_dir, options)
                ev.codec_scope = scope.paper_codecs(claim, ev)
                outside = scope.out_of_scope(claim, ev)
                if outside is not None:  # the study lacks what the claim was read from
                    out, holm = familywise(claim, ev, outside, 0)
                else:
                    out, holm = familywise(claim, ev, *checked(claim, ev))
                    out.evidence += scope.others_beside(claim, ev)
                rows.append({**_row(claim, out, ev), **holm})
    return rows


def checked(claim: Claim, ev: Evidence) -> tuple[Outcome, int]:
    """The claim's check, each of its comparisons held at alpha / their number
    (Bonferroni): run at the study's level first, counting the intervals it asks for
    (Evidence.comparison_level), then again at that family's, until their number no
    longer grows (a check that asks for fewer on the way is held to more: conservative).
    Returns the outcome and the family it was decided in."""
    family = 1
    while True:
        trial = ev.with_family(family)
        out = CHECKS[claim.check](claim, trial)
        if trial.comparisons <= family:
            return out, family if trial.comparisons else 0
        family = trial.comparisons


def familywise(claim: Claim, ev: Evidence, out: Outcome,
               comparisons: int) -> tuple[Outcome, dict]:
    """The claim decided again with its break-even cells held to a family-wise confidence
    (Holm over the cells it rests on, Outcome.cells, in any setting: wattzip.analysis.family):
    a cell decided alone but not in the family counts as undecided. The row states the
    family (its cells, or the `comparisons` of means its check made, claims.checked) and
    the cells it undid."""
    cells = out.cells
    level = ev.options.confidence
    stated = {"familywise_confidence": _comparisons_level(level, comparisons),
              "family_cells": len(cells), "holm_undecided": "",
              # What its undecided cells could have seen (wattzip.analysis.power).
              "undecided_power": "; ".join(f"{_cell_name(b)} {b['verdict_note']}"
                                          for b in cells if b.get("undecided_as"))}
    if len(cells) < 2 or any(b.get("p_decided") in (None, "") for b in cells):
        if len(cells) == 1:
            stated["familywise_confidence"] = f"{level:.0%} (one cell)"
        if comparisons:
            out.evidence += f" [{stated['familywise_confidence']}]"
        return out, stated
    keep = holm([float(b["p_decided"]) for b in cells], 1 - level)
    undone = [b for b, k in zip(cells, keep, strict=True) if b["decided"] and not k]
    stated["familywise_confidence"] = (f"{level:.0%} family-wise over "
                                       f"{len(cells)} cells (Holm)")
    stated["holm_undecided"] = "; ".join(_cell_name(b) for b in undone)
    if undone:
        held = {id(b) for b in undone}
        breakeven = [{**b, "decided": False} if id(b) in held else b for b in ev.breakeven]
        ev = dataclasses.replace(ev, breakeven=breakeven)
        out, _ = checked(claim, ev)
    out.evidence += (f" [{stated['familywise_confidence']}"
                     + (f"; decided alone, not in the family: {stated['holm_undecided']}"
                        if undone else "") + "]")
    return out, stated


def _comparisons_level(level: float, comparisons: int) -> str:
    """The confidence a claim decided from `comparisons` intervals of means holds at; a
    claim decided from none (the compression ratios, or one its data cannot test) has no
    level to state."""
    if comparisons > 1:
        return f"{level:.0%} family-wise over {comparisons} comparisons (Bonferroni)"
    return f"{level:.0%} (one comparison)" if comparisons else "no interval"


def _row(claim: Claim, out: Outcome, ev: Evidence) -> dict:
    estimated = claim.energy and ev.estimated() and out.ok is not None
    notes = []
    if estimated:
        notes.append("rests on ESTIMATED energy (utilization model, no power meter)")
    if out.undecided:
        notes.append(f"undecided at {percent(ev.options.confidence)}%: "
                     + "; ".join(out.undecided))
    verdict = ("holds" if out.ok else "refuted") if out.ok is not None else (
        f"not testable here: {out.why}")
    # Energy a narrower meter saw (RAPL) is not the papers' wall power: the claim is not
    # decided against them, and what it would have said stays beside its evidence.
    narrower = ev.narrower_scope() if claim.energy and out.ok is not None else None
    if narrower:
        notes.append(f"on this meter's energy it would be: {verdict}")
        verdict = not_comparable(narrower)
    conflict = (f"(Cannot hold on the same runs as {claim.conflicts['with']}: "
                f"{claim.conflicts['why']}.)" if claim.conflicts else "")
    # said beside the verdict, whatever it is
    evidence = " ".join(p for p in (out.evidence, conflict) if p)
    return {"testbed": ev.testbed, "setting": ev.setting or "all", "claim_id": claim.id,
            "claim": claim.claim, "source": claim.source, "verdict": verdict,
            "evidence": evidence, "estimated": estimated, "note": "; ".join(notes),
            "rests_on": "; ".join(out.rests_on), "overlay": claim.overlay,
            "origin": claim.origin, "conflict": conflict,
            "factor": claim.factor}
