"""The analysis tables the report's text is made from, read once and checked to agree."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from wattzip.analysis.reference import read_reference
from wattzip.errors import RecordError


def rows(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _json(path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def primary_rows(path) -> list[dict]:
    """The primary setting's rows of an analysis table (the study model flagged them)."""
    return [r for r in rows(path) if r["primary"] == "true"]


@dataclass
class ReportTables:
    """One testbed's tables, the primary setting's rows only where a table has settings."""

    summary: list[dict]
    breakeven: list[dict]
    correlation: list[dict]
    claims: list[dict]
    runs: list[dict]
    model_check: list[dict]
    crosscheck: list[dict]
    provenance: dict
    idle: dict
    manifest: dict
    estimate: dict
    table3: list[dict]
    # the break-even originals by their names (layout.BREAKEVEN_ORIGINALS' tables)
    breakeven_originals: dict[str, list[dict]]
    original_design: dict[str, dict]  # the original's design by quantity (value, display)

    @classmethod
    def load(cls, inputs: Mapping, primary: str) -> ReportTables:
        """Read a testbed's tables (rule paper_macros' inputs); refuse them unless the
        idle calibration and the tables are all of the primary setting."""
        tables = cls(
            summary=primary_rows(inputs["summary"]),
            breakeven=primary_rows(inputs["breakeven"]),
            correlation=primary_rows(inputs["correlation"]),
            claims=[r for r in rows(inputs["claims"])
                    if r["setting"] == "all" or r["primary"] == "true"],
            runs=rows(inputs["runs"]),
            model_check=rows(inputs["model_check"]),
            crosscheck=rows(inputs["crosscheck"]) if inputs.get("crosscheck") else [],
            provenance=_json(inputs["provenance"]),
            idle=_json(inputs["idle"]),
            manifest=_json(inputs["manifest"]),
            estimate=_json(inputs["estimate"]),
            table3=read_reference(inputs["table3"])[1],
            breakeven_originals={Path(p).stem: read_reference(p)[1]
                                 for p in inputs["breakeven_originals"]},
            original_design={r["quantity"]: r for r in
                             read_reference(inputs["original_design"])[1]},
        )
        settings = {r["setting"] for r in tables.summary}
        if tables.idle["setting"] != primary or settings != {primary}:
            raise RecordError(f"the idle calibration ({tables.idle['setting']}) and the "
                              f"tables ({sorted(settings)}) are not all of the primary "
                              f"setting {primary}")
        return tables

    @property
    def table4(self) -> list[dict]:
        """SYSTOR '09 Table 4 (server), the original the text quotes most."""
        return self.breakeven_originals["systor09_table4_breakeven_server"]

    @property
    def estimated(self) -> bool:
        return any(r["meter_method"] == "estimated" for r in self.summary)
