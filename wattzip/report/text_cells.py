"""The cells of the tables of free text, the claims' and the testbed's provenance, set by
the report's one formatter of free text (wattzip.latex.tex), the same as the appendix's
and the passages'; wattzip.report.tex_tables lays them out."""

from __future__ import annotations

from collections.abc import Mapping

from wattzip.latex import tex
from wattzip.report import legends

UNTESTABLE = "not testable here"
NOT_COMPARABLE = "not comparable"  # energy a narrower meter than the papers' saw


def _verdict(row: Mapping) -> tuple[str, str]:
    """The verdict cell and the numbers' cell: an untestable claim's reason goes with the
    numbers; a verdict on estimated energy is starred, with its robustness to the model."""
    verdict, evidence = row["verdict"], row["evidence"]
    if verdict.startswith("not testable"):
        # the reason, and a conflict with another claim, which stands in the evidence
        verdict, evidence = UNTESTABLE, " ".join(
            p for p in (verdict.removeprefix(f"{UNTESTABLE}: "), row.get("conflict")) if p)
    elif verdict.startswith(NOT_COMPARABLE):  # why, before the numbers it still shows
        verdict, evidence = NOT_COMPARABLE, " ".join(
            p for p in (verdict.removeprefix(f"{NOT_COMPARABLE}: ") + ".", evidence) if p)
    shown = rf"\textbf{{{verdict}}}" if verdict in ("holds", "refuted") else \
        rf"\emph{{{verdict if verdict == NOT_COMPARABLE else UNTESTABLE}}}"
    if row["estimated"] == "true":
        shown += legends.ESTIMATED_VERDICT_TEX
    if row.get("model_robustness"):
        shown += f" ({tex(row['model_robustness'])})"
    return shown, tex(evidence)


def claim_rows(claims: list[dict]) -> list[dict]:
    """Every claim decided over all settings or on the primary one; the table's note, the
    star's legend, where a verdict rests on estimated energy."""
    out = []
    for row in claims:
        if row["setting"] == "all" or row["primary"] == "true":
            verdict, evidence = _verdict(row)
            out.append({"claim": tex(row["claim"]), "source": tex(row["source"]),
                        "verdict": verdict, "evidence": evidence,
                        "estimated": row["estimated"] == "true",
                        "simulated": row.get("simulated") == "true"})
    note = legends.ESTIMATED_VERDICT if any(r["estimated"] for r in out) else ""
    return [{**r, "note": note} for r in out]


def provenance_rows(provenance: list[dict]) -> list[dict]:
    return [{"key": tex(r["key"]), "value": tex(r["value"]),
             "simulated": r.get("simulated") == "true"} for r in provenance]
