"""Figures, tables and the paper from a committed fixture of analysis tables."""

from __future__ import annotations

import csv
import shutil
import subprocess

import pytest

from .rscript import r_output
from .test_workflow import REPO, SNAKEMAKE, TINY, workflow_copy

FIXTURE = REPO / "tests" / "data" / "fixture" / "results"
STAGES = ["figures_per_file_type", "figures_of_testbed", "figure_levels", "figure_timeline",
          "figure_factor", "figure_bandwidth", "tables_of_testbed", "table_testbeds",
          "appendix", "paper_macros", "paper"]

pytestmark = [pytest.mark.workflow, pytest.mark.pure]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The workflow given only the fixture's tables: it may run the figure and paper rules only."""
    root = workflow_copy(tmp_path_factory.mktemp("paper") / "wf")
    shutil.copytree(FIXTURE, root / "results" / "tiny")
    proc = subprocess.run(
        [*SNAKEMAKE, "results/tiny/paper.pdf", "--cores", "2", "--allowed-rules", *STAGES,
         "--configfile", str(TINY)],
        cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return root


def fixture_rows(name):
    with open(FIXTURE / "tiny" / f"{name}.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_every_figure_is_a_pdf(built):
    figures = sorted((built / "figures" / "tiny" / "tiny").glob("*.pdf"))
    names = {p.stem for p in figures}
    assert {"esav", "ratio", "tradeoff", "timeline", "factor_bandwidth", "bandwidth",
            "pareto_energy", "pareto_time"} <= names
    for kind in ("time", "energy", "et"):
        assert {f"{kind}_text", f"{kind}_random"} <= names
    for path in figures:
        assert path.read_bytes()[:5] == b"%PDF-", path


def test_estimated_energy_is_said_on_the_figures(built):
    for name in ("energy_text", "et_random", "esav", "tradeoff", "pareto_energy"):
        text = subprocess.run(["pdftotext", str(built / "figures/tiny/tiny" / f"{name}.pdf"), "-"],
                              capture_output=True, text=True, check=True).stdout
        assert "ESTIMATED energy" in text, name
    time_text = subprocess.run(["pdftotext", str(built / "figures/tiny/tiny/time_text.pdf"), "-"],
                               capture_output=True, text=True, check=True).stdout
    assert "ESTIMATED" not in time_text  # time is measured, and says nothing else


def test_paper_compiles_without_undefined_references(built):
    log = (built / "results" / "tiny" / "paper-build" / "main.log").read_text(errors="replace")
    assert "undefined" not in log.lower()
    assert "LaTeX Error" not in log
    assert (built / "results" / "tiny" / "paper.pdf").read_bytes()[:5] == b"%PDF-"


def test_paper_holds_the_fixtures_numbers(built):
    pdf = built / "results" / "tiny" / "paper.pdf"
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"],
                          capture_output=True, text=True, check=True).stdout
    runs = fixture_rows("runs")
    assert f"{len(runs)} measured runs in all" in " ".join(text.split())
    overall = [c for c in fixture_rows("correlation") if c["file_type"] == "all"][0]
    assert f"R = {float(overall['r']):.4f}" in text
    gz1 = [s for s in fixture_rows("summary")
           if (s["file_type"], s["codec"], s["op"]) == ("text", "gz-1", "compress-write")][0]
    assert f"{float(gz1['compression_ratio']):.2f}" in text
    assert "ESTIMATED ENERGY" in text  # the first page's banner
    assert "not testable here" in text and "4.16" in text  # a verdict; Table 3's gz-1 text


def test_tables_are_booktabs(built):
    for path in (built / "paper" / "generated" / "tiny").glob("*.tex"):
        if path.stem == "appendix":  # a description list, not a table
            continue
        body = path.read_text()
        assert "\\toprule" in body and "\\bottomrule" in body, path.name


def test_break_even_cells_and_originals_share_one_formatter(built):
    """The tables place display_tex, written by wattzip.latex.display_tex for both."""
    table = (built / "results/tiny/generated/tiny/breakeven_server.tex").read_text()
    mine = next(r for r in fixture_rows("breakeven") if r["primary"] == "true"
                and (r["file_type"], r["codec"], r["metric"]) == ("text", "gz-1", "E"))
    assert mine["display_tex"] in table
    assert "(20.2 / " in table  # SYSTOR '09 Table 4's gz-1 text E, in parentheses


def test_report_html(built):
    proc = subprocess.run(
        [*SNAKEMAKE, "results/tiny/paper.pdf", "--cores", "1", "--allowed-rules", *STAGES,
         "--configfile", str(TINY), "--report", "report.html"],
        cwd=built, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (built / "report.html").stat().st_size > 10_000


def test_no_generated_file_is_committed():
    tracked = subprocess.run(["git", "ls-files", "figures", "paper/generated", "results",
                              "rehearsal"],
                             cwd=REPO, capture_output=True, text=True, check=False).stdout
    assert [f for f in tracked.split() if not f.endswith(".gitkeep")] == []


def test_results_of_another_machine_are_picked_up(tmp_path):
    """A laptop's runs.csv and settings.csv copied into results/tiny/laptop/ join the analysis
    and comparisons."""
    root = workflow_copy(tmp_path / "wf")
    shutil.copytree(FIXTURE, root / "results" / "tiny")
    (root / "results" / "tiny" / "laptop").mkdir()
    rows = fixture_rows("runs")
    with open(root / "results" / "tiny" / "laptop" / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows({**r, "testbed": "laptop"} for r in rows)
    shutil.copy(FIXTURE / "tiny" / "settings.csv", root / "results" / "tiny" / "laptop")
    proc = subprocess.run(
        [*SNAKEMAKE, "figures/tiny/testbeds.pdf", "results/tiny/generated/testbeds.tex",
         "figures/tiny/laptop/energy_text.pdf", "--cores", "2", "--allowed-rules", "analyze",
         "figure_testbeds", "table_testbeds",
         "figures_per_file_type",
         "--configfile", str(TINY)],
        cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = (root / "results" / "tiny" / "generated" / "testbeds.tex").read_text()
    header = [line for line in table.splitlines() if line.startswith("Tool")][0]
    assert "tiny" in header and "laptop" in header and "paper server" in header
    assert (root / "results" / "tiny" / "laptop" / "breakeven.csv").exists()
    assert (root / "figures" / "tiny" / "testbeds.pdf").read_bytes()[:5] == b"%PDF-"


def test_the_appendix_decides_claims_with_the_analysis_options(built):
    """Its command to decide a claim again carries the study's options (the paper design:
    no looks), so that a reader's rerun decides as claims.csv did."""
    appendix = next((built / "results").rglob("appendix.md")).read_text()
    assert ("--margin 0.02 --reads-per-write 1 --looks 0 --ci-target 0.05 "
            "--watch elapsed,energy,ET --effect 0.05 --claim") in appendix


def test_tables_are_read_as_what_they_say_whatever_their_values(tmp_path):
    """What fread guessed from values: a meter identity's hash of ten decimal digits
    (about 1 in 100) as an integer64 beside another testbed's text (fig_testbeds.R's
    rbindlist failed); a bandwidth of 3 GB/s as an integer64 printed as 1.5e-320 MB/s
    without bit64; a testbed named 01 as the number 1; a break-even table whose every cell
    is "at least n" as numbers (2.0 drawn as 2); a column empty on every row as logical."""
    paths = []
    for name, meter_id, bandwidth in (("01", "9876543210", "3000000000"),
                                      ("b", "b22b2ae683", "")):
        paths.append(tmp_path / f"{name}.csv")
        paths[-1].write_text("testbed,tool,meter_id,bandwidth_bytes_per_s,display,note\n"
                             f"{name},gzip,{meter_id},{bandwidth},2.0,\n")
    out = r_output(tmp_path, "theme.R",
                   f'dt <- rbindlist(lapply(c("{paths[0]}", "{paths[1]}"), read_summary))\n'
                   'cat(dt$testbed, dt$meter_id, dt$display, dt$note == "", sep = "\\n")\n'
                   'cat(factor_label(dt, "bandwidth"), sep = "\\n")\n')
    assert out.splitlines() == ["01", "b", "9876543210", "b22b2ae683", "2.0", "2.0", "TRUE",
                                "TRUE", "3000 MB/s", "unlimited"]
