"""Drift: a fixed reference operation before and after a job, and a load step that makes
the machine slower mid-job (real processes): the job's runs are flagged and measured
again."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys

import pytest

from wattzip import meters, records
from wattzip.analysis import cell_summary
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.latex import tex
from wattzip.measure import drift, idle
from wattzip.measure.disturbance import DriftCheck
from wattzip.model import layout, repeat_design
from wattzip.model.study import Study
from wattzip.run_record import count_failed

from .test_runner import make_job


def ref(*seconds):
    return [{"elapsed_s": s, "energy_j": None} for s in seconds]


def test_compare_needs_both_a_change_beyond_noise_and_beyond_the_limit():
    assert drift.compare(ref(1.0, 1.01, 0.99), ref(1.5, 1.52, 1.49), 0.05).startswith(
        "the reference operation's time changed by +50%")
    assert drift.compare(ref(1.0, 1.01, 0.99), ref(1.02, 1.03, 1.01), 0.05) is None  # small
    assert drift.compare(ref(1.0, 1.6, 0.7), ref(1.5, 0.9, 1.3), 0.05) is None  # noise



def test_a_drift_of_estimated_energy_says_estimated():
    def runs(*joules, method="estimated"):
        return [{"elapsed_s": 1.0, "energy_j": j, "meter_method": method} for j in joules]

    said = drift.compare(runs(10.0, 10.1, 9.9), runs(15.0, 15.2, 14.9), 0.05)
    assert said.startswith("the reference operation's ESTIMATED energy changed by +50%")
    measured = drift.compare(runs(10.0, 10.1, 9.9, method="measured"),
                             runs(15.0, 15.2, 14.9, method="measured"), 0.05)
    assert measured.startswith("the reference operation's energy changed by +50%")

def test_no_check_runs_the_job_as_before(small_inputs, tmp_path):
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60))
    job = make_job(small_inputs, tmp_path, "gz-1")
    summary, runs = drift.checked_job(job, meter, str(tmp_path / "j.jsonl"), lambda m: None)
    assert summary["complete"] and len(runs) == 4 and all(r["verified"] for r in runs)
    assert not (tmp_path / "j.jsonl.reference.jsonl").exists()


def test_a_switch_of_level_no_larger_than_between_calibration_phases_is_no_drift():
    """Each end's repeats share a level; the calibration's phases, seconds apart, show how
    far the level moves with no job between them."""
    before, after = ref(1.0, 1.01, 0.99), ref(1.15, 1.16, 1.14)
    hopping = [ref(m, m + 0.01, m - 0.01) for m in (1.0, 1.15, 0.95, 1.1, 1.2, 1.0)]
    steady = [ref(m, m + 0.01, m - 0.01) for m in (1.0, 1.005, 0.995, 1.0, 1.002, 0.998)]
    assert "Welch's 95% interval" in drift.compare(before, after, 0.05)  # the repeats alone
    assert drift.compare(before, after, 0.05, hopping) is None
    assert "6 calibration phases' 95% interval" in drift.compare(before, after, 0.05, steady)
    # phases of other repeats than the ends' say nothing of them: Welch's interval again
    assert "Welch's" in drift.compare(before, after, 0.05, [p[:2] for p in steady])
    # one repeat per end: the phases of one repeat still judge it; without them, no spread
    assert "calibration phases'" in drift.compare(before[:1], after[:1], 0.05,
                                                  [p[:1] for p in steady])
    assert drift.compare(before[:1], after[:1], 0.05) is None


def test_calibration_phases_with_other_load_are_measured_again_once_quiet():
    """A busy process during the phases would widen every job's noise: they are measured
    again after it stops (real processes, the model meter)."""
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60))
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    lines: list[str] = []

    def log(line: str) -> None:
        lines.append(line)
        if "measuring them again" in line:
            hog.kill()
            hog.wait()

    try:
        phases = idle.reference_phases(meter, 2, 0.1, 60, log, gap_s=0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            hog.kill()
        hog.wait()
    assert len(phases) == drift.PHASES and all(len(p) == 2 for p in phases)
    assert "other processes used" in lines[0] and "sd between phases" in lines[-1], lines
    assert all(r["elapsed_s"] > 0 and r["energy_j"] > 0 for p in phases for r in p)


@pytest.mark.parametrize("calibrated", [False, True])
def test_a_load_step_mid_job_flags_its_runs_and_measures_them_again(small_inputs, tmp_path,
                                                                    calibrated):
    """Two busy processes per CPU start after the job's first run (after the reference was
    measured) and stops when the drift is reported: the reference at the job's end is
    slower, the job's runs are flagged and measured again on the quiet machine; judged by
    its repeats alone, or by the phases a calibration measured on the quiet machine."""
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60))
    phases = tuple(drift.calibrate_phases(meter, 5, gap_s=0.2)) if calibrated else ()
    # 100%: the hogs leave a CPU-bound gzip two fifths of a CPU (+150%); a neighbour's
    # tests on this shared machine slow it by less (up to +70% seen).
    job = make_job(small_inputs, tmp_path, "gz-1", drift=DriftCheck(5, 1.0, phases))
    hogs: list[subprocess.Popen] = []
    lines: list[str] = []

    def log(line: str) -> None:
        lines.append(line)
        if " r1 " in line and not hogs:
            hogs.extend(subprocess.Popen([sys.executable, "-c", "while True: pass"])
                        for _ in range(2 * (os.cpu_count() or 1)))
        if "drifted" in line:
            for p in hogs:
                p.kill()
                p.wait()

    try:
        summary, runs = drift.checked_job(job, meter, str(tmp_path / "j.jsonl"), log)
    finally:
        for p in hogs:
            with contextlib.suppress(ProcessLookupError):
                p.kill()
            p.wait()
    flagged = [r for r in runs if r.get("disturbed")]
    quiet = [r for r in runs if r["verified"]]
    assert summary["complete"], "\n".join(lines)
    side = (tmp_path / "j.jsonl.reference.jsonl").read_text()
    assert len(flagged) == 4 and len(quiet) == 4, side  # two repeats of write and read, twice
    assert all(r["disturbed"].startswith("drift: the reference operation's time changed")
               and not r["verified"] for r in flagged), [r["disturbed"] for r in flagged]
    noise = "6 calibration phases'" if calibrated else "Welch's"
    assert all(noise in r["disturbed"] for r in flagged)
    assert {r["job_key"] for r in flagged}.isdisjoint({r["job_key"] for r in quiet})
    # measured again, it does not take its own flagged runs for another identity's
    assert not [line for line in lines if "another meter identity" in line], lines
    for row in cell_summary.summarize(runs, AnalysisOptions()):
        assert row["n"] == 2 and row["n_disturbed"] == 2 and row["n_failed"] == 0


def test_a_second_drift_keeps_the_runs_marked(small_inputs, tmp_path, monkeypatch):
    """Measuring a third time would not help, and failing would fail every resume."""
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60))
    job = make_job(small_inputs, tmp_path, "gz-1", drift=DriftCheck(2, 0.05))
    calls = iter([[1.0, 1.01], [2.0, 2.01], [1.0, 1.01], [2.0, 2.01]])
    monkeypatch.setattr(drift, "measure_reference", lambda path, m, n: ref(*next(calls)))
    lines: list[str] = []
    summary, runs = drift.checked_job(job, meter, str(tmp_path / "j.jsonl"), lines.append)
    assert summary["complete"] and len(runs) == 8
    assert sum(1 for r in runs if r.get("disturbed")) == 4
    kept = [r for r in runs if r["verified"]]
    assert len(kept) == 4 and all(r["drift_warning"].startswith("the reference") for r in kept)
    assert any("drifted again" in line for line in lines)


def test_a_finished_job_run_again_keeps_the_drift_verdict_it_was_measured_under(
        small_inputs, tmp_path, monkeypatch):
    """The job passed its check when it ran; run again later (its spec rewritten, the
    idle calibration's phases measured again since, so its noise differs), it measures
    nothing: its verdict was journaled, not decided anew."""
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60))
    job = make_job(small_inputs, tmp_path, "gz-1", drift=DriftCheck(2, 0.05))
    monkeypatch.setattr(drift, "measure_reference", lambda path, m, n: ref(1.0, 1.01))
    journal = tmp_path / "journal" / "s" / "text" / "gz-1.jsonl"
    _, first = drift.checked_job(job, meter, str(journal), lambda line: None)
    measured = journal.read_text()
    monkeypatch.setattr(drift, "compare", lambda *a: "the reference changed by +9%")
    _, again = drift.checked_job(job, meter, str(journal), lambda line: None)
    assert journal.read_text() == measured and again == first
    assert not any(r.get("disturbed") for r in again)
    verdicts = [e for e in records.read_journal(f"{journal}{drift.REFERENCE_SUFFIX}")
                if e["phase"] == "verdict"]
    assert [v["why"] for v in verdicts] == [None]
    # the verdict is no phase of the study's pool
    assert [p["phase"] for p in drift.pool_phases(tmp_path / "journal")] == ["before", "after"]


def test_a_run_that_failed_before_a_drift_stays_a_failure(small_inputs, tmp_path,
                                                          monkeypatch):
    """A drift flags the job's runs and measures them again; one of them that had failed
    to verify keeps its own failure and is counted as failed, not hidden as disturbed."""
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60))
    job = make_job(small_inputs, tmp_path, "gz-1", drift=DriftCheck(2, 0.05))
    calls = iter([[1.0, 1.01], [2.0, 2.01], [1.0, 1.01], [1.0, 1.01]])
    monkeypatch.setattr(drift, "measure_reference", lambda path, m, n: ref(*next(calls)))
    read, epochs = drift.repeats.read_journal, []

    def one_failed(journal, key):
        runs = read(journal, key)
        if runs and not epochs:  # the first measurement: its first run did not verify
            runs[0] = {**runs[0], "verified": False, "failure": "output differs"}
        if runs:
            epochs.append(key)
        return runs

    monkeypatch.setattr(drift.repeats, "read_journal", one_failed)
    summary, runs = drift.checked_job(job, meter, str(tmp_path / "j.jsonl"), lambda line: None)
    failed = [r for r in runs if r.get("failure") == "output differs"]
    assert len(epochs) == 2 and len(failed) == 1 and not failed[0].get("disturbed")
    assert count_failed(runs) == 1
    assert sum(1 for r in runs if r.get("disturbed")) == 3


def test_the_report_states_the_drift_check_the_study_ran():
    """The jobs measured again are part of the design: the report's sentence gives the
    config's repeats and limit, or says that no drift was measured."""
    config = Study.from_files(["config.yaml"]).config
    checked = layout.report_params(Study(config), ["local"], "results", "f")
    assert ("gzip -6 of a fixed text of 8 MiB in the page cache), run 3 times before the "
            "job's first run and after its last") in checked["drift_check"]
    assert "by more than 5% (the drift check)" in checked["drift_check"]
    config["drift"] = {"repeats": 0, "max_change": 0.05}
    assert repeat_design.drift_check(Study(config)).startswith("No drift check")
    assert "drift\\_warning" in tex(checked["drift_check"])


def _phase(setting: str, key: str, phase: str, at: float, *seconds: float) -> dict:
    stamp = f"2026-11-28T04:{int(at) // 60:02d}:{at % 60:06.3f}+00:00"
    return {"setting": setting, "key": key, "phase": phase, "at": stamp, "runs": ref(*seconds)}


def test_back_to_back_pairs_are_one_job_s_after_and_the_next_s_before_of_one_setting():
    """Only adjacent phases count, seconds apart, before the job's own; a phase of another
    setting between two breaks the pair, and a gap longer than PAIR_GAP_S does too."""
    phases = [_phase("s", "a", "before", 0, 1.0), _phase("s", "a", "after", 100, 1.1),
              _phase("s", "b", "before", 104, 1.2), _phase("s", "b", "after", 200, 1.3),
              _phase("t", "c", "before", 203, 9.0), _phase("t", "c", "after", 250, 9.0),
              _phase("s", "d", "before", 254, 1.4), _phase("s", "d", "after", 300, 1.5),
              _phase("s", "e", "before", 300 + drift.PAIR_GAP_S + 1, 1.6),
              _phase("s", "e", "after", 500, 1.7), _phase("s", "f", "before", 505, 1.8)]
    until = phases[-1]["at"]
    assert drift.back_to_back(phases, "s", until) == [(ref(1.1), ref(1.2))]
    assert drift.back_to_back(phases, "t", until) == []
    assert drift.back_to_back(phases, "s", phases[2]["at"]) == []  # the job's own before
    assert drift.back_to_back(phases[::-1], "s", until) == [(ref(1.1), ref(1.2))]  # by time


def test_the_study_s_back_to_back_pairs_join_the_calibration_s_phases():
    """A quiet calibration alone would flag a level switch that the study's jobs show
    seconds apart; pooled with those pairs it does not, and a steady study's pairs keep
    the check as sensitive (its degrees of freedom grow)."""
    before, after = ref(1.0, 1.01, 0.99), ref(1.15, 1.16, 1.14)
    steady = [ref(m, m + 0.01, m - 0.01) for m in (1.0, 1.005, 0.995, 1.0, 1.002, 0.998)]
    hopping = [(ref(1.0, 1.0, 1.0), ref(m, m, m)) for m in (1.15, 0.9, 1.1, 0.85)]
    quiet = [(ref(1.0, 1.0, 1.0), ref(m, m, m)) for m in (1.004, 0.996, 1.002, 0.999)]
    assert "6 calibration phases'" in drift.compare(before, after, 0.05, steady)
    assert drift.compare(before, after, 0.05, steady, hopping) is None
    assert "6 calibration phases' and 4 back-to-back pairs' 95% interval" in drift.compare(
        before, after, 0.05, steady, quiet)
    # pairs of other repeats than the ends' say nothing of them
    assert "and 4 back-to-back" not in drift.compare(
        before, after, 0.05, steady, [(x[:2], y[:2]) for x, y in hopping])
    iv = drift.between_phases([1.0], [1.15], [1.0, 1.005, 0.995], [0.004, -0.002])
    assert iv.df == 4


def test_a_job_reads_the_pairs_its_study_measured_before_it(small_inputs, tmp_path,
                                                            monkeypatch):
    """Real jobs one after another in a study's journal folder: the third job's check
    pools the pair of the first two (by the times their phases journaled), the first
    two's have none; a resumed job reads the same pairs, not those measured after it."""
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60))
    steady = tuple(ref(m, m + 0.001) for m in (1.0, 1.001, 0.999, 1.0, 1.002, 0.998))
    levels = iter([1.0, 1.0, 1.3, 1.3, 1.3, 1.3])  # jobs 1 and 2's pair hops 30%
    monkeypatch.setattr(drift, "measure_reference",
                        lambda path, m, n: ref(*[next(levels)] * n))
    pool = tmp_path / "journal"
    seen: list[list] = []
    real_back_to_back = drift.back_to_back
    monkeypatch.setattr(drift, "back_to_back", lambda *a: seen.append(
        real_back_to_back(*a)) or seen[-1])
    for codec in ("gz-1", "gz-6", "gz-9"):
        journal = pool / "s" / "text" / f"{codec}.jsonl"
        journal.parent.mkdir(parents=True, exist_ok=True)
        job = make_job(small_inputs, tmp_path, codec, factors={"setting": "s"},
                       drift=DriftCheck(2, 0.05, steady, str(pool)))
        summary, runs = drift.checked_job(job, meter, str(journal), lambda m: None)
        assert summary["complete"]
    assert [len(p) for p in seen] == [0, 0, 1]
    assert seen[2] == [(ref(1.0, 1.0), ref(1.3, 1.3))]
    side_path = pool / "s" / "text" / f"gz-1.jsonl{drift.REFERENCE_SUFFIX}"
    side = records.read_journal(side_path)
    assert all(e["at"] for e in side if e["phase"] != "verdict")

    def resume_gz1() -> None:
        seen.clear()
        drift.checked_job(make_job(small_inputs, tmp_path, "gz-1", factors={"setting": "s"},
                                   drift=DriftCheck(2, 0.05, steady, str(pool))),
                          meter, str(pool / "s" / "text" / "gz-1.jsonl"), lambda m: None)

    resume_gz1()  # its verdict journaled: decided once, no pairs read again
    assert seen == []
    # killed before its verdict was journaled: its journal holds both phases, and the
    # pairs it reads are those before it, not those measured after it
    side_path.write_text("".join(json.dumps(e) + "\n" for e in side
                                 if e["phase"] != "verdict"))
    resume_gz1()
    assert seen == [[]]
