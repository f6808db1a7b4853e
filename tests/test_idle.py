"""Idle calibration that stops once its interval is narrow enough (issue 19).

A fake meter's windows stand in for the machine's (measure_idle is what calibrate calls
once per window), and a quiet-check stand-in keeps other tests' load out of them: no
real waiting.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from wattzip import cli, records, stats
from wattzip.analysis import verdicts
from wattzip.cli import commands
from wattzip.errors import ConfigError
from wattzip.measure import idle, measurement, spec
from wattzip.model.config import merge_configs
from wattzip.model.study import Study
from wattzip.report import macros
from wattzip.resources import schema_default

from .idle_fakes import NOISY, QUIET, FakeMeter, calibrate, journal_windows, windows_of
from .test_workflow import REPO, SNAKEMAKE, TINY, workflow_copy


@pytest.fixture
def windows(monkeypatch):
    return windows_of(monkeypatch)


def test_the_drift_reference_s_phases_go_to_the_json_the_jobs_read(tmp_path, windows,
                                                                    monkeypatch):
    """Measured after the windows and journaled with them: a calibration run again in the
    same boot takes both from its journal, and is the calibration its jobs recorded (their
    drift verdicts judged by the same noise); phases of other repeats (or none, an older
    wattzip's journal) are measured. None without the drift check. (The phases
    themselves, with real processes: tests/test_drift.py.)"""
    calls: list[int] = []
    phase = [{"elapsed_s": 0.4, "energy_j": 2.0}]
    monkeypatch.setattr(idle, "reference_phases",
                        lambda meter, repeats, *a: calls.append(repeats) or [phase * repeats] * 6)
    journal = str(tmp_path / "idle.jsonl")
    windows(QUIET)
    first = calibrate(tmp_path, journal=journal, drift_repeats=3)
    assert calls == [3] and first["reference_phases"] == [phase * 3] * 6
    fake = windows([])
    path = tmp_path / "idle.json"
    out = calibrate(tmp_path, journal=journal, drift_repeats=3)
    path.write_text(json.dumps(out))
    assert fake.calls == 0 and calls == [3] and out == first
    # The windows are the journal's: the identity the jobs' keys hold is the same, so a
    # calibration run again (for its phases, after an upgrade) measures no job again.
    assert FakeMeter().identity(out) == FakeMeter().identity(first)
    read = measurement.idle_calibration(FakeMeter(), str(path), None)  # one read: all of it
    assert read.reference_phases == tuple([phase * 3] * 6)
    assert (read.power_w, read.windows) == (out["idle_power_w"], out["count"])
    assert read.uncertainty_w == pytest.approx(out["sd_w"] / out["count"] ** 0.5)
    assert calibrate(tmp_path, journal=journal)["reference_phases"] is None and calls == [3]
    assert calibrate(tmp_path, journal=journal, drift_repeats=4)["reference_phases"] == [
        phase * 4] * 6 and calls == [3, 4]


def test_an_estimated_meter_s_windows_say_estimated(tmp_path, windows):
    windows(QUIET)
    lines: list[str] = []
    idle.calibrate(type("Model", (FakeMeter,), {"method": "estimated"})(), count=3,
                   seconds=0.01, setting="s", target_dir=str(tmp_path / "target"),
                   min_count=3, ci_target=0.02, log=lines.append)
    assert lines[0].startswith("idle window 1/3: 40.00 W ESTIMATED; mean 40.00 W")


def test_a_quiet_machine_stops_at_the_first_look(tmp_path, windows):
    fake = windows(QUIET)
    lines: list[str] = []
    out = calibrate(tmp_path, log=lines.append)
    assert fake.calls == 3 and out["windows_w"] == QUIET[:3]
    assert out["count"] == 3 and out["max_count"] == 10 and out["min_count"] == 3
    assert out["ci_met"] is True and out["stopped"] == "target met at look 1 of 8"
    assert out["half_width_w"] == pytest.approx(stats.half_width(QUIET[:3], out["confidence"]))
    assert out["half_width_w"] <= 0.02 * out["idle_power_w"]
    # The keys the jobs read are still there, and the JSON is JSON (no NaN).
    assert {"idle_power_w", "sd_w", "meter_source", "meter_scope"} <= set(out)
    json.loads(json.dumps(out, allow_nan=False))
    # Per window, the running mean and half-width; at the end, why it stopped.
    assert lines[0].startswith("idle window 1/10: 40.00 W; mean 40.00 W (one window")
    assert "half-width" in lines[1] and "first look after 3 windows" in lines[1]
    assert "look 1 of 8" in lines[2] and "99.38% confidence" in lines[2]
    assert lines[-1] == ("idle: stopped after 3 of at most 10 windows: target met at look "
                         "1 of 8")


def test_noisy_windows_go_to_the_maximum_and_say_the_target_was_not_met(tmp_path, windows):
    fake = windows(NOISY)
    lines: list[str] = []
    out = calibrate(tmp_path, log=lines.append)
    assert fake.calls == 10 and out["count"] == 10 and out["windows_w"] == NOISY
    assert out["ci_met"] is False and out["stopped"] == "reached the maximum of 10 windows"
    assert out["half_width_w"] > 0.02 * out["idle_power_w"]
    assert lines[-1].endswith("reached the maximum of 10 windows (the target of 2.0% not met)")


def test_each_look_is_at_the_bonferroni_confidence(tmp_path, windows):
    """Three windows that a plain 95% interval would call narrow enough are not, at
    1 - 0.05/8: the calibration measures on, and stops at a later look."""
    watts = [99.4, 100.0, 100.6] + [100.0] * 7
    assert stats.ci_met(watts[:3], 0.02, 0.95)  # what looking at 95% each time would do
    fake = windows(watts)
    out = calibrate(tmp_path)
    assert out["looks"] == 8
    assert out["confidence"] == verdicts.look_confidence(0.95, 8) == pytest.approx(1 - 0.05 / 8)
    assert fake.calls > 3 and out["ci_met"]
    n = out["count"]
    assert out["stopped"] == f"target met at look {n - 2} of 8"
    assert not stats.ci_met(watts[:n - 1], 0.02, out["confidence"])
    assert stats.relative_half_width(watts[:n], out["confidence"]) <= 0.02


def test_the_default_study_measures_as_many_windows_as_before(tmp_path, windows):
    """config.yaml's 3 x 5 s: min_count (3) is count, one look at 95%, never longer."""
    config = Study.from_files([REPO / "config.yaml"]).config["idle"]
    assert (config["count"], config["min_count"], config["ci_target"]) == (3, 3, 0.02)
    for watts in (QUIET, NOISY):
        fake = windows(watts)
        out = calibrate(tmp_path, count=config["count"], min_count=config["min_count"],
                        ci_target=config["ci_target"])
        assert fake.calls == 3 and out["looks"] == 1 and out["confidence"] == pytest.approx(0.95)


