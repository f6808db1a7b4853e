"""The CPU's temperature, frequency and throttling per run, read from a fake sysfs; a
machine without sensors records them absent."""

from __future__ import annotations

import json
import os
import time
from types import SimpleNamespace

import pytest

from wattzip import meters, records
from wattzip.machine import MachineError, thermal
from wattzip.measure import disturbance, idle, repeats, runner
from wattzip.measure.disturbance import QuietLimits

from .test_runner import make_job
from .thermal_fakes import FakeThermal


@pytest.mark.parametrize("kind, expected", [("coretemp", 61.5), ("k10temp", 61.5),
                                            ("zone", 61.5)])
def test_the_package_temperature_from_hwmon_or_a_thermal_zone(tmp_path, kind, expected):
    fake = FakeThermal(tmp_path, kind)
    fake.set_temp(61.5)
    # coretemp: the hottest package's, not a core's (99 °C); k10temp's Tctl; the zone's.
    assert thermal.package_temp_c(str(tmp_path)) == expected


def test_a_machine_without_sensors_records_them_absent(tmp_path):
    (tmp_path / "class" / "hwmon" / "hwmon0").mkdir(parents=True)
    (tmp_path / "class" / "hwmon" / "hwmon0" / "name").write_text("nvme\n")
    (tmp_path / "class" / "hwmon" / "hwmon0" / "temp1_input").write_text("30000\n")
    state = thermal.ThermalState.now(str(tmp_path))
    assert state == thermal.ThermalState(None, None, {})
    assert thermal.run_fields(state, state) == {
        "package_temp_start_c": None, "package_temp_end_c": None, "cpu_freq_mhz": None,
        "throttle_events": None}


def test_frequency_and_throttle_events_over_a_run(tmp_path):
    fake = FakeThermal(tmp_path, cpus=4)
    start = thermal.ThermalState.now(str(tmp_path))
    fake.set_temp(70)
    fake.set_freq_khz(3_000_000)
    fake.throttle(2)  # the package's 2 events, seen by all 4 CPUs, counted once; cpu0's 2
    fields = thermal.run_fields(start, thermal.ThermalState.now(str(tmp_path)))
    assert fields == {"package_temp_start_c": 40.0, "package_temp_end_c": 70.0,
                      "cpu_freq_mhz": 2500.0, "throttle_events": 4}


def test_every_measured_run_records_the_machine_state(tmp_path, monkeypatch):
    fake = FakeThermal(tmp_path / "sys")
    monkeypatch.setattr(thermal, "SYSFS", str(tmp_path / "sys"))
    op = runner.Operation("bench", [["true"]], [os.devnull], [None])
    rec = runner.measure(op, meters.ModelMeter(meters.MeterOptions(interval_s=0.05)))
    assert (rec["package_temp_start_c"], rec["cpu_freq_mhz"], rec["throttle_events"]) == (
        40.0, 2000.0, 0)
    assert fake.throttled == 0


def test_a_machine_heating_during_an_arm_is_gated_and_its_hot_runs_measured_again(
        small_inputs, tmp_path, monkeypatch):
    """The fake package is at idle's 40 °C until the first write has run, then at 70 °C:
    the read after it starts hot and is flagged, the job waits for the package to cool
    (saying so) before it measures on, and measures that run again; the report counts it."""
    fake = FakeThermal(tmp_path / "sys")
    monkeypatch.setattr(thermal, "SYSFS", str(tmp_path / "sys"))
    real_measure, measured = repeats.measure, []

    def heating(*args, **kw):
        result = real_measure(*args, **kw)
        measured.append(result["op"])
        if len(measured) == 1:
            fake.set_temp(70.0)  # the arm heated the machine
        return result

    monkeypatch.setattr(repeats, "measure", heating)
    waits = []
    # Each second waited (for quiet, or to cool), the fake cools by 10 °C.
    # (disturbance's own clock: the meter's sleeps are no waits)
    monkeypatch.setattr(disturbance, "time", SimpleNamespace(
        monotonic=time.monotonic,
        sleep=lambda s: (waits.append(s), fake.set_temp(70.0 - 10 * len(waits)))))
    lines = []
    job = make_job(small_inputs, tmp_path, "gz-1", min=2, max=2,
                   quiet=QuietLimits(max_other_cpu=1.0, max_steal=1.0, max_heat_c=10.0),
                   idle_temp_c=40.0)
    summary = repeats.run_job(job, meters.ModelMeter(meters.MeterOptions(interval_s=0.05)),
                              tmp_path / "j.jsonl", log=lines.append)
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    hot = [r for r in runs if r.get("disturbed")]
    assert [r["op"] for r in hot] == ["decompress-read"] and not hot[0]["verified"]
    assert "heat: it started at 70.0 °C, 30.0 °C above the idle calibration's 40.0 °C" \
        in hot[0]["disturbed"]
    assert hot[0]["package_temp_start_c"] == 70.0
    assert summary["complete"] and summary["heat"] == 1 and summary["disturbed"] == 1
    assert sum(r["verified"] for r in runs if r["op"] == "decompress-read") == 2
    # (the wait for quiet took the first second: 60 °C)
    assert any("the CPU package is at 60.0 °C, above 50.0 °C" in x for x in lines)
    assert any("has cooled to 50.0 °C" in x for x in lines)
    said = disturbance.describe(runs)
    assert "1 of" in said and "1 by heat (a throttled CPU" in said


def test_a_throttled_run_is_disturbed_by_heat_and_an_absent_sensor_judges_nothing():
    quiet = QuietLimits(max_heat_c=5.0)
    assert quiet.judge_heat({"throttle_events": 3, "package_temp_start_c": 44.0}, 40.0) == (
        "heat: the CPU was throttled (3 thermal_throttle events in the run)")
    assert quiet.judge_heat({"throttle_events": None, "package_temp_start_c": None}, 40.0) \
        is None
    assert quiet.judge_heat({"throttle_events": 0, "package_temp_start_c": 90.0}, None) is None
    assert quiet.wait_until_cool(lambda m: None, "gate", None) == 0.0  # nothing to wait for


def test_a_machine_that_stays_hot_is_refused_after_the_wait(tmp_path, monkeypatch):
    fake = FakeThermal(tmp_path)
    fake.set_temp(80.0)
    monkeypatch.setattr(thermal, "SYSFS", str(tmp_path))
    clock = iter(range(0, 10_000, 100))
    monkeypatch.setattr(disturbance, "time", SimpleNamespace(monotonic=lambda: next(clock),
                                                             sleep=lambda s: None))
    with pytest.raises(MachineError, match=r"stayed at 80.0 °C .*quiet.max_heat_c"):
        QuietLimits(wait_s=300).wait_until_cool(lambda m: None, "repeat 1", 40.0)


def test_the_idle_calibration_records_its_package_temperature(tmp_path, monkeypatch):
    FakeThermal(tmp_path / "sys").set_temp(42.0)
    monkeypatch.setattr(thermal, "SYSFS", str(tmp_path / "sys"))
    meter = meters.ModelMeter(meters.MeterOptions(interval_s=0.05))
    out = idle.calibrate(meter, count=2, seconds=0.1, setting="s", target_dir=str(tmp_path),
                         min_count=2, ci_target=1.0, max_other_load=1.0,
                         journal=str(tmp_path / "idle.jsonl"), log=lambda m: None)
    assert out["package_temp_c"] == 42.0
    lines = (tmp_path / "idle.jsonl").read_text().splitlines()
    assert [json.loads(x)["package_temp_c"] for x in lines] == [42.0, 42.0]
