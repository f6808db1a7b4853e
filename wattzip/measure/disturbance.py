"""The rest of the machine's load during a measured run, and whether it disturbed the run.

A wall meter sees every process; RAPL sees every core of the package. Another
process's CPU time inside a run's region is energy the run is charged for, and a
neighbour stealing a VM's CPU stretches the run's time. The machine lock keeps
other studies out, not every process. So each run records, over its region:

- other_user_share: user CPU time of everything but the measured process tree and
  the harness itself, as a share of all CPUs' time (/proc/stat's user + nice less the
  tree's and our own rusage). User time only: the kernel's threads that flush, loop
  and (btrfs) compress for the run are system time the run itself caused;
- other_cpu_share: the same with system, irq and softirq time, for the record;
- steal_share: CPU time the hypervisor gave to another guest (/proc/stat's steal);
- cpu_pressure_share: the share of the region in which some task waited for a CPU
  (/proc/pressure/cpu "some total"), kernel 4.20 and later; None where absent.

A run whose other_user_share or steal_share exceeds its limit (config `quiet:`), or
whose CPU was throttled or started hotter than the idle calibration by more than
quiet.max_heat_c (wattzip.machine.thermal; "heat"), is flagged disturbed: recorded
with the reason, left out of every statistic and measured again by the job's loop
(wattzip.measure.repeats), once the machine is quiet again
(QuietLimits.wait_until_quiet) and, after heat, cool again (QuietLimits.wait_until_cool,
which also gates each arm): measured again at once, every repeat left would fall into
the same burst of someone else's work (another study's report, a build).
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from wattzip.machine import MachineError, thermal
from wattzip.resources import schema_default

PROC_STAT = "/proc/stat"
PRESSURE_CPU = "/proc/pressure/cpu"
TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Snapshot:
    """The machine's CPU counters at one moment (jiffies; pressure in microseconds)."""

    user: int
    busy: int
    steal: int
    pressure_us: int | None
    own_user_s: float
    own_cpu_s: float


