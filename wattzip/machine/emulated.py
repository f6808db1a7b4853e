"""The paper's machine on any machine: N CPUs and a memory limit for the measured tools.

SYSTOR '09 booted its server with `maxcpus=1` and 1 GB of RAM ("all machines use only 1
CPU and 1GB RAM", its slides), and wrote 2 GB files so that I/O could not hide in the
page cache. The config's `machine:` (schema.yaml) emulates that: each job's tools run in
the job's cgroup (wattzip.machine.throttle: wattzip's own, under the cgroup its caller
runs in, so Slurm's and systemd's limits still hold and no other user is limited) with a
cpuset of `cpus` CPUs and a memory limit that counts the page cache (cgroup v1's
memory.limit_in_bytes, v2's memory.max). Where the config asks for it (`hotplug`), the
other CPUs are taken offline as maxcpus=1 left them (`/sys/devices/system/cpu/cpuN/online`):
that touches the whole machine, every user's processes on it, and on cgroup v1 the
cpusets of other cgroups keep the CPUs out after they come back online. Every change is
journaled before it is made and undone after (wattzip.machine), also after SIGKILL.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from wattzip import machine, units
from wattzip.errors import ConfigError, FactorError
from wattzip.machine.factors import SYSFS

ONLINE = re.compile(r"/cpu([0-9]+)/online$")


@dataclass(frozen=True)
class EmulatedMachine:
    """The config's `machine:`; None for a part the machine keeps as it is."""

    cpus: int | None = None
    memory_bytes: int | None = None
    hotplug: bool = False

    @classmethod
    def of(cls, config: Mapping | None) -> EmulatedMachine:
        """From the config's (or a spec's) `machine:` as the schema describes it."""
        c = config or {}
        memory = c.get("memory")
        machine = cls(cpus=c.get("cpus"),
                      memory_bytes=units.parse_size(memory) if memory else None,
                      hotplug=bool(c.get("hotplug")))
        if machine.hotplug and machine.cpus is None:
            raise ConfigError("machine.hotplug takes the CPUs beyond machine.cpus offline: "
                              "give machine.cpus too")
        return machine

    @property
    def emulated(self) -> bool:
        return self.cpus is not None or self.memory_bytes is not None

    def describe(self) -> str:
        """As the report states it, beside the real machine ("" when not emulated)."""
        if not self.emulated:
            return ""
        parts = []
        if self.cpus is not None:
            parts.append(f"{self.cpus} CPU{'s' if self.cpus != 1 else ''} ("
                         + ("the others offline" if self.hotplug else "a cpuset") + ")")
        if self.memory_bytes is not None:
            parts.append(f"{units.format_size(self.memory_bytes)} of memory, page cache "
                         "included (a memory cgroup)")
        return ", ".join(parts)


def parse_cpu_list(text: str) -> list[int]:
    """The kernel's CPU list ("0-3,6") as numbers."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if part:
            first, _, last = part.partition("-")
            cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def choose_cpus(count: int, allowed: set[int] | None = None) -> list[int]:
    """The lowest `count` of the CPUs this process may run on (its Slurm allocation's, its
    cpuset's): CPU 0 first, the one maxcpus=1 kept. Fewer than asked is an error."""
    allowed = sorted(allowed if allowed is not None else os.sched_getaffinity(0))
    if len(allowed) < count:
        raise FactorError(f"machine.cpus {count}: this job may run on {len(allowed)} CPU(s) "
                          f"only ({','.join(map(str, allowed))}); ask for fewer, or give the "
                          "job more (a Slurm job's --cpus-per-task)")
    return allowed[:count]


@contextlib.contextmanager
def others_offline(keep: list[int], sysfs: str = SYSFS) -> Iterator[list[int]]:
    """Every online CPU not in `keep` taken offline (hotplug, as `maxcpus=1` left them),
    each journaled before it is written and brought back online after; yields the CPUs
    taken offline. A CPU without an online file (CPU 0 on most machines) stays."""
    made, taken = [], []
    try:
        for name in sorted(glob.glob(f"{sysfs}/devices/system/cpu/cpu[0-9]*/online")):
            path = Path(name)
            cpu = int(ONLINE.search(name).group(1))
            if cpu in keep or path.read_text().strip() != "1":
                continue
            made.append(machine.note("sysfs", str(path), "1"))
            try:
                path.write_text("0\n")
            except OSError as exc:
                raise FactorError(f"machine.hotplug: cannot take CPU {cpu} offline ({path}: "
                                  f"{exc.strerror}); run as root, or leave hotplug out "
                                  "(the cpuset alone limits the tools)") from None
            taken.append(cpu)
        yield taken
    finally:
        machine.undo([e for e in machine.pending() if e["id"] in made])


@contextlib.contextmanager
def hotplugged(emulated: EmulatedMachine | None, log: Callable[[str], None],
               sysfs: str = SYSFS) -> Iterator[None]:
    """The other CPUs offline for a job or an idle calibration when the config asks for
    hotplug, said in the log; the machine as it is otherwise."""
    if emulated is None or not emulated.hotplug:
        yield
        return
    with others_offline(choose_cpus(emulated.cpus), sysfs) as taken:
        log(f"machine.hotplug: CPU(s) {','.join(map(str, taken)) or 'none'} offline until "
            "this command ends; this touches the whole machine (every user's processes "
            "lose them meanwhile)")
        yield
