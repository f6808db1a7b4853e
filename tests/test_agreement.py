"""Magnitudes compared cell by cell (wattzip.analysis.agreement): a reproduced cell agrees
with the original's when the original lies in its interval (or, without one, within the
original's own rounding), and otherwise says how far, in comparison.csv and in the
report's tables alike."""

from __future__ import annotations

import csv
import math

import pytest

from wattzip import records
from wattzip.analysis import agreement, run_tables
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.report import tex_tables

from .test_analysis import REFERENCE, cell, dedupe_plain

pytestmark = pytest.mark.pure


@pytest.mark.parametrize(("original", "kind", "value", "lo", "hi", "decided", "expected"), [
    ("20.2", "at_least", 20.0, 15.0, 28.0, True, "agrees"),
    ("19.7", "at_least", 3.0, 2.9, 3.1, True, "same kind, other magnitude (x6.6 lower)"),
    ("~10^2", "at_least", 350.0, 300.0, 400.0, True, "agrees"),
    ("~10^2", "at_least", 2500.0, 2000.0, 3000.0, True,
     "same kind, other magnitude (x2.5 higher)"),
    ("∀", "always", math.nan, math.nan, math.nan, True, "agrees"),
    ("×", "at_least", 3.0, 2.0, 4.0, True, "other kind"),
    ("20.2", "at_least", 20.2, 0.0, math.inf, False, "undecided"),
    ("20.2", "at_least", 20.21, math.nan, math.nan, True, "agrees"),  # its rounding
    ("20.2", "at_least", 20.3, math.nan, math.nan, True,
     "same kind, other magnitude (x1.005 higher)"),
])
def test_a_breakeven_cell_against_the_original(original, kind, value, lo, hi, decided,
                                                expected):
    got = agreement.breakeven_agreement(original, kind, value, lo, hi, decided)
    assert got.text == expected


def test_a_ratio_agrees_only_within_the_originals_rounding():
    assert agreement.ratio_agreement("4.16", 4.164).agreement == agreement.AGREES
    assert agreement.ratio_agreement("4.16", 4.8).text.endswith("(x1.2 higher)")
    assert agreement.ratio_agreement("~10^3", 1030.0).agreement == agreement.AGREES
    assert agreement.ratio_agreement("1.17", 0.9).agreement == agreement.OTHER_KIND


def test_the_count_names_magnitude_and_kind():
    cells = [agreement.Agreement(agreement.AGREES),
             agreement.Agreement(agreement.OTHER_MAGNITUDE, 0.2),
             agreement.Agreement(agreement.OTHER_KIND)]
    assert agreement.count_text(cells) == "1 of 3 cells agree in magnitude, 2 in kind"


def test_a_cell_inside_the_original_and_one_far_from_it_differ_in_csv_and_table(tmp_path):
    """gz-1 on text pays back at 20.2 reads per write (Table 4: 20.2), gz-6 at 3.0 (Table 4:
    19.7): the same kind both, but only gz-1 agrees in magnitude, in comparison.csv and in
    Table 4's .tex."""
    rows = dedupe_plain(cell("text", "gz-1", 100_000, 102_020, 50_000, 49_900, n=4, spread=3)
                        + cell("text", "gz-6", 100_000, 100_300, 50_000, 49_900, n=4,
                               spread=3))
    records.write_runs_csv(rows, tmp_path / "runs.csv")
    out = tmp_path / "tables"
    run_tables.analyze([str(tmp_path / "runs.csv")], out, REFERENCE, options=AnalysisOptions())
    with open(out / "comparison.csv", newline="", encoding="utf-8") as f:
        comp = {(r["codec"], r["metric"]): r for r in csv.DictReader(f)
                if r["source_table"] == "systor09_table4_breakeven_server"
                and r["file_type"] == "text"}
    assert comp[("gz-1", "E")]["agreement"] == "agrees"
    assert comp[("gz-6", "E")]["agreement"] == "same kind, other magnitude (x6.6 lower)"
    assert comp[("gz-1", "E")]["same_kind"] == comp[("gz-6", "E")]["same_kind"] == "true"
    tex = tex_tables.breakeven({"breakeven": out / "breakeven.csv",
                                "summary": out / "summary.csv",
                                **{p.stem: p for p in REFERENCE.glob("*.csv")}},
                               "server").text()
    gz1 = next(line for line in tex.splitlines() if line.startswith("gz-1 &"))
    gz6 = next(line for line in tex.splitlines() if line.startswith("gz-6 &"))
    assert r"20.2$^{=}$" in gz1
    assert r"3.0$^{\downarrow6.6}$" in gz6
    assert agreement.LEGEND_TEX in tex
    assert "Here 1 of 4 cells agree in magnitude, 4 in kind" in tex


def test_hpc14_ratios_to_off_are_set_beside_table_2_with_their_agreement():
    """btrfs-zlib-1 stands for ZFS gzip-1 (hpc14_codecs.csv): on repeated bytes Table II
    gives a runtime / off of 1.24; an interval holding it agrees, one far below it is the
    same kind (slower than off) at another magnitude, and one holding 1 is undecided."""
    from wattzip.analysis.comparison import hpc14_cells

    def row(value, lo, hi, file_type="repeated"):
        return {"testbed": "tb", "setting": "s", "file_type": file_type,
                "codec": "btrfs-zlib-1", "op": "compress-write", "elapsed_vs_off": value,
                "elapsed_vs_off_lo": lo, "elapsed_vs_off_hi": hi, "compression_ratio": 120.0}

    def runtime(summary_row):
        (cell,) = [c for c in hpc14_cells([summary_row], REFERENCE)
                   if c["metric"] == "runtime/off"]
        return cell["agreement"]

    assert runtime(row(1.2, 1.1, 1.3)) == "agrees"
    assert runtime(row(1.05, 1.02, 1.08)).startswith("same kind, other magnitude (x1.")
    assert runtime(row(1.05, 0.95, 1.08)) == "undecided"
    assert runtime(row(0.8, 0.75, 0.85)) == "other kind"
    ratio = [c for c in hpc14_cells([row(1.2, 1.1, 1.3)], REFERENCE) if c["metric"] == "CR"]
    assert ratio[0]["original_display"] == "126.96"
    assert ratio[0]["agreement"].startswith("same kind, other magnitude")


def test_an_original_of_1_00_is_of_either_kind():
    """Random data: HPC '14's and SYSTOR '09's "1.00" stands for 0.995 to 1.005."""
    assert agreement.ratio_agreement("1.00", 0.9995).agreement == agreement.AGREES
    assert agreement.ratio_agreement("1.00", 0.95).agreement == agreement.OTHER_MAGNITUDE
    assert agreement.ratio_agreement("0.95", 1.2).agreement == agreement.OTHER_KIND
