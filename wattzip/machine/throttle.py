"""The job's cgroup: a disk of a chosen speed (a block-I/O throttle capping the input's
and the target's devices), and the emulated machine's CPUs and memory
(wattzip.machine.emulated); the measured commands run in it.

cgroup v1 (blkio.throttle.read_bps_device / write_bps_device) or v2 (io.max).
The throttle sees I/O that a process submits itself: reads, and writes that
fsync or an unmount push out from inside the cgroup (the measured region
moves the harness into it, so its commands, its fsync and its umount are all
throttled), so one machine can stand in for the paper's server, desktop and
laptop disks with T measured for real. The cgroup is created per job and
removed when the job ends, also when it dies (a cgroup left behind by a
killed job is removed by the next one).

The kernel's throttle works in slices (100 ms): a burst of about one slice's
worth of bytes passes before it starts to delay, so a run that moves less
than a few slices' worth (a few MB at 30-70 MB/s) runs faster than the
emulated disk would. Emulate with files of at least tens of MB.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path

from wattzip import machine, resources
from wattzip.errors import ConfigError, FactorError
from wattzip.machine.emulated import EmulatedMachine, choose_cpus, parse_cpu_list

V1_ROOT = "/sys/fs/cgroup/blkio"
V2_ROOT = "/sys/fs/cgroup"
PREFIX = "wattzip-"


# Bandwidth units, as storage and network people write them: a capital B is bytes,
# b or "bit" bits; k/M/G are powers of 1000, Ki/Mi/Gi powers of 1024.
_BANDWIDTH = re.compile(r"^(?P<number>[0-9]+(?:\.[0-9]+)?)\s*(?P<prefix>[kKMG]i?)?"
                        r"(?P<unit>B|b|bit)(?:/s|ps)$")
_PREFIXES = {None: 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10,
             "Mi": 2**20, "Gi": 2**30}


@functools.cache
def disks() -> dict[str, dict]:
    """The papers' test disks by model number (data/disks.csv, each rate cited)."""
    text = (resources.data() / "disks.csv").read_text(encoding="utf-8")
    rows = csv.DictReader(io.StringIO("".join(
        line for line in text.splitlines(keepends=True) if not line.startswith("#"))))
    return {r["name"]: r for r in rows}


def parse_bandwidth(text: str | int | float) -> int | None:
    """'30MB/s' -> 30000000 bytes per second, '30Mbps' or '30Mbit/s' (megabits) ->
    3750000, '30MiB/s' -> 31457280; 'unlimited' -> None; a paper's disk by its model
    number (data/disks.csv, 'ST373207LW') -> its data sheet's sustained rate. A number
    without a unit is refused: 30 what?"""
    t = str(text).strip()
    if t.lower() == "unlimited":
        return None
    if t in disks():
        return round(float(disks()[t]["emulated_mb_s"]) * 10**6)
    match = _BANDWIDTH.match(t)
    if not match:
        raise ConfigError(
            f"bandwidth {text!r}: write a rate with its unit, e.g. 30MB/s (megabytes), "
            "30MiB/s (mebibytes) or 240Mbit/s, 240Mbps (megabits), 'unlimited', or a "
            f"paper's disk: {', '.join(disks())} (data/disks.csv)")
    value = float(match["number"]) * _PREFIXES[match["prefix"]]
    return round(value if match["unit"] == "B" else value / 8)


def bandwidth_label(text: str) -> str:
    """A bandwidth as it goes into a setting's name: '50MB/s' -> '50MBps'."""
    text = str(text).replace("/s", "ps").replace(" ", "")
    return "".join(c if c.isalnum() else "_" for c in text)


def device_numbers(device: str) -> str:
    """'vda' or '/dev/loop3' -> 'major:minor' of the whole disk (sysfs dev)."""
    name = os.path.basename(device)
    dev = Path("/sys/class/block") / name
    if (dev / "partition").exists():
        dev = dev.resolve().parent
    text = (dev / "dev").read_text().strip() if (dev / "dev").exists() else ""
    if not text:
        raise FactorError(f"bandwidth: no block device {device!r} in /sys/class/block")
    return text


