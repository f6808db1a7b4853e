"""The original papers' numbers beside the reproduced ones, one row per source-table cell."""

from __future__ import annotations

import math

from wattzip.analysis.agreement import (
    breakeven_agreement,
    ratio_agreement,
    ratio_to_off_agreement,
)
from wattzip.analysis.breakeven import format_ratio, parse_display
from wattzip.analysis.reference import DISAGREEMENTS, disagreement_notes, read_reference
from wattzip.resources import ReferenceDir, reference_file


def _ratio_value(text: str) -> float:
    return 10 ** float(text[4:]) if text.startswith("~10^") else float(text)


RATIO_TABLES = {"systor09_table3_ratios": "", "systor11_table1_ratios": ""}
BREAKEVEN_TABLES = {"systor09_table4_breakeven_server": "server",
                    "systor09_table5_breakeven_desktop": "desktop",
                    "systor09_slides_breakeven_server": "server",
                    "systor09_slides_breakeven_desktop": "desktop",
                    "systor09_slides_breakeven_laptop": "laptop"}


def seed_disagreements(reference_dir: ReferenceDir | None = None) -> dict[tuple, str]:
    """The seeds' disagreements by (table, codec, file type, metric), each what the other
    seed says (seed_disagreements.csv; none where the folder has no such file)."""
    path = reference_file(f"{DISAGREEMENTS}.csv", reference_dir)
    if not path.is_file():
        return {}
    _, declared = read_reference(path)
    names = {d[k] for d in declared for k in ("source_table", "other_table")}
    return disagreement_notes(declared, {n: read_reference(
        reference_file(f"{n}.csv", reference_dir))[1] for n in names})


def comparison_table(summary: list[dict], breakeven: list[dict],
                     reference_dir: ReferenceDir | None = None) -> list[dict]:
    """Original numbers beside the reproduced ones, one row per cell of each source table,
    each with its agreement in kind (same_kind) and in magnitude (agreement:
    wattzip.analysis.agreement), and where the seeds disagree on the cell, what the other
    says (seed_disagreement)."""
    disagree = seed_disagreements(reference_dir)
    cr = {(s["testbed"], s["setting"], s["file_type"], s["codec"]): s
          for s in summary if s["op"] == "compress-write"}
    be = {(b["testbed"], b["setting"], b["file_type"], b["codec"], b["metric"]): b
          for b in breakeven}
    places = sorted({(s["testbed"], s["setting"]) for s in summary})

    def ratio_cell(row, mine):
        value = mine["compression_ratio"]
        return {"metric": "CR", "original_value": _ratio_value(row["display"]),
                "reproduced_display": format_ratio(value),
                "reproduced_value": value, "lo": math.nan, "hi": math.nan, "same_kind": "",
                "agreement": ratio_agreement(row["display"], value).text,
                "estimated": False}

    def breakeven_cell(row, mine):
        original = parse_display(row["display"])
        return {"metric": row["metric"], "original_value": original.value,
                "reproduced_display": mine["display"], "reproduced_value": mine["value"],
                "lo": mine["lo"], "hi": mine["hi"],
                # An undecided cell's kind is a point estimate: no agreement to state.
                "same_kind": original.kind == mine["kind"] if mine["decided"] else "",
                # in magnitude too: the original against the reproduced interval
                "agreement": breakeven_agreement(row["display"], mine["kind"], mine["value"],
                                                 mine["lo"], mine["hi"], mine["decided"]).text,
                "estimated": mine["estimated"]}

    out: list[dict] = []
    for tables, lookup, make in ((RATIO_TABLES, lambda t, s, r: cr.get((t, s, r["file_type"],
                                                                      r["codec"])), ratio_cell),
                                 (BREAKEVEN_TABLES, lambda t, s, r: be.get(
                                     (t, s, r["file_type"], r["codec"], r["metric"])),
                                  breakeven_cell)):
        for name, machine in tables.items():
            path = reference_file(f"{name}.csv", reference_dir)
            if not path.is_file():
                continue
            source, rows = read_reference(path)
            for testbed, setting in places:
                for row in rows:
                    mine = lookup(testbed, setting, row)
                    if mine is not None:
                        cell = make(row, mine)
                        out.append({"source_table": name, "source": source, "testbed": testbed,
                                    "setting": setting, "machine": machine,
                                    "file_type": row["file_type"], "codec": row["codec"],
                                    "original_display": row["display"], **cell,
                                    "seed_disagreement": disagree.get(
                                        (name, row["codec"], row["file_type"],
                                         cell["metric"]), "")})
    return out + hpc14_cells(summary, reference_dir)


HPC14_PATTERNS = "hpc14_table2_patterns"  # HPC '14 Table II: a pattern's writes in ZFS
HPC14_CODECS = "hpc14_codecs"  # the study's codec standing for each ZFS algorithm


def hpc14_cells(summary: list[dict], reference_dir: ReferenceDir | None = None) -> list[dict]:
    """HPC '14 Table II's ratios and runtimes / off beside this study's writes of the same
    pattern with the codec that stands for the algorithm (hpc14_codecs.csv): the runtime
    / off with Fieller's interval."""
    paths = [reference_file(f"{n}.csv", reference_dir) for n in (HPC14_PATTERNS, HPC14_CODECS)]
    if not all(p.is_file() for p in paths):
        return []
    source, rows = read_reference(paths[0])
    codec_of = {r["algorithm"]: r["codec"] for r in read_reference(paths[1])[1]}
    writes = {(s["testbed"], s["setting"], s["file_type"], s["codec"]): s for s in summary
              if s["op"] in ("compress-write", "plain-write")}
    out = []
    for (testbed, setting, file_type, codec), mine in sorted(writes.items()):
        for row in rows:
            if (row["pattern"], codec_of.get(row["algorithm"])) != (file_type, codec) \
                    or codec == "plain":
                continue
            base = {"source_table": HPC14_PATTERNS, "source": source, "testbed": testbed,
                    "setting": setting, "machine": "", "file_type": file_type,
                    "codec": codec, "same_kind": "", "estimated": False,
                    "seed_disagreement": ""}
            value = mine.get("elapsed_vs_off", math.nan)
            lo, hi = mine.get("elapsed_vs_off_lo", math.nan), mine.get("elapsed_vs_off_hi",
                                                                        math.nan)
            out.append({**base, "metric": "runtime/off", "original_display": row["runtime_ratio"],
                        "original_value": float(row["runtime_ratio"]),
                        "reproduced_display": f"{float(value):.2f}",
                        "reproduced_value": value, "lo": lo, "hi": hi,
                        "agreement": ratio_to_off_agreement(row["runtime_ratio"], value, lo,
                                                            hi).text})
            ratio = mine["compression_ratio"]
            out.append({**base, "metric": "CR", "original_display": row["ratio"],
                        "original_value": float(row["ratio"]),
                        "reproduced_display": format_ratio(ratio), "reproduced_value": ratio,
                        "lo": math.nan, "hi": math.nan,
                        "agreement": ratio_agreement(row["ratio"], ratio).text})
    return out
