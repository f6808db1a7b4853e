"""Meters at the edges of a run, fed what real hardware feeds.

Power that steps inside the run (constant power hides every edge error), a
serial meter whose record for the last second arrives after the run, a logger
that writes behind real time or stops early, and a BMC whose reading is deactivated
(perf, which takes half a second to start: tests/test_meter_edges_perf.py).
"""

from __future__ import annotations

import contextlib
import os
import random
import select
import stat
import subprocess
import sys
import threading
import time

import pytest

from wattzip import machine, meters
from wattzip.errors import MeterError
from wattzip.measure import runner
from wattzip.meters import wattsup

from .sysfs import publish


def step_energy(t0, t1, step_at, before_w, after_w):
    """The exact energy of [t0, t1] under a power step at step_at."""
    a = max(0.0, min(t1, step_at) - t0)
    b = max(0.0, t1 - max(t0, step_at))
    return before_w * a + after_w * b


# --- WattsUp: one record a second, each the mean of the second before it -------------


class FakeWattsUp:
    """A WattsUp Pro on a pseudo-terminal: after #L,W,3,E it sends, at L + k seconds,
    the mean power of (L + k - 1, L + k], the true power stepping at L + step_s."""

    def __init__(self, before_w, after_w, step_s, period_s=1.0, delays_s=()):
        """delays_s: each record's delay on the line (the USB adapter's latency timer,
        a reader behind a busy CPU), in order; records after the list's end have none."""
        self.delays_s = list(delays_s)
        self.master, slave = os.openpty()
        self.port = os.ttyname(slave)
        os.close(slave)  # a meter's port is open in no process until the meter reads it
        self.before_w, self.after_w, self.step_s, self.period_s = (before_w, after_w, step_s,
                                                                   period_s)
        self.received: list[str] = []
        self.logging_since: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def true_power_mean(self, a, b):
        return step_energy(a, b, self.logging_since + self.step_s, self.before_w,
                           self.after_w) / (b - a)

    def _run(self):
        buffer, k, line = b"", 0, []  # line: (when it arrives, record), in order
        while not self._stop.is_set():
            while line and time.monotonic() >= line[0][0]:
                with contextlib.suppress(OSError):  # no reader on the port: a record lost
                    os.write(self.master, line.pop(0)[1])
            ready, _, _ = select.select([self.master], [], [], 0.005)
            if ready:
                try:
                    buffer += os.read(self.master, 1024)
                except OSError:  # EIO: no process holds the port open (yet, or any more)
                    time.sleep(0.005)
                    continue
                while b";" in buffer:
                    cmd, buffer = buffer.split(b";", 1)
                    self.received.append(cmd.decode())
                    if cmd.startswith(b"#L,W,3,E"):
                        self.logging_since, k = time.monotonic(), 0
                    elif cmd.startswith(b"#L,W,3,I"):
                        self.logging_since = None
            if self.logging_since is not None:
                due = self.logging_since + (k + 1) * self.period_s
                if time.monotonic() >= due:
                    k += 1
                    watts = self.true_power_mean(due - self.period_s, due)
                    delay = self.delays_s[k - 1] if k <= len(self.delays_s) else 0.0
                    arrives = max(due + delay, line[-1][0] if line else due)
                    line.append((arrives, f"#d,-,18,{round(watts * 10)},2301,536,0,0,0,0,0,"
                                          "0,0,0,0,0,99,0,0,500,0;\r\n".encode()))

    def close(self):
        self._stop.set()
        self._thread.join()
        os.close(self.master)


@pytest.mark.parametrize("delays_s", [(), (0.012, 0.3, 0.004)],
                         ids=["prompt", "the-record-before-the-step-300-ms-late"])
