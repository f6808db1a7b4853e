"""The benchmark scripts of docs/benchmarks.md, run as its commands run them: each reads its
command line, a wrong path is named in a usage error, the quick ones run to the end, and
those that read a finished study read the tiny one."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from wattzip.analysis.reference import read_reference
from wattzip.resources import reference_file

from .test_workflow import read_csv

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(p.name for p in (REPO / "benchmarks").glob("*.py")
                 if '__name__ == "__main__"' in p.read_text())
MISSING = {  # a path each script requires, named wrong
    "claim_families.py": ["--results", "/nx", "--cache", "/nx.json", "--configfile", "c.yaml"],
    "designs.py": ["--configfile", "nx.yaml"],
    "drift_pairs.py": ["--journal", "/nx"],
    "guard_replay.py": ["--journals", "/nx", "--cache", "/nx.json", "--configfile", "c.yaml"],
    "harness.py": ["--input", "/nx"],
    "looks_vs_report.py": ["--results", "/nx", "--configfile", "c.yaml"],
    "pipeline_overhead.py": ["/nx"],
    "plan_accuracy.py": ["--configfile", "nx.yaml"],
    "ratios.py": ["/nx"],
    "rehearsal.py": ["nx.yaml"],
    "rehearsal_before_after.py": ["nx.yaml"],
    "stops_at_scale.py": ["--cache", "/nx.json", "--runs", "/nx", "--configfile", "c.yaml"],
    "stops_claims.py": ["--results", "/nx", "--configfile", "c.yaml", "--kinds", "energy"],
    "tables_before_after.py": ["--results", "/nx"],
}


PARSE_ONLY = """import argparse, runpy, sys
sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0])
import arguments
arguments.existing_file = arguments.existing_dir = arguments.setting_journals = str
arguments.file_under = lambda root: str
parse = argparse.ArgumentParser.parse_args
def parse_only(self, *args, **kwargs):
    parse(self, *args, **kwargs)
    sys.exit(0)
argparse.ArgumentParser.parse_args = parse_only
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def documented_commands() -> list[tuple[str, str, list[str]]]:
    """Every benchmark command line the docs show: (doc, script, its arguments), with a
    placeholder (<the wall seconds>) set to 1 and an optional part ([--kinds E]) left out."""
    found = []
    for doc in sorted((REPO / "docs").glob("*.md")):
        text = re.sub(r"\\\n\s*", " ", doc.read_text())
        for m in re.finditer(r"\.venv/bin/python benchmarks/(\w+\.py)([^`\n#]*)", text):
            args = re.sub(r"\[[^]]*\]", "", re.sub(r"<[^>]*>", "1", m[2])).split()
            if (doc.name, m[1], args) not in found:
                found.append((doc.name, m[1], args))
    return found


