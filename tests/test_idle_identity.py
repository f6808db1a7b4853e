"""Who measured an idle calibration: each window and the calibration name the host, its
boot, the meter and wattzip's version; a resumed calibration reuses only this host's,
this boot's and this meter's windows, and a job reads only its own host's calibration."""

from __future__ import annotations

import json

import pytest

from wattzip import __version__, machine, records, stats
from wattzip.machine import MachineError
from wattzip.measure import idle

from .idle_fakes import QUIET, FakeMeter, calibrate, host_of, journal_windows, windows_of
from .test_workflow import REPO

pytestmark = pytest.mark.pure


@pytest.fixture
def windows(monkeypatch):
    return windows_of(monkeypatch)


@pytest.fixture
def host(monkeypatch):
    return host_of(monkeypatch)


def test_windows_an_older_wattzip_journaled_are_measured_again(tmp_path, windows):
    """Windows journaled with no host or boot (before wattzip recorded them) may be another
    machine's or another boot's: left out, said so, and measured again; the windows
    measured now say who measured them, and a calibration run again reuses those."""
    journal = tmp_path / "idle.jsonl"
    for watts in (80.0, 80.0):
        records.append_journal(journal, {"key": "fake|wall|s|0.01", "watts": watts})
    fake = windows(QUIET)
    lines: list[str] = []
    out = calibrate(tmp_path, journal=str(journal), log=lines.append)
    assert fake.calls == 3 and out["windows_w"] == QUIET[:3]
    assert lines[0].startswith(f"idle: 2 window(s) in {journal} left out, measured 2 with "
                               "no host or boot recorded (an older wattzip's)")
    last = records.read_journal(journal)[-1]
    assert out["measured_at"] == last["at"] and last["boot_id"] == machine.boot_id()
    fake = windows([])
    again = calibrate(tmp_path, journal=str(journal))
    assert fake.calls == 0 and FakeMeter().identity(again) == FakeMeter().identity(out)


def test_the_calibration_and_each_window_say_who_measured_them(tmp_path, windows, host):
    host("node-a", "boot-1")
    windows(QUIET)
    journal = tmp_path / "idle.jsonl"
    out = calibrate(tmp_path, journal=str(journal), testbed="tb")
    # Named as a run record names who measured it, the Slurm job too (one function:
    # wattzip.measure.provenance.who_measured), so a run and its calibration are matched.
    who = {"hostname": "node-a", "slurm_node": "node-a-node", "slurm_job_id": "7",
           "boot_id": "boot-1", "testbed": "tb", "meter_identity": FakeMeter().identity(),
           "wattzip_version": __version__}
    assert {k: out[k] for k in who} == who
    lines = records.read_journal(journal)
    assert len(lines) == 3 and all({k: w[k] for k in who} == who for w in lines)
    json.loads(json.dumps(out, allow_nan=False))


def test_windows_of_another_boot_or_host_are_measured_again(tmp_path, windows, host):
    """A calibration killed on node-a, resumed after a reboot of node-a, then on node-b:
    each time the windows of the other boot or host are left out, said so, and measured
    again, so the idle power is this boot's own (it was 80 W before the reboot)."""
    journal = tmp_path / "idle.jsonl"
    host("node-a", "boot-1")
    windows([80.0, 80.1, 79.9], kill_after=2)
    with pytest.raises(KeyboardInterrupt):
        calibrate(tmp_path, journal=str(journal))
    host("node-a", "boot-2")
    fake = windows(QUIET)
    lines: list[str] = []
    out = calibrate(tmp_path, journal=str(journal), log=lines.append)
    assert fake.calls == 3 and out["windows_w"] == QUIET[:3]
    assert out["idle_power_w"] == pytest.approx(stats.mean(QUIET[:3]))
    assert out["boot_id"] == "boot-2" and out["hostname"] == "node-a"
    assert lines[0] == (f"idle: 2 window(s) in {journal} left out, measured 2 in another "
                        "boot (boot-1), not on this host (node-a) in this boot (boot-2) by "
                        "this meter: idle power on another machine or before a reboot is "
                        "another baseline, so it is measured again")
    host("node-b", "boot-9")
    fake, lines = windows(QUIET), []
    assert calibrate(tmp_path, journal=str(journal), log=lines.append)["hostname"] == "node-b"
    assert fake.calls == 3
    assert lines[0].startswith(f"idle: 5 window(s) in {journal} left out, measured 5 on "
                               "host node-a, not on this host (node-b)")
    # Back on node-a's second boot: its own three windows suffice, nothing is measured.
    host("node-a", "boot-2")
    fake = windows([])
    assert calibrate(tmp_path, journal=str(journal))["windows_w"] == QUIET[:3] and not fake.calls


def test_windows_of_another_meter_identity_are_measured_again(tmp_path, windows):
    """Same name and scope (the journal's key), other coefficients: another meter."""
    journal = tmp_path / "idle.jsonl"
    journal_windows(journal, QUIET[:3], meter_identity={
        **FakeMeter().identity(), "coefficients": {"w_min": 1.0}})
    fake = windows(QUIET)
    lines: list[str] = []
    calibrate(tmp_path, journal=str(journal), log=lines.append)
    assert fake.calls == 3 and "3 by another meter identity" in lines[0]


def test_a_job_refuses_another_host_s_calibration(tmp_path, windows, host):
    host("node-a", "boot-1")
    windows(QUIET)
    out = calibrate(tmp_path, testbed="tb")
    assert idle.check_same_machine(out, "idle/s.json", "tb") is None
    host("node-b", "boot-7")
    with pytest.raises(MachineError, match=r"idle/s.json was measured on host node-a, but "
                                           r"this job runs on node-b"):
        idle.check_same_machine(out, "idle/s.json", "tb")
    host("node-a", "boot-2")
    with pytest.raises(MachineError, match=r"testbed tb's, not other's"):
        idle.check_same_machine(out, "idle/s.json", "other")
    note = idle.check_same_machine(out, "idle/s.json", "tb")
    assert note.startswith("the idle calibration idle/s.json was measured in another boot "
                           "of this host (boot-1, now boot-2)")
    # A calibration from before hosts were recorded (the fixture's): nothing to compare.
    old = json.loads(next((REPO / "tests/data/fixture/results/tiny/idle").glob("*.json"))
                     .read_text())
    assert "hostname" not in old and idle.check_same_machine(old, "old.json") is None



def test_the_job_reads_its_calibration_only_on_the_host_that_measured_it(tmp_path, windows,
                                                                        host):
    """What `wattzip job --idle idle/<setting>.json` reads: refused on another node, a note
    in the job's log after a reboot of the same one."""
    from wattzip.measure import measurement

    host("node-a", "boot-1")
    windows(QUIET)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(calibrate(tmp_path, testbed="tb")))
    lines: list[str] = []
    read = measurement.idle_calibration(FakeMeter(), str(path), None, "tb", lines.append)
    assert read.power_w == pytest.approx(sum(QUIET[:3]) / 3) and not lines
    host("node-a", "boot-2")
    measurement.idle_calibration(FakeMeter(), str(path), None, "tb", lines.append)
    assert len(lines) == 1 and "measured in another boot of this host" in lines[0]
    host("node-b", "boot-7")
    with pytest.raises(MachineError, match="was measured on host node-a, but this job runs "
                                           "on node-b"):
        measurement.idle_calibration(FakeMeter(), str(path), None, "tb", lines.append)
