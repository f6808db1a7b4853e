"""The utilization model: an ESTIMATE of energy where no meter exists (VMs, CI)."""

from __future__ import annotations

import os

from wattzip.errors import MeterError
from wattzip.meters import coefficients
from wattzip.meters.base import CounterMeter


def read_cpu_times(proc_stat: str) -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs from /proc/stat's first line.

    Steal time, when a hypervisor ran another guest on our CPU, is part of
    the total but not of busy: a VM's neighbours are not our energy.
    """
    with open(proc_stat) as f:
        fields = f.readline().split()
    if not fields or fields[0] != "cpu":
        raise MeterError(f"model: {proc_stat} has no aggregate cpu line")
    values = [int(v) for v in fields[1:9]] + [0] * (8 - len(fields[1:9]))
    user, nice, system, idle, iowait, irq, softirq, steal = values
    busy = user + nice + system + irq + softirq
    return busy, busy + idle + iowait + steal


class ModelMeter(CounterMeter):
    """E = n_threads * W_min * t + CPU-seconds * (W_max - W_min) (wattzip.meters.coefficients).

    An estimate, never a measurement: it sees only CPU time, not the disk, memory or
    fans; its coefficients come from a cited SPECpower-derived table matched to this
    CPU (or from the testbed config, which then says so).
    """

    name = "model"
    scope = "wall (CPU-utilization model)"
    method = "estimated"
    OPTIONS = {"model_idle_power_w": None, "model_max_power_w": None,
               "proc_stat": "/proc/stat", "cpuinfo": "/proc/cpuinfo"}

    def __init__(self, options):
        super().__init__(options)
        self.require_usable()
        self.model = coefficients.configured(options.model_idle_power_w,
                                             options.model_max_power_w,
                                             cpuinfo=options.cpuinfo)

    @classmethod
    def probe(cls, options):
        if not os.access(options.proc_stat, os.R_OK):
            return f"model: {options.proc_stat} is not readable"
        return None

    def coefficients(self) -> dict:
        m = self.model
        return {"row": m.row, "min_w_per_thread": round(m.min_w_per_thread, 6),
                "max_w_per_thread": round(m.max_w_per_thread, 6), "threads": m.threads,
                "source": m.source}

    def _reset(self, now: float) -> None:
        self._energy_j = 0.0
        self._cpu = read_cpu_times(self.options.proc_stat)
        self._t = now

    def _read_energy_j(self, now: float) -> float:
        busy, total = read_cpu_times(self.options.proc_stat)
        d_busy, d_total = busy - self._cpu[0], total - self._cpu[1]
        share = min(max(d_busy / d_total, 0.0), 1.0) if d_total > 0 else 0.0
        elapsed = now - self._t
        # CPU-seconds of the whole machine: its busy share of all threads' time.
        self._energy_j += self.model.energy_j(elapsed, share * self.model.threads * elapsed)
        self._cpu, self._t = (busy, total), now
        return self._energy_j
