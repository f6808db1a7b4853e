"""A disk of a chosen speed: the measured commands run in a cgroup whose block-I/O
throttle caps the input's and the target's devices.

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
import os
import re
from collections.abc import Iterator
from pathlib import Path

from wattzip import machine
from wattzip.errors import ConfigError, FactorError

V1_ROOT = "/sys/fs/cgroup/blkio"
V2_ROOT = "/sys/fs/cgroup"
PREFIX = "wattzip-"


# Bandwidth units, as storage and network people write them: a capital B is bytes,
# b or "bit" bits; k/M/G are powers of 1000, Ki/Mi/Gi powers of 1024.
_BANDWIDTH = re.compile(r"^(?P<number>[0-9]+(?:\.[0-9]+)?)\s*(?P<prefix>[kKMG]i?)?"
                        r"(?P<unit>B|b|bit)(?:/s|ps)$")
_PREFIXES = {None: 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10,
             "Mi": 2**20, "Gi": 2**30}


def parse_bandwidth(text: str | int | float) -> int | None:
    """'30MB/s' -> 30000000 bytes per second, '30Mbps' or '30Mbit/s' (megabits) ->
    3750000, '30MiB/s' -> 31457280; 'unlimited' -> None. A number without a unit is
    refused: 30 what?"""
    t = str(text).strip()
    if t.lower() == "unlimited":
        return None
    match = _BANDWIDTH.match(t)
    if not match:
        raise ConfigError(
            f"bandwidth {text!r}: write a rate with its unit, e.g. 30MB/s (megabytes), "
            "30MiB/s (mebibytes) or 240Mbit/s, 240Mbps (megabits), or 'unlimited'")
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
    """A cgroup that caps read and write bandwidth on some devices."""

    def __init__(self, devices: list[str], bytes_per_s: int, name: str | None = None,
                 v1_root: str = V1_ROOT, v2_root: str = V2_ROOT):
        self.numbers = sorted({device_numbers(d) for d in devices if d})
        self.bytes_per_s = bytes_per_s
        if os.path.isdir(v1_root) and os.path.exists(
                os.path.join(v1_root, "blkio.throttle.read_bps_device")):
            self.version, self.root = 1, Path(v1_root)
        elif os.path.exists(os.path.join(v2_root, "cgroup.controllers")):
            self.version, self.root = 2, Path(v2_root)
        else:
            raise FactorError("bandwidth: this kernel offers no blkio (cgroup v1) or io "
                              "(cgroup v2) controller to throttle a disk")
        self.home = own_cgroup(self.root, self.version)
        self.path = _beside(self.home, self.root, self.version) / (name or f"{PREFIX}{os.getpid()}")

    def create(self) -> None:
        if self.version == 2:
            _delegate_io(self.path.parent)
        self._change = machine.note("cgroup", str(self.path), return_to=str(self.home))
        try:
            self.path.mkdir(exist_ok=True)
            for numbers in self.numbers:
                if self.version == 1:
                    for kind in ("read", "write"):
                        (self.path / f"blkio.throttle.{kind}_bps_device").write_text(
                            f"{numbers} {self.bytes_per_s}\n")
                else:
                    (self.path / "io.max").write_text(
                        f"{numbers} rbps={self.bytes_per_s} wbps={self.bytes_per_s}\n")
        except OSError as exc:
            error = (f"bandwidth: cannot set up the cgroup {self.path}: {exc} "
                     "(run as root)")
            try:
                self.remove()
            except machine.MachineError as left:
                raise FactorError(f"{error}; and {left}") from None
            raise FactorError(error) from None

    def applied_bytes_per_s(self) -> dict[str, int]:
        """What the kernel holds for this cgroup, read back: {major:minor: bytes/s} where
        reads and writes are capped alike (a device capped one way only is left out)."""
        held: dict[str, dict[str, int]] = {}
        if self.version == 1:
            for kind in ("read", "write"):
                text = (self.path / f"blkio.throttle.{kind}_bps_device").read_text()
                for line in text.split("\n"):
                    if line.strip():
                        numbers, rate = line.split()
                        held.setdefault(numbers, {})[kind] = int(rate)
        else:
            for line in (self.path / "io.max").read_text().splitlines():
                numbers, *pairs = line.split()
                values = dict(p.split("=") for p in pairs)
                held[numbers] = {"read": int(values.get("rbps", 0) or 0),
                                 "write": int(values.get("wbps", 0) or 0)}
        return {n: v["read"] for n, v in held.items() if v.get("read") == v.get("write")}

    @contextlib.contextmanager
    def entered(self) -> Iterator[None]:
        """This process (and what it starts) inside the cgroup, then back in the cgroup it
        came from (its Slurm step or systemd scope, whose tracking and signals must keep
        reaching it), never the root."""
        (self.path / "cgroup.procs").write_text(f"{os.getpid()}\n")
        try:
            yield
        finally:
            (self.home / "cgroup.procs").write_text(f"{os.getpid()}\n")

    def remove(self) -> None:
        """Every process back home and the cgroup gone; an error names what stays."""
        machine.undo([e for e in machine.pending() if e["id"] == self._change])


def _beside(home: Path, root: Path, version: int) -> Path:
    """Where the job's cgroup goes: inside the caller's own cgroup (its Slurm job or
    step, its systemd scope), never at the hierarchy's root, where scancel, a time limit
    or the scope's stop would not reach the measured tools. cgroup v1 nests it in the
    caller's; v2 lets no cgroup with processes hold a child that uses a controller, so
    it goes beside the caller's (in the Slurm step or the slice that holds it)."""
    if version == 1 or home == root:
        return home
    return home.parent


