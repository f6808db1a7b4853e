"""The idle calibration's fakes, shared by its tests: a meter whose windows are given, a
quiet check that is quiet (or busy when told), and a host and boot of one's choosing."""

from __future__ import annotations

from wattzip import machine, meters, records
from wattzip.machine import MachineError, system
from wattzip.measure import idle
from wattzip.meters import MeterOptions
from wattzip.meters.base import Meter

QUIET = [40.0, 40.1, 39.9, 40.05, 39.95, 40.0, 40.1, 39.9, 40.0, 40.0]
NOISY = [30.0, 50.0] * 5  # a half-width of about a quarter of the mean, whatever the look


class FakeMeter(Meter):
    name = "fake"
    method = "measured"

    def __init__(self):
        super().__init__(MeterOptions())
        self.scope = "wall"


class Windows:
    """measure_idle's stand-in: the given windows, one per call, then a kill if asked."""

    def __init__(self, watts, kill_after: int | None = None):
        self.watts, self.kill_after, self.calls = list(watts), kill_after, 0

    def __call__(self, meter, count, seconds, progress=None):
        assert count == 1  # calibrate looks after every window
        if self.calls == self.kill_after:
            raise KeyboardInterrupt  # the calibration killed mid-window
        self.calls += 1
        return meters.IdleResult([self.watts.pop(0)], meter.name, meter.scope,
                                 meter.method, seconds)


class Quiet:
    """The quiet check, quiet (or busy for the windows listed)."""

    busy: set[int] = set()

    def __init__(self):
        self.checks = 0

    def require_quiet(self, limit, what):
        self.checks += 1
        if self.checks in self.busy:
            raise MachineError(f"{what}: the machine was not idle")

    def restart(self):
        pass


def windows_of(monkeypatch):
    """The `windows` fixture's value: install(watts, kill_after, busy) fakes the meter's
    idle windows and the quiet check."""
    def install(watts, kill_after=None, busy=()):
        fake = Windows(watts, kill_after)
        monkeypatch.setattr(meters, "measure_idle", fake)
        monkeypatch.setattr(idle, "QuietCheck", type("Busy", (Quiet,), {"busy": set(busy)}))
        return fake
    return install


def host_of(monkeypatch):
    """The `host` fixture's value: become(name, boot) runs as host `name` in boot `boot`, as
    wattzip.machine and its system module say."""
    def become(name, boot):
        monkeypatch.setattr(system, "host_identity", lambda: {
            "hostname": name, "slurm_node": f"{name}-node", "slurm_job_id": "7"})
        monkeypatch.setattr(machine, "boot_id", lambda: boot)
    return become


def calibrate(tmp_path, *, count=10, min_count=3, ci_target=0.02, journal=None, log=None,
              drift_repeats=0, meter=None, testbed=None):
    return idle.calibrate(meter or FakeMeter(), count=count, seconds=0.01, setting="s",
                          target_dir=str(tmp_path / "target"), min_count=min_count,
                          ci_target=ci_target, journal=journal,
                          log=(log if log is not None else lambda line: None),
                          drift_repeats=drift_repeats, testbed=testbed)


def journal_windows(path, watts, key="fake|wall|s|0.01", **fields):
    """Windows journaled as calibrate journals them here (this host, boot and meter)."""
    here = idle.origin(FakeMeter(), None)
    for w in watts:
        records.append_journal(path, {**here, "key": key, "watts": w, "at": "t", **fields})
