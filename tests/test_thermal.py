"""The CPU's temperature, frequency and throttling per run, read from a fake sysfs; a
machine without sensors records them absent."""

from __future__ import annotations

import os

import pytest

from wattzip import meters
from wattzip.machine import thermal
from wattzip.measure import runner

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
