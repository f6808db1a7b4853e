"""What machine a number came from: CPU, memory, kernel, disk, scheduler, governor.

Also the block device behind a directory and its I/O counters, sampled beside
the power so SYSTOR '11's power and block-I/O timelines can be drawn.
"""

from __future__ import annotations

import contextlib
import glob
import os
import platform
import re
import subprocess
import threading
import time
from pathlib import Path

SECTOR = 512


def _read(path: str | Path, default: str | None = None) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


def block_device(path: str | os.PathLike) -> dict:
    """The partition and whole disk that hold `path` (names as in /sys/block)."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    sys_dev = Path(f"/sys/dev/block/{major}:{minor}")
    if not sys_dev.exists():
        return {"device": None, "disk": None, "major_minor": f"{major}:{minor}"}
    real = sys_dev.resolve()
    disk = real.parent.name if (real / "partition").exists() else real.name
    return {"device": real.name, "disk": disk, "major_minor": f"{major}:{minor}"}


def scheduler_disk(path: str | os.PathLike) -> str | None:
    """The disk whose I/O scheduler orders the writes to `path`.

    For a loop-mounted image that is the disk under its backing file (found
    through /sys/block/loopN/loop/backing_file): a loop device's own queue
    only passes requests on.
    """
    disk = block_device(path)["disk"]
    seen = set()
    while disk and disk.startswith("loop") and disk not in seen:
        seen.add(disk)
        backing = _read(f"/sys/block/{disk}/loop/backing_file")
        if not backing or not os.path.exists(backing):
            break
        disk = block_device(os.path.dirname(backing))["disk"]
    return disk


def evict(paths: list[str]) -> None:
    """Drop these files' pages from the page cache (written back first)."""
    for path in paths:
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def sync_filesystems(paths: list[str]) -> None:
    """Write back the filesystems these paths live on (syncfs(2), each once), not every
    filesystem of the machine: a global sync waits on any user's dead NFS mount or stuck
    FUSE daemon, with the machine's lock held. A path that does not exist counts by its
    folder; one that cannot be opened is left out."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    seen: set[int] = set()
    for path in paths:
        where = path if os.path.lexists(path) else os.path.dirname(os.path.abspath(path))
        try:
            fd = os.open(where, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            dev = os.fstat(fd).st_dev
            if dev not in seen:
                seen.add(dev)
                if libc.syncfs(fd) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"syncfs {where}: {os.strerror(err)}")
        finally:
            os.close(fd)


def filesystem_of(path: str | os.PathLike) -> dict:
    """Mount point, type and source of the filesystem holding `path`."""
    path = os.path.realpath(path)
    best = {"mount_point": "/", "fstype": None, "source": None, "options": None}
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return best
    for line in lines:
        source, mount, fstype, options = line.split()[:4]
        if (path == mount or path.startswith(mount.rstrip("/") + "/")) and len(mount) >= len(
            best["mount_point"]
        ):
            best = {"mount_point": mount, "fstype": fstype, "source": source, "options": options}
    return best


def read_diskstats(device: str, diskstats: str = "/proc/diskstats") -> tuple[int, int] | None:
    """(bytes read, bytes written) so far by `device`."""
    try:
        with open(diskstats) as f:
            for line in f:
                fields = line.split()
                if len(fields) > 9 and fields[2] == device:
                    return int(fields[5]) * SECTOR, int(fields[9]) * SECTOR
    except OSError:
        return None
    return None


class DiskSampler:
    """Samples devices' read and write rates on a thread, beside the meter.

    `devices` maps a label (target, input) to a device name of /proc/diskstats;
    a device that two labels share is sampled once, under both labels joined.
    """

    def __init__(self, devices: dict[str, str | None] | str | None, interval_s: float = 0.1):
        if not isinstance(devices, dict):
            devices = {"target": devices}
        by_device: dict[str, list[str]] = {}
        for label, device in devices.items():
            if device:
                by_device.setdefault(device, []).append(label)
        self.devices = {"+".join(labels): device for device, labels in by_device.items()}
        self.interval_s = interval_s
        self.samples: list[tuple[float, str, float, float]] = []  # (t, label, read, write B/s)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read_all(self) -> dict[str, tuple[int, int] | None]:
        return {label: read_diskstats(dev) for label, dev in self.devices.items()}

    def _run(self) -> None:
        last_t, last = time.monotonic(), self._read_all()
        while not self._stop.wait(self.interval_s):
            now, cur = time.monotonic(), self._read_all()
            dt_s = now - last_t
            for label, value in cur.items():
                if dt_s > 0 and value is not None and last.get(label) is not None:
                    self.samples.append((now - self._t0, label,
                                         (value[0] - last[label][0]) / dt_s,
                                         (value[1] - last[label][1]) / dt_s))
            last_t, last = now, cur

    def start(self) -> None:
        self._t0 = time.monotonic()
        if self.devices:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def stop(self) -> list[tuple[float, str, float, float]]:
        self._stop.set()
        if self._thread:
            self._thread.join()
        return self.samples


def io_scheduler(disk: str | None) -> str | None:
    text = _read(f"/sys/block/{disk}/queue/scheduler") if disk else None
    match = re.search(r"\[(\S+)\]", text or "")
    return match.group(1) if match else text


def cpu_governors() -> list[str]:
    return sorted({_read(p) for p in glob.glob(
        "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor")} - {None})


def _cpu_model() -> str | None:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def _mem_total_bytes() -> int | None:
    match = re.search(r"MemTotal:\s+(\d+) kB", _read("/proc/meminfo") or "")
    return int(match.group(1)) * 1024 if match else None


def virtualization() -> str:
    try:
        out = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True, check=False)
        if out.stdout.strip():
            return out.stdout.strip()
    except OSError:
        pass
    flags = _read("/proc/cpuinfo") or ""
    return "hypervisor (unknown kind)" if " hypervisor" in flags else "none detected"


def _turbo() -> str | None:
    no_turbo = _read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo is not None:
        return "off" if no_turbo == "1" else "on"
    boost = _read("/sys/devices/system/cpu/cpufreq/boost")
    return None if boost is None else ("on" if boost == "1" else "off")


def _os_name() -> str | None:
    match = re.search(r'PRETTY_NAME="([^"]+)"', _read("/etc/os-release") or "")
    return match.group(1) if match else None


def provenance(target_dir: str | os.PathLike) -> dict:
    """The machine and the target disk, as readable here (None where not)."""
    dev = block_device(target_dir)
    disk = dev.get("disk")
    return {
        "hostname": platform.node(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _mem_total_bytes(),
        "kernel": platform.release(),
        "os": _os_name(),
        "python": platform.python_version(),
        "virtualization": virtualization(),
        "cpu_governors": cpu_governors() or None,
        "turbo": _turbo(),
        "target_dir": str(Path(target_dir).resolve()),
        "target_device": dev,
        **disk_description(disk),
        "filesystem": filesystem_of(target_dir),
        "drop_caches_writable": os.access("/proc/sys/vm/drop_caches", os.W_OK),
    }


def disk_description(disk: str | None) -> dict:
    """A disk's model, whether it rotates, and its I/O scheduler (None where no disk)."""
    return {"target_disk_model": _read(f"/sys/block/{disk}/device/model") if disk else None,
            "target_disk_rotational": (_read(f"/sys/block/{disk}/queue/rotational") if disk
                                       else None),
            "io_scheduler": io_scheduler(disk)}