def test_a_killed_calibration_resumes_from_its_journal(tmp_path, windows):
    journal = str(tmp_path / "journal" / "idle.jsonl")
    windows([40.0, 40.1, 39.9], kill_after=2)
    with pytest.raises(KeyboardInterrupt):
        calibrate(tmp_path, journal=journal)
    assert [e["watts"] for e in records.read_journal(journal)] == [40.0, 40.1]

    fake = windows(QUIET[2:])
    lines: list[str] = []
    out = calibrate(tmp_path, journal=journal, log=lines.append)
    assert fake.calls == 1  # the journal's two windows count toward the first look
    assert out["windows_w"] == QUIET[:3] and out["stopped"] == "target met at look 1 of 8"
    assert "2 window(s) of 0.01 s found" in lines[0]

    # Everything already journaled: the looks are replayed and nothing is measured.
    fake = windows([])
    again = calibrate(tmp_path, journal=journal)
    assert fake.calls == 0 and again["windows_w"] == out["windows_w"]
    assert again["stopped"] == out["stopped"]


def test_a_journal_holding_more_windows_stops_where_an_unbroken_run_would(tmp_path, windows):
    journal = str(tmp_path / "idle.jsonl")
    journal_windows(journal, QUIET)
    journal_windows(journal, [99.0], key="fake|wall|other|0.01")
    fake = windows([])
    lines: list[str] = []
    out = calibrate(tmp_path, journal=journal, log=lines.append)
    assert fake.calls == 0 and out["windows_w"] == QUIET[:3]
    assert "10 window(s) of 0.01 s found" in lines[0] and "the first 3 used" in lines[0]


def test_a_discarded_window_is_measured_again_and_not_looked_at(tmp_path, windows):
    fake = windows([QUIET[0], 80.0, *QUIET[1:]], busy={2})  # 80 W: the busy window
    lines: list[str] = []
    out = calibrate(tmp_path, log=lines.append)
    assert fake.calls == 4 and out["windows_w"] == QUIET[:3]
    assert out["stopped"] == "target met at look 1 of 8"
    assert "idle window 2: the machine was not idle; discarded" in lines[1]


def test_min_count_above_count_is_refused(tmp_path, windows):
    fake = windows(QUIET)
    with pytest.raises(ConfigError, match=r"idle.min_count \(4\) is above idle.count \(2\)"):
        calibrate(tmp_path, count=2, min_count=4)
    assert fake.calls == 0  # refused before the machine is touched
    with pytest.raises(ConfigError, match=r"at least 1"):
        idle.first_look(2, 0)


