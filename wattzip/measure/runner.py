"""One measured run of one operation, the way SYSTOR '09 section 4.3 measured it.

The measured region starts with the meter and ends after the output is flushed
to the device (fsync of file and directory, or, as the paper did, unmounting
the target's own filesystem); caches are dropped before it and the output is
verified after it, both outside the region.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from wattzip import records, run_record
from wattzip.analysis.uncertainty import sampling_terms
from wattzip.errors import MeterError, WattzipError
from wattzip.machine import system, thermal
from wattzip.machine.media import Medium
from wattzip.machine.system import DiskSampler, evict
from wattzip.measure import disturbance
from wattzip.meters import Meter

DROP_CACHES = "/proc/sys/vm/drop_caches"
# GNU cat's own read size; plain I/O copies through user space in blocks of it.
DEFAULT_COPY_BUFFER = 128 * 1024


@dataclass
class Operation:
    """What one run executes: an argv per copy with its standard input and output.

    `stdout_paths[i]` None sends that copy's output to /dev/null (reads);
    `flush_paths` are the files that must reach the device inside the region,
    by fsync, or by unmounting `unmount` (a medium that is its own filesystem).
    """

    op: str
    argvs: list[list[str]]
    stdin_paths: list[str]
    stdout_paths: list[str | None]
    flush_paths: list[str] = field(default_factory=list)
    ok_exit_codes: frozenset[int] = frozenset({0})
    unmount: Medium | None = None


def plain_copy_argv(buffer_bytes: int = DEFAULT_COPY_BUFFER) -> list[str]:
    """A copy through user space: read(2) and write(2) of a fixed buffer, stdin to stdout.

    Not cat: GNU cat 9 calls copy_file_range, which copies inside the kernel
    (no user time) or, on XFS and btrfs, makes a reflink that writes no data.
    dd never does either (checked with strace: only read and write calls).
    """
    return ["dd", f"bs={buffer_bytes}", "status=none"]


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_busy_jiffies(proc_stat: str = "/proc/stat") -> int:
    """Busy time of all CPUs (user, nice, system, irq, softirq; steal is a neighbour's)."""
    with open(proc_stat) as f:
        fields = f.readline().split()
    return sum(int(fields[i]) for i in (1, 2, 3, 6, 7))


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


def drop_caches(paths: list[str]) -> str:
    """Empty the page cache: globally when permitted, else evict these files.

    Returns the method used, which every run records. Only the filesystems of these
    paths are written back first (wattzip.machine.system.sync_filesystems).
    """
    system.sync_filesystems(paths)
    try:
        with open(DROP_CACHES, "w") as f:
            f.write("3\n")
        return "global"
    except OSError:
        pass
    evict(paths)
    return "per-file"


_LDD_PATH = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x")


def tool_files(argv0: str) -> list[str]:
    """The executable and the shared libraries it loads (as ldd lists them)."""
    exe = shutil.which(argv0)
    if exe is None:
        return []
    files = [os.path.realpath(exe)]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["ldd", exe], capture_output=True, text=True, timeout=20,
                             check=False).stdout
        files += [os.path.realpath(m.group(1)) for m in _LDD_PATH.finditer(out)]
    return list(dict.fromkeys(files))


def warm(files: list[str]) -> None:
    """Read files into the page cache, so a tool does not load from disk inside the region."""
    for path in files:
        with contextlib.suppress(OSError), open(path, "rb") as f:
            while f.read(1 << 20):
                pass


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_files_and_dirs(paths: list[str]) -> None:
    for path in paths:
        _fsync(path)
    for d in {os.path.dirname(os.path.abspath(p)) for p in paths}:
        _fsync(d)


def _flush(operation: Operation) -> None:
    if operation.unmount is not None:
        operation.unmount.unmount()
    else:
        _fsync_files_and_dirs([p for p in operation.flush_paths if os.path.exists(p)])


@dataclass
class _Counters:
    """The machine's counters at one end of the region: busy CPU, other load, helpers' CPU,
    the CPU's temperature, frequency and throttle counters."""

    busy_jiffies: int
    load: dict
    helper_times: tuple
    at: str
    thermal: thermal.ThermalState

    @classmethod
    def now(cls, helpers: list[int]) -> _Counters:
        return cls(cpu_busy_jiffies(), disturbance.snapshot(),
                   disturbance.process_times(helpers), utc_now(), thermal.ThermalState.now())


@dataclass
class _Region:
    """What happened inside one measured region, before it becomes a run record."""

    before: _Counters
    after: _Counters | None = None
    elapsed_s: float = 0.0
    exit_codes: list[int] = field(default_factory=list)
    user_s: float = 0.0
    sys_s: float = 0.0
    peak_rss_bytes: int | None = None
    launch_error: str | None = None
    flush_error: str | None = None
    meter_error: str | None = None
    reading: object = None
    stderr_heads: list[str] = field(default_factory=list)
    disk_samples: list = field(default_factory=list)