def _device_shown(device: dict | None) -> str:
    """A meter's device as the provenance table names it: its first field (a port, a
    BMC, a log's path), in parentheses; nothing for a meter of this machine's own."""
    return f" ({next(iter(device.values()))})" if device else ""


def host_identity() -> dict:
    """Where this process runs: host name, and the Slurm node and job when under Slurm."""
    return {"hostname": platform.node(), "slurm_node": os.environ.get("SLURMD_NODENAME"),
            "slurm_job_id": os.environ.get("SLURM_JOB_ID")}


def slurm_node_cpus(node: str) -> int | None:
    """A Slurm node's core count (CPUTot), or None where scontrol cannot tell."""
    try:
        out = subprocess.run(["scontrol", "show", "node", node, "--oneliner"],
                             capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"\bCPUTot=(\d+)", out.stdout)
    return int(found.group(1)) if out.returncode == 0 and found else None


def check_host(expect_node: str | None, expect_host: str | None) -> None:
    """A testbed's job on another machine would measure the wrong hardware: stop."""
    from wattzip.errors import ConfigError

    here = host_identity()
    if expect_node and here["slurm_node"] != expect_node:
        raise ConfigError(f"this job belongs on Slurm node {expect_node}, but runs on "
                          f"{here['slurm_node'] or 'no Slurm node'} (host {here['hostname']}):"
                          " run the study through Slurm (--profile profiles/slurm)")
    if expect_host and here["hostname"] != expect_host:
        raise ConfigError(f"this job belongs on host {expect_host}, but runs on "
                          f"{here['hostname']}")


