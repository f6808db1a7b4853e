"""The cells beside the originals (wattzip.report.comparison_cells): composed once, so
that the tables (wattzip.report.tex_tables) place them and decide nothing."""

from __future__ import annotations

import re

import pytest

from wattzip.report import comparison_cells as cells
from wattzip.report import legends

from .test_workflow import REPO

pytestmark = pytest.mark.pure

DAGGER = r"$^{\dagger}$"


def summary_row(codec, tool, level, file_type="text", op="compress-write", n="3", ratio="4.00"):
    return {"codec": codec, "tool": tool, "level": level, "file_type": file_type, "op": op,
            "n": n, "compression_ratio_tex": ratio, "compression_ratio": ratio,
            "simulated": "false"}


def breakeven_row(codec, metric, cell, testbed="local", file_type="text", estimated="false",
                  value=None, lo="nan", hi="nan"):
    return {"testbed": testbed, "primary": "true", "file_type": file_type, "codec": codec,
            "metric": metric, "cell_tex": cell, "estimated": estimated,
            "kind": "at_least", "value": cell.split("$")[0] if value is None else value,
            "lo": lo, "hi": hi, "decided": "true",
            "levels_tex": "each at 97.5\\%", "simulated": "false"}


def test_a_cell_stands_alone_where_the_original_has_none():
    assert cells.beside_original("4.00", None) == "4.00"
    assert cells.beside_original("4.00", "4.1") == r"4.00 {\scriptsize(4.1)}"


def test_a_metric_without_a_cell_is_marked_not_printed_as_na():
    assert cells.metric_pair({"E": "12", "T": "3.4"}, ["E", "T"]) == "12 / 3.4"
    assert cells.metric_pair({"T": "3.4"}, ["E", "T"]) == "-- / 3.4"


def test_the_ratios_are_beside_the_first_original_that_has_them():
    """Table 3 first, then SYSTOR '11 Table 1; a codec of neither stands alone; a write not
    run (n = 0) and a read have no ratio cell."""
    summary = [summary_row("gz-1", "gzip", "1"), summary_row("zstd-3", "zstd", "3"),
               summary_row("gz-9", "gzip", "9", n="0"),
               summary_row("gz-1", "gzip", "1", op="decompress-read")]
    table3 = [{"codec": "gz-1", "file_type": "text", "display_tex": "3.9", "display": "3.9"}]
    table1 = [{"codec": "gz-1", "file_type": "text", "display_tex": "9.9", "display": "9.9"}]
    out = {r["codec"]: r["cell"] for r in cells.ratio_rows(summary, [table3, table1])}
    assert out == {"gz-1": r"4.00$^{\uparrow1.0}$ {\scriptsize(3.9)}", "zstd-3": "4.00"}


def test_a_breakeven_pair_keeps_the_analysis_cell_and_its_dagger():
    """The pair in the order the table names its metrics, our cell_tex as the analysis set
    it (its dagger kept), the original's pair beside it; the note's flag is the table's."""
    breakeven = [breakeven_row("gz-1", "ET", "7.0"), breakeven_row("gz-1", "E", "12" + DAGGER,
                                                                   estimated="true"),
                 breakeven_row("gz-1", "T", "99")]
    original = [{"codec": "gz-1", "file_type": "text", "metric": m, "display_tex": v,
                 "display": v} for m, v in (("E", "20.2"), ("ET", "18.3"))]
    summary = [summary_row("plain", "cat", ""), summary_row("gz-1", "gzip", "1")]
    (row,) = cells.breakeven_rows(breakeven, summary, original, ["E", "ET"])
    assert row["cell"] == (rf"12{DAGGER}$^{{\downarrow1.7}}$ / 7.0$^{{\downarrow2.6}}$ "
                           r"{\scriptsize(20.2 / 18.3)}")
    assert (row["tool"], row["level"]) == ("gzip", "1")
    note = cells.breakeven_note(breakeven, ["E", "ET"], "SYSTOR '09 Table 4, server")
    assert note.startswith(r"$n_{be}$ for E / ET on this testbed; the original (SYSTOR '09 "
                           "Table 4, server) in parentheses.")
    assert note.endswith(f"{legends.ESTIMATED} {legends.MODEL_DEPENDENT}")
    assert legends.MODEL_DEPENDENT.startswith(DAGGER)  # the mark cell_tex sets, explained


def test_a_note_without_estimated_energy_has_no_dagger_legend():
    breakeven = [breakeven_row("gz-1", "E", "12"), breakeven_row("gz-1", "ET", "7.0")]
    note = cells.breakeven_note(breakeven, ["E", "ET"], "x")
    assert "ESTIMATED" not in note and DAGGER not in note
    assert note.endswith(r"saving per read (each at 97.5\%) cannot decide the kind.")