class Throttle:
    """The job's cgroup: a cap on some devices' read and write bandwidth, and the emulated
    machine's CPUs and memory (wattzip.machine.emulated). cgroup v1 keeps each
    controller in a hierarchy of its own (one cgroup in each the job needs), v2 in one."""

    def __init__(self, devices: list[str], bytes_per_s: int | None, name: str | None = None,
                 v1_root: str = V1_ROOT, v2_root: str = V2_ROOT,
                 cpus: list[int] | None = None, memory_bytes: int | None = None):
        self.numbers = sorted({device_numbers(d) for d in devices if d})
        self.bytes_per_s, self.cpus, self.memory_bytes = bytes_per_s, cpus, memory_bytes
        # The v1 hierarchy of each controller the job needs, beside the blkio one.
        needed = {"blkio": self.bytes_per_s is not None, "cpuset": cpus is not None,
                  "memory": memory_bytes is not None}
        self.controllers = [c for c, wanted in needed.items() if wanted] or ["blkio"]
        v1_base = os.path.dirname(v1_root.rstrip("/"))
        v1_roots = {c: v1_root if c == "blkio" else os.path.join(v1_base, c)
                    for c in self.controllers}
        if all(os.path.exists(os.path.join(v1_roots[c], V1_FILES[c]))
               for c in self.controllers):
            self.version = 1
            roots = {c: Path(v1_roots[c]) for c in self.controllers}
        elif os.path.exists(os.path.join(v2_root, "cgroup.controllers")):
            self.version = 2
            roots = {"": Path(v2_root)}
        else:
            raise FactorError(f"{self._what()}: this kernel offers no cgroup v1 hierarchy "
                              f"of {', '.join(self.controllers)} nor cgroup v2")
        name = name or f"{PREFIX}{os.getpid()}"
        # Per hierarchy: its root, the caller's own cgroup in it, and the job's.
        self.groups = {}
        for controller, root in roots.items():
            home = own_cgroup(root, self.version, controller or "blkio")
            self.groups[controller] = (root, home, _beside(home, root, self.version) / name)
        self.root, self.home, self.path = next(iter(self.groups.values()))
        self._changes: list[str] = []

    def _what(self) -> str:
        return "bandwidth" if self.bytes_per_s is not None else "machine"

    def _group(self, controller: str) -> Path:
        """The job's cgroup that holds `controller`'s files."""
        return self.groups["" if self.version == 2 else controller][2]

    def create(self) -> None:
        try:
            for controller, (_root, home, path) in self.groups.items():
                if self.version == 2:
                    self._changes += _delegate(
                        path.parent, [V2_CONTROLLERS[c] for c in self.controllers],
                        self._what())
                self._changes.append(machine.note("cgroup", str(path), return_to=str(home)))
                path.mkdir(exist_ok=True)
                self._set_limits(controller or None)
        except OSError as exc:
            error = (f"{self._what()}: cannot set up the cgroup {self.path}: {exc} "
                     "(run as root)")
            try:
                self.remove()
            except machine.MachineError as left:
                raise FactorError(f"{error}; and {left}") from None
            raise FactorError(error) from None

    def _set_limits(self, controller: str | None) -> None:
        """Write the limits of one v1 hierarchy's cgroup (None: v2's one cgroup, all)."""
        v2 = controller is None
        if (v2 or controller == "blkio") and self.bytes_per_s is not None:
            path = self._group("blkio")
            for numbers in self.numbers:
                if self.version == 1:
                    for kind in ("read", "write"):
                        (path / f"blkio.throttle.{kind}_bps_device").write_text(
                            f"{numbers} {self.bytes_per_s}\n")
                else:
                    (path / "io.max").write_text(
                        f"{numbers} rbps={self.bytes_per_s} wbps={self.bytes_per_s}\n")
        if (v2 or controller == "cpuset") and self.cpus is not None:
            path = self._group("cpuset")
            if self.version == 1:  # a v1 cpuset takes no task before its mems are set
                (path / "cpuset.mems").write_text(
                    (path.parent / "cpuset.mems").read_text().strip() + "\n")
            (path / "cpuset.cpus").write_text(",".join(map(str, self.cpus)) + "\n")
        if (v2 or controller == "memory") and self.memory_bytes is not None:
            path = self._group("memory")
            limit = "memory.limit_in_bytes" if self.version == 1 else "memory.max"
            (path / limit).write_text(f"{self.memory_bytes}\n")

    def applied_bytes_per_s(self) -> dict[str, int]:
        """What the kernel holds for this cgroup, read back: {major:minor: bytes/s} where
        reads and writes are capped alike (a device capped one way only is left out)."""
        held: dict[str, dict[str, int]] = {}
        path = self._group("blkio")
        if self.version == 1:
            for kind in ("read", "write"):
                text = (path / f"blkio.throttle.{kind}_bps_device").read_text()
                for line in text.split("\n"):
                    if line.strip():
                        numbers, rate = line.split()
                        held.setdefault(numbers, {})[kind] = int(rate)
        else:
            for line in (path / "io.max").read_text().splitlines():
                numbers, *pairs = line.split()
                values = dict(p.split("=") for p in pairs)
                held[numbers] = {"read": int(values.get("rbps", 0) or 0),
                                 "write": int(values.get("wbps", 0) or 0)}
        return {n: v["read"] for n, v in held.items() if v.get("read") == v.get("write")}

    def applied_machine(self) -> dict[str, list[int] | int | None]:
        """The emulated machine's limits the kernel holds, read back: {"cpus": [...],
        "memory_bytes": n} (None for a limit not asked for)."""
        cpus = memory = None
        if self.cpus is not None:
            cpus = parse_cpu_list((self._group("cpuset") / "cpuset.cpus").read_text())
        if self.memory_bytes is not None:
            limit = "memory.limit_in_bytes" if self.version == 1 else "memory.max"
            memory = int((self._group("memory") / limit).read_text().strip())
        return {"cpus": cpus, "memory_bytes": memory}

    @contextlib.contextmanager
    def entered(self) -> Iterator[None]:
        """This process (and what it starts) inside the cgroup, then back in the cgroup it
        came from (its Slurm step or systemd scope, whose tracking and signals must keep
        reaching it), never the root."""
        entered = []
        try:
            for _root, home, path in self.groups.values():
                (path / "cgroup.procs").write_text(f"{os.getpid()}\n")
                entered.append(home)
            yield
        finally:
            for home in reversed(entered):
                (home / "cgroup.procs").write_text(f"{os.getpid()}\n")

    def remove(self) -> None:
        """Every process back home and the cgroups gone; an error names what stays."""
        machine.undo([e for e in machine.pending() if e["id"] in self._changes])


