"""Quiet runs: the rest of the machine's load over each run, and a CPU hog started in the
middle of a real job (real processes, real bzip2): its runs are flagged and measured again."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import pytest

from wattzip import meters, records
from wattzip.analysis import cell_summary, stopping
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.machine import MachineError
from wattzip.measure import disturbance, idle, repeats
from wattzip.measure.disturbance import QuietLimits, Snapshot
from wattzip.workload import inputs

from .test_runner import make_job


def snap(user=0, busy=0, steal=0, pressure=0, own_user=0.0, own_cpu=0.0):
    return Snapshot(user, busy, steal, pressure, own_user, own_cpu)


def test_load_leaves_out_the_measured_tree_and_the_harness():
    tick = disturbance.TICK
    start = snap()
    # 2 s on 2 CPUs: 1.5 CPU-s of user time, of which the tool took 1.0 and we 0.1.
    end = snap(user=int(1.5 * tick), busy=int(1.8 * tick), steal=int(0.2 * tick),
               pressure=500_000, own_user=0.1, own_cpu=0.15)
    load = disturbance.load_since(start, end, tree_user_s=1.0, tree_cpu_s=1.2, elapsed_s=2.0,
                                  cpus=2)
    assert load["other_user_s"] == pytest.approx(0.4)
    assert load["other_user_share"] == pytest.approx(0.1)
    assert load["other_cpu_share"] == pytest.approx(0.45 / 4)
    assert load["steal_share"] == pytest.approx(0.05)
    assert load["cpu_pressure_share"] == pytest.approx(0.25)


def test_judge_names_the_cause_and_forgives_counting_ticks():
    limits = QuietLimits(max_other_cpu=0.05, max_steal=0.05)
    tick = 1 / disturbance.TICK
    counting_only = {"elapsed_s": 0.05, "cpus": 2, "other_user_s": 4 * tick, "steal_share": 0}
    assert limits.judge(counting_only) is None
    # steal is counted in the same ticks: one stolen tick in a 20 ms run is no disturbance
    one_stolen_tick = {"elapsed_s": 0.02, "cpus": 2, "other_user_s": 0.0,
                       "steal_share": tick / (0.02 * 2)}
    assert limits.judge(one_stolen_tick) is None
    busy = {"elapsed_s": 2.0, "cpus": 2, "other_user_s": 1.0, "steal_share": 0.0,
            "cpu_pressure_share": 0.3}
    why = limits.judge(busy)
    assert "other processes used" in why and "CPU pressure 30%" in why
    stolen = {"elapsed_s": 2.0, "cpus": 2, "other_user_s": 0.0, "steal_share": 0.21}
    assert "stole 20%" in limits.judge(stolen)  # the counting ticks forgiven
    assert disturbance.count_disturbed([{"disturbed": why}, {"disturbed": None}]) == {
        "other processes": 1}


def test_an_idle_window_forgives_the_counting_ticks_as_a_run_does(monkeypatch):
    """A 0.2 s window on a saturated machine counts a tick per CPU more at each end (105%
    of the CPUs): counting, as a run's judge forgives it, so a limit of 1 refuses nothing
    (tests/data/slurm.yaml turns the check off so; it once refused 105% at a limit of
    100%), and a window half busy is still refused at 10%."""
    busy = {"jiffies": 0}
    monkeypatch.setattr(idle, "cpu_busy_jiffies", lambda: busy["jiffies"])
    # This process's own ticks are left out of the others' load; on a busy machine
    # reading /proc between restart and check may cost one, so they are held still here.
    monkeypatch.setattr(idle.QuietCheck, "_own_jiffies", lambda self: 0)
    check = idle.QuietCheck()
    cpus, tick = check.cpus, disturbance.TICK

    def window(share: float) -> None:
        busy["jiffies"] = 0
        check.restart()
        check.t0 = time.monotonic() - 0.2  # a window of 0.2 s, ended now
        busy["jiffies"] = round(share * 0.2 * cpus * tick) + 2 * cpus

    window(1.0)
    check.require_quiet(1.0, "idle window 1")  # all of the CPUs, and the counting
    window(0.5)
    # 50%, or a little less as the window's end is read after its 0.2 s
    with pytest.raises(MachineError, match=r"other processes used (4[5-9]|50)% of its"):
        check.require_quiet(0.1, "idle window 2")
    assert QuietLimits(max_other_cpu=1.0).judge(
        {"elapsed_s": 0.2, "cpus": cpus, "other_user_s": 0.2 * cpus + 4 * cpus / tick,
         "steal_share": 0.0}) is None


def test_the_idle_windows_wait_counts_kernel_time_as_their_check_does():
    """A neighbour whose load is kernel time (dd copying /dev/zero: clear_user in the
    kernel) discards an idle window (QuietCheck counts every busy CPU). The wait before
    the next window judges the same load: with count_system it waits it out (here: is
    refused after wait_s), where a run's wait, counting user time alone, finds the machine
    quiet and the next window would be discarded again."""
    dd = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=1M"],
                          stderr=subprocess.DEVNULL)
    try:
        runs_wait = QuietLimits(max_other_cpu=0.1, wait_s=2.0)
        assert runs_wait.wait_until_quiet(lambda _: None, "run") < 2.0
        idle_wait = QuietLimits(max_other_cpu=0.1, max_steal=1.0, wait_s=2.0,
                                count_system=True)
        with pytest.raises(disturbance.MachineError, match="stayed busy.*busiest: dd"):
            idle_wait.wait_until_quiet(lambda _: None, "idle window 2")
    finally:
        dd.kill()
        dd.wait()


def test_every_run_records_the_other_load(small_inputs, tmp_path):
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60))
    job = make_job(small_inputs, tmp_path, "gz-1")
    repeats.run_job(job, meter, tmp_path / "j.jsonl", log=lambda m: None)
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    for r in runs:
        assert 0 <= r["other_user_share"] <= 1 and r["steal_share"] >= 0
        assert r["disturbed"] is None  # no limits given: recorded, not judged


def test_a_cpu_hog_mid_job_is_flagged_and_measured_again(tmp_path):
    """Three busy processes per CPU start after the first run; the job finds its next run
    disturbed, waits for the machine to be quiet again (saying so) rather than measuring
    into the same load, and measures until it has its quiet runs once they stop."""
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60))
    # Runs of about a second (8 MiB through bzip2 -9), so that the kernel's tick counting
    # is a few percent of them. 75%: the hogs take six sevenths of the CPUs; a neighbour's
    # tests on this shared machine (up to two thirds of it, seen) stay under.
    path = tmp_path / "text.bin"
    entry = inputs.generate("text", 8 * 2**20, path, seed=7, progress=False)
    job = make_job({"text": (path, entry)}, tmp_path, "bz-9", min=2, max=4,
                   ci_target=1.0, quiet=QuietLimits(max_other_cpu=0.75, max_steal=1.0))
    hog: list[subprocess.Popen] = []
    lines: list[str] = []

    def log(line: str) -> None:
        lines.append(line)
        if " r1 " in line and not hog:
            hog.extend(subprocess.Popen([sys.executable, "-c", "while True: pass"])
                       for _ in range(3 * (os.cpu_count() or 1)))
        elif hog and hog[0].poll() is None and "waiting up to 600 s" in line:
            for p in hog:
                p.kill()
                p.wait()

    try:
        summary = repeats.run_job(job, meter, tmp_path / "j.jsonl", log=log)
    finally:
        for p in hog:
            with contextlib.suppress(ProcessLookupError):
                p.kill()
            p.wait()
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    disturbed = [r for r in runs if r.get("disturbed")]
    assert len(disturbed) >= 1
    waited = next(i for i, x in enumerate(lines) if "the machine is busy (other processes" in x)
    assert "DISTURBED" in lines[waited - 1] and "is quiet again after" in lines[waited + 1]
    assert "busiest: python" in lines[waited]  # the hogs, named
    for r in disturbed:
        assert not r["verified"] and r["failure"].startswith("disturbed: other processes")
    assert summary["complete"] and summary["failed"] == 0, "\n".join(lines)
    assert summary["disturbed"] == len(disturbed)
    # The verdicts and means see the quiet runs only, and count the others apart.
    for row in cell_summary.summarize(runs, AnalysisOptions()):
        mine = [r for r in runs if r["op"] == row["op"]]
        quiet = [r for r in mine if r["verified"]]
        assert row["n"] == len(quiet) >= 2 and row["n_failed"] == 0
        assert row["n_disturbed"] == sum(1 for r in mine if r.get("disturbed"))
        assert all(job.quiet.judge(r) is None for r in quiet)


def test_the_report_says_how_many_runs_were_disturbed_and_why():
    runs = [{"other_user_share": 0.01}, {"other_user_share": 0.4,
                                         "disturbed": "other processes used 40% of the 2 CPUs"},
            {"other_user_share": 0.0, "disturbed": "drift: the reference operation's time"},
            {"other_user_share": 0.0, "drift_warning": "the reference operation's time"}]
    said = disturbance.describe(runs)
    assert said.startswith("2 of 4 runs were disturbed")
    assert "1 by other processes' CPU time" in said and "1 by the machine's drift" in said
    assert "1 runs are kept although their job drifted again" in said
    assert disturbance.describe([{"other_user_share": ""}]).startswith("The runs recorded no")


def test_a_disturbed_writes_log_line_says_how_its_output_was_verified():
    """The first write of a cell decompresses its output; when the hypervisor steals that
    run, the log still says the output was verified, and calls the run disturbed (measured
    again), not failed: the job's logs count every decompression (tests/test_verify_once)."""
    from types import SimpleNamespace

    job = SimpleNamespace(file_type="random", codec_name="gz-1")
    run = {"codec": "gz-1", "repeat": 1, "op": "compress-write", "elapsed_s": 0.054,
           "energy_j": 0.2, "meter_method": "estimated", "verified": False,
           "verification": "decompressed", "disturbed": "the hypervisor stole 9%",
           "failure": "disturbed: the hypervisor stole 9%; measured again"}
    line = repeats._progress_line(job, run)
    assert "DISTURBED (disturbed: the hypervisor stole 9%; measured again)" in line
    assert line.endswith(", verified by decompression")
    failed = {**run, "disturbed": None, "failure": "output differs from the input"}
    assert "FAILED (output differs" in repeats._progress_line(job, failed)
    assert "verified by" not in repeats._progress_line(job, failed)