def _delegate_io(parent: Path) -> None:
    """cgroup v2: the io controller enabled for `parent`'s children (a Slurm step's and a
    systemd slice's usually are), else a FactorError naming the cgroup."""
    control = parent / "cgroup.subtree_control"
    try:
        if "io" not in control.read_text().split():
            control.write_text("+io\n")
    except OSError as exc:
        raise FactorError(f"bandwidth: the io controller cannot be enabled in {parent} "
                          f"({exc.strerror}): the throttle's cgroup goes beside this "
                          "process's own; run the job where its cgroup's parent delegates "
                          "io (a Slurm step, a systemd scope with IOAccounting)") from None


def own_cgroup(root: Path, version: int) -> Path:
    """The cgroup this process is in, of the hierarchy mounted at root."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if (version == 2 and number == "0") or (version == 1 and "blkio" in
                                                controllers.split(",")):
            return root / path.lstrip("/")
    return root


@contextlib.contextmanager
def throttled(devices: dict[str, str | None], bytes_per_s: int | None,
              ) -> Iterator[Throttle | None]:
    """A job's throttle, created at its start and removed at its end (None: unlimited).

    `devices` names each device's role ({"target": "loop3", "input": "vda"}). A role
    with no block device of its own (tmpfs, btrfs's anonymous device) cannot be
    throttled: that is an error before anything is measured, never a label.
    """
    if bytes_per_s is None:
        yield None
        return
    unreachable = [role for role, device in devices.items() if not device]
    if unreachable:
        raise FactorError(f"bandwidth {bytes_per_s} B/s cannot reach the "
                          f"{' and '.join(unreachable)}: no block device of its own to "
                          "throttle (tmpfs? btrfs's anonymous device?); drop the bandwidth "
                          "factor for this medium, or use an image or a block device")
    throttle = Throttle(list(devices.values()), bytes_per_s)
    throttle.create()
    try:
        held = throttle.applied_bytes_per_s()
        if held != {n: bytes_per_s for n in throttle.numbers}:
            raise FactorError(f"bandwidth: the kernel holds {held} for {throttle.path}, "
                              f"not {bytes_per_s} B/s on {throttle.numbers}")
        yield throttle
    finally:
        throttle.remove()