def _open_streams(operation: Operation, stack: contextlib.ExitStack) -> tuple[list, list, list]:
    """Each copy's standard input, output (never through a symbolic link) and stderr."""
    stdins = [stack.enter_context(open(p, "rb")) for p in operation.stdin_paths]
    stdouts = [
        stack.enter_context(open(p, "wb", opener=records.nofollow)) if p
        else stack.enter_context(open(os.devnull, "wb"))
        for p in operation.stdout_paths
    ]
    stderrs = [stack.enter_context(tempfile.TemporaryFile()) for _ in operation.argvs]
    return stdins, stdouts, stderrs


def _launch(argvs: list[list[str]], stdins, stdouts, stderrs) -> tuple[list, str | None]:
    """Start every copy, each in its own process group (a kill takes the tool and all it
    started); a copy that cannot start stops the launch and is named."""
    procs = []
    for argv, fin, fout, ferr in zip(argvs, stdins, stdouts, stderrs, strict=True):
        try:
            procs.append(subprocess.Popen(argv, stdin=fin, stdout=fout, stderr=ferr,
                                          close_fds=True, process_group=0))
        except OSError as exc:
            return procs, f"{argv[0]}: {exc}"
    return procs, None


def _reap(procs: list, region: _Region) -> None:
    """Wait for every copy, adding its exit code and CPU times to the region's."""
    try:
        for proc in procs:
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            region.exit_codes.append(proc.returncode)
            region.user_s += usage.ru_utime
            region.sys_s += usage.ru_stime
            # Linux counts ru_maxrss in KiB: the copy's (and its waited-for children's)
            # largest resident set. The largest copy's, as hyperfine's memory_usage_byte.
            rss = usage.ru_maxrss * 1024
            region.peak_rss_bytes = max(region.peak_rss_bytes or 0, rss)
    except BaseException:  # killed: no tool may outlive the job and keep the target busy
        for proc in procs:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):  # the group is gone
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        raise


def measure(operation: Operation, meter: Meter, idle_power_w: float | None = None,
            disk_devices: dict[str, str | None] | str | None = None,
            trace_interval_s: float = 0.1, throttle=None, helpers: list[int] = ()) -> dict:
    """Run `operation` once under `meter`; return the timing and energy fields of a run record.

    `throttle` (a wattzip.machine.throttle.Throttle) puts the commands and the flush in
    its cgroup. `helpers` are processes working for the run (an emulated disk's daemon):
    their CPU time counts as the run's own when its other load is judged. Never raises
    for a failing command, flush or meter reading: the run is recorded as failed with
    the reason instead.
    """
    stack = contextlib.ExitStack()
    stdins, stdouts, stderrs = _open_streams(operation, stack)
    disk = DiskSampler(disk_devices, trace_interval_s)
    inside = throttle.entered() if throttle else contextlib.nullcontext()
    with stack:
        disk.start()
        meter.start()
        region = _Region(before=_Counters.now(helpers))
        t0 = time.perf_counter()
        cgroup = contextlib.ExitStack()
        stack.callback(cgroup.close)  # leave the cgroup also when something raises
        cgroup.enter_context(inside)
        procs, region.launch_error = _launch(operation.argvs, stdins, stdouts, stderrs)
        _reap(procs, region)
        for f in (*stdouts, *stdins):
            f.close()  # an open file (the output, an input on the medium) keeps it busy
        if region.launch_error is None and all(c in operation.ok_exit_codes
                                               for c in region.exit_codes):
            try:
                _flush(operation)
            except (OSError, WattzipError) as exc:
                region.flush_error = f"flush: {exc}"
        region.elapsed_s = time.perf_counter() - t0
        region.after = _Counters.now(helpers)
        cgroup.close()
        try:
            region.reading = meter.stop()
        except MeterError as exc:
            region.meter_error = f"meter {meter.name}: {exc}"
        region.disk_samples = disk.stop()
        for ferr in stderrs:
            ferr.seek(0)
            region.stderr_heads.append(ferr.read(2000).decode(errors="replace").strip())
    return _run_fields(operation, meter, region, idle_power_w)