def test_wattsup_power_step_inside_a_run_and_the_late_last_record(delays_s):
    """100 W, then 250 W from the second record on; the run ends half a second after
    the step, so its last half second is only in the record that arrives after it.
    Stamped on arrival, a record 300 ms late moves the step 300 ms (-20%)."""
    device = FakeWattsUp(before_w=100.0, after_w=250.0, step_s=2.0, delays_s=delays_s)
    try:
        with machine.session("test"):
            meter = meters.WattsUpMeter(meters.MeterOptions(wattsup_port=device.port))
            meter.start()  # returns after the first record, at L + 1 s
            t0 = time.monotonic()
            step_at = device.logging_since + 2.0
            time.sleep(step_at + 0.5 - t0)
            t1 = time.monotonic()
            reading = meter.stop()
            meter.close()
    finally:
        device.close()
    assert device.received[0] == "#L,W,3,E,,1"  # its memory, maybe another's log, kept
    assert device.received[-1].startswith("#L,W,3,I")
    expected = step_energy(t0, t1, step_at, 100.0, 250.0)
    assert reading.energy_j == pytest.approx(expected, rel=0.03)
    assert reading.elapsed_s == pytest.approx(t1 - t0, abs=0.01)
    assert reading.flags == []


def test_records_are_stamped_on_the_meters_clock_not_on_arrival():
    """Ten minutes of records from a clock 100 ppm slow: each late by the adapter's
    latency timer (0-16 ms), every 50th by 400 ms more (a reader behind a busy
    compressor), one lost on the line. Each is stamped within 3 ms of its period's
    end, never after it arrived, and the lost one leaves a two-period gap."""
    rng = random.Random(7)
    period, clock = 1.0, 1.0001
    ends = [100.0 + k * period * clock for k in range(1, 601) if k != 300]
    arrived = [t + rng.uniform(0.0, 0.016) + (0.4 if i % 50 == 49 else 0.0)
               for i, t in enumerate(ends)]
    stamped = wattsup.on_meters_clock([(t, 50.0) for t in arrived], period)
    errors = [s - t for (s, _), t in zip(stamped, ends, strict=True)]
    assert max(abs(e) for e in errors) < 0.003
    assert all(s <= a for (s, _), a in zip(stamped, arrived, strict=True))
    assert stamped[299][0] - stamped[298][0] == pytest.approx(2 * period * clock, abs=0.003)


def test_wattsup_run_shorter_than_a_second_is_flagged():
    device = FakeWattsUp(before_w=80.0, after_w=80.0, step_s=0.0)
    try:
        with machine.session("test"):
            meter = meters.WattsUpMeter(meters.MeterOptions(wattsup_port=device.port))
            meter.start()
            time.sleep(0.3)
            reading = meter.stop()
            meter.close()
    finally:
        device.close()
    assert reading.energy_j == pytest.approx(80.0 * reading.elapsed_s, rel=0.03)
    assert any("resolution" in f for f in reading.flags)


def test_a_killed_wattsup_is_set_back_to_internal_logging():
    """SIGKILL while the meter streams to the port: the journal names the change, and
    the next command's recovery sends the meter back to internal logging."""
    device = FakeWattsUp(before_w=80.0, after_w=80.0, step_s=0.0)
    try:
        script = ("import os, signal\n"
                  "from wattzip import machine, meters\n"
                  "held = machine.session('test', guarded=False)  # no guard: as in a "
                  "whole-tree kill\n"
                  "held.__enter__()\n"
                  f"m = meters.WattsUpMeter(meters.MeterOptions(wattsup_port={device.port!r}))\n"
                  "m.start()\n"
                  "os.kill(os.getpid(), signal.SIGKILL)\n")
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              check=False, timeout=30)
        assert proc.returncode == -9, proc.stderr
        assert device.logging_since is not None  # left logging
        left = [e for e in machine.leftovers() if e["kind"] == "serial"]
        assert [e["target"] for e in left] == [device.port]
        machine.recover(log=lambda msg: None)
        deadline = time.monotonic() + 5
        while device.logging_since is not None and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        device.close()
    assert device.received[-1].startswith("#L,W,3,I")
    assert not [e for e in machine.pending() if e["kind"] == "serial"]


# --- IPMI DCMI ----------------------------------------------------------------------