def _source_shown(source: dict | None) -> str:
    """The code that measured (wattzip.measure.provenance.source_of_code) in a few words:
    the commit and whether the checkout had changes, else the package's digest."""
    if not source:
        return "not recorded"
    if source.get("source_commit"):
        changes = {True: ", with uncommitted changes", False: ""}.get(
            source.get("source_dirty"), ", changes unknown")
        return f"commit {source['source_commit'][:12]}{changes}"
    return f"installed package, files' sha256 {(source.get('source_digest') or '?')[:12]}"


def provenance_rows(info: dict) -> list[dict]:
    """The provenance as tidy key, value rows for the paper's table."""

    dev = info.get("target_device") or {}
    fs = info.get("filesystem") or {}
    meter = info.get("meter") or {}
    medium = [("primary medium", info["medium_kind"])] if info.get("medium_kind") else []
    rows = [
        ("testbed", info.get("testbed")), ("description", info.get("description")),
        ("CPU", f"{info.get('cpu_model')} ({info.get('cpu_count')} logical CPUs)"),
        ("memory", f"{(info.get('memory_bytes') or 0) / 2**30:.1f} GiB"),
        *([("emulated machine", f"{info['emulated_machine']}: what the measured tools "
            "saw (the CPU and memory above are the real machine's)")]
          if info.get("emulated_machine") else []),
        ("kernel", info.get("kernel")), ("operating system", info.get("os")),
        ("virtualization", info.get("virtualization")),
        ("CPU governor", ", ".join(info.get("cpu_governors") or []) or "not readable (no cpufreq)"),
        ("turbo", info.get("turbo") or "not readable"),
        *medium, ("target directory", info.get("target_dir")),
        ("target disk", "none (in memory)" if info.get("medium_kind") == "tmpfs" else
         f"{dev.get('disk')} ({info.get('target_disk_model') or 'model unknown'}, "
         f"rotational={info.get('target_disk_rotational')})"),
        ("I/O scheduler", info.get("io_scheduler")),
        ("filesystem", f"{fs.get('fstype')} on {fs.get('source')} at {fs.get('mount_point')}"),
        ("cache drop", "global (drop_caches)" if info.get("drop_caches_writable")
         else "per-file (posix_fadvise)"),
        ("energy meter", meter.get("error")
         or f"{meter.get('source')}{_device_shown(meter.get('device'))}, scope "
            f"{meter.get('scope')}, {meter.get('method')}"),
        ("wattzip", info.get("wattzip")),
        ("wattzip source", _source_shown(info.get("source"))),
    ]
    rows += [(f"version of {name}", version or "missing")
             for name, version in (info.get("tool_versions") or {}).items()]
    return [{"key": key, "value": value} for key, value in rows]
