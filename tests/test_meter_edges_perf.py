"""perf stat at the edges of a run, fed what a real perf does: it takes half a second to
start (an event per CPU), counts only while its events are enabled through the control
FIFO, and a power step falls inside the run."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import time

import pytest

from wattzip import machine, meters
from wattzip.errors import MeterError
from wattzip.machine import scratch
from wattzip.measure import runner

from .test_meter_edges import step_energy

# --- perf stat with a control FIFO ----------------------------------------------------


FAKE_PERF = """#!{python}
# Behaves like `perf stat -a -x, -o FILE -D -1 --control fifo:CTL,ACK -e EVENTS`:
# takes {startup} s to start (perf opens an event per CPU), counts only while its
# events are enabled, answers every command with "ack", writes its counts on
# SIGINT. Power: 20 W package + 5 W dram, 80 W + 20 W from the unix time STEP_AT.
import os, signal, sys, time
args = sys.argv[1:]
out = args[args.index("-o") + 1]
events = args[args.index("-e") + 1].split(",")
ctl, ack = args[args.index("--control") + 1][len("fifo:"):].split(",")
assert args[args.index("-D") + 1] == "-1", "events must start disabled"
step_at = float(os.environ.get("FAKE_PERF_STEP_AT", "1e12"))
before = {{"power/energy-pkg/": 20.0, "power/energy-ram/": 5.0}}
after = {{"power/energy-pkg/": 80.0, "power/energy-ram/": 20.0}}
counts = dict.fromkeys(events, 0.0)
enabled_at = None
def count(t0, t1):
    for e in events:
        a = max(0.0, min(t1, step_at) - t0)
        b = max(0.0, t1 - max(t0, step_at))
        counts[e] += before[e] * a + after[e] * b
def finish(*_):
    if enabled_at is not None:
        count(enabled_at, time.time())
    with open(out, "w") as f:
        f.write("# started\\n\\n")
        for e in events:
            value = "{not_counted}" if e == "{not_counted_event}" else f"{{counts[e]:.4f}}"
            f.write(f"{{value}},Joules,{{e}},1000,100.00,,\\n")
    sys.exit(0)
signal.signal(signal.SIGINT, finish)
time.sleep({startup})
cfd, afd = os.open(ctl, os.O_RDWR), os.open(ack, os.O_WRONLY)
buf = b""
while True:
    buf += os.read(cfd, 64)
    while b"\\n" in buf:
        cmd, buf = buf.split(b"\\n", 1)
        now = time.time()
        if cmd == b"enable" and enabled_at is None:
            enabled_at = now
        elif cmd == b"disable" and enabled_at is not None:
            count(enabled_at, now)
            enabled_at = None
        os.write(afd, b"ack\\n")
