"""The utilization model: an ESTIMATE of energy where no meter exists (VMs, CI)."""

from __future__ import annotations

import os

from wattzip.errors import MeterError
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
    """P = P_idle + (P_max - P_idle) * u, u the whole machine's CPU utilization.

    This is an estimate, never a measurement: it sees only CPU time, not the
    disk, memory or fans, and its coefficients come from the testbed config.
    """

    name = "model"
    method = "estimated"

    def __init__(self, options):
        super().__init__(options)
        self.require_usable()
        self.scope = "wall (CPU-utilization model)"
        self.idle_w = float(options.model_idle_power_w)
        self.max_w = float(options.model_max_power_w)

    @classmethod
    def probe(cls, options):
        if options.model_idle_power_w is None or options.model_max_power_w is None:
            return "model: needs idle and max power coefficients (meter.model in the config)"
        if options.model_max_power_w < options.model_idle_power_w:
            return "model: max_power_w must not be below idle_power_w"
        if not os.access(options.proc_stat, os.R_OK):
            return f"model: {options.proc_stat} is not readable"
        return None

    def coefficients(self) -> dict:
        return {"idle_power_w": self.options.model_idle_power_w,
                "max_power_w": self.options.model_max_power_w}

    def _reset(self, now: float) -> None:
        self._energy_j = 0.0
        self._cpu = read_cpu_times(self.options.proc_stat)
        self._t = now

    def _read_energy_j(self, now: float) -> float:
        busy, total = read_cpu_times(self.options.proc_stat)
        d_busy, d_total = busy - self._cpu[0], total - self._cpu[1]
        util = min(max(d_busy / d_total, 0.0), 1.0) if d_total > 0 else 0.0
        self._energy_j += (self.idle_w + (self.max_w - self.idle_w) * util) * (now - self._t)
        self._cpu, self._t = (busy, total), now
        return self._energy_j
