"""One invocation makes what a change asks for: the rehearsal and the measured tree
together, though the measured tree waits for the rehearsal (rules/paper.smk's
checkpoint)."""

from __future__ import annotations

import re
import shutil

import pytest

from .test_report_code import REPORT_STAGES
from .test_workflow import REPO, read_csv, snakemake

# Beside the pure tests, as the tiny study (tests/data/tiny.yaml: no quiet check).
pytestmark = [pytest.mark.workflow, pytest.mark.beside_pure]


def test_a_change_of_both_trees_is_made_in_one_invocation(tiny_study, tmp_path):
    """A change that the rehearsal and the measured analysis both see (an upgrade of
    wattzip, or the verdict's margin here) remakes both in one invocation. The measured
    tree waits for the rehearsal through ancient inputs, behind which Snakemake 9 plans
    nothing once the rehearsal is rerun (snakemake/snakemake#4166): without the
    checkpoints, the measured claims stayed at the old margin until a second run. The
    study is changed in place and changed back."""
    runs = tiny_study / "results/tiny/tiny/runs.csv"
    measured = runs.stat().st_mtime_ns
    overlay = tmp_path / "margin.yaml"
    overlay.write_text("verdict: {margin: 0.05}\n")

    def margins(tree):
        return {float(r["margin"]) for r in read_csv(tiny_study / tree / "tiny/tiny/breakeven.csv")}

    def made_in_one_invocation(overlays):
        snakemake(tiny_study, targets=("runs", "claims.csv"), overlays=overlays)
        proc = snakemake(tiny_study, "-n", targets=("runs", "claims.csv"), overlays=overlays)
        assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]

    try:
        made_in_one_invocation([overlay])
        assert margins("rehearsal") == margins("results") == {0.05}
    finally:
        made_in_one_invocation([])
    assert margins("rehearsal") == margins("results") != {0.05}
    assert runs.stat().st_mtime_ns == measured  # nothing measured again


def planned_rules(proc) -> set[str]:
    """The rules of a dry run's job stats."""
    stats = (proc.stdout + proc.stderr).split("Job stats:")[1].split("total")[0]
    return set(re.findall(r"(?m)^(\w+)\s+\d+$", stats))


def test_a_change_of_the_report_s_code_makes_the_report_again_and_measures_nothing(tiny_study):
    """An R file that no rule names (scripts/theme.R, which every figure and table
    sources) is changed: every rule that turns runs into the report is planned again
    (the rules' param layout.report_code), and none that measures or simulates runs.
    Snakemake sees a rule's own lines only, and a fixed script left every table as the
    old one had set it. Changed back, nothing is to be done."""
    targets = ("runs", "claims.csv")
    report_rules = {name for stage in REPORT_STAGES for name in re.findall(
        r"(?m)^(?:rule|checkpoint) (\w+):", (REPO / "rules" / f"{stage}.smk").read_text())}
    every = planned_rules(snakemake(tiny_study, "-n", "--forceall", targets=targets))
    theme = tiny_study / "scripts" / "theme.R"
    kept = theme.read_text()
    try:
        theme.write_text(kept + "# a change of no consequence\n")
        planned = planned_rules(snakemake(tiny_study, "-n", targets=targets))
    finally:
        theme.write_text(kept)
    assert planned == every & report_rules, planned ^ (every & report_rules)
    assert {"analyze", "tables_of_testbed", "figures_per_file_type", "paper"} <= planned
    proc = snakemake(tiny_study, "-n", targets=targets)
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]


def test_a_moved_study_measures_nothing_again(tiny_study, tmp_path):
    """A study's folder moved (copied here, its files' times kept) needs nothing made
    again: the jobs' specs and the pre-flight's params name the media inside it relative
    to it (wattzip.model.testbed.workdir_relative). They named them by absolute path, and
    the moved study's pre-flight, then every job after it, were made again."""
    moved = tmp_path / "moved"
    shutil.copytree(tiny_study, moved, symlinks=True)
    proc = snakemake(moved, "-n", targets=("runs", "claims.csv"))
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]