# The file that shows a v1 hierarchy offers its controller, and v2's controller names.
V1_FILES = {"blkio": "blkio.throttle.read_bps_device", "cpuset": "cpuset.cpus",
            "memory": "memory.limit_in_bytes"}
V2_CONTROLLERS = {"blkio": "io", "cpuset": "cpuset", "memory": "memory"}


def _beside(home: Path, root: Path, version: int) -> Path:
    """Where the job's cgroup goes: inside the caller's own cgroup (its Slurm job or
    step, its systemd scope), never at the hierarchy's root, where scancel, a time limit
    or the scope's stop would not reach the measured tools. cgroup v1 nests it in the
    caller's; v2 lets no cgroup with processes hold a child that uses a controller, so
    it goes beside the caller's (in the Slurm step or the slice that holds it)."""
    if version == 1 or home == root:
        return home
    return home.parent


def _delegate(parent: Path, controllers: list[str], what: str) -> list[str]:
    """cgroup v2: the controllers enabled for `parent`'s children (a Slurm step's and a
    systemd slice's usually are), else a FactorError naming the cgroup. Those it enables
    are journaled first and disabled again after the job's cgroup is gone (the journal
    ids; none if all were enabled already)."""
    control = parent / "cgroup.subtree_control"
    try:
        missing = [c for c in controllers if c not in control.read_text().split()]
        if not missing:
            return []
        change = machine.note("controllers", str(control), enabled=missing)
        try:
            control.write_text(" ".join(f"+{c}" for c in missing) + "\n")
        except OSError:
            machine.undone(change)  # nothing was enabled
            raise
        return [change]
    except OSError as exc:
        raise FactorError(f"{what}: the {', '.join(controllers)} controller(s) cannot be "
                          f"enabled in {parent} ({exc.strerror}): the job's cgroup goes "
                          "beside this process's own; run the job where its cgroup's parent "
                          "delegates them (a Slurm step, a systemd scope with IOAccounting, "
                          "MemoryAccounting and AllowedCPUs)") from None


def own_cgroup(root: Path, version: int, controller: str = "blkio",
               proc_cgroup: str = "/proc/self/cgroup") -> Path:
    """The cgroup this process is in, of the hierarchy mounted at root (v1: the one of
    `controller`)."""
    for line in Path(proc_cgroup).read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if (version == 2 and number == "0") or (version == 1 and controller in
                                                controllers.split(",")):
            return root / path.lstrip("/")
    return root


@contextlib.contextmanager
def throttled(devices: dict[str, str | None], bytes_per_s: int | None,
              emulated: EmulatedMachine | None = None) -> Iterator[Throttle | None]:
    """A job's cgroup, created at its start and removed at its end (None: neither a
    bandwidth cap nor an emulated machine's CPUs or memory).

    `devices` names each device's role ({"target": "loop3", "input": "vda"}). A role
    with no block device of its own (tmpfs, btrfs's anonymous device) cannot be
    throttled: that is an error before anything is measured, never a label. What the
    kernel holds is read back; another value than asked is an error.
    """
    emulated = emulated if emulated is not None and emulated.emulated else None
    if bytes_per_s is None and emulated is None:
        yield None
        return
    unreachable = [role for role, device in devices.items() if not device]
    if bytes_per_s is not None and unreachable:
        raise FactorError(f"bandwidth {bytes_per_s} B/s cannot reach the "
                          f"{' and '.join(unreachable)}: no block device of its own to "
                          "throttle (tmpfs? btrfs's anonymous device?); drop the bandwidth "
                          "factor for this medium, or use an image or a block device")
    cpus = choose_cpus(emulated.cpus) if emulated and emulated.cpus is not None else None
    throttle = Throttle(list(devices.values()) if bytes_per_s is not None else [],
                        bytes_per_s, cpus=cpus,
                        memory_bytes=emulated.memory_bytes if emulated else None)
    throttle.create()
    try:
        if bytes_per_s is not None:
            held = throttle.applied_bytes_per_s()
            if held != {n: bytes_per_s for n in throttle.numbers}:
                raise FactorError(f"bandwidth: the kernel holds {held} for {throttle.path}, "
                                  f"not {bytes_per_s} B/s on {throttle.numbers}")
        asked = {"cpus": cpus, "memory_bytes": throttle.memory_bytes}
        if emulated and throttle.applied_machine() != asked:
            raise FactorError(f"machine: the kernel holds {throttle.applied_machine()} for "
                              f"the job's cgroup, not {asked}")
        yield throttle
    finally:
        throttle.remove()
