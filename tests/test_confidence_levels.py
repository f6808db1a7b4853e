"""Every confidence level the report states, computed from the analysis options."""

from __future__ import annotations

import csv
import re
import subprocess

import pytest

from wattzip.analysis import run_tables, uncertainty
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.reference import write_with_tex
from wattzip.errors import RecordError
from wattzip.report import macros, passages
from wattzip.report.tables import ReportTables

from .test_report import PARAMS, PRIMARY, TINY, inputs
from .test_workflow import REPO

PAPER = {**PARAMS["repeats"], "design": "paper"}
VERDICT = {**PARAMS["repeats"], "design": "verdict", "looks": [3, 5, 8]}
LEVELS = {"paper": r"each at 97.5\%, so both hold together at 95\%",
          "verdict": r"each at 99.17\%, so both hold together at 98.33\%, alpha / 3 at each "
                     r"of the 3 planned looks: 95\% over all"}


def tables_of(tmp_path, looks):
    """The fixture's tables with the break-even table decided at `looks` looks."""
    paths = inputs()
    run_tables.analyze([str(TINY / "runs.csv")], tmp_path, options=AnalysisOptions(looks=looks),
                     settings_path=TINY / "settings.csv")
    paths["breakeven"] = tmp_path / "breakeven.csv"
    return paths


@pytest.mark.parametrize(("design", "repeats", "looks"), [("paper", PAPER, 0),
                                                          ("verdict", VERDICT, 3)])
def test_the_text_states_the_levels_of_its_design(tmp_path, design, repeats, looks):
    tables = ReportTables.load(tables_of(tmp_path, looks), PRIMARY)
    values = macros.macro_values(tables, {**PARAMS, "repeats": repeats})
    assert values["BeLevels"] == LEVELS[design]
    assert values["ConfidencePct"] == r"95\%"
    assert values["BeJointConfidencePct"] == (r"95\%" if looks == 0 else r"98.33\%")
    main = (REPO / "paper" / "main.tex").read_text()
    assert r"(\BeLevels)" in main and "97.5" not in main and r"95\%" not in main


def test_a_table_decided_at_other_levels_is_refused(tmp_path):
    tables = ReportTables.load(tables_of(tmp_path, 0), PRIMARY)
    with pytest.raises(RecordError, match="other levels"):
        macros.macro_values(tables, {**PARAMS, "repeats": VERDICT})


MOCK = """setClass("Snakemake", representation(input = "list", output = "list",
  params = "list", log = "list", wildcards = "list"))
snakemake <- new("Snakemake", input = list(breakeven = "{be}", reference = "{ref}",
  summary = "{summary}"), output = list("{out}"), params = list(metrics = c("E", "ET"),
  original = "SYSTOR '09 Table 4"), log = list("{log}"), wildcards = list())
source("scripts/table_breakeven.R")
"""


@pytest.mark.parametrize(("design", "looks"), [("paper", 0), ("verdict", 3)])
def test_the_breakeven_tables_note_places_the_analysis_levels(tmp_path, design, looks):
    paths = tables_of(tmp_path, looks)
    ref = tmp_path / "table4.csv"
    write_with_tex("paper/reference/systor09_table4_breakeven_server.csv", ref)
    out = tmp_path / "breakeven_server.tex"
    script = tmp_path / "t.R"
    script.write_text(MOCK.format(be=paths["breakeven"], ref=ref, summary=paths["summary"],
                                  out=out, log=tmp_path / "r.log"))
    subprocess.run(["Rscript", str(script)], cwd=REPO, check=True, capture_output=True)
    text = out.read_text()
    assert f"per read ({LEVELS[design]}) cannot decide" in text
    with open(paths["breakeven"], newline="", encoding="utf-8") as f:
        assert {r["levels_tex"] for r in csv.DictReader(f)} == {LEVELS[design]}


def test_the_captions_name_their_levels_by_macro_not_by_hand():
    """The bandwidth figure's grey cells are undecided at the break-even table's level
    (98.33% under three looks), its error bars at the summary's: no caption types one."""
    params = {"varied_factors": ["bandwidth", "governor"],
              "factor_values": {"bandwidth": ["unlimited", "70MB/s"],
                                "governor": ["ondemand", "performance"]},
              "emulated_input_layouts": ["on-medium"], "hpc14": False}
    text = passages.factor_sections([], params, estimated=False) + passages.figure_list(
        ["text"], estimated=False)
    assert r"undecided at \BeJointConfidencePct{}" in text
    assert text.count(r"\HalfWidthConfidencePct{} half-widths") == 3  # 2 factors, 1 time
    assert not re.search(r"\d\\%", text)
    tables = ReportTables.load(inputs(), PRIMARY)
    values = macros.macro_values(tables, PARAMS)
    assert values["HalfWidthConfidencePct"] == r"95\%"
    # the energy budget's sentence: its expanded interval's level, by the same macro
    budget = uncertainty.describe_dominant([{"dominant_energy_j": "repeat"}])
    assert r"\HalfWidthConfidencePct{} expanded interval" in budget
    assert not re.search(r"\d\\%", budget)
