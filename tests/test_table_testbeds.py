"""The testbeds' table (rule table_testbeds, wattzip.report.tex_tables): each codec in the
paper's order, the one order of every table and figure (order_codecs), whatever levels a
study runs."""

from __future__ import annotations

import csv

import pytest

from wattzip.report import tex_tables

from .test_workflow import REPO

pytestmark = pytest.mark.pure


def write_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def run_table(tmp_path, codecs, breakeven):
    """Rule table_testbeds on these break-even rows: the table's text."""
    write_csv(tmp_path / "breakeven.csv", breakeven)
    write_csv(tmp_path / "summary.csv", [{"codec": c, "tool": t, "level": lv}
                                         for c, t, lv in codecs])
    slides = [REPO / "paper" / "reference" / f"systor09_slides_breakeven_{machine}.csv"
              for machine in ("server", "desktop", "laptop")]
    return tex_tables.testbeds({"breakeven": [tmp_path / "breakeven.csv"],
                                "summary": [tmp_path / "summary.csv"],
                                "slides": [str(p) for p in slides]}).text()


def test_levels_are_in_the_papers_order(tmp_path):
    codecs = [("bz-9", "bzip2", 9), ("gz-9", "gzip", 9), ("gz-2", "gzip", 2),
              ("lzo-1", "lzop", 1), ("zstd-3", "zstd", 3), ("gz-10x", "gzip", 10)]
    text = run_table(tmp_path, codecs, [
        {"testbed": "local", "primary": "true", "file_type": "text", "codec": codec,
         "metric": metric, "display_tex": "1.0", "cell_tex": "1.0", "estimated": "false"}
        for codec, _, _ in codecs for metric in ("E", "T")])
    rows = [line.split(" & ")[0] for line in text.splitlines()
            if " & " in line and not line.startswith("Tool")]
    assert rows == ["gz-2", "gz-9", "gz-10x", "lzo-1", "bz-9", "zstd-3"]


def test_a_cell_the_model_decides_has_its_dagger_as_in_the_break_even_tables(tmp_path):
    """The cells as the analysis set them (cell_tex), as the break-even tables print them:
    an estimated cell decided otherwise at the model's other extreme is marked."""
    dagger = r"$^{\dagger}$"
    rows = [{"testbed": "local", "primary": "true", "file_type": "text", "codec": "gz-1",
             "metric": metric, "display_tex": "12", "cell_tex": "12" + mark,
             "estimated": "true"} for metric, mark in (("E", dagger), ("T", ""))]
    text = run_table(tmp_path, [("gz-1", "gzip", 1)], rows)
    assert f"gz-1 & 12{dagger} / 12 & " in text
    assert f"{dagger}: decided otherwise at the coefficient table's other extreme" in text
    assert "local (ESTIMATED)" in text


def test_a_study_without_text_files_says_so_and_a_rehearsal_s_is_simulated(tmp_path):
    """No text file, no row: the table says why, and SIMULATED where the testbeds'
    summaries are a rehearsal's."""
    write_csv(tmp_path / "breakeven.csv", [{"testbed": "local", "primary": "true",
                                            "file_type": "zero", "codec": "gz-1",
                                            "metric": "E", "cell_tex": "1",
                                            "estimated": "false"}])
    write_csv(tmp_path / "summary.csv", [{"codec": "gz-1", "tool": "gzip", "level": "1",
                                          "simulated": "true"}])
    text = tex_tables.testbeds({"breakeven": [tmp_path / "breakeven.csv"],
                                "summary": [tmp_path / "summary.csv"], "slides": []}).text()
    assert text.splitlines()[0].startswith(r"{\color{red!70!black}\bfseries SIMULATED")
    assert "no text file in this study \\\\" in text
