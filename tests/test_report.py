"""The paper's generated text from the committed fixture's tables, without LaTeX."""

from __future__ import annotations

import csv
import dataclasses
import json

import pytest

from wattzip import records, report
from wattzip.analysis.reference import read_with_tex
from wattzip.errors import RecordError
from wattzip.latex import display_tex
from wattzip.model.layout import BREAKEVEN_ORIGINALS
from wattzip.report import macros, passages
from wattzip.report.tables import ReportTables
from wattzip.run_record import count_failed

from .test_figures import FIXTURE
from .test_workflow import REPO

pytestmark = pytest.mark.pure

TINY = FIXTURE / "tiny"
PRIMARY = "ext2.io-mq-deadline.gov-keep.x1"
OTHER = "ext2.io-mq-deadline.gov-keep.x1.bw-50MBps"


def inputs(idle_setting=PRIMARY):
    paths = {name: TINY / f"{name}.csv"
             for name in ("summary", "breakeven", "correlation", "claims", "runs",
                          "model_check", "crosscheck")}
    paths.update(provenance=TINY / "provenance.json", manifest=TINY / "manifest.json",
                 idle=TINY / "idle" / f"{idle_setting}.json",
                 estimate=TINY / "plan" / "estimate.json",
                 table3="paper/reference/systor09_table3_ratios.csv",
                 breakeven_originals=[f"paper/reference/{reference}.csv" for reference, _, _
                                      in BREAKEVEN_ORIGINALS.values()],
                 original_design="paper/reference/systor09_design.csv",
                 summaries=[TINY / "summary.csv"])
    return paths


PARAMS = {"testbed": "tiny", "primary": PRIMARY, "primary_rule": "the first of the config",
          "file_size": "2MiB", "file_types": ["text", "random"], "codecs": ["gz-1", "lzo-1"],
          "repeats": {"min": 2, "max": 2, "ci_target": 0.05},
          "repeat_design": "the paper's rule: at least 2 and at most 2 runs per operation",
          "drift_check": "No drift check: the machine's drift over a job was not measured "
                         "(drift.repeats 0).",
          "be_intervals": "Welch-$t$", "ci_target_role": "",
          "varied_factors": ["bandwidth"],
          "factor_values": {"bandwidth": ["unthrottled", "50MBps"]}, "hpc14": False,
          "emulated_input_layouts": ["on-medium"],
          "testbeds": ["tiny"], "descriptions": {"tiny": "a test box"},
          "stage": "results", "study": "tiny", "study_description": "",
          "fig_dir": "../../figures/tiny/tiny", "emulated_machine": "", "paper_setup": None,
          "departures": [], "primary_flush": "fsync"}


@pytest.fixture(scope="module")
def tables():
    return ReportTables.load(inputs(), PRIMARY)


def fixture_rows(name):
    with open(TINY / f"{name}.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize(("display", "tex"), [
    ("∀", r"$\forall$"), ("✓", r"$\forall$"), ("×", r"$\times$"), ("X", r"$\times$"),
    ("✗?", r"$\times$\textsuperscript{?}"), ("≤ 3.4", r"$\le$\,3.4"),
    ("~10^3", r"$\sim\!10^{3}$"), ("20.2", "20.2"), ("1.5?", r"1.5\textsuperscript{?}"),
    ("", "--"), (None, "--"), ("a_b", r"a\_b"),
])
def test_one_formatter_sets_every_break_even_form(display, tex):
    assert display_tex(display) == tex


def test_the_originals_get_the_same_formatter():
    rows = read_with_tex("paper/reference/systor09_table4_breakeven_server.csv")
    assert rows and all(r["display_tex"] == display_tex(r["display"]) for r in rows)
    assert any(r["display"] == "×" and r["display_tex"] == r"$\times$" for r in rows)


def test_only_the_primary_settings_rows_are_read(tables):
    assert {r["setting"] for r in tables.summary} == {PRIMARY}
    assert {r["setting"] for r in tables.breakeven} == {PRIMARY}
    assert {r["setting"] for r in tables.claims} <= {PRIMARY, "all"}


def test_an_idle_calibration_of_another_setting_is_refused():
    with pytest.raises(RecordError, match="primary setting"):
        ReportTables.load(inputs(idle_setting=OTHER), PRIMARY)


