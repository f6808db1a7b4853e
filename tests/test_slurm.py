"""Two testbeds measured in place through a real Slurm (tests/slurm/cluster.sh).

Starts munge, slurmctld and two slurmd nodes from Debian's packages on this machine,
runs the tiny study on both through snakemake-executor-plugin-slurm, and stops every
daemon afterwards. Needs root and Debian's package mirror (or Slurm installed).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from wattzip.errors import ConfigError
from wattzip.machine import system

from .test_workflow import REPO, SNAKEMAKE, TINY, expected_quiet_runs, workflow_copy

CLUSTER = REPO / "tests" / "slurm" / "cluster.sh"
OVERLAY = REPO / "tests" / "data" / "slurm.yaml"

# Measured with every quiet check off (tests/data/slurm.yaml): pure tests run beside it.
pytestmark = [pytest.mark.workflow, pytest.mark.beside_pure]


@pytest.fixture(scope="module")
def cluster():
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("starting a Slurm cluster needs root and apt (Debian)")
    up = subprocess.run(["bash", str(CLUSTER), "up"], capture_output=True, text=True,
                        check=False)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield
    finally:
        subprocess.run(["bash", str(CLUSTER), "down"], check=False)
        conf = Path("/etc/slurm/slurm.conf")  # left, it makes every snakemake wait 10 s
        assert not (conf.exists() and "ClusterName=wattzip-test" in conf.read_text())


STUDY_ARGV = [*SNAKEMAKE, "--profile", "profiles/slurm", "--slurm-status-command", "squeue",
              "--slurm-init-seconds-before-status-checks", "1", "--jobs", "4",
              "--configfile", str(TINY), str(OVERLAY)]


def queue() -> list[dict]:
    """The queued and running jobs: name, state, node (or the reason they wait)."""
    out = subprocess.run(["squeue", "-h", "-o", "%j|%T|%N|%r"], capture_output=True,
                         text=True, check=True).stdout
    return [dict(zip(("name", "state", "node", "reason"), line.split("|"), strict=True))
            for line in out.splitlines() if line.strip()]


def job_outputs(root, testbed):
    return list((root / "results" / "tiny" / testbed / "runs").rglob("*.jsonl"))


@pytest.fixture(scope="module")
def down_killed_resumed(cluster, tmp_path_factory):
    """The study as a cluster's user may meet it: node n2 is drained when it starts (a
    down node that answers is returned to service by ReturnToService=2; a drained one
    stays out): node-b's jobs wait in the queue. Snakemake is SIGKILLed once node-a has
    finished a measurement job (its queued and running jobs go on, orphaned, as they do
    on a cluster); n2 comes back and the study is run again. Returns the root and what
    was seen while n2 was out."""
    root = workflow_copy(tmp_path_factory.mktemp("slurm-kill") / "wf")
    subprocess.run(["scontrol", "update", "nodename=n2", "state=drain",
                    "reason=wattzip-test"], check=True)
    seen = {}
    try:
        with open(root / "first-run.log", "w") as log:
            first = subprocess.Popen(STUDY_ARGV, cwd=root, stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline and first.poll() is None:
            waiting = [j for j in queue() if j["state"] == "PENDING"]
            if job_outputs(root, "node-a") and waiting:
                break
            time.sleep(2)
        seen = {"waiting": waiting, "node_b_outputs": job_outputs(root, "node-b"),
                "first_exit": first.poll()}
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    finally:
        subprocess.run(["scontrol", "update", "nodename=n2", "state=resume"], check=True)
    # What Snakemake tells a user after a hard kill, then the same command again.
    subprocess.run([*STUDY_ARGV, "--unlock"], cwd=root, capture_output=True, check=True)
    proc = subprocess.run(STUDY_ARGV, cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-5000:]
    for _ in range(300):  # the orphans of the first run drain (they find their work done)
        if not queue():
            break
        time.sleep(2)
    return root, seen


@pytest.fixture(scope="module")
def study(down_killed_resumed):
    """The finished study of both testbeds: the killed one, resumed to its end (one
    Slurm study serves every test)."""
    return down_killed_resumed[0]


def runs_of(root, testbed):
    with open(root / "results" / "tiny" / testbed / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


def finished(runs):
    """The runs each job finished (a run the kill cut short is in no journal)."""
    return [r for r in runs if r["verified"] == "true" or r["disturbed"]]


def test_each_testbed_was_measured_on_its_own_node(study):
    for testbed, node in (("node-a", "n1"), ("node-b", "n2")):
        runs = expected_quiet_runs(finished(runs_of(study, testbed)), 4, 2)
        assert {r["slurm_node"] for r in runs} == {node}
        assert all(r["slurm_job_id"] for r in runs)


def test_no_two_measured_intervals_of_one_node_overlap(study):
    for testbed in ("node-a", "node-b"):
        text = (study / "results" / "tiny" / testbed / "overlap.txt").read_text()
        assert f"no overlap among {len(runs_of(study, testbed))} runs" in text


def test_every_testbed_measured_the_same_bytes(study):
    shas = []
    for testbed, node in (("node-a", "n1"), ("node-b", "n2")):
        manifest = json.loads((study / "results" / "tiny" / testbed / "manifest.json").read_text())
        shas.append({e["file_type"]: e["sha256"] for e in manifest["inputs"]})
        assert {e["host"]["slurm_node"] for e in manifest["inputs"]} == {node}
    assert shas[0] == shas[1]


def test_one_report_holds_both_testbeds(study):
    assert (study / "figures" / "tiny" / "testbeds.pdf").exists()
    text = subprocess.run(["pdftotext", str(study / "results" / "tiny" / "paper.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert "node-a" in text and "node-b" in text
    assert "test node n2 (feature beta)" in text
    # their figure side by side is in the report, each testbed's estimate named
    assert "compress-write and decompress-read energy relative to plain I/O" in text
    assert "node-b (ESTIMATED)" in text


def test_the_inputs_are_generated_once_where_the_workflow_runs(study):
    """input_master writes to the shared filesystem, on no testbed: a local rule."""
    logs = "".join(p.read_text() for p in (study / ".snakemake" / "log").glob("*.log"))
    assert "localrule input_master:" in logs
    assert not any(line.startswith("rule input_master:") for line in logs.splitlines())


def test_a_job_on_another_node_is_an_error(monkeypatch):
    monkeypatch.setenv("SLURMD_NODENAME", "n2")
    with pytest.raises(ConfigError, match="belongs on Slurm node n1, but runs on n2"):
        system.check_host("n1", None)
    system.check_host("n2", None)
    monkeypatch.delenv("SLURMD_NODENAME")
    with pytest.raises(ConfigError, match="run the study through Slurm"):
        system.check_host("n1", None)


def test_a_down_node_makes_its_jobs_wait_and_records_nothing(down_killed_resumed):
    _, seen = down_killed_resumed
    assert seen["first_exit"] is None  # it was still running when killed
    assert seen["waiting"], "no job waited for the down node"
    assert seen["node_b_outputs"] == []  # nothing measured for node-b while n2 was down
    assert not queue(), "jobs of the killed run are still queued"


def test_a_killed_study_resumes_with_no_run_lost_or_duplicated(down_killed_resumed):
    root, _ = down_killed_resumed
    for testbed, node in (("node-a", "n1"), ("node-b", "n2")):
        runs = runs_of(root, testbed)
        # none lost, none twice (a run the kill cut short is in no journal)
        expected_quiet_runs(finished(runs), 4, 2)
        assert {r["slurm_node"] for r in runs} == {node}
        assert "no overlap" in (root / "results" / "tiny" / testbed / "overlap.txt").read_text()