def _pressure_us(path: str) -> int | None:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("some "):
                    return int(line.rsplit("total=", 1)[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def snapshot(proc_stat: str = PROC_STAT, pressure: str = PRESSURE_CPU) -> Snapshot:
    with open(proc_stat) as f:
        fields = [int(v) for v in f.readline().split()[1:9]]
    fields += [0] * (8 - len(fields))
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    own = os.times()
    return Snapshot(user + nice, user + nice + system + irq + softirq, steal,
                    _pressure_us(pressure), own.user, own.user + own.system)


def process_times(pids) -> tuple[float, float]:
    """The user and the user + system CPU seconds of some processes, from /proc/<pid>/stat
    (a process that is gone counts nothing)."""
    user = total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        utime, stime = int(fields[11]) / TICK, int(fields[12]) / TICK
        user, total = user + utime, total + utime + stime
    return user, total


def process_jiffies() -> dict[int, tuple[str, int]]:
    """Every process's name and user + system CPU time (jiffies), by pid."""
    out = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry.name}/stat") as f:
                    text = f.read()
                rest = text[text.rindex(")") + 2:].split()
                out[int(entry.name)] = (text[text.index("(") + 1:text.rindex(")")],
                                        int(rest[11]) + int(rest[12]))
    return out


def busiest(before: dict[int, tuple[str, int]], after: dict[int, tuple[str, int]],
            top: int = 3) -> list[str]:
    """The processes (this one left out) that used the most CPU time between two
    process_jiffies(), as the messages name them."""
    deltas = sorted(((j - before.get(pid, ("", 0))[1], pid, name)
                     for pid, (name, j) in after.items() if pid != os.getpid()),
                    reverse=True)
    return [f"{shown_name(name)} (pid {pid}, {d / TICK:.1f} CPU-s)"
            for d, pid, name in deltas[:top] if d > 0]


def shown_name(name: str) -> str:
    """A process's name as root's terminal may show it: another user chooses it (prctl,
    exec), and an escape sequence in it would drive the terminal. Every character
    that is not printable is written as an escape (\\x1b)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in name)


def load_since(start: Snapshot, end: Snapshot, tree_user_s: float, tree_cpu_s: float,
               elapsed_s: float, cpus: int | None = None) -> dict:
    """The other load in [start, end] as the run record's fields."""
    cpus = cpus or os.cpu_count() or 1
    capacity = max(elapsed_s * cpus, 1e-9)
    others_user = ((end.user - start.user) / TICK - tree_user_s
                   - (end.own_user_s - start.own_user_s))
    others_cpu = ((end.busy - start.busy) / TICK - tree_cpu_s
                  - (end.own_cpu_s - start.own_cpu_s))
    pressure = (None if start.pressure_us is None or end.pressure_us is None or elapsed_s <= 0
                else (end.pressure_us - start.pressure_us) / 1e6 / elapsed_s)
    return {"other_user_s": max(others_user, 0.0),
            "other_user_share": max(others_user, 0.0) / capacity,
            "other_cpu_share": max(others_cpu, 0.0) / capacity,
            "steal_share": (end.steal - start.steal) / TICK / capacity,
            "cpu_pressure_share": pressure, "cpus": cpus}


def load_share(cpu_s: float, elapsed_s: float, cpus: int) -> float:
    """The share of all CPUs' time over `elapsed_s` that `cpu_s` of CPU time took, less a
    tick per CPU at each end: the kernel counts CPU time in ticks, so that much is counting,
    not load. At most 1 (any more is counting too), so a limit of 1 refuses nothing."""
    counted = max(cpu_s - 2 * cpus / TICK, 0.0) / max(elapsed_s * cpus, 1e-9)
    return min(counted, 1.0)


@dataclass(frozen=True)
class QuietLimits:
    """How much of the machine others may use during a run (config `quiet:`)."""

    # the schema's defaults (config quiet.*), declared there once
    max_other_cpu: float = schema_default("quiet.max_other_cpu")
    max_steal: float = schema_default("quiet.max_steal")
    wait_s: float = schema_default("quiet.wait_s")  # how long a busy machine is waited for
    # What other processes' load is: their user time (a run's own flushing, loop and
    # compression threads are kernel time), or also their kernel time (idle windows,
    # where any busy CPU is load: wattzip.measure.idle.QuietCheck counts it so).
    count_system: bool = False
    # The thermal gate: how far above the idle calibration's package temperature a run
    # may start (config quiet.max_heat_c).
    max_heat_c: float = schema_default("quiet.max_heat_c")

    def judge(self, record: dict) -> str | None:
        """Why the run was disturbed, or None when it was quiet. Both shares forgive the
        kernel's counting in ticks (load_share: one tick of steal is 25% of a 20 ms run on
        2 CPUs)."""
        elapsed = record.get("elapsed_s")
        if not elapsed or record.get("other_user_s") is None:
            return None
        cpus = record.get("cpus") or os.cpu_count() or 1
        capacity = elapsed * cpus
        other_s = (record.get("other_cpu_share", 0.0) * capacity if self.count_system
                   else record["other_user_s"])
        share = load_share(other_s, elapsed, cpus)
        reasons = []
        if share > self.max_other_cpu:
            reasons.append(f"other processes used {share:.0%} of the {cpus} CPUs "
                           f"(limit {self.max_other_cpu:.0%})")
        steal = load_share((record.get("steal_share") or 0.0) * capacity, elapsed, cpus)
        if steal > self.max_steal:
            reasons.append(f"the hypervisor stole {steal:.0%} of the CPUs' time "
                           f"(limit {self.max_steal:.0%})")
        pressure = record.get("cpu_pressure_share")
        if reasons and pressure is not None:
            reasons.append(f"CPU pressure {pressure:.0%} of the region")
        return "; ".join(reasons) or None

    def judge_heat(self, record: Mapping, idle_temp_c: float | None) -> str | None:
        """Why the run was disturbed by heat (its CPU throttled; it started more than
        max_heat_c above the idle calibration's package temperature), or None. An absent
        sensor or counter judges nothing."""
        reasons = []
        if record.get("throttle_events"):
            reasons.append(f"heat: the CPU was throttled ({record['throttle_events']} "
                           "thermal_throttle events in the run)")
        start = record.get("package_temp_start_c")
        if idle_temp_c is not None and start is not None and \
                start > idle_temp_c + self.max_heat_c:
            reasons.append(f"heat: it started at {start:.1f} °C, {start - idle_temp_c:.1f} °C "
                           f"above the idle calibration's {idle_temp_c:.1f} °C (limit "
                           f"{self.max_heat_c:g} °C)")
        return "; ".join(reasons) or None

    def wait_until_cool(self, log: Callable[[str], None], what: str,
                        idle_temp_c: float | None, sample_s: float = 1.0) -> float:
        """The thermal gate: sample the CPU package's temperature until it is within
        max_heat_c of the idle calibration's, saying what it waits for; hot for longer
        than `wait_s` is an error. Nothing to wait for without either temperature.
        Returns the seconds waited."""
        if idle_temp_c is None:
            return 0.0
        limit = idle_temp_c + self.max_heat_c
        t0, told = time.monotonic(), -math.inf
        while True:
            temp = thermal.package_temp_c()
            waited = time.monotonic() - t0
            if temp is None or temp <= limit:
                if told > -math.inf:
                    log(f"{what}: the CPU package has cooled to "
                        + ("(no reading)" if temp is None else f"{temp:.1f} °C")
                        + f" after {waited:.0f} s")
                return waited
            if waited >= self.wait_s:
                raise MachineError(
                    f"{what}: the CPU package stayed at {temp:.1f} °C for {waited:.0f} s, above "
                    f"the idle calibration's {idle_temp_c:.1f} °C + quiet.max_heat_c = "
                    f"{self.max_heat_c:g} °C (the study waits up to quiet.wait_s = "
                    f"{self.wait_s:g} s): let the machine cool (its fans, another study's "
                    "load), or raise quiet.max_heat_c, and run it again")
            if waited - told >= 30:
                told = waited
                log(f"{what}: the CPU package is at {temp:.1f} °C, above {limit:.1f} °C (the "
                    f"idle calibration's {idle_temp_c:.1f} °C + {self.max_heat_c:g}); waiting "
                    f"up to {self.wait_s:g} s for it to cool before measuring")
            time.sleep(sample_s)

    def wait_until_quiet(self, log: Callable[[str], None], what: str,
                         sample_s: float = 1.0) -> float:
        """Sample the rest of the machine's load over `sample_s` until a sample is within
        the limits, saying why it waits; a machine busy for longer than `wait_s` is an
        error (a busy server, not a burst). Returns the seconds waited."""
        t0 = time.monotonic()
        told = -math.inf
        while True:
            start, procs, t = snapshot(), process_jiffies(), time.monotonic()
            time.sleep(sample_s)
            elapsed = time.monotonic() - t
            busy = self.judge({**load_since(start, snapshot(), 0.0, 0.0, elapsed),
                               "elapsed_s": elapsed})
            if busy:
                busy += "; busiest: " + (", ".join(busiest(procs, process_jiffies()))
                                         or "processes that have exited")
            waited = time.monotonic() - t0
            if busy is None:
                if told > -math.inf:
                    log(f"{what}: the machine is quiet again after {waited:.0f} s")
                return waited
            if waited >= self.wait_s:
                raise MachineError(
                    f"{what}: the machine stayed busy for {waited:.0f} s ({busy}; the "
                    f"study waits up to quiet.wait_s = {self.wait_s:g} s): stop the other "
                    "work, or give the study a machine of its own, and run it again")
            if waited - told >= 60:
                told = waited
                log(f"{what}: the machine is busy ({busy}); waiting up to "
                    f"{self.wait_s:g} s for it to be quiet before measuring again")


@dataclass(frozen=True)
class DriftCheck:
    """The reference operation's repeats and the change that counts as drift
    (wattzip.measure.drift; config `drift:`)."""

    repeats: int = schema_default("drift.repeats")
    max_change: float = schema_default("drift.max_change")
    # The reference's phases at the setting's idle calibration: its noise between phases.
    phases: tuple = field(default=(), compare=False)
    # A study's journal folder: its setting's back-to-back pairs join the phases.
    pool: str | None = field(default=None, compare=False)


def count_disturbed(runs: list[dict]) -> dict[str, int]:
    """How many runs were disturbed, by reason (other processes, steal, drift, heat): the
    report's (a run may count under several)."""
    out: dict[str, int] = {}
    for r in runs:
        why = r.get("disturbed")
        if why:
            for kind in ("other processes", "stole", "drift", "heat"):
                if kind in why:
                    out[kind] = out.get(kind, 0) + 1
    return out


def describe(runs: list[dict]) -> str:
    """The report's sentence on disturbed runs (runs.csv rows or records)."""
    kinds = count_disturbed(runs)
    n = sum(1 for r in runs if r.get("disturbed"))
    if not any(r.get("other_user_share") not in (None, "") for r in runs):
        return "The runs recorded no other load (measured before wattzip recorded it)."
    if not n:
        return ("No run was disturbed by other load on the machine (other processes' CPU "
                "time, a hypervisor's steal) beyond the study's limits.")
    causes = {"other processes": "other processes' CPU time",
              "stole": "a hypervisor stealing CPU time",
              "drift": "the machine's drift over their job (a reference operation)",
              "heat": "heat (a throttled CPU, or a start hotter than the idle calibration)"}
    why = ", ".join(f"{count} by {causes[kind]}" for kind, count in sorted(kinds.items()))
    kept = sum(1 for r in runs if r.get("drift_warning"))
    return (f"{n} of {len(runs)} runs were disturbed by other load on the machine ({why}); "
            "each was measured again and none enters any statistic."
            + (f" {kept} runs are kept although their job drifted again when measured "
               "again (drift_warning in runs.csv)." if kept else ""))
