"""The benchmark scripts that read a finished moderated study, run to the end (as
docs/benchmarks.md runs those it shows), on the tiny study under the moderated design as
benchmarks/designs.py measures it (its own line checked too): two settings
(the bandwidth factor), so a script that reads one setting's journals is given, or picks,
the primary setting's, and one that prices every cell keeps the settings apart."""

from __future__ import annotations

import re

import pytest

from .test_benchmarks import bench
from .test_workflow import TINY, read_csv, snakemake

# Beside the pure tests, as the tiny study it measures (tests/data/tiny.yaml: no quiet check).
pytestmark = [pytest.mark.workflow, pytest.mark.beside_pure]

RESULTS = "results/tiny/tiny"
OVERLAY = "design.yaml"  # designs.py's: the design, its looks and the file size


@pytest.fixture(scope="module")
def designs(tmp_path_factory):
    """benchmarks/designs.py's moderated design alone, on the tiny study at 1 MiB: its
    printed line, and the study it measured (through its claims, with its plan's pilot),
    which the benchmarks below read."""
    out = tmp_path_factory.mktemp("designs")
    proc = bench("designs.py", "--designs", "moderated", "--moderated-looks", "2,3",
                 "--configfile", "config.yaml", "tests/data/tiny.yaml", "--file-size", "1MiB",
                 "--out", out)
    return proc.stdout, out / "moderated"


@pytest.fixture(scope="module")
def moderated_study(designs):
    return designs[1]


def config(root):
    return ["--configfile", "config.yaml", TINY, root / OVERLAY]


def test_designs_prints_the_moderated_design_s_line(designs):
    out, _ = designs
    assert re.search(r"\nmoderated +[\d.]+s +[\d.]+s +\d+ +\d+ +\d+ of 8 ", out), out


def primary(root) -> str:
    return read_csv(root / RESULTS / "settings.csv")[0]["setting"]


def test_stops_at_scale_prices_each_setting_s_cells_apart(moderated_study):
    root = moderated_study
    out = bench("stops_at_scale.py", "--cache", f"{RESULTS}/plan/pilot.json", "--runs",
                f"{RESULTS}/runs.csv", *config(root), "--top", "2", cwd=root).stdout
    writes = {}
    for r in read_csv(root / RESULTS / "runs.csv"):
        if r["op"] == "compress-write":
            key = (r["setting"], r["file_type"], r["codec"])
            writes[key] = writes.get(key, 0) + 1
    assert len({s for s, _, _ in writes}) == 2
    stops = ", ".join(f"{n} runs: {k}" for n, k in sorted(
        {n: list(writes.values()).count(n) for n in writes.values()}.items()))
    assert f"every run measured: {len(writes)} codec cells, stopped at {stops}" in out, out
    assert "every run measured / the runs kept:" in out


def test_guard_replay_reads_one_setting_and_names_the_settings_at_the_root(moderated_study):
    root = moderated_study
    args = ["--cache", f"{RESULTS}/plan/pilot.json", *config(root)]
    out = bench("guard_replay.py", "--journals", f"{RESULTS}/journal/{primary(root)}", *args,
                cwd=root)
    assert "Traceback" not in out.stderr and out.stdout.strip(), out.stderr
    proc = bench("guard_replay.py", "--journals", f"{RESULTS}/journal", *args, cwd=root,
                 check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "journal root: give one setting's folder" in proc.stderr
    assert f"{RESULTS}/journal/{primary(root)}" in proc.stderr


def test_looks_vs_report_and_claim_families_replay_the_primary_setting(moderated_study):
    root = moderated_study
    out = bench("looks_vs_report.py", "--results", RESULTS, *config(root), cwd=root).stdout
    cells = re.search(r"(\d+) break-even cells \(T, E\) of (\S+): (\d+) decided", out)
    assert cells and cells[2] == primary(root) and int(cells[1]) > 0, out
    out = bench("claim_families.py", "--results", RESULTS, "--cache",
                f"{RESULTS}/plan/pilot.json", *config(root), cwd=root).stdout
    assert "codec cells replayed" in out and "per cell" in out, out


def test_stops_claims_analyses_the_primary_setting_s_kept_runs(moderated_study, tmp_path):
    root = moderated_study
    proc = bench("stops_claims.py", "--results", RESULTS, *config(root), "--kinds", "T,E",
                 "--keep", tmp_path / "ways", cwd=root)
    assert f"the primary setting {primary(root)}" in proc.stdout
    kept = read_csv(tmp_path / "ways" / "asked" / "runs.csv")
    assert kept and {r["setting"] for r in kept} == {primary(root)}
    both = re.findall(r"of (\d+) verdicts both decided (\d+) agree", proc.stdout)
    assert len(both) == 2 and all(n == agree for n, agree in both), proc.stdout


def test_stops_at_scale_prices_a_cell_behind_its_setting_s_disk(moderated_study, tmp_path):
    """At 2 GiB behind the tiny study's emulated 50 MB/s disk, a pair costs what the disk
    lets through, whatever the CPU: the input read and the output written through one
    budget (the input on the image, as the study lays it out), then the stored file read
    back. The costliest cell is that setting's, at that price."""
    import json

    root = moderated_study
    cache = tmp_path / "pilot.json"
    cache.write_text(json.dumps({f"{t}|{c}": {
        "write_s_per_byte": 1e-10, "read_s_per_byte": 1e-10,
        "stored_per_byte": 1.0 if c == "plain" else 0.5}
        for t in ("text", "random") for c in ("plain", "gz-1", "lzo-1")}))
    overlay = tmp_path / "scale.yaml"
    overlay.write_text("file_size: 2GiB\n")
    out = bench("stops_at_scale.py", "--cache", cache, "--runs", f"{RESULTS}/runs.csv",
                *config(root), overlay, "--top", "1", cwd=root).stdout
    top = re.search(r"\n    (\S+) (\w+)/(\S+): (\d+) pairs, ([\d.]+) min", out)
    assert top and top[1].endswith(".bw-50MBps"), out
    stored = 1.0 if top[3] == "plain" else 0.5
    pair_s = (1 + 2 * stored) * 2**31 / 50e6 + 0.1  # bytes through the disk; preparing
    assert float(top[5]) == pytest.approx(int(top[4]) * pair_s / 60, abs=0.05), out


def test_a_change_of_every_job_measures_them_all_again_in_one_invocation(moderated_study,
                                                                         tmp_path):
    """Under the moderated design each job waits for the one measured before it through an
    ancient input. A change of every job's spec (the margin, by which they stop) measures
    them all again in one invocation: as a rule, measure_runs was rerun one job per
    invocation, each invocation's report made from old and new runs
    (snakemake/snakemake#4166). Last in this module: it leaves the study changed."""
    root = moderated_study
    jobs = sorted(p for p in (root / RESULTS / "runs").rglob("*.jsonl")
                  if p.parent.name != "dutycycle")
    before = {p: p.stat().st_mtime_ns for p in jobs}
    overlay = tmp_path / "margin.yaml"
    overlay.write_text("verdict: {margin: 0.05}\n")
    overlays = [root / OVERLAY, overlay]
    targets = ["claims.csv", "breakeven.csv", "plan/estimate.json"]
    snakemake(root, targets=targets, overlays=overlays)
    stale = [str(p.relative_to(root)) for p in jobs if p.stat().st_mtime_ns == before[p]]
    assert len(jobs) > 2 and not stale, stale
    proc = snakemake(root, "-n", targets=targets, overlays=overlays)
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]
