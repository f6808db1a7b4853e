"""The original papers' claims: a registry, the evidence, and one module of checks per paper.
"""

from __future__ import annotations

from wattzip.analysis_options import DEFAULT, AnalysisOptions, percent
from wattzip.claims import hpc14, systor09, systor11  # noqa: F401 (they register their checks)
from wattzip.claims.evidence import Evidence
from wattzip.claims.registry import CHECKS, Claim, Outcome, check, load_claims
from wattzip.claims.systor11 import sysid_fits
from wattzip.resources import ReferenceDir
from wattzip.stats import fit_percent

__all__ = ["CHECKS", "Claim", "Evidence", "Outcome", "check", "decide", "fit_percent",
           "load_claims", "sysid_fits"]


def decide(summary: list[dict], breakeven: list[dict], correlation: list[dict],
           runs: list[dict], reference_dir: ReferenceDir | None = None,
           options: AnalysisOptions = DEFAULT) -> list[dict]:
    """One row per testbed x setting x claim (testbed-scoped claims: setting 'all')."""
    claims = load_claims(reference_dir)
    rows = []
    for testbed in sorted({s["testbed"] for s in summary}):
        settings = sorted({s["setting"] for s in summary if s["testbed"] == testbed})
        for claim in claims:
            for setting in (settings if claim.scope == "setting" else [None]):
                ev = Evidence(testbed, setting, summary, breakeven, correlation, runs,
                              reference_dir, options)
                rows.append(_row(claim, CHECKS[claim.id](claim, ev), ev))
    return rows


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
    return {"testbed": ev.testbed, "setting": ev.setting or "all", "claim_id": claim.id,
            "claim": claim.claim, "source": claim.source, "verdict": verdict,
            "evidence": out.evidence, "estimated": estimated, "note": "; ".join(notes),
            "rests_on": "; ".join(out.rests_on), "overlay": claim.overlay,
            "factor": claim.factor}
