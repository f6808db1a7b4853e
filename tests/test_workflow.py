"""Drive the real workflow (snakemake as a subprocess) on a tiny study."""

from __future__ import annotations

import collections
import contextlib
import csv
import fcntl
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .abba import assert_abba

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "tests" / "data" / "tiny.yaml"
ONE_SETTING = REPO / "tests" / "data" / "one-setting.yaml"
WORKFLOW_FILES = ("Snakefile", "config.yaml", "config", "rules", "scripts", "profiles",
                  "envs", "paper")

pytestmark = pytest.mark.workflow


def workflow_copy(root: Path, rehearsed: bool = False) -> Path:
    """A fresh copy of the workflow, as a clone would have it. `rehearsed`: with the tiny
    study's rehearsal in it already, as the study's next invocation finds it, for a test
    of what comes after the rehearsal (the measuring path, a kill, a lock): Snakemake makes
    it again only where a file of it is missing or older than its inputs, so it stands for
    an overlay's rehearsal too (test_every_study_rehearses_to_its_pdf_marked_simulated
    rehearses each shipped one, and the tiny_study fixture its own)."""
    root.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("generated"))
        elif src.exists():
            shutil.copy(src, root / name)
    if rehearsed:
        shutil.copytree(tiny_rehearsal(_run_folder(root)), root / "rehearsal" / "tiny",
                        symlinks=True)
    return root


def _run_folder(path: Path) -> Path:
    """The folder of this run of the suite that every worker's tmp_path is in (pytest's
    pytest-<n>; pytest keeps the last three runs' and removes older ones), else the
    folder of `path` (a --basetemp of one's own: a rehearsal for each test)."""
    return next((p for p in path.parents if re.fullmatch(r"pytest-\d+", p.name)), path.parent)


