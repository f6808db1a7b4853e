"""Every confidence level the report states, computed from the analysis options."""

from __future__ import annotations

import csv
import re

import pytest

from wattzip.analysis import run_tables, uncertainty
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.errors import RecordError
from wattzip.model import repeat_design
from wattzip.model.study import Study
from wattzip.report import legends, macros, passages, tex_tables
from wattzip.report.tables import ReportTables

from .test_report import PARAMS, PRIMARY, TINY, inputs
from .test_workflow import REPO

pytestmark = pytest.mark.pure

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


def breakeven_table(paths) -> str:
    """Table 4 as rule tables_of_testbed makes it from these tables."""
    references = {p.stem: p for p in (REPO / "paper" / "reference").glob("*.csv")}
    return tex_tables.breakeven({**paths, **references}, "server").text()


@pytest.mark.parametrize(("design", "looks"), [("paper", 0), ("verdict", 3)])
def test_the_breakeven_tables_note_places_the_analysis_levels(tmp_path, design, looks):
    paths = tables_of(tmp_path, looks)
    text = breakeven_table(paths)
    assert f"per read ({LEVELS[design]}) cannot decide" in text
    assert r"the \BeIntervals{} intervals of the extra write cost" in text
    assert "Welch" not in text and "Student" not in text
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
    assert text.count(r"\HalfWidthConfidencePct{} half-widths") == 5  # 2 factors, T, E, ET
    assert not re.search(r"\d\\%", text)
    tables = ReportTables.load(inputs(), PRIMARY)
    values = macros.macro_values(tables, PARAMS)
    assert values["HalfWidthConfidencePct"] == r"95\%"
    # the energy budget's sentence: its expanded interval's level, by the same macro
    budget = uncertainty.describe_dominant([{"dominant_energy_j": "repeat"}])
    assert r"\HalfWidthConfidencePct{} expanded interval" in budget
    assert not re.search(r"\d\\%", budget)


@pytest.mark.parametrize(("overlays", "intervals"), [
    ([], "Welch-$t$"), (["config/paper.yaml", "config/paper-moderated.yaml"], "moderated-$t$")])
def test_the_tables_and_the_text_name_the_design_s_intervals(overlays, intervals):
    """The break-even tables' note names the intervals by the text's macro (\\BeIntervals):
    under the moderated design it said Welch's, which that design does not use."""
    study = Study.from_files([REPO / "config.yaml", *(REPO / o for o in overlays)])
    assert repeat_design.intervals(study)["be_intervals"] == intervals
    assert r"the \BeIntervals{} intervals" in legends.breakeven_marks("")
