"""Idle power calibration (SYSTOR '09 5.1): windows measured with the machine quiet.

Every window is journaled as it ends, so a killed calibration resumes; a window in
which the rest of the machine was busy is discarded and measured again, and several in
a row refuse the machine (another study, not a brief disturbance).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

from wattzip import factors, meters, records, system
from wattzip.machine import MachineError
from wattzip.meters import Meter
from wattzip.runner import cpu_busy_jiffies, utc_now

NOISY_IDLE_WINDOWS = 3  # in a row: the machine is busy, not briefly disturbed


def calibrate(meter: Meter, *, count: int, seconds: float, setting: str, target_dir: str,
              io_scheduler: str = "keep", governor: str = "keep",
              max_other_load: float = 0.1, journal: str | None = None,
              log: Callable[[str], None] = print) -> dict:
    """The idle calibration of one setting (its I/O scheduler and governor applied), as
    the JSON the jobs read: mean and sd of the windows, the meter that measured them."""
    os.makedirs(target_dir, exist_ok=True)
    key = f"{meter.name}|{meter.scope}|{setting}|{seconds:g}"
    windows = ([float(e["watts"]) for e in records.read_journal(journal, key, ("key", "watts"))]
               if journal else [])
    if windows:
        log(f"idle: {len(windows)} window(s) of {seconds:g} s found in {journal}")
    with factors.applied(system.scheduler_disk(target_dir), io_scheduler, governor):
        quiet, noisy = QuietCheck(), 0
        while len(windows) < count:
            watts = meters.measure_idle(meter, 1, seconds).windows_w[0]
            try:
                quiet.require_quiet(max_other_load, f"idle window {len(windows) + 1}")
            except MachineError as exc:  # discarded, never averaged in
                noisy += 1
                if noisy >= NOISY_IDLE_WINDOWS:
                    raise
                log(f"{exc}; discarded, measuring it again")
                continue
            noisy = 0
            windows.append(watts)
            log(f"idle window {len(windows)}/{count}: {watts:.2f} W")
            if journal:
                records.append_journal(journal, {"key": key, "watts": watts})
    result = meters.IdleResult(windows[:count], meter.name, meter.scope, meter.method, seconds)
    return {"idle_power_w": result.mean_w, "sd_w": result.sd_w, "windows_w": result.windows_w,
            "count": count, "seconds": seconds, "setting": setting,
            "meter_source": result.source, "meter_scope": result.scope,
            "meter_method": result.method, "measured_at": utc_now()}


def _per_process_jiffies() -> dict[int, tuple[str, int]]:
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                text = (entry / "stat").read_text()
                rest = text[text.rindex(")") + 2:].split()
                out[int(entry.name)] = (text[text.index("(") + 1:text.rindex(")")],
                                        int(rest[11]) + int(rest[12]))
    return out


class QuietCheck:
    """CPU time the rest of the machine used while this process measured idle power.

    Another study's load (in a chroot or a container this lock does not reach) would go
    into the idle baseline and every passive energy after it, with nothing to say so.
    """

    def __init__(self):
        self.tick = os.sysconf("SC_CLK_TCK")
        self.cpus = os.cpu_count() or 1
        self._start()

    def _own_jiffies(self) -> int:
        t = os.times()
        return round((t.user + t.system + t.children_user + t.children_system) * self.tick)

    def _start(self) -> None:
        self.t0 = time.monotonic()
        self.busy0, self.own0 = cpu_busy_jiffies(), self._own_jiffies()
        self.procs0 = _per_process_jiffies()

    def others_load(self) -> tuple[float, list[str]]:
        """(the other processes' share of all CPUs since the start, the busiest of them)."""
        seconds = time.monotonic() - self.t0
        others = (cpu_busy_jiffies() - self.busy0) - (self._own_jiffies() - self.own0)
        share = max(others, 0) / self.tick / max(seconds * self.cpus, 1e-9)
        after = _per_process_jiffies()
        deltas = sorted(((j - self.procs0.get(pid, ("", 0))[1], pid, name)
                         for pid, (name, j) in after.items() if pid != os.getpid()),
                        reverse=True)
        busiest = [f"{name} (pid {pid}, {d / self.tick:.1f} CPU-s)" for d, pid, name
                   in deltas[:3] if d > 0]
        return share, busiest

    def require_quiet(self, limit: float, what: str) -> None:
        """An error when the rest of the machine was busy since the last check (which
        starts a new interval either way)."""
        share, busiest = self.others_load()
        if share > limit:
            self._start()
            raise MachineError(
                f"{what}: the machine was not idle: other processes used {share:.0%} of its "
                f"{self.cpus} CPUs (limit {limit:.0%}); busiest: "
                f"{', '.join(busiest) or 'processes that have exited'}. Their load would "
                "go into the idle baseline and every passive energy; stop them (another "
                "study in a container this lock cannot see?) and calibrate again")
        self._start()
