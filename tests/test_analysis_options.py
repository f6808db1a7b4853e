"""One options object for every decision of the analysis, the model-robustness dagger's too."""

from __future__ import annotations

import csv
import re

import pytest

from wattzip.analysis import robustness, run_tables
from wattzip.analysis.analysis_options import AnalysisOptions, percent
from wattzip.meters.coefficients import extremes
from wattzip.records import write_table

from .test_analysis import run
from .test_confidence_levels import breakeven_table, tables_of

pytestmark = pytest.mark.pure

# (elapsed s, CPU-seconds) of each operation: the compressed write costs time and CPU,
# the decompressed read saves both, at either extreme of the coefficient table.
OPS = {"plain-write": (1.0, 0.1), "plain-read": (1.0, 0.1),
       "compress-write": (2.0, 2.0), "decompress-read": (0.5, 0.05)}


def estimated_runs(repeats=3, spread=0.01, ops=OPS):
    """Runs estimated by the CPU-utilization model (as the model meter writes them) at the
    table's lowest idle share."""
    low, _ = extremes(4)
    rows = []
    for i in range(repeats):
        for op, (t, cpu) in ops.items():
            t, cpu = t * (1 + spread * (i - 1)), cpu * (1 + spread * (i - 1))
            codec = "plain" if op.startswith("plain") else "gz-1"
            r = run("text", codec, op, low.energy_j(t, cpu), elapsed_s=t, repeat=i + 1,
                    method="estimated")
            rows.append({**r, "cpu_busy_s": cpu, "model_threads": 4})
    return rows


def marks(rows, options):
    settings = run_tables.settings_of_runs(rows)
    be = run_tables.label(run_tables.breakeven_table(rows, options), settings)
    run_tables._mark_model_robustness(rows, settings, be, [], "paper/reference", options)
    return {b["metric"]: b for b in be}


def test_a_cell_decided_alike_at_both_extremes_is_robust():
    """n_be of E moves with the idle share (2 at an idle-heavy machine, ~38 at a busy one)
    but the cell is "from n_be on", decided, and saves at both: the old dagger compared the
    displayed number and marked it "depends on the model"."""
    rows = estimated_runs()
    variants = [run_tables.breakeven_table(v, AnalysisOptions())
                for _, v in robustness.at_extremes(rows)]
    e = [next(b for b in v if b["metric"] == "E") for v in variants]
    assert {x["kind"] for x in e} == {"at_least"} and all(x["decided"] for x in e)
    assert e[0]["display"] != e[1]["display"]  # what the old code compared
    cell = marks(rows, AnalysisOptions())["E"]
    assert cell["model_robustness"] == robustness.ROBUST
    assert marks(rows, AnalysisOptions())["T"]["model_robustness"] == ""  # not estimated


def test_a_cell_undecided_at_the_studys_confidence_is_compared_at_it():
    """Under the verdict design (3 looks) the cell is "never, undecided" (×?) at both
    extremes. The old code re-decided the extremes at the paper design's levels, where the
    very coefficients the runs were estimated with give a decided ×, and marked the cell
    "depends on the model"."""
    rows = estimated_runs(spread=0.05, ops={**OPS, "decompress-read": (0.95, 0.3)})
    options = AnalysisOptions(looks=3)
    at_paper_levels = [next(b for b in run_tables.breakeven_table(v, AnalysisOptions())
                            if b["metric"] == "E") for _, v in robustness.at_extremes(rows)]
    assert [b["display"] for b in at_paper_levels] == ["×", "×?"]  # what the old code had
    cell = marks(rows, options)["E"]
    assert cell["display"] == "×?" and cell["model_robustness"] == robustness.ROBUST


def test_the_extremes_are_decided_with_the_studys_options(monkeypatch):
    """Margin, workload, looks and confidence reach every re-decision (the old code used
    the defaults: under the verdict design it compared cells at different confidence)."""
    seen = []
    table = run_tables.breakeven_table

    def spy(rows, options):
        seen.append(options)
        return table(rows, options)

    monkeypatch.setattr(run_tables, "breakeven_table", spy)
    options = AnalysisOptions(margin=0.3, reads_per_write=4.0, looks=3, ci_target=0.1)
    cells = marks(estimated_runs(), options)
    assert seen == [options] * 3
    assert cells["E"]["margin"] == 0.3 and cells["E"]["reads_per_write"] == 4.0