def test_macros_are_the_primary_settings_numbers(tables):
    values = macros.macro_values(tables, PARAMS)
    summary = [r for r in fixture_rows("summary") if r["setting"] == PRIMARY]
    cw = next(r for r in summary if (r["file_type"], r["codec"], r["op"])
              == ("text", "lzo-1", "compress-write"))
    assert values["CrLzoOneText"] == f"{float(cw['compression_ratio']):.2f}"
    be = next(r for r in fixture_rows("breakeven") if r["setting"] == PRIMARY
              and (r["file_type"], r["codec"], r["metric"]) == ("text", "gz-1", "E"))
    assert values["BeGzOneText"] == be["display_tex"]
    idle = json.loads((TINY / "idle" / f"{PRIMARY}.json").read_text())
    assert values["IdlePowerW"] == f"{idle['idle_power_w']:.1f}"
    assert values["PrimarySetting"] == PRIMARY.replace("_", r"\_")
    assert values["RunsTotal"] == str(len(fixture_rows("runs")))
    assert values["PaperBeGzOneText"] == "20.2"  # SYSTOR '09 Table 4, as printed
    measured = [r for r in summary if int(r["n"]) > 0]
    assert values["CiMet"].endswith(f"of {len(measured)}")


def test_the_report_is_dated_by_its_runs_in_utc_not_by_the_day_it_is_built():
    """The same runs build the same PDF: its date is the days they were measured on."""
    runs = [{"started_at": "2026-03-01T23:30:00-02:00", "ended_at": "2026-03-02T01:40:00+00:00",
             "elapsed_s": 60.0},
            {"started_at": "2026-03-02T02:00:00+00:00", "ended_at": "2026-03-02T02:01:00+00:00",
             "elapsed_s": 60.0},
            {"started_at": None, "ended_at": None, "elapsed_s": None}]  # a read not run
    measured_s, span_s, first, last = records.measured_span(runs)
    assert span_s == 31 * 60  # 01:30 UTC to 02:01
    assert measured_s == 120.0 and macros.measured_dates(first, last) == "2026-03-02"
    _, _, first, last = records.measured_span(runs[:1])
    assert macros.measured_dates(first, last) == "2026-03-02"  # 01:30 UTC
    _, _, first, last = records.measured_span([{**runs[1], "started_at": "2026-02-28T10:00:00Z"}])
    assert macros.measured_dates(first, last) == "2026-02-28 to 2026-03-02"
    assert macros.measured_dates(*records.measured_span([])[2:]) == "--"
    assert "\\today" not in (REPO / "paper" / "main.tex").read_text()


def test_a_run_measured_again_after_a_drift_is_not_counted_as_failed(tables):
    """A drift's runs are flagged unverified and measured again: the report calls them
    disturbed (its own sentence), not failed."""
    runs = tables.runs
    drifted = [{**r, "verified": "false", "disturbed": "drift: the reference changed"}
               for r in runs[:3]]
    failed = [{**runs[3], "verified": "false"}]
    values = macros.macro_values(dataclasses.replace(tables, runs=[*runs, *drifted, *failed]),
                                 PARAMS)
    assert values["RunsFailed"] == str(count_failed(runs) + 1)
    assert values["RunsTotal"] == str(len(runs) + 4)


def test_the_claim_counts_add_up(tables):
    values = macros.macro_values(tables, PARAMS)
    total = int(values["ClaimsTotal"])
    assert total == len(tables.claims) > 0
    assert int(values["ClaimsHold"]) + int(values["ClaimsRefuted"]) <= total


def test_the_macro_file_defines_each_once_and_the_estimated_switch(tables):
    values = macros.macro_values(tables, PARAMS)
    text = macros.macros_tex(values, tables.estimated)
    assert text.count(r"\newcommand{\IdlePowerW}") == 1
    assert (r"\estimatedtrue" in text) == tables.estimated


def test_estimated_energy_is_said_in_the_abstract_and_captions(tables):
    assert tables.estimated  # the fixture ran with the CPU model
    assert "ESTIMATED" in passages.abstract(tables, PARAMS)
    figures = passages.figure_list(["text"], estimated=True)
    assert "energy_text.pdf" in figures and "ESTIMATED energy" in figures
    time_caption = next(line for line in figures.splitlines() if "Elapsed time" in line)
    assert "ESTIMATED" not in time_caption


def test_a_varied_bandwidth_gets_its_section_and_says_the_disks_are_emulated(tables):
    text = passages.factor_sections(tables.claims, PARAMS, tables.estimated)
    assert r"\subsection{Disk bandwidth}" in text and "emulated" in text
    assert "factor_bandwidth.pdf" in text and "bandwidth.pdf" in text
    assert "shared one bandwidth" in text and "cgroup" not in text  # the paper's layout
    apart = passages.factor_sections([], {**PARAMS, "emulated_input_layouts": ["separate"]},
                                     False)
    assert "its own read budget and its own write budget" in apart
    assert passages.factor_sections([], {**PARAMS, "varied_factors": []}, False) == "\n"