def test_the_testbeds_columns_are_labelled_and_the_slides_come_last(tmp_path):
    """A testbed whose energy is estimated says so in its label; the slides' machines
    follow the testbeds; a codec no testbed ran has no row, a slides' codec either."""
    breakevens = [[breakeven_row("gz-1", m, c, testbed="b", estimated=e)
                   for m, c, e in (("E", "1", "true"), ("T", "2", "false"))],
                  [breakeven_row("gz-1", m, c, testbed="a") for m, c in (("E", "3"), ("T", "4"))]
                  + [breakeven_row("gz-1", "E", "5", testbed="a", file_type="zero")]]
    summaries = [[summary_row("gz-1", "gzip", "1")]]
    slides = {str(tmp_path / "systor09_slides_breakeven_server.csv"): [
        {"codec": codec, "file_type": "text", "metric": m, "display_tex": v}
        for codec in ("gz-1", "bz-1") for m, v in (("E", "20"), ("T", "21"))]}
    out = cells.testbed_rows(breakevens, summaries, slides)
    assert [(r["testbed"], r["cell"]) for r in out] == [
        ("a", "3 / 4"), ("b (ESTIMATED)", "1 / 2"), ("paper server", "20 / 21")]
    assert {(r["codec"], r["tool"]) for r in out} == {("gz-1", "gzip")}
    assert {r["note"] for r in out} == {
        f"{cells.TESTBED_NOTE} {legends.ESTIMATED} {legends.MODEL_DEPENDENT}"}


def test_the_tables_compose_no_cell():
    """The tables place the composed cells and notes: none pastes a pair or an original's
    value, or types a mark's legend."""
    lines = (REPO / "wattzip" / "report" / "tex_tables.py").read_text().splitlines()
    code = "\n".join(line for line in lines if not line.lstrip().startswith("#"))
    assert not re.search(r'join\(.*" / "|scriptsize\(|display_tex|cell_tex|dagger|ast\}|'
                         r"ESTIMATED\}|forall", code)


def test_the_seeds_disagreements_are_set_beside_the_cells_they_touch():
    """Table 4 gives lzo-3 on binary an E break-even of 2.0, the talk's slide 28 2.1: the
    original's cell is marked, and the note says what the other seed gives, both values
    read from their tables (seed_disagreements.csv)."""
    from wattzip.analysis.comparison import seed_disagreements
    from wattzip.analysis.reference import read_with_tex
    from wattzip.report.tex_tables import disagreements

    reference = REPO / "paper" / "reference"
    inputs = {p.stem: p for p in reference.glob("*.csv")}
    disagree = disagreements(inputs, "systor09_table4_breakeven_server")
    assert list(disagree) == [("lzo-3", "binary", "E")]
    assert disagree[("lzo-3", "binary", "E")].endswith("(the talk's slide 28: 2.1)")
    rows = cells.breakeven_rows(
        [breakeven_row("lzo-3", m, c, file_type="binary") for m, c in (("E", "2.2"),
                                                                         ("ET", "4.4"))],
        [summary_row("lzo-3", "lzop", "3", file_type="binary")],
        read_with_tex(inputs["systor09_table4_breakeven_server"]), ["E", "ET"], disagree)
    assert rows[0]["cell"].endswith(rf"({'2.0' + legends.SEED_DISAGREEMENT_TEX} / 4.3)}}")
    note = cells.breakeven_note([breakeven_row("lzo-3", "E", "2.2", file_type="binary")],
                                ["E", "ET"], "Table 4", rows)
    assert legends.SEED_DISAGREEMENT_TEX in note and "slide 28: 2.1" in note
    # every table both directions name, and comparison.csv's column from the same rows
    both = seed_disagreements(reference)
    assert both[("systor09_slides_breakeven_desktop", "gz-9", "text", "E")].endswith(
        "(the paper's Table 5: 78.6)")
    assert ("systor09_table3_ratios", "lzo-1", "text", "CR") in both


def test_a_disagreement_naming_no_cell_is_an_error_of_the_data():
    from wattzip.analysis.reference import disagreement_notes
    from wattzip.errors import RecordError

    declared = [{"source_table": "a", "codec": "gz-1", "file_type": "text", "metric": "E",
                 "other_table": "a", "other_codec": "gz-9", "other_label": "x", "why": "y"}]
    with pytest.raises(RecordError, match="no cell gz-1 / gz-9 text E"):
        disagreement_notes(declared, {"a": [{"codec": "gz-1", "file_type": "text",
                                             "metric": "E", "display": "1"}]})