def test_no_entry_point_decides_without_the_options():
    """No fallback options: a caller that forgets the study's fails, never decides by others."""
    from wattzip.analysis import cell_summary, claims
    from wattzip.analysis.stopping import VerdictLooks

    rows = estimated_runs()
    for call in (lambda: run_tables.breakeven_table(rows), lambda: run_tables.esav_table(rows),
                 lambda: cell_summary.summarize(rows),
                 lambda: claims.decide([], [], [], rows, "paper/reference"),
                 lambda: run_tables.analyze([], "out"), lambda: VerdictLooks((3, 5, 8))):
        with pytest.raises(TypeError, match="options"):
            call()
    with pytest.raises(ValueError, match="planned looks"):  # options of another design
        VerdictLooks((3, 5, 8), AnalysisOptions())


def test_the_dagger_compares_kind_decided_and_verdict():
    row = {"testbed": "t", "setting": "s", "file_type": "text", "codec": "gz-1",
           "metric": "E", "estimated": True, "kind": "at_least", "decided": True,
           "verdict": "saves", "display": "3.0"}
    moved = [{**row, "display": "30.0"}]
    robustness.mark_breakeven(rows := [dict(row)], [moved])
    assert rows[0]["model_robustness"] == robustness.ROBUST
    for field, other in (("kind", "never"), ("decided", False), ("verdict", "undecided")):
        robustness.mark_breakeven(rows := [dict(row)], [[{**row, field: other}]])
        assert rows[0]["model_robustness"] == robustness.DEPENDS, field


def test_the_tables_print_the_dagger_the_analysis_set():
    """breakeven.csv's cell_tex: the display's LaTeX, daggered where the cell depends on
    the model, which the break-even tables print as it is (R compared a typed string)."""
    cell = {"display_tex": r"$\le$\,3.0"}
    assert robustness.cell_tex({**cell, "model_robustness": robustness.DEPENDS}) == \
        r"$\le$\,3.0$^{\dagger}$"
    for mark in (robustness.ROBUST, ""):
        assert robustness.cell_tex({**cell, "model_robustness": mark}) == cell["display_tex"]
    assert robustness.cell_tex(cell) == cell["display_tex"]  # no estimated run in the study


@pytest.mark.parametrize(("looks", "each", "joint"), [(0, "97.5", "95"), (3, "99.17", "98.33"),
                                                      (5, "99.5", "99")])
def test_levels_under_both_designs(looks, each, joint):
    o = AnalysisOptions(looks=looks)
    assert percent(o.difference_confidence) == each and percent(o.look_confidence) == joint


def test_options_of_a_study_config():
    repeats = {"design": "verdict", "looks": [3, 5, 8], "ci_target": 0.05}
    o = AnalysisOptions.of_study(repeats, {"margin": 0.05, "reads_per_write": 2})
    assert (o.looks, o.margin, o.reads_per_write) == (3, 0.05, 2.0)
    assert AnalysisOptions.of_study({**repeats, "design": "paper"}).looks == 0


def test_the_commands_flags_decide_as_the_options():
    """`wattzip claims` (the appendix's check) decides with the analysis's own options."""
    from wattzip import cli
    from wattzip.cli import commands

    options = AnalysisOptions(margin=0.05, reads_per_write=2.0, looks=3, ci_target=0.1)
    for command in ("claims", "analyze"):
        argv = [command, "runs.csv", *options.flags().split()]
        argv += ["--out", "x"] if command == "analyze" else []
        assert commands._analysis_options(cli.build_parser().parse_args(argv)) == options


def test_table_breakeven_prints_the_cells_as_the_analysis_set_them(tmp_path):
    """A cell the analysis daggered (cell_tex) is printed with its dagger: the R decides
    nothing from model_robustness (here left as the fixture has it)."""
    paths = tables_of(tmp_path, 0)
    with open(paths["breakeven"], newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    marked = next(r for r in rows if r["primary"] == "true" and r["metric"] == "E")
    marked["cell_tex"] = robustness.cell_tex({**marked,
                                              "model_robustness": robustness.DEPENDS})
    write_table(rows, paths["breakeven"])
    text = breakeven_table(paths)
    # the cell as the analysis set it, then its agreement with the original's mark
    assert re.search(re.escape(marked["cell_tex"]) + r"(\$\^\{[^$]*\}\$)? / ", text)
    assert marked["cell_tex"].endswith(robustness.MODEL_DEPENDENT_TEX)