def fake_ipmitool(tmp_path, state="activated", period="00000001 Seconds."):
    """ipmitool dcmi power reading, printing the watts the test writes to a file."""
    watts = tmp_path / "watts"
    watts.write_text("100\n")
    tool = tmp_path / "ipmitool"
    tool.write_text(
        "#!/bin/sh\n"
        f"w=$(cat {watts})\n"
        "cat <<EOF\n\n"
        "    Instantaneous power reading:                   $w Watts\n"
        "    Minimum during sampling period:                 90 Watts\n"
        "    Maximum during sampling period:                310 Watts\n"
        "    Average power reading over sample period:      200 Watts\n"
        "    IPMI timestamp:                           Sun Nov 22 06:00:00 2026\n"
        f"    Sampling period:                          {period}\n"
        f"    Power reading state is:                   {state}\n\nEOF\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return tool, watts


def test_ipmi_power_step_inside_a_run(tmp_path):
    tool, watts = fake_ipmitool(tmp_path)
    opts = meters.MeterOptions(ipmi_command=(str(tool), "dcmi", "power", "reading"),
                               ipmi_interval_s=0.05)
    assert meters.IpmiMeter.probe(opts) is None
    meter = meters.IpmiMeter(opts)
    meter.start()
    t0 = time.monotonic()
    time.sleep(0.5)
    publish(watts, "300\n")
    step_at = time.monotonic()
    time.sleep(0.5)
    t1 = time.monotonic()
    reading = meter.stop()
    # polled every 50 ms: the step smears over at most one poll (200 W x 0.05 s)
    assert reading.energy_j == pytest.approx(step_energy(t0, t1, step_at, 100, 300), abs=12)
    assert reading.flags == []


def test_ipmi_readings_are_stamped_when_the_bmc_answered_not_when_ipmitool_returned(tmp_path):
    """A BMC over the LAN: ipmitool takes 0.4 s, the reading taken halfway (the fake
    writes when, on the same CLOCK_MONOTONIC). Stamped on return, each reading lagged
    by 0.2 s; at the query's midpoint it lands within the process's start-up."""
    answered = tmp_path / "answered"
    watts = tmp_path / "watts"
    watts.write_text("100\n")
    tool = tmp_path / "ipmitool"
    tool.write_text(
        f"#!{sys.executable}\nimport time\ntime.sleep(0.2)\n"
        f"w = open({str(watts)!r}).read().strip()\n"
        f"open({str(answered)!r}, 'a').write(f'{{time.monotonic()}}\\n')\n"
        "time.sleep(0.2)\n"
        "print(f'    Instantaneous power reading:  {w} Watts')\n"
        "print('    Sampling period:  00000001 Seconds.')\n"
        "print('    Power reading state is:  activated')\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    meter = meters.IpmiMeter(meters.MeterOptions(ipmi_command=(str(tool),),
                                                 ipmi_interval_s=0.05))
    meter.start()
    time.sleep(1.5)
    meter.stop()
    stamps = [t for t, _ in meter._snapshot()]
    truth = [float(x) for x in answered.read_text().split()]
    assert len(stamps) == len(truth) >= 4
    assert max(abs(s - t) for s, t in zip(stamps, truth, strict=True)) < 0.08


def test_ipmi_deactivated_reading_is_no_reading(tmp_path):
    tool, _ = fake_ipmitool(tmp_path, state="deactivated")
    opts = meters.MeterOptions(ipmi_command=(str(tool), "dcmi", "power", "reading"))
    assert "deactivated" in meters.IpmiMeter.probe(opts)
    with pytest.raises(MeterError, match="deactivated"):
        meters.parse_ipmi_dcmi(tool.read_text().replace("$w", "0"))


def test_ipmi_run_shorter_than_the_bmc_sampling_period_is_flagged(tmp_path):
    tool, _ = fake_ipmitool(tmp_path, period="00000005 Seconds.")
    opts = meters.MeterOptions(ipmi_command=(str(tool), "dcmi", "power", "reading"),
                               ipmi_interval_s=0.05)
    meter = meters.IpmiMeter(opts)
    meter.start()
    time.sleep(0.2)
    reading = meter.stop()
    assert any("5 s" in f for f in reading.flags)
    assert meters.parse_ipmi_dcmi(tool.read_text().replace("$w", "7")).sampling_period_s == 5