def test_the_schema_default_min_count_is_cut_to_a_smaller_count(tmp_path, windows):
    """A study of fewer windows than the default's 3 (tests/data/tiny.yaml has one) need
    not set min_count: it looks once, after all of them."""
    assert idle.first_look(2, 3) == 2 and idle.first_look(1, 3) == 1
    assert schema_default("idle.min_count") == 3
    fake = windows([41.0])
    out = calibrate(tmp_path, count=1, min_count=3)
    assert fake.calls == 1 and out["count"] == 1 and out["looks"] == 1
    assert out["half_width_w"] is None and out["ci_met"] is False
    assert out["stopped"] == "reached the maximum of 1 window"
    json.loads(json.dumps(out, allow_nan=False))


def test_the_schema_declares_the_defaults_and_the_cli_takes_them(monkeypatch):
    config = Study.from_files([REPO / "config.yaml", REPO / "config/paper.yaml"]).config
    # The paper's 10 x 10 minutes, all of them (the strict rule: one look, after the 10th).
    assert config["idle"] == {"count": 10, "seconds": 600, "min_count": 10, "ci_target": 0.02,
                              "max_other_load": 0.1}
    tiny = Study.from_files([REPO / "config.yaml", TINY]).config["idle"]
    assert (tiny["count"], tiny["min_count"]) == (1, 3)  # cut to 1 when it runs
    # `wattzip idle --configfile` runs the windows the study's spec would give it.
    monkeypatch.chdir(REPO)
    args = cli.build_parser().parse_args(["idle", "--configfile", "config/paper.yaml"])
    assert commands.study_slice(args, spec.IDLE)["idle"] == config["idle"]
    args = cli.build_parser().parse_args(["idle", "--configfile"])
    assert commands.study_slice(args, spec.IDLE)["idle"]["min_count"] == schema_default(
        "idle.min_count")


def test_the_report_says_the_windows_and_the_half_width(tmp_path, windows):
    windows(QUIET)
    values = macros.idle_interval(calibrate(tmp_path))
    assert values == {"IdleHalfWidthW": values["IdleHalfWidthW"],
                      "IdleConfidencePct": "99.38\\%", "IdleStop": "target met at look 1 of 8"}
    assert float(values["IdleHalfWidthW"]) > 0
    # A calibration from before (the fixture's) has no interval to print.
    old = json.loads(next((REPO / "tests/data/fixture/results/tiny/idle").glob("*.json"))
                     .read_text())
    assert macros.idle_interval(old) == {"IdleHalfWidthW": "--", "IdleConfidencePct": "--",
                                         "IdleStop": "as many as configured"}


@pytest.mark.workflow
def test_the_workflow_refuses_min_count_above_count_when_it_is_read(tmp_path):
    root = workflow_copy(tmp_path / "wf")
    overlay = tmp_path / "idle.yaml"
    overlay.write_text("idle: {count: 3, seconds: 0.01, min_count: 5}\n")
    proc = subprocess.run([*SNAKEMAKE, "-n", "--configfile", "config.yaml", str(overlay)],
                          cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    assert "idle.min_count (5) is above idle.count (3)" in proc.stderr + proc.stdout
    assert merge_configs([root / "config.yaml", overlay])["idle"]["min_count"] == 5


def test_settings_that_differ_only_in_medium_share_the_drift_reference_s_phases(
        tmp_path, windows, monkeypatch):
    """The phases are the machine's (the reference runs from the page cache): a second
    setting in the same state of the machine takes the first's from the journal beside
    theirs; another governor is another state, measured anew."""
    calls: list[dict] = []
    monkeypatch.setattr(idle, "reference_phases", lambda meter, repeats, *a: calls.append(
        repeats) or [[{"elapsed_s": 0.4 + len(calls), "energy_j": 2.0}] * repeats] * 6)
    monkeypatch.setattr(idle.factors, "applied", lambda disk, factors: _nothing())
    windows(QUIET * 3)

    def calibrate_setting(name, governor):
        return idle.calibrate(FakeMeter(), count=3, seconds=0.01, setting=name,
                              target_dir=str(tmp_path / "target"), min_count=3,
                              ci_target=0.5, journal=str(tmp_path / f"{name}.jsonl"),
                              log=lambda line: None, drift_repeats=2,
                              machine_factors={"governor": governor, "io_scheduler": "keep"})

    ext2, tmpfs = calibrate_setting("ext2", "keep"), calibrate_setting("tmpfs", "keep")
    assert len(calls) == 1 and ext2["reference_phases"] == tmpfs["reference_phases"]
    fast = calibrate_setting("fast", "performance")
    assert len(calls) == 2 and fast["reference_phases"] != ext2["reference_phases"]
    assert (tmp_path / idle.PHASES_JOURNAL).exists()


def _nothing():
    import contextlib

    return contextlib.nullcontext()