@functools.cache
def tiny_rehearsal(run: Path) -> Path:
    """tests/data/tiny.yaml's rehearsal (`wattzip rehearse`, simulated runs only), made once
    per run of the suite in its folder `run`, whichever worker asks first (the others wait
    for it): its tree, rehearsal/tiny/."""
    root = run / "tiny-rehearsal"
    made = root / "rehearsal" / "tiny"
    with open(run / "tiny-rehearsal.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (made / "paper.pdf").exists():
            shutil.rmtree(root, ignore_errors=True)
            workflow_copy(root)
            proc = subprocess.run([sys.executable, "-m", "wattzip", "rehearse", "--cores",
                                   "2", "--configfile", str(TINY)], cwd=root,
                                  capture_output=True, text=True, check=False)
            assert proc.returncode == 0, proc.stderr[-3000:]
    return made


def why_failed(proc: subprocess.CompletedProcess, cwd: Path) -> str:
    """Snakemake's last words and the end of every log it names: a failed job's own
    reason is in its log, which a CI run's report would otherwise not show."""
    said = [proc.stderr[-3000:]]
    for name in dict.fromkeys(re.findall(r"log: (\S+) \(check log", proc.stderr)):
        log = cwd / name
        if log.is_file():
            said.append(f"--- {name}:\n" + log.read_text(errors="replace")[-3000:])
    return "\n".join(said)


def snakemake(cwd: Path, *args: str, check: bool = True, targets=("runs",),
              overlays=()) -> subprocess.CompletedProcess:
    # Targets first: --configfile takes every value that follows it.
    argv = [*SNAKEMAKE, *[f"results/tiny/tiny/{t}" for t in _targets(targets)], "--cores", "2",
            *args, "--configfile", str(TINY), *map(str, overlays)]
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{proc.stdout[-3000:]}\n{why_failed(proc, cwd)}")
    return proc


def _targets(names):
    table = {"runs": ["runs.csv", "overlap.txt", "crosscheck.csv", "provenance.json",
                      "manifest.json", "plan/estimate.json", "appendix.md"]}
    return [target for name in names for target in table.get(name, [name])]


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def quiet_runs(all_runs):
    """The runs every statistic uses: a run disturbed by other load on the machine is
    kept in runs.csv, flagged with its reason, and measured again (wattzip.measure.disturbance)."""
    disturbed = [r for r in all_runs if r["disturbed"]]
    assert all(r["verified"] == "false" and r["failure"] for r in disturbed)
    return [r for r in all_runs if not r["disturbed"]]


def expected_quiet_runs(every_run, cells, repeats):
    """The quiet runs of a study that planned `repeats` runs of each of `cells` cells
    (setting, file type, codec, operation): each cell has them, none twice, and extra
    ones only as many as were disturbed, since a disturbed run is measured again in a
    further repeat whose other operation adds one (a drifted job's runs add none: the
    job measures them all again)."""
    runs = quiet_runs(every_run)
    per_cell = collections.Counter((r["setting"], r["file_type"], r["codec"], r["op"])
                                   for r in runs)
    assert len(per_cell) == cells and min(per_cell.values()) == repeats, per_cell
    assert cells * repeats <= len(runs) <= cells * repeats + len(every_run) - len(runs)
    keys = {(r["setting"], r["file_type"], r["codec"], r["op"], r["repeat"]) for r in runs}
    assert len(keys) == len(runs)
    assert all(r["verified"] == "true" for r in runs)
    return runs


@pytest.mark.beside_pure
def test_every_expected_run_is_there_and_verified(tiny_study):
    every_run = read_csv(tiny_study / "results/tiny/tiny/runs.csv")
    # 2 bandwidths x 2 file types x (gz-1, lzo-1, plain) x 2 operations, 2 repeats each
    runs = expected_quiet_runs(every_run, 24, 2)
    assert {r["meter_method"] for r in runs} == {"estimated"}
    assert all(float(r["energy_passive_j"]) > 0 for r in runs)
    # the paper's target: a fresh ext2 on a loop device, unmounted inside every write
    assert {r["target_fs"] for r in runs} == {"ext2"}
    assert {r["flush"] for r in runs} == {"unmount"}
    assert {r["target_device"].startswith("/dev/loop") for r in runs} == {True}
    plain = [r for r in runs if r["codec"] == "plain"]
    assert {r["tool"] for r in plain} == {"dd"} and {r["copy_buffer_bytes"] for r in plain} == {
        "131072"}
    assert {r["own_blocks"] for r in runs if r["op"].endswith("write")} == {"true"}
    # the bandwidth factor: half the runs on an emulated 50 MB/s disk, the input on it
    # and one budget for its reads and writes (the bandwidth itself is checked in
    # test_onedisk.py)
    capped = [r for r in runs if r["bandwidth_bytes_per_s"] == "50000000"]
    assert len({(r["setting"], r["file_type"], r["codec"], r["op"]) for r in capped}) == 12
    assert capped and all(r["setting"].endswith(".bw-50MBps") for r in capped)
    assert {r["input_layout"] for r in runs} == {"on-medium"}
    assert {r["bandwidth_budget"] for r in capped} == {"one for reads and writes"}
    # the scheduler factor, switched on the disk under the loop image, or on an emulated
    # disk on the loop device's own queue (the last that orders its I/O before the budget)
    assert {r["io_scheduler_in_effect"] for r in runs} == {"mq-deadline"}
    assert {r["scheduler_disk"].startswith("loop") for r in capped} == {True}
    assert not any(r["scheduler_disk"].startswith("loop") for r in runs if r not in capped)


@pytest.mark.beside_pure
def test_no_intervals_overlap(tiny_study):
    every = len(read_csv(tiny_study / "results/tiny/tiny/runs.csv"))  # disturbed ones too
    text = (tiny_study / "results/tiny/tiny/overlap.txt").read_text()
    assert f"no overlap among {every} runs" in text


@pytest.mark.beside_pure
def test_provenance_manifest_and_crosscheck(tiny_study):
    prov = json.loads((tiny_study / "results/tiny/tiny/provenance.json").read_text())
    assert prov["testbed"] == "tiny" and prov["cpu_count"] >= 1
    assert prov["description"] == "workflow test on Dell's box (quotes reach the shell safely)"
    assert prov["target_dir"].endswith("results/tiny/tiny/target dir")
    assert prov["tool_versions"]["gz-1"]
    manifest = json.loads((tiny_study / "results/tiny/tiny/manifest.json").read_text())
    assert {e["file_type"] for e in manifest["inputs"]} == {"text", "random"}
    # hyperfine times commands on a plain directory with the machine as it is: it cannot
    # time the tiny study's primary setting (an ext2 image, mq-deadline), so it compares
    # nothing and says why, rather than dividing by that setting's mean.
    cross = read_csv(tiny_study / "results/tiny/tiny/crosscheck.csv")
    assert [r["codec"] for r in cross] == ["gz-1"]
    assert all(r["conditioned"] == "false" and r["ratio_hyperfine_to_harness"] == ""
               for r in cross)
    assert "medium image, io_scheduler mq-deadline" in cross[0]["not_compared"]


@pytest.mark.beside_pure
def test_second_invocation_does_nothing(tiny_study):
    proc = snakemake(tiny_study, "-n")
    assert "Nothing to be done" in proc.stdout + proc.stderr


@pytest.mark.beside_pure
def test_editing_an_unrelated_key_reruns_no_measurement(tiny_study):
    """A job's params are its own slice of the study: the verdict's margin and the
    testbed's description change the analysis and the text, never a measured run."""
    overlay = tiny_study / "unrelated.yaml"
    overlay.write_text("verdict: {margin: 0.05}\n"
                       "testbed: {name: tiny, description: another description}\n")
    proc = snakemake(tiny_study, "-n", "-p", targets=("runs", "claims.csv"), overlays=[overlay])
    text = proc.stdout + proc.stderr

    def scheduled(rule):
        return re.search(rf"^\s*(local)?(rule|checkpoint) {rule}:", text, re.M) is not None

    assert scheduled("analyze"), text[-2000:]  # the margin is the analysis's
    assert "wattzip analyze " in text and "--margin 0.05 " in text, text[-2000:]
    for rule in ("measure_runs", "idle_power", "preflight", "manifest", "runs_table"):
        assert not scheduled(rule), text[-3000:]


@pytest.mark.beside_pure
def test_editing_a_claim_reruns_the_analysis(tiny_study):
    """claims.yaml is an input of the analysis: a claim edited after a study makes its
    claims.csv stale, and the next run decides it again (nothing measured again)."""
    claims = tiny_study / "paper/reference/claims.yaml"
    before, original = os.stat(claims), claims.read_text()
    claims.write_text(original + "# edited\n")  # Snakemake 9 compares checksums, not mtimes
    try:
        proc = snakemake(tiny_study, "-n", targets=("runs", "claims.csv"))
    finally:
        claims.write_text(original)
        os.utime(claims, ns=(before.st_atime_ns, before.st_mtime_ns))
    text = proc.stdout + proc.stderr
    assert re.search(r"^\s*(local)?rule analyze:", text, re.M), text[-2000:]
    assert not re.search(r"^\s*(local)?(rule|checkpoint) measure_runs:", text, re.M), text[-2000:]


def test_the_verdict_design_stops_each_codec_at_a_planned_look(tmp_path):
    """repeats.design verdict: each codec's job measures its own plain arm, interleaved
    with the codec's in ABBA order, and stops at one of the looks; its log says which
    verdicts decided it, and the analysis and the report go on as under the paper's rule
    (the plain rows of summary.csv pooling every codec's plain arm)."""
    root = workflow_copy(tmp_path / "wf", rehearsed=True)
    overlay = root / "verdict.yaml"
    overlay.write_text("repeats: {min: 2, max: 2, ci_target: 0.05, design: verdict, "
                       "looks: [2, 3, 4]}\nverdict: {kind_metrics: [E]}\n"
                       "factors: {bandwidth: [unlimited]}\n")
    dry = snakemake(root, "-n", overlays=[overlay])
    # 1 setting x 2 file types x 2 codecs, each repeat 2 arms x 2 operations, 2 to 4 times
    assert "(each with its own plain arm) x 1 setting(s) = 4 measurement jobs, 32-64 " \
           "measured runs" in dry.stderr
    snakemake(root, targets=("runs", "breakeven.csv"), overlays=[overlay])
    assert not list((root / "results/tiny/tiny/runs").rglob("plain.jsonl")), "no baseline jobs"
    every_run = read_csv(root / "results/tiny/tiny/runs.csv")
    runs = quiet_runs(every_run)
    assert all(r["verified"] == "true" for r in runs)
    jobs: dict[tuple, list[dict]] = {}
    for r in every_run:
        codec = r["paired_with"] if r["codec"] == "plain" else r["codec"]
        assert codec in ("gz-1", "lzo-1"), "every plain run is paired with a codec's job"
        jobs.setdefault((r["setting"], r["file_type"], codec), []).append(r)
    assert len(jobs) == 4
    looks = {}
    for (setting, ftype, codec), mine in jobs.items():
        quiet = quiet_runs(mine)
        per_op = {op: sum(r["op"] == op for r in quiet) for op in (
            "plain-write", "plain-read", "compress-write", "decompress-read")}
        # A disturbed run is measured again in a further repeat, so the other operations
        # of that repeat have one run more; the look counts the scarcest operation's.
        n = looks[(setting, ftype, codec)] = min(per_op.values())
        assert n in (2, 3, 4) and max(per_op.values()) - n <= len(mine) - len(quiet), per_op
        # A job the drift check caught is measured again from its first repeat; the
        # first measurement's runs stay, each flagged "drift: ..." (wattzip.measure.drift).
        drifted = [r for r in mine if r["disturbed"].startswith("drift: ")]
        final = [r for r in mine if not r["disturbed"].startswith("drift: ")]
        for epoch in (drifted, final) if drifted else (final,):
            assert_abba(epoch, (setting, ftype, codec))
        assert not drifted or max(r["started_at"] for r in drifted) < min(
            r["started_at"] for r in final)
        log = (root / f"results/tiny/tiny/logs/runs/{setting}/{ftype}/{codec}.log").read_text()
        assert f"stopped at the look of {n} runs per arm" in log
        # kind_metrics [E]: E's kind for every cell, T's too where a claim reads it
        # (slow_disk_text_time: gz-1 and lzo-1 on text)
        asked = "T, E" if (ftype, codec) in (("text", "gz-1"), ("text", "lzo-1")) else "E"
        assert f"break-even kinds asked: {asked}" in log, log
        # it stopped on its verdicts: no width target to report; disturbed runs are no failures
        disturbed = sum(bool(r["disturbed"]) and not r["disturbed"].startswith("drift: ")
                        for r in mine)
        assert "CI target" not in log and (
            f"0 failed run(s), {disturbed} disturbed by other load" in log), log
    assert not list((root / "results/tiny/tiny/logs/runs").rglob("plain.log"))
    summary = read_csv(root / "results/tiny/tiny/summary.csv")
    for row in (r for r in summary if r["codec"] == "plain"):
        pooled = [r for r in runs if (r["setting"], r["file_type"], r["codec"], r["op"]) == (
            row["setting"], row["file_type"], "plain", row["op"])]
        assert int(row["n"]) == len(pooled) and {r["paired_with"] for r in pooled} == {
            "gz-1", "lzo-1"}
    cells = read_csv(root / "results/tiny/tiny/breakeven.csv")
    assert cells and {c["verdict"] for c in cells} <= {"saves", "costs", "negligible",
                                                       "undecided"}
    for c in cells:  # each verdict on its job's own runs, at the look it stopped at
        assert int(float(c["n"])) == looks[(c["setting"], c["file_type"], c["codec"])]


def test_dry_run_tells_how_many_runs(tmp_path):
    root = workflow_copy(tmp_path / "wf")
    proc = snakemake(root, "-n")
    assert "2 setting(s) = 12 measurement jobs, 48 measured runs" in proc.stderr


def test_only_folders_whose_records_name_them_are_copied_in_testbeds(tmp_path):
    """results/<study>/tiny.bak (a user's backup of the testbed's folder) holds a runs.csv
    too: it is no testbed (its runs are tiny's) and the report does not ask for its
    tables; a folder copied in from another machine, whose runs name it, is one."""
    root = workflow_copy(tmp_path / "wf")
    runs = "testbed,file_type,codec,op,repeat,verified\n{},text,gz-1,write,1,true\n"
    for folder, testbed in (("tiny.bak", "tiny"), ("other", "other")):
        (root / "results/tiny" / folder).mkdir(parents=True)
        (root / "results/tiny" / folder / "runs.csv").write_text(runs.format(testbed))
    proc = snakemake(root, "-n", targets=())
    assert "results/tiny/tiny.bak/ is not a testbed's folder (its runs.csv names testbed " \
           "tiny)" in proc.stderr
    assert "results/tiny/tiny.bak/summary.csv" not in proc.stdout + proc.stderr
    assert "results/tiny/other/summary.csv" in proc.stdout


def test_bad_config_names_the_key(tmp_path):
    root = workflow_copy(tmp_path / "wf")
    proc = snakemake(root, "-n", "--config", "file_sise=1MiB", check=False)
    assert proc.returncode != 0
    assert "file_sise" in proc.stderr + proc.stdout
    proc = snakemake(root, "-n", "--config", "codecs=[gz-7x]", check=False)
    assert proc.returncode != 0
    assert "unknown codec or codec set 'gz-7x'" in proc.stdout + proc.stderr


def test_unsettable_factor_stops_before_any_run(tmp_path):
    root = workflow_copy(tmp_path / "wf", rehearsed=True)
    overlay = tmp_path / "gov.yaml"
    overlay.write_text("factors:\n  governor: [powersave]\n")
    proc = snakemake(root, overlays=[overlay], check=False)
    assert proc.returncode != 0
    assert "governor=powersave" in proc.stderr
    assert not list((root / "results/tiny/tiny").glob("runs/**/*.jsonl"))
    assert not list((root / "results/tiny/tiny").glob("inputs/*.bin")), "nothing generated either"


def test_a_study_requiring_a_meter_stops_before_generating_anything(tmp_path):
    """paper.yaml on a machine without a meter: a clear message, and no input written."""
    root = workflow_copy(tmp_path / "wf", rehearsed=True)
    overlay = tmp_path / "measured.yaml"
    overlay.write_text("meter:\n  order: [powercap, ipmi, model]\n  require_measured: true\n"
                       f"  powercap_root: {tmp_path / 'no-powercap'}\n")
    proc = snakemake(root, overlays=[overlay], check=False)
    assert proc.returncode != 0
    assert "requires a measured meter" in proc.stderr
    assert not list((root / "results/tiny/tiny").glob("inputs/*.bin"))


def test_killed_run_resumes_without_redoing_finished_work(tmp_path):
    root = workflow_copy(tmp_path / "wf", rehearsed=True)
    overlay = ONE_SETTING
    argv = [*SNAKEMAKE, "results/tiny/tiny/runs.csv", "--cores", "2", "--configfile", str(TINY),
            str(overlay)]
    proc = subprocess.Popen(argv, cwd=root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    runs_dir = root / "results/tiny/tiny/runs"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(runs_dir.glob("**/*.jsonl")):
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p: p.read_text() for p in runs_dir.glob("**/*.jsonl")}
    assert finished, "at least one job finished before the kill"
    journaled = set()
    for path in (root / "results/tiny/tiny/journal").glob("**/*.jsonl"):
        for line in path.read_text().splitlines():
            with contextlib.suppress(json.JSONDecodeError, KeyError):  # torn by the kill
                journaled.add(json.loads(line)["started_at"])
    # what Snakemake tells a user after a hard kill, then the same command again
    snakemake(root, "--unlock", targets=[], overlays=[overlay])
    snakemake(root, targets=["runs.csv"], overlays=[overlay])
    for path, text in finished.items():
        # Snakemake may run a job again whose bookkeeping the kill cut short;
        # the job then finds every run in its journal and measures nothing anew.
        assert path.read_text() == text, f"{path}: measurements were redone"
    final = {r["started_at"] for r in read_csv(root / "results/tiny/tiny/runs.csv")}
    assert journaled <= final, "every run completed before the kill is kept"
    verified: dict = {}
    for r in read_csv(root / "results/tiny/tiny/runs.csv"):
        key = (r["setting"], r["file_type"], r["codec"], r["op"])
        verified[key] = verified.get(key, 0) + (r["verified"] == "true")
    assert len(verified) == 6 and min(verified.values()) == 2


@pytest.mark.beside_pure
def test_appendix_commands_reproduce_every_claims_row(tiny_study):
    """Every claim of the registry is in the appendix, and its "decide" command, run on
    the tiny study, gives that claim's rows of claims.csv."""
    from wattzip.analysis.claims import load_claims

    text = (tiny_study / "results/tiny/tiny/appendix.md").read_text()
    claims = read_csv(tiny_study / "results/tiny/tiny/claims.csv")
    for claim in load_claims(REPO / "paper" / "reference"):
        assert f"## {claim.id}: " in text, claim.id
        section = text.split(f"## {claim.id}: ", 1)[1].split("\n## ", 1)[0]
        if claim.overlay == "none":  # it needs the original's hardware: no experiment here
            assert "rerun the experiment: `none: it needs the original's hardware`" in section
        else:
            assert ("rerun the experiment: `.venv/bin/snakemake --cores all --configfile"
                    in section)
            assert str(TINY.relative_to(REPO)) in section or str(TINY) in section
        command = section.split("decide the claim again from the runs: `", 1)[1].split("`")[0]
        argv = command.split()
        assert argv[:2] == [".venv/bin/wattzip", "claims"]
        proc = subprocess.run([sys.executable, "-m", "wattzip", *argv[1:], "--reference",
                               str(REPO / "paper" / "reference")], cwd=tiny_study,
                              capture_output=True, text=True, check=True)
        got = list(csv.DictReader(proc.stdout.splitlines()))
        want = [r for r in claims if r["claim_id"] == claim.id]
        assert [(r["setting"], r["verdict"], r["evidence"]) for r in got] == \
               [(r["setting"], r["verdict"], r["evidence"]) for r in want], claim.id


@pytest.mark.beside_pure
def test_plan_estimates_the_study(tiny_study):
    estimate = json.loads((tiny_study / "results/tiny/tiny/plan/estimate.json").read_text())
    assert estimate["runs_min"] == 48 and estimate["wall_min_s"] > estimate["measured_min_s"] > 0
    proc = snakemake(tiny_study, "-n")
    assert "estimate: wattzip study 'tiny' on testbed 'tiny': 48 measured runs" in proc.stderr


def test_two_studies_on_one_machine_take_turns(tmp_path):
    """Two clones started at once: every measuring job holds the machine's lock, so the
    second waits for the first (and says so), no measured intervals of the two studies
    overlap, and both finish."""
    overlay = tmp_path / "small.yaml"
    overlay.write_text("file_types: [text]\nfile_size: 1MiB\ncodecs: [gz-1]\n"
                       "crosscheck: {codecs: []}\nfactors: {bandwidth: [unlimited]}\n"
                       "idle: {count: 1, seconds: 0.2}\n")
    roots = [workflow_copy(tmp_path / name, rehearsed=True) for name in ("a", "b")]
    procs = [subprocess.Popen([*SNAKEMAKE, "results/tiny/tiny/runs.csv", "--cores", "2",
                               "--configfile", str(TINY), str(overlay)], cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for root in roots]
    outputs = [p.communicate(timeout=900) for p in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err[-3000:]
    runs = [r for root in roots for r in read_csv(root / "results/tiny/tiny/runs.csv")]
    assert len({r["testbed"] for r in runs}) == 1 and len(runs) > 8
    spans = sorted((r["started_at"], r["ended_at"]) for r in runs if r["started_at"])
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end, "two studies measured at the same time"
    said = "".join(p.read_text() for root in roots
                   for p in (root / "results/tiny/tiny/logs").rglob("*.log"))
    said += "".join(err for _, err in outputs)  # scripts' own stderr
    assert "waiting for the machine" in said