"""


def fake_perf(tmp_path, startup=0.5, not_counted="", not_counted_event=""):
    perf = tmp_path / "perf"
    perf.write_text(FAKE_PERF.format(python=sys.executable, startup=startup,
                                     not_counted=not_counted,
                                     not_counted_event=not_counted_event))
    perf.chmod(perf.stat().st_mode | stat.S_IEXEC)
    events = tmp_path / "events"
    events.mkdir()
    (events / "energy-pkg").write_text("event=0x02\n")
    (events / "energy-ram").write_text("event=0x03\n")
    return meters.MeterOptions(perf_command=str(perf), perf_events_dir=str(events))


def test_perf_that_starts_slowly_counts_the_whole_run_with_a_step(tmp_path, monkeypatch):
    opts = fake_perf(tmp_path, startup=0.5)
    step_at = time.time() + 0.5 + 0.3
    monkeypatch.setenv("FAKE_PERF_STEP_AT", repr(step_at))
    meter = meters.PerfMeter(opts)
    assert meter.scope == "package+dram"
    meter.start()  # returns once perf acknowledged 'enable', after its slow start
    w0 = time.time()
    time.sleep(0.6)
    w1 = time.time()
    reading = meter.stop()
    assert reading.energy_j == pytest.approx(step_energy(w0, w1, step_at, 25, 100), rel=0.05)
    assert reading.elapsed_s == pytest.approx(w1 - w0, abs=0.05)


def test_perf_measures_a_run_shorter_than_its_start_up(tmp_path):
    """A 0.2 s run under a perf that takes 0.5 s to start is measured whole. (A run of a
    few milliseconds, `true`, left the 20% to the scheduler's jitter on a loaded VM.)"""
    opts = fake_perf(tmp_path, startup=0.5)
    op = runner.Operation("command", [["sleep", "0.2"]], [os.devnull], [None])
    record = runner.measure(op, meters.PerfMeter(opts))
    assert record["succeeded"] and record["elapsed_s"] < 0.5
    assert record["energy_j"] == pytest.approx(25 * record["meter_interval_s"], rel=0.2)
    assert record["energy_j"] > 0


def test_perf_not_counted_event_is_an_error_not_a_smaller_scope(tmp_path):
    opts = fake_perf(tmp_path, startup=0.0, not_counted="<not counted>",
                     not_counted_event="power/energy-ram/")
    op = runner.Operation("command", [["true"]], [os.devnull], [None])
    record = runner.measure(op, meters.PerfMeter(opts))
    assert not record["succeeded"] and record["energy_j"] is None
    assert "power/energy-ram/ was <not counted>" in record["error"]


def test_perf_output_parsing():
    text = ("# started on Sun Nov 22\n\n"
            "41.52,Joules,power/energy-pkg/,2003012345,100.00,,\n"
            "3.25,Joules,power/energy-ram/,2003012345,100.00,,\n")
    events = ("power/energy-pkg/", "power/energy-ram/")
    assert meters.parse_perf_stat(text, events) == pytest.approx(44.77)
    with pytest.raises(MeterError, match="not supported"):
        meters.parse_perf_stat("<not supported>,Joules,power/energy-pkg/,0,0,,\n", events)
    with pytest.raises(MeterError, match="no count for power/energy-ram/"):
        meters.parse_perf_stat(text.splitlines()[2], events)


def test_real_perf_honours_the_control_fifo():
    """The real perf binary: software events, started disabled, enabled through the FIFO."""
    if not os.path.exists("/usr/bin/perf"):
        pytest.skip("linux-perf is not installed")
    meter = meters.PerfMeter.__new__(meters.PerfMeter)
    meter.options = meters.MeterOptions(perf_command="/usr/bin/perf")
    meter.active_events = ("task-clock",)
    meter.scope = "test"
    meter.start()
    time.sleep(0.3)
    try:
        meter.stop()
    except MeterError as exc:  # task-clock is counted in msec, not Joules: parse fails late
        assert "no count" in str(exc)


def test_perf_s_folder_is_journaled_before_it_is_made(tmp_path, noted):
    """A kill between making the folder and journaling it would leave a folder of root's
    in /tmp that no later command knows of; journaled first, it is root's alone and gone
    after stop()."""
    opts = fake_perf(tmp_path, startup=0.0)
    meter = meters.PerfMeter(opts)
    meter.start()
    try:
        assert noted == [("dir", meter._dir, False)]
        assert os.lstat(meter._dir).st_mode & 0o777 == 0o700
    finally:
        meter.stop()
    assert not os.path.lexists(meter._dir)
    assert not [e for e in machine.pending() if e["target"] == meter._dir]


def test_perf_never_takes_over_what_is_at_its_folder_s_name(tmp_path, monkeypatch):
    """A link (or folder) someone planted at the name chosen is left alone, its journal
    entry closed without removing anything, and another name is chosen."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "keep").write_text("keep")
    (tmp_path / "wattzip-perf-taken").symlink_to(theirs)
    names = iter(["wattzip-perf-taken", "wattzip-perf-free"])
    monkeypatch.setattr(scratch, "_fresh_name", lambda prefix: next(names))
    meter = meters.PerfMeter(fake_perf(tmp_path, startup=0.0))
    meter.start()
    meter.stop()
    assert meter._dir == str(tmp_path / "wattzip-perf-free")
    assert (tmp_path / "wattzip-perf-taken").is_symlink()
    assert (theirs / "keep").read_text() == "keep"
    assert not [e for e in machine.pending() if str(tmp_path) in e["target"]]
