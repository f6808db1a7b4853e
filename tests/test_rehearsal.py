"""The rehearsal: every shipped study builds its whole report from SIMULATED runs before
it measures, says so on every page, table and figure, and never mixes with measured runs."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from .test_workflow import REPO, SNAKEMAKE, TINY, workflow_copy

pytestmark = pytest.mark.workflow
OVERLAYS = sorted(p.name for p in (REPO / "config").glob("*.yaml") if p.name != "schema.yaml")
FIXTURE_RUNS = REPO / "tests" / "data" / "fixture" / "results" / "tiny" / "runs.csv"


def study_name(overlay: str) -> str:
    import yaml

    return yaml.safe_load((REPO / "config" / overlay).read_text())["study"]["name"]


def pdf_pages(path: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout
    return [page for page in text.split("\f") if page.strip()]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_overlay_rehearses_to_its_pdf_marked_simulated(overlay, tmp_path):
    """What the README offers, rehearsed as a user starts it: `wattzip rehearse`."""
    root = workflow_copy(tmp_path / "wf")
    proc = subprocess.run([sys.executable, "-m", "wattzip", "rehearse", "--cores", "2",
                           "--configfile", "config.yaml", f"config/{overlay}"], cwd=root,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    tree = root / "rehearsal" / study_name(overlay)
    pages = pdf_pages(tree / "paper.pdf")
    assert len(pages) > 5 and all("SIMULATED" in page for page in pages)
    prose = " ".join(" ".join(pages).split())  # the text never calls these runs measured
    assert "runs were SIMULATED" in prose and "runs were measured" not in prose
    assert "Energy is SIMULATED in place of the" in prose
    from wattzip.model.study import Study

    unmeasured = Study.from_files([root / "config.yaml", root / "config" / overlay]).scope
    assert unmeasured.describe() in " ".join(" ".join(pages).split())  # the cells left out
    figures = sorted((tree / "figures").rglob("*.pdf"))
    assert len(figures) >= 10
    for figure in figures:
        assert "SIMULATED" in "".join(pdf_pages(figure)), figure
    tables = [p for p in (tree / "generated").rglob("*.tex")
              if p.name not in ("macros.tex", "abstract.tex", "figures.tex", "factors.tex",
                                "testbed_list.tex")]
    assert tables and all("SIMULATED" in p.read_text() for p in tables)
    # nothing measured, nothing generated, nothing in the measured trees
    assert not (root / "results").exists() and not (root / "figures").exists()


def test_a_failing_figure_stops_the_study_before_anything_is_measured(tmp_path):
    root = workflow_copy(tmp_path / "wf")
    script = root / "scripts" / "fig_esav.R"
    script.write_text('stop("a figure script broken on purpose")\n' + script.read_text())
    proc = subprocess.run([*SNAKEMAKE, "--cores", "2", "--configfile", str(TINY)], cwd=root,
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    assert "Error in rule figure_of_testbed" in proc.stdout + proc.stderr
    assert "rehearsal/tiny/figures/tiny/esav.pdf" in proc.stdout + proc.stderr
    measured = root / "results" / "tiny" / "tiny"
    assert not list(measured.glob("inputs/*.bin")) and not list(measured.rglob("*.jsonl"))
    assert not (measured / "preflight.json").exists()


def _simulated_runs(tmp_path: Path) -> Path:
    from wattzip.model import rehearsal
    from wattzip.model.study import Study

    study = Study.from_files([REPO / "config.yaml", TINY])
    runs = tmp_path / "sim" / "runs.csv"
    runs.parent.mkdir()
    rehearsal.synthesize(study, "tiny", runs)
    return runs


def test_simulated_and_measured_runs_never_mix(tmp_path):
    """Either way round: the analysis of a tree refuses runs of the other kind."""
    simulated = _simulated_runs(tmp_path)
    rows = list(csv.DictReader(simulated.open()))
    assert rows and {r["simulated"] for r in rows} == {"true"}
    for runs, stage in ((simulated, "results"), (FIXTURE_RUNS, "rehearsal")):
        proc = subprocess.run([sys.executable, "-m", "wattzip", "analyze", str(runs),
                               "--out", str(tmp_path / stage), "--expect", stage],
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 2 and "never share" in proc.stderr, proc.stderr
        assert not (tmp_path / stage / "summary.csv").exists()
    proc = subprocess.run([sys.executable, "-m", "wattzip", "analyze", str(simulated),
                           str(FIXTURE_RUNS), "--out", str(tmp_path / "m"), "--expect",
                           "rehearsal"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "measured runs" in proc.stderr


def test_the_rehearsal_runs_the_design_checks_that_need_no_machine(tmp_path):
    import yaml

    from wattzip.model import checks
    from wattzip.model.study import Study

    on_medium = {"ext2": {"kind": "image", "path": "x", "size": "1MiB", "fs": "ext2",
                          "inputs": "on-medium"}}
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({
        "codecs": ["gz-1", "btrfs-zstd-3"], "file_size": "8MiB", "file_types": ["text"],
        "factors": {"medium": on_medium, "bandwidth": ["unlimited", "50MB/s"]},
        "meter": {"order": ["model"], "require_measured": True}}))
    study = Study.from_files([REPO / "config.yaml", overlay])
    problems = "\n".join(checks.design_problems(study, "local"))
    assert "compresses in btrfs, but medium ext2 is ext2" in problems  # codec and medium
    assert "holds 1 MiB" in problems  # the free-space arithmetic on the image
    assert "names no measuring backend" in problems  # the meter requirement
    proc = subprocess.run([sys.executable, "-m", "wattzip", "simulate", "--config-json",
                           json.dumps(study.config), "--runs", str(tmp_path / "runs.csv")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "cannot run as designed" in proc.stderr
    assert not (tmp_path / "runs.csv").exists()


def test_old_layout_results_are_named_with_how_to_move_them(tmp_path):
    root = workflow_copy(tmp_path / "wf")
    old = root / "results" / "tiny"
    old.mkdir(parents=True)
    (old / "runs.csv").write_text(FIXTURE_RUNS.read_text())
    proc = subprocess.run([*SNAKEMAKE, "-n", "--cores", "1", "--configfile", str(TINY)],
                          cwd=root, capture_output=True, text=True, check=False)
    assert "results/tiny/ holds results in the layout before studies had names" in proc.stderr
    assert "mv results/tiny results/tiny.old/tiny" in proc.stderr


def test_a_results_folder_copied_under_another_name_is_named(tmp_path):
    """Another machine's runs in a folder named for this one would be reported as this
    machine's: the analysis refuses them and says how to copy the folder."""
    proc = subprocess.run([sys.executable, "-m", "wattzip", "analyze", str(FIXTURE_RUNS),
                           "--out", str(tmp_path / "laptop"), "--testbed", "laptop"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "runs of testbed tiny in the folder of testbed laptop" in proc.stderr
    assert "results/<study>/tiny/" in proc.stderr
    assert not (tmp_path / "laptop" / "summary.csv").exists()
