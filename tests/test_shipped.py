"""What the README offers, run as a user runs it: kick-the-tires measured for real, the
factors study (or the pre-flight's refusal of a scheduler the kernel lacks) and, with -m
study, the default study. (Two studies on one machine: tests/test_primary_setting.py.)"""

from __future__ import annotations

import csv
import re
import subprocess

import pytest

from wattzip.machine import factors

from .test_benchmarks import bench, own_times
from .test_workflow import SNAKEMAKE, why_failed, workflow_copy

pytestmark = pytest.mark.workflow


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def pdf_text(path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture(scope="module")
def kick_the_tires(tmp_path_factory):
    """The README's words: snakemake --cores all --configfile config/kick-the-tires.yaml,
    measured once (the tests of its report and of the benchmarks that read it share it)."""
    root = workflow_copy(tmp_path_factory.mktemp("kick-the-tires") / "wf")
    proc = subprocess.run([*SNAKEMAKE, "--cores", "all", "--configfile",
                           "config/kick-the-tires.yaml"], cwd=root, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, why_failed(proc, root)
    return root


def test_kick_the_tires_is_measured_end_to_end(kick_the_tires):
    root = kick_the_tires
    study = root / "results" / "kick-the-tires"
    every = read_csv(study / "local" / "runs.csv")
    # a run disturbed by other load or by the machine's drift over its job is flagged
    # with the reason and measured again (wattzip.measure.disturbance, wattzip.measure.drift)
    assert all(r["verified"] == "false" and r["failure"] for r in every if r["disturbed"])
    runs = [r for r in every if not r["disturbed"]]
    assert runs and all(r["verified"] == "true" for r in runs)
    assert {r["simulated"] for r in runs} == {""}  # measured, not a rehearsal's
    assert {r["op"] for r in runs} >= {"plain-write", "compress-write", "plain-read",
                                       "decompress-read", "write-compute"}
    capped = [r for r in runs if r["bandwidth_bytes_per_s"]]
    # the layout it states: SYSTOR '09's one disk, the input staged on it, one budget
    assert capped and {r["input_layout"] for r in capped} == {"on-medium"}
    assert {r["bandwidth_budget"] for r in capped} == {"one for reads and writes"}
    log = (study / "local" / "logs" / "runs" / "btrfs.io-keep.gov-keep.x1.bw-100MBps" / "text"
           / "btrfs-zstd-3.log").read_text()
    assert "the staged input takes 8388608 bytes on disk, uncompressed" in log
    assert (root / "rehearsal" / "kick-the-tires" / "paper.pdf").exists()
    text = pdf_text(study / "paper.pdf")
    assert "SIMULATED" not in text and "kick-the-tires" in text
    assert len(list((root / "figures" / "kick-the-tires" / "local").glob("*.pdf"))) >= 15
    assert_hpc14_prints_the_summary(study)
    # docs/benchmarks.md's account of the pipeline's own time, on a study with duty cycles
    out = bench("pipeline_overhead.py", root, "--runs", "results/kick-the-tires/local/runs.csv")
    assert min(own_times(out.stdout)) >= 0, out.stdout


def test_drift_pairs_reads_the_study_s_journals(kick_the_tires):
    """docs/statistics.md's command, on kick-the-tires (the drift check on, two settings):
    each job's measurement (a drifted job's two; the duty cycle's jobs too), and the
    back-to-back pairs of one setting."""
    tree = kick_the_tires / "results" / "kick-the-tires" / "local"
    every_run = read_csv(tree / "runs.csv")

    def job(r):
        part = "dutycycle" if r["op"] == "write-compute" else r["file_type"]
        return r["setting"], part, r["codec"]

    jobs = {job(r) for r in every_run}
    drifted = {job(r) for r in every_run if r["disturbed"].startswith("drift: ")}
    out = bench("drift_pairs.py", "--journal", tree / "journal").stdout
    n = len(jobs) + len(drifted)
    assert out.startswith(f"{n} measured jobs;"), out
    jobs_judged = r"Welch's interval \d+ of {0} .*, by them pooled with .* job read (\d+) of {0} "
    across = re.search("^across a job .*" + jobs_judged.format(n), out, re.M)  # as the jobs did:
    warned = {job(r) for r in every_run if r["drift_warning"]}
    assert across and int(across[1]) == len(drifted) + len(warned), out
    first = {}
    for r in every_run:  # each measurement (a drifted job's two) by its first run
        m = (*job(r), r["disturbed"].startswith("drift: "))
        first[m] = min(first.get(m, r["started_at"]), r["started_at"])
    order = [m[0] for m in sorted(first, key=first.get)]
    same = sum(a == b for a, b in zip(order, order[1:], strict=False))  # one setting's pairs
    assert re.search(rf"^back to back, .*Welch's interval \d+ of {same} \(", out, re.M), out


def _with_spread(row, stem, digits, scale=1.0):
    """A summary's mean as HPC '14's tables print it: with the repeats' half-width."""
    mean, half = scale * float(row[f"mean_{stem}"]), row[f"hw_{stem}"]
    if half in ("", "nan"):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f}\\,$\\pm$\\,{scale * float(half):.{digits}f}"


def _against_off(row, stem, ratio):
    """A ratio to off as HPC '14's tables print it: the ratio of the two means (computed
    here from them), with the summary's Fieller interval where it has one."""
    lo, hi = row[f"{stem}_lo"], row[f"{stem}_hi"]
    assert float(row[stem]) == pytest.approx(ratio, rel=1e-5)
    if lo in ("", "nan"):
        return f"{ratio:.2f}"
    assert float(lo) < ratio < float(hi)
    return f"{ratio:.2f}\\,[{float(lo):.2f}, {float(hi):.2f}]"


def assert_hpc14_prints_the_summary(study):
    """HPC '14's tables (hpc14.tex) print the summary's measured numbers of the primary
    setting: gz-1's write of text against plain's, and its duty cycle against plain's,
    each mean with its half-width."""
    summary = {(r["file_type"], r["codec"], r["op"]): r
               for r in read_csv(study / "local" / "summary.csv") if r["primary"] == "true"}
    tex = (study / "generated" / "local" / "hpc14.tex").read_text()
    gz, off = summary["text", "gz-1", "compress-write"], summary["text", "plain", "plain-write"]
    assert gz["hw_energy_j"] not in ("", "nan")  # two runs at least: the cells have spread
    runtime = float(gz["mean_elapsed_s"]) / float(off["mean_elapsed_s"])
    assert (f"text & gz-1 & {gz['compression_ratio_tex']} & "
            f"{_with_spread(gz, 'cpu_utilization', 0, 100)} & "
            f"{_against_off(gz, 'elapsed_vs_off', runtime)} & "
            f"{_with_spread(gz, 'energy_j', 1)} \\\\") in tex
    duty, duty_off = summary["text", "gz-1", "write-compute"], summary["text", "plain",
                                                                       "write-compute"]
    energy, elapsed = float(duty["mean_energy_j"]), float(duty["mean_elapsed_s"])
    assert (f"gz-1 & {duty['compression_ratio_tex']} & {_with_spread(duty, 'elapsed_s', 2)}"
            f" & {energy / elapsed:.1f} & {_with_spread(duty, 'energy_j', 1)} & "
            f"{_against_off(duty, 'energy_vs_off', energy / float(duty_off['mean_energy_j']))}"
            " \\\\") in tex


def test_the_factors_study_runs_or_names_the_scheduler_this_kernel_lacks(tmp_path):
    """The README's words for config/factors.yaml. Its bfq is a module on Debian's
    kernels and absent from some (this project's VM's): there the pre-flight refuses
    before anything is measured, naming the scheduler and what the disk offers."""
    root = workflow_copy(tmp_path / "wf")
    proc = subprocess.run([*SNAKEMAKE, "--cores", "all", "--configfile", "config.yaml",
                           "config/factors.yaml"], cwd=root, capture_output=True, text=True,
                          check=False)
    study = root / "results" / "factors"
    if proc.returncode == 0:
        assert "SIMULATED" not in pdf_text(study / "paper.pdf")
        return
    refusal = re.search(r"wattzip preflight: setting \S+: factor io_scheduler=(\S+): "
                        r"(\S+) offers only (.*)", proc.stderr)
    assert refusal, why_failed(proc, root)
    wanted, disk, said = refusal.groups()
    offered = said.split(";")[0].split(", ")  # then, if a module would add it: modprobe
    assert offered == factors.offered_io_schedulers(disk) and wanted not in offered
    assert not (study / "local" / "runs").exists()  # nothing was measured


@pytest.mark.study
def test_the_default_study_is_measured_end_to_end(tmp_path):
    """The README's first command after setup.sh: `snakemake --cores all`, about 15 min
    here, so CI leaves it out (tests/conftest.py, whatever other -m is given); `pytest -m
    study` runs it."""
    root = workflow_copy(tmp_path / "wf")
    proc = subprocess.run([*SNAKEMAKE, "--cores", "all"], cwd=root, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, why_failed(proc, root)
    study = root / "results" / "default"
    runs = [r for r in read_csv(study / "local" / "runs.csv") if not r["disturbed"]]
    assert {r["verified"] for r in runs} == {"true"} and {r["simulated"] for r in runs} == {""}
    assert {r["file_type"] for r in runs} == {"zero", "text", "binary", "random"}
    assert {r["op"] for r in runs} == {"plain-write", "compress-write", "plain-read",
                                       "decompress-read"}
    claims = read_csv(study / "local" / "claims.csv")
    assert claims and all(c["verdict"] for c in claims)
    text = pdf_text(study / "paper.pdf")
    assert "SIMULATED" not in text
    estimated = "estimated" in {r["meter_method"] for r in runs}
    assert ("ESTIMATED" in text) == estimated  # no meter here: its energy says so
