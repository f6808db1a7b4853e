"""The rehearsal: every shipped study builds its whole report from SIMULATED runs before
it measures, says so on every page, table and figure, and never mixes with measured runs."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .test_workflow import REPO, SNAKEMAKE, TINY, workflow_copy

pytestmark = [pytest.mark.workflow, pytest.mark.pure]
OVERLAYS = sorted(p.name for p in (REPO / "config").glob("*.yaml") if p.name != "schema.yaml")
FIXTURE_RUNS = REPO / "tests" / "data" / "fixture" / "results" / "tiny" / "runs.csv"


def readme_stacks() -> list[tuple[str, ...]]:
    """Every study the README offers, as the config files it names: the studies table's
    rows (`+ config/X.yaml` laid on the row above it) and the combinations in its text."""
    text = (REPO / "README.md").read_text()
    stacks, base = [], ()
    for plus, name in re.findall(r"^\| `(\+ )?(config[\w/.-]*\.yaml)`", text, re.M):
        stack = base + (name,) if plus else ("config.yaml",) + (
            (name,) if name != "config.yaml" else ())
        base = base if plus else stack
        stacks.append(stack)
    stacks += [tuple(files.split()) for files in re.findall(
        r"--configfile ((?:config[\w/.-]*\.yaml\s?){3,})`", text)]
    return stacks


def stacked_only() -> set[str]:
    """The overlays the README offers only laid on another (its `+ config/X.yaml` rows):
    rehearsed as it stacks them, not alone on the default, which no one is offered."""
    text = (REPO / "README.md").read_text()
    return {name.removeprefix("config/")
            for name in re.findall(r"^\| `\+ (config[\w/.-]*\.yaml)`", text, re.M)}


# Each overlay on the default, as `wattzip rehearse --configfile config.yaml config/X.yaml`
# (those the README stacks only, as it stacks them), and every other study the README
# offers (the default alone, the stacked paper and SYSTOR '11 studies).
STUDIES = sorted({("config.yaml", f"config/{o}") for o in OVERLAYS if o not in stacked_only()}
                 | set(readme_stacks()))


def test_the_readme_s_studies_are_read_as_it_offers_them():
    stacks = readme_stacks()
    assert ("config.yaml",) in stacks
    assert ("config.yaml", "config/paper.yaml", "config/paper-moderated.yaml") in stacks
    assert ("config.yaml", "config/paper.yaml", "config/levels.yaml") in stacks
    assert ("config.yaml", "config/systor11.yaml", "config/systor11-small.yaml") in stacks
    assert all((REPO / f).is_file() for stack in stacks for f in stack)


BANNER = "SIMULATED: a rehearsal, nothing was measured"  # each page's (paper/main.tex)


def pdf_pages(path: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout
    return [page for page in text.split("\f") if page.strip()]


@pytest.mark.parametrize("files", STUDIES, ids="+".join)
def test_every_study_rehearses_to_its_pdf_marked_simulated(files, tmp_path):
    """What the README offers, rehearsed as a user starts it: `wattzip rehearse`."""
    from wattzip.model.study import Study

    root = workflow_copy(tmp_path / "wf")
    proc = subprocess.run([sys.executable, "-m", "wattzip", "rehearse", "--cores", "2",
                           "--configfile", *files], cwd=root,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    study = Study.from_files([root / f for f in files])
    tree = root / "rehearsal" / study.name
    pages = pdf_pages(tree / "paper.pdf")
    assert len(pages) > 5 and all("SIMULATED" in page for page in pages)
    # the text never calls these runs measured (read without the pages' numbers and
    # banners, which a sentence may straddle)
    prose = " ".join(" ".join(
        line for page in pages for line in page.splitlines()
        if not line.strip().isdigit() and line.strip() != BANNER).split())
    assert "runs were SIMULATED" in prose and "runs were measured" not in prose
    assert "Energy is SIMULATED in place of the" in prose
    assert study.scope.describe() in prose  # the cells left out
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
    assert "Error in rule figures_of_testbed" in proc.stdout + proc.stderr
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
    merged = tmp_path / "config.json"
    merged.write_text(json.dumps(study.config))
    proc = subprocess.run([sys.executable, "-m", "wattzip", "simulate", "--config-file",
                           str(merged), "--runs", str(tmp_path / "runs.csv")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "cannot run as designed" in proc.stderr
    assert not (tmp_path / "runs.csv").exists()


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


def test_rehearse_given_the_overlay_alone_plans_what_the_stack_plans(tmp_path):
    """The README's `wattzip rehearse --configfile config/X.yaml`: the Snakefile's own
    config.yaml lies under the overlay, so it plans the jobs of the stack it names."""
    root = workflow_copy(tmp_path / "wf")

    def planned(*files: str) -> list[str]:
        proc = subprocess.run([sys.executable, "-m", "wattzip", "rehearse", "--cores", "1",
                               "--configfile", *files, "--", "-n", "--quiet", "rules"],
                              cwd=root, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = proc.stdout + proc.stderr
        jobs = out[out.index("Job stats:"):].split("\n\n")[0]  # each rule and its count
        return [line for line in out.splitlines() if line.startswith("wattzip study")] + [jobs]

    alone = planned("config/factors.yaml")
    assert alone == planned("config.yaml", "config/factors.yaml")
    assert "'factors'" in alone[0] and "simulate_runs" in alone[1]