def test_the_testbed_list_says_estimated(tables):
    text = passages.testbed_list(["tiny"], [TINY / "summary.csv"], {"tiny": "a test box"})
    assert "tiny & a test box" in text and "ESTIMATED" in text
    rehearsed = passages.testbed_list(["tiny"], [TINY / "summary.csv"], {}, simulated=True)
    assert "& SIMULATED, ESTIMATED &" in rehearsed


def test_a_claim_on_estimated_energy_says_so_wherever_its_verdict_is_printed():
    """As the claims table marks it: in the factor sections and the appendix too."""
    claim = {"claim_id": "c", "claim": "a claim", "source": "SYSTOR '11 6.3",
             "verdict": "holds", "evidence": "E ...", "estimated": "true",
             "model_robustness": "robust to the model", "factor": "io_scheduler"}
    assert passages.claim_mark(claim) == " (on ESTIMATED energy; robust to the model)"
    assert passages.claim_mark({**claim, "estimated": "false"}) == ""
    text = passages.factor_sections([claim], {**PARAMS, "varied_factors": ["io_scheduler"],
                                              "factor_values": {"io_scheduler": ["a", "b"]}},
                                    True)
    assert "\\textbf{holds} (on ESTIMATED energy; robust to the model)." in text
    assert passages.testbeds_figure("", True) == ""
    assert "ESTIMATED" in passages.testbeds_figure("../figures/s/testbeds.pdf", True)


def test_write_makes_every_output(tmp_path):
    outputs = {name: tmp_path / f"{name}.tex"
               for name in ("macros", "abstract", "figures", "factors", "testbed_list")}
    values = report.write(inputs(), PARAMS, outputs)
    assert all(p.read_text() for p in outputs.values())
    assert f"{{{values['IdlePowerW']}}}" in outputs["macros"].read_text()


def test_the_abstract_escapes_the_disturbance_sentence_for_latex(tables):
    """Runs kept with drift_warning are named by that column, whose underscore would stop
    pdflatex (found when two Slurm nodes on one VM drifted)."""
    import dataclasses

    runs = [{**r, "disturbed": "drift", "drift_warning": "true", "other_user_share": "0"}
            for r in tables.runs]
    text = passages.abstract(dataclasses.replace(tables, runs=runs), PARAMS)
    assert "drift\\_warning" in text and "drift_warning" not in text


def test_the_appendix_says_why_a_claim_of_this_studys_configuration_has_no_duration(
        tmp_path, monkeypatch):
    """A claim left open by the study's own runs (PPMd not among an overlay's codecs) is not
    'not run here (needs config.yaml)': config.yaml is this study's; one whose overlay the
    study lacks still names it."""
    from wattzip.report import appendix

    claims = tmp_path / "claims.csv"
    claims.write_text("claim_id,setting,primary,verdict,evidence\n"
                      "ppmd_most_energy,all,true,not testable here: no ppmd runs,\n")
    monkeypatch.chdir(REPO)  # config.yaml
    items = {e["id"]: e for e in appendix.entries(str(claims), [], "results/x/local",
                                                  ["config/levels.yaml"])}
    assert items["ppmd_most_energy"]["duration"] == (
        "none: this study's runs do not decide it (see obtained)")
    assert "not testable here: no ppmd runs" in items["ppmd_most_energy"]["obtained"]
    media = next(e for e in items.values() if e["overlay"] == "config/media.yaml")
    assert media["duration"] == "not run here (needs config/media.yaml)"


def test_what_is_not_measured_is_marked_in_one_wording_from_python_and_r(tmp_path):
    """The SIMULATED and ESTIMATED labels of the figures, the tables, the appendix and the
    rehearsal's provenance and idle calibration are data/labels.csv's rows, which the R
    scripts read through scripts/labels.csv: no module or script types them again."""
    from wattzip.model import rehearsal
    from wattzip.report import appendix, legends
    from wattzip.resources import label

    from .rscript import r_output

    simulated, estimated = label("simulated"), label("estimated")
    assert simulated.startswith("SIMULATED") and estimated.startswith("ESTIMATED")
    assert simulated == rehearsal.SIMULATED_HOW and appendix.SIMULATED.startswith(simulated)
    assert estimated in legends.ESTIMATED
    shown = r_output(tmp_path, "theme.R", 'cat(simulated_label, "\\n", sep = "")\n'
                     'cat(estimated_subtitle(data.frame(meter_method = "estimated")), "\\n", '
                     'sep = "")')
    assert shown.splitlines() == [simulated, estimated]
    sources = [*REPO.glob("wattzip/**/*.py"), *REPO.glob("scripts/*.R"),
               *REPO.glob("scripts/*.py"), REPO / "paper" / "main.tex"]
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert simulated.split(": ")[1] not in text and estimated.split(": ")[1] not in text, path