# --- a power trace written by an external logger ------------------------------------


def lagging_logger(path, lag_s, period_s, power, stop):
    """Writes (t, power(t)) every period, each row lag_s after the moment it describes."""
    with open(path, "w") as f:
        f.write("timestamp,watts\n")
        f.flush()
        t = time.time() - 2.0
        while not stop.is_set():
            while t <= time.time() - lag_s:
                f.write(f"{t:.4f},{power(t):.3f}\n")
                t += period_s
            f.flush()
            time.sleep(0.01)


def test_trace_from_a_lagging_logger_with_a_step(tmp_path):
    path = tmp_path / "power.csv"
    step_at = time.time() + 0.3
    stop = threading.Event()
    logger = threading.Thread(target=lagging_logger, daemon=True,
                              args=(path, 0.6, 0.05, lambda t: 60.0 if t < step_at else 180.0,
                                    stop))
    logger.start()
    time.sleep(0.1)
    try:
        meter = meters.TraceMeter(meters.MeterOptions(trace_path=str(path), trace_wait_s=3))
        meter.start()
        w0 = time.time()
        time.sleep(0.6)
        w1 = time.time()
        reading = meter.stop()  # the logger is 0.6 s behind: stop waits for it
    finally:
        stop.set()
        logger.join()
    # one 50 ms ramp at the step: at most 120 W x 0.05 s off
    assert reading.energy_j == pytest.approx(step_energy(w0, w1, step_at, 60, 180), abs=7)


def test_trace_that_stops_before_the_run_ends_fails_the_run(tmp_path):
    path = tmp_path / "power.csv"
    now = time.time()
    path.write_text("timestamp,watts\n" + "".join(f"{now - 5 + 0.1 * i:.2f},50\n"
                                                  for i in range(53)))  # ends at now + 0.2
    meter = meters.TraceMeter(meters.MeterOptions(trace_path=str(path), trace_wait_s=0.3))
    op = runner.Operation("command", [["sleep", "0.5"]], [os.devnull], [None])
    record = runner.measure(op, meter)
    assert not record["succeeded"] and record["energy_j"] is None
    assert "before the run ended" in record["error"]


def test_trace_that_starts_after_the_run_began_fails(tmp_path):
    path = tmp_path / "power.csv"
    path.write_text("timestamp,watts\n")
    meter = meters.TraceMeter(meters.MeterOptions(trace_path=str(path), trace_wait_s=0))
    meter.start()
    time.sleep(0.2)
    now = time.time()
    path.write_text("timestamp,watts\n" + "".join(f"{now - 0.1 + 0.05 * i:.3f},50\n"
                                                  for i in range(10)))
    with pytest.raises(MeterError, match="after the run started"):
        meter.stop()


# --- one interval, one meter -------------------------------------------------------------


def test_passive_energy_covers_the_meters_interval(tmp_path):
    opts = meters.MeterOptions(model_idle_power_w=30, model_max_power_w=30, interval_s=0.05)
    op = runner.Operation("command", [["sleep", "0.2"]], [os.devnull], [None])
    record = runner.measure(op, meters.ModelMeter(opts), idle_power_w=30.0)
    assert record["meter_interval_s"] >= record["elapsed_s"]
    assert record["energy_passive_j"] == pytest.approx(30.0 * record["meter_interval_s"])
    assert record["energy_active_j"] == pytest.approx(0.0, abs=1e-6)


def test_idle_from_another_meter_stops_the_job():
    opts = meters.MeterOptions(model_idle_power_w=30, model_max_power_w=60)
    model = meters.ModelMeter(opts)
    idle = {"idle_power_w": 95.0, "meter_source": "ipmi", "meter_scope": "wall"}
    with pytest.raises(MeterError, match="measured with the ipmi meter"):
        meters.check_same_meter(idle, model, "results/x/idle/s.json")
    meters.check_same_meter({"meter_source": "model", "meter_scope": model.scope}, model, "x")