def _outcome(region: _Region, ok_exit_codes: frozenset[int]) -> tuple[int, bool, str | None]:
    """The run's exit code, whether it succeeded, and why not."""
    failing = [c for c in region.exit_codes if c not in ok_exit_codes]
    if region.launch_error:
        exit_code = 127  # the shell's "command not found"
    else:  # the first copy's code that means failure, else the first copy's code
        exit_code = failing[0] if failing else (region.exit_codes[0] if region.exit_codes
                                                 else 0)
    ok = (region.launch_error is None and not failing and region.flush_error is None
          and region.meter_error is None)
    error = region.launch_error or ("; ".join(e for e in region.stderr_heads if e)
                                    if failing else None)
    error = "; ".join(e for e in (error, region.flush_error, region.meter_error) if e) or None
    return exit_code, ok, error


def _run_fields(operation: Operation, meter: Meter, region: _Region,
                idle_power_w: float | None) -> dict:
    """The region as a run record's timing, energy, load and outcome fields."""
    exit_code, ok, error = _outcome(region, operation.ok_exit_codes)
    reading, elapsed_s = region.reading, region.elapsed_s
    energy = reading.energy_j if reading else None
    meter_interval_s = reading.elapsed_s if reading else None
    cpu_s = region.user_s + region.sys_s
    # What the budget's sampling term needs (wattzip.analysis.uncertainty): the readings' spacing
    # and how much the power moved between them.
    sample_gap_s, power_step_rss_w = sampling_terms(reading.samples if reading else [])
    # The rest of the machine's load in the region (wattzip.measure.disturbance).
    before, after = region.before, region.after
    helper_user_s, helper_cpu_s = (b - a for a, b in zip(before.helper_times,
                                                         after.helper_times, strict=True))
    load = disturbance.load_since(before.load, after.load, region.user_s + helper_user_s,
                                  cpu_s + helper_cpu_s, elapsed_s)
    return {
        "op": operation.op,
        "started_at": before.at,
        "ended_at": after.at,
        "elapsed_s": elapsed_s,
        "meter_interval_s": meter_interval_s,
        "user_s": region.user_s,
        "sys_s": region.sys_s,
        "peak_rss_bytes": region.peak_rss_bytes,
        **run_record.region_fields(elapsed_s, cpu_s, energy, idle_power_w, meter_interval_s),
        # The whole machine's busy CPU time (the estimate's CPU-seconds, for any meter).
        "cpu_busy_s": (after.busy_jiffies - before.busy_jiffies) / CLOCK_TICKS,
        "meter_source": meter.name,
        "meter_scope": meter.scope,
        "meter_method": meter.method,
        "meter_flags": "; ".join(reading.flags) if reading and reading.flags else None,
        "samples": len(reading.samples) if reading else 0,
        "sample_gap_s": sample_gap_s,
        "power_step_rss_w": power_step_rss_w,
        **load,
        **thermal.run_fields(before.thermal, after.thermal),
        "exit_code": exit_code,
        "succeeded": ok,
        "error": error,
        "argv": operation.argvs[0],
        "copies": len(operation.argvs),
        "_power_samples": reading.samples if reading else [],
        "_disk_samples": region.disk_samples,
    }


def sha256_of_command(argv: list[str], stdin_path: str | None) -> tuple[str | None, int, str]:
    """sha256 and length of what argv writes to stdout; (None, n, why) on failure. Its
    stderr is read at the same time (its first 4 KiB kept): a tool that writes more than
    a pipe holds there while stdout is read would otherwise wait forever."""
    digest, n = hashlib.sha256(), 0
    said = bytearray()

    def drain(stream) -> None:
        while chunk := stream.read(1 << 16):
            said.extend(chunk[: max(0, 4096 - len(said))])

    with contextlib.ExitStack() as stack:
        fin = stack.enter_context(open(stdin_path, "rb")) if stdin_path else subprocess.DEVNULL
        proc = subprocess.Popen(argv, stdin=fin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        errors = threading.Thread(target=drain, args=(proc.stderr,), daemon=True)
        errors.start()
        while chunk := proc.stdout.read(1 << 20):
            digest.update(chunk)
            n += len(chunk)
        code = proc.wait()
        errors.join()
        proc.stdout.close()
        proc.stderr.close()
    err = bytes(said).decode(errors="replace").strip()
    if code != 0:
        return None, n, f"exit {code}: {err[:300]}"
    return digest.hexdigest(), n, ""


def write_trace(path: str | os.PathLike, power: list[tuple[float, float]],
                disk: list[tuple[float, str, float, float]]) -> None:
    """One run's samples as a tidy gzip'd CSV: t_s, series, device, value."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", compresslevel=6) as f:
        f.write("t_s,series,device,value\n")
        for t, w in power:
            f.write(f"{t:.4f},power_w,,{w:.4f}\n")
        for t, label, r, w in disk:
            f.write(f"{t:.4f},read_bytes_per_s,{label},{r:.0f}\n"
                    f"{t:.4f},write_bytes_per_s,{label},{w:.0f}\n")