@pytest.mark.pure
@pytest.mark.parametrize("doc, script, args", documented_commands())
def test_every_documented_command_line_parses(doc, script, args):
    """The flags the docs show are the script's: each line parses (paths not looked for)."""
    proc = subprocess.run([sys.executable, "-c", PARSE_ONLY, str(REPO / "benchmarks" / script),
                           *args], cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{doc}: {script} {' '.join(args)}\n{proc.stderr}"


def bench(script: str, *args, cwd=REPO, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, check=check)


@pytest.mark.pure
@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_reads_its_command_line(script):
    assert bench(script, "--help").stdout.startswith(f"usage: {script}")


@pytest.mark.pure
@pytest.mark.parametrize("script", sorted(MISSING))
def test_a_wrong_path_is_named_not_a_traceback(script, tmp_path):
    proc = bench(script, *MISSING[script], cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert re.search(r"error: argument \S+: no such (file|folder)", proc.stderr), proc.stderr


@pytest.mark.pure
def test_ratios_beside_table_3(small_inputs, tmp_path):
    """Run from elsewhere than the clone: the original's values are the package's."""
    path = small_inputs["text"][0]
    out = bench("ratios.py", path, "gz-1", "lzo-1", cwd=tmp_path).stdout.splitlines()
    _, table3 = read_reference(reference_file("systor09_table3_ratios.csv"))
    paper = {r["codec"]: r["display"] for r in table3 if r["file_type"] == "text"}
    rows = {line.split()[0]: line.split() for line in out[2:]}
    assert sorted(rows) == ["gz-1", "lzo-1"]
    for codec, (_, ratio, original, tool, _version) in rows.items():
        assert original == paper[codec] and float(ratio) > 1 and tool in ("gzip", "lzop")


@pytest.mark.pure
def test_an_unknown_codec_is_a_usage_error(tmp_path):
    proc = bench("ratios.py", REPO / "README.md", "gz-1", "gzip-1", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "error: unknown codec or codec set 'gzip-1'" in proc.stderr, proc.stderr


@pytest.mark.pure
@pytest.mark.parametrize("script, args", [
    ("coverage_budget.py", ["--studies", "20"]),
    ("coverage_moderated.py", ["--studies", "2"]),
])
def test_the_simulations_run_small(script, args):
    out = bench(script, *args).stdout
    assert "simulated" in out or "| drifting machine |" in out, out


@pytest.mark.parametrize("script, args, said", [
    ("harness.py", ["--input", "README.md", "--pairs", "1", "--sampling-seconds", "1"],
     r"ratio A/B median [\d.]+ .*\n.*sampler model at 10 Hz: [\d.]+% of one core"),
    ("bench_overhead.py", ["--runs", "2", "--rounds", "1", "--size", "1MiB"],
     r"\| `gzip -1 -c TEXT` \|( [\d.]+ \|){7}"),
    ("drift_reference_size.py", ["--sizes", "1,2", "--phases", "2", "--repeats", "1",
                                 "--gap", "0"],
     r"\| 1 MiB \| [\d.]+ \| [\d.]+% \| [\d.]+% \| [\d.]+% \| [\d.]+% \|\n\| 2 MiB"),
    ("onedisk.py", ["--size", "4MiB", "--pairs", "1"],
     r"A one budget, unmount +median [\d.]+ s .*\n(.*\n)*  A / B [\d.]+, A / C [\d.]+"),
])
def test_the_machine_s_benchmarks_run_small(script, args, said):
    """The benchmarks that time this machine (the harness against the bare command,
    wattzip bench against hyperfine, the drift reference's sizes, the emulated disk's
    budgets), at their smallest."""
    out = bench(script, *args).stdout
    assert re.search(said, out), out


def test_inputs_beside_dd(tmp_path):
    out = bench("inputs.py", "--size", "1MiB", "--dir", tmp_path, "zero", "text").stdout
    assert [line.split()[0] for line in out.splitlines()[2:]] == ["zero", "text"]


@pytest.mark.workflow
@pytest.mark.beside_pure
def test_pipeline_overhead_reads_the_study_s_log(tiny_study):
    """docs/benchmarks.md's command, on the tiny study's last invocation."""
    out = bench("pipeline_overhead.py", tiny_study, "--runs", "results/tiny/tiny/runs.csv").stdout
    runs = [r for r in read_csv(tiny_study / "results/tiny/tiny/runs.csv") if r["started_at"]]
    why = [r["failure"].split(":")[0] for r in runs if r["failure"]]
    drift, disturbed = why.count("drift"), why.count("disturbed")
    assert (f"runs: {len(runs)}, set aside: {len(why)} (failed or unverified "
            f"{len(why) - drift - disturbed}, disturbed {disturbed}, drift {drift})") in out
    ratio = float(re.search(r"ratio (\d+\.\d+)", out)[1])
    assert ratio > 1, out  # the runs never overlap: the invocation took longer than them
    assert re.search(r"^rule idle_power ", out, re.M), out
    assert len(own_times(out)) > 5 and min(own_times(out)) >= 0, out


def own_times(out: str) -> list[float]:
    """pipeline_overhead.py's seconds per stage: none is negative when each job's gaps are
    its own (a cell's duty-cycle runs, or a drifted job's first attempt, are not)."""
    return [float(n) for n in re.findall(r"^(?:measure_runs|rule) .* (-?\d+\.\d) +-?[\d.]+%$",
                                         out, re.M)]


@pytest.mark.pure
@pytest.mark.workflow
def test_the_before_and_after_benchmarks_find_no_change_against_head(tmp_path):
    """What a refactoring is checked with (docs/benchmarks.md), run to the end in
    a clone of HEAD (whatever this work tree holds): HEAD against itself differs in nothing."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", REPO, clone], check=True)

    def run(script, *args):
        return subprocess.run([sys.executable, clone / "benchmarks" / script, *args], cwd=clone,
                              capture_output=True, text=True, check=True).stdout

    out = run("tables_before_after.py", "--rev", "HEAD")
    assert re.search(r"tables of \S+ \(looks 0\): \w+ against the work tree: 0 difference",
                     out), out
    out = run("rehearsal_before_after.py", "--rev", "HEAD", "tests/data/tiny.yaml")
    assert re.search(r"1 study rehearsed at HEAD and in the work tree: \d+ files identical, "
                     r"0 differ", out), out


@pytest.mark.workflow
def test_the_plan_s_accuracy_on_the_tiny_study(tmp_path):
    """plan_accuracy.py, which runs a whole study in a fresh copy of the workflow, on the
    tiny study at its smallest: the plan beside the wall time. (designs.py:
    tests/test_benchmarks_moderated.py.)"""
    config = ["--configfile", "config.yaml", "tests/data/tiny.yaml"]
    out = bench("plan_accuracy.py", *config, "tests/data/one-setting.yaml",
                "--out", tmp_path / "plan").stdout
    assert re.search(r"wall: plan \d+-\d+ s, study \d+ s, study / plan [\d.]+", out), out