class StolenUntil(QuietLimits):
    """A hypervisor that steals from every run of the first repeats, then stops."""

    def __init__(self, last_stolen_repeat: int):
        super().__init__()
        object.__setattr__(self, "last", last_stolen_repeat)

    def judge(self, record: dict) -> str | None:
        # (the waits between repeats sample the machine, which is quiet: no repeat)
        return ("the hypervisor stole 30% of the CPUs' time (limit 5%)"
                if record.get("repeat", self.last + 1) <= self.last else None)


def test_a_short_job_whose_first_repeats_were_stolen_still_gets_its_repeats(
        small_inputs, tmp_path):
    """min = max = 2 (the tiny studies' tests): three stolen repeats of four allowed left a
    plain job with one quiet repeat, and the workflow failed (CI of a914e50)."""
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60))
    job = make_job(small_inputs, tmp_path, "plain", min=2, max=2,
                   quiet=StolenUntil(3))
    summary = repeats.run_job(job, meter, tmp_path / "j.jsonl", log=lambda m: None)
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    assert summary["complete"] and summary["failed"] == 0 and summary["disturbed"] == 6
    quiet = [r for r in runs if r["verified"]]
    assert sorted(r["repeat"] for r in quiet) == [4, 4, 5, 5]
    assert stopping.repeat_cap(2, runs) == 4 + 3
    # and no further than twice the most again, however much is stolen
    assert stopping.repeat_cap(2, [{"repeat": k, "disturbed": "stolen"} for k in range(9)]) == 8
