"""Energy meters behind one interface: start(), stop() -> Reading.

Each backend is a small class registered by name.  A Reading carries the
energy of the interval between start and stop, the power samples taken in it,
and the meter's source, scope (what part of the machine it sees) and method
(``measured`` or ``estimated``), so no number ever loses where it came from.
"""

from __future__ import annotations

import csv
import datetime as dt
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

from wattzip.errors import MeterError


@dataclass
class MeterOptions:
    """Everything a backend may need; filled from the testbed config or the CLI."""

    interval_s: float = 0.1
    powercap_root: str = "/sys/class/powercap"
    powercap_psys: bool = False
    perf_command: str = "perf"
    perf_events_dir: str = "/sys/bus/event_source/devices/power/events"
    ipmi_command: tuple[str, ...] = ("ipmitool", "dcmi", "power", "reading")
    ipmi_interval_s: float = 1.0
    wattsup_port: str | None = None
    wattsup_baud: int = 115200
    trace_path: str | None = None
    model_idle_power_w: float | None = None
    model_max_power_w: float | None = None
    proc_stat: str = "/proc/stat"


@dataclass
class Reading:
    energy_j: float
    samples: list[tuple[float, float]]  # (seconds since start, watts)
    source: str
    scope: str
    method: str
    elapsed_s: float

    @property
    def mean_power_w(self) -> float:
        return self.energy_j / self.elapsed_s if self.elapsed_s > 0 else float("nan")


class Meter:
    """One energy meter. Subclasses set name/method and implement the hooks."""

    name = "meter"
    method = "measured"

    def __init__(self, options: MeterOptions):
        self.options = options
        self.scope = "unknown"

    @classmethod
    def probe(cls, options: MeterOptions) -> str | None:
        """None when usable here, else the reason it is not."""
        raise NotImplementedError

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> Reading:
        raise NotImplementedError

    def close(self) -> None:
        """Release devices held across runs (serial ports)."""


# --- helpers shared by backends ----------------------------------------------


def integrate_power(samples: list[tuple[float, float]], t0: float, t1: float) -> float:
    """Energy (J) of the interval [t0, t1] from (time, watts) samples.

    Linear between samples; the first and last values are held to the
    interval's edges, so a run shorter than the meter's period still gets the
    power the meter last reported instead of zero.
    """
    if t1 <= t0:
        return 0.0
    pts = sorted(samples)
    if not pts:
        raise MeterError("the meter delivered no power sample for this run")

    def power_at(t: float) -> float:
        if t <= pts[0][0]:
            return pts[0][1]
        if t >= pts[-1][0]:
            return pts[-1][1]
        lo, hi = 0, len(pts) - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if pts[mid][0] <= t:
                lo = mid
            else:
                hi = mid
        (ta, pa), (tb, pb) = pts[lo], pts[hi]
        return pa if tb == ta else pa + (pb - pa) * (t - ta) / (tb - ta)

    knots = [t0] + [t for t, _ in pts if t0 < t < t1] + [t1]
    return sum(
        (knots[i + 1] - knots[i]) * (power_at(knots[i]) + power_at(knots[i + 1])) / 2
        for i in range(len(knots) - 1)
    )


class _Poller:
    """Calls fn() every interval on a daemon thread until stopped."""

    def __init__(self, fn, interval_s: float):
        self.fn, self.interval_s = fn, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.fn()
            except BaseException as exc:  # surfaced by stop()
                self.error = exc
                return

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        if self.error:
            raise self.error


class CounterMeter(Meter):
    """A meter read as a cumulative energy counter (RAPL, the CPU-time model)."""

    def _read_energy_j(self, now: float) -> float:
        """Cumulative energy (J) since this meter's start, wraps resolved."""
        raise NotImplementedError

    def _reset(self, now: float) -> None:
        raise NotImplementedError

    def _poll_interval_s(self) -> float:
        return self.options.interval_s

    def _sample(self) -> None:
        now = time.monotonic()
        energy = self._read_energy_j(now)
        t_prev, e_prev = self._last
        if now > t_prev:
            self._samples.append((now - self._t0, (energy - e_prev) / (now - t_prev)))
        self._last = (now, energy)

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._reset(self._t0)
        self._samples: list[tuple[float, float]] = []
        self._last = (self._t0, 0.0)
        self._poller = _Poller(self._sample, self._poll_interval_s())
        self._poller.start()

    def stop(self) -> Reading:
        self._poller.stop()
        self._sample()
        t1, energy = self._last
        return Reading(energy, self._samples, self.name, self.scope, self.method, t1 - self._t0)


# --- powercap RAPL --------------------------------------------------------------


@dataclass
class RaplZone:
    path: Path
    name: str
    max_range_uj: int
    last_uj: int = 0
    total_uj: int = 0

    def read_uj(self) -> int:
        return int((self.path / "energy_uj").read_text())

    def advance(self) -> None:
        """Add the energy since the last read, undoing at most one wrap."""
        now = self.read_uj()
        delta = now - self.last_uj
        if delta < 0:
            delta += self.max_range_uj
        self.total_uj += delta
        self.last_uj = now


def discover_rapl_zones(root: str, psys: bool = False) -> tuple[list[RaplZone], str]:
    """Zones to sum, found by their name file, and the scope they cover.

    Packages and dram zones are summed; core/uncore subzones are part of their
    package and never added; intel-rapl-mmio zones repeat the MSR package and
    are skipped; psys (the whole platform) is used alone when asked for.
    """
    base = Path(root)
    if not base.is_dir():
        raise MeterError(f"powercap: {root} does not exist (no RAPL here: a VM, a container, "
                         "or a CPU without RAPL); pass --powercap-root DIR if it lives elsewhere")
    zones: list[RaplZone] = []
    seen: set[Path] = set()
    for entry in sorted(base.iterdir()):
        for zone_dir in [entry, *sorted(p for p in entry.glob("*:*") if p.is_dir())]:
            if entry.name.startswith("intel-rapl-mmio") or not (zone_dir / "name").is_file():
                continue
            real = zone_dir.resolve()
            if real in seen:
                continue
            seen.add(real)
            name = (zone_dir / "name").read_text().strip()
            wanted = (name == "psys") if psys else (re.fullmatch(r"package-\d+", name)
                                                     or name == "dram")
            if not wanted:
                continue
            energy_file = zone_dir / "energy_uj"
            try:
                energy_file.read_text()
            except PermissionError:
                raise MeterError(
                    f"powercap: {energy_file} is not readable; since Linux 5.10 energy_uj is "
                    "readable by root only: run as root, or grant read access (chmod o+r)"
                ) from None
            except OSError as exc:
                raise MeterError(f"powercap: cannot read {energy_file}: {exc}") from None
            max_range = int((zone_dir / "max_energy_range_uj").read_text())
            zones.append(RaplZone(zone_dir, name, max_range))
    if not zones:
        wanted = "a psys zone" if psys else "package-N zones"
        raise MeterError(f"powercap: no {wanted} under {root}")
    names = {z.name for z in zones}
    scope = "platform" if psys else ("package+dram" if "dram" in names else "package")
    return zones, scope


class PowercapMeter(CounterMeter):
    name = "powercap"
    # A wrap is undone only if no two happen between reads; this many reads
    # per shortest wrap period leaves a wide margin.
    assumed_max_power_w = 1000.0

    def __init__(self, options: MeterOptions):
        super().__init__(options)
        self.zones, self.scope = discover_rapl_zones(options.powercap_root, options.powercap_psys)

    @classmethod
    def probe(cls, options):
        try:
            discover_rapl_zones(options.powercap_root, options.powercap_psys)
        except MeterError as exc:
            return str(exc)
        return None

    def _poll_interval_s(self) -> float:
        shortest_wrap_s = min(z.max_range_uj for z in self.zones) / 1e6 / self.assumed_max_power_w
        return min(self.options.interval_s, shortest_wrap_s / 4)

    def _reset(self, now: float) -> None:
        for zone in self.zones:
            zone.last_uj = zone.read_uj()
            zone.total_uj = 0

    def _read_energy_j(self, now: float) -> float:
        for zone in self.zones:
            zone.advance()
        return sum(z.total_uj for z in self.zones) / 1e6


# --- utilization model (estimated) -------------------------------------------


def read_cpu_times(proc_stat: str) -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs from /proc/stat's first line."""
    with open(proc_stat) as f:
        fields = f.readline().split()
    if not fields or fields[0] != "cpu":
        raise MeterError(f"model: {proc_stat} has no aggregate cpu line")
    values = [int(v) for v in fields[1:9]] + [0] * (8 - len(fields[1:9]))
    user, nice, system, idle, iowait, irq, softirq, steal = values
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


class ModelMeter(CounterMeter):
    """P = P_idle + (P_max - P_idle) * u, u the whole machine's CPU utilization.

    This is an estimate, never a measurement: it sees only CPU time, not the
    disk, memory or fans, and its coefficients come from the testbed config.
    """

    name = "model"
    method = "estimated"

    def __init__(self, options: MeterOptions):
        super().__init__(options)
        reason = self.probe(options)
        if reason:
            raise MeterError(reason)
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


# --- meters that report power samples ----------------------------------------


class PowerSampleMeter(Meter):
    """A meter that delivers (time, watts) samples; energy is their integral."""

    def _begin(self) -> None:
        """Start delivering samples into self._append."""

    def _end(self) -> None:
        """Stop delivering samples."""

    def _append(self, watts: float, when: float | None = None) -> None:
        with self._lock:
            self._samples.append((time.monotonic() if when is None else when, watts))

    def start(self) -> None:
        self._lock = threading.Lock()
        self._samples: list[tuple[float, float]] = []
        self._begin()
        self._t0 = time.monotonic()

    def stop(self) -> Reading:
        t1 = time.monotonic()
        self._end()
        with self._lock:
            samples = list(self._samples)
        energy = integrate_power(samples, self._t0, t1)
        inside = [(t - self._t0, w) for t, w in samples if self._t0 <= t <= t1]
        return Reading(energy, inside, self.name, self.scope, self.method, t1 - self._t0)


_IPMI_WATTS = re.compile(r"Instantaneous power reading:\s*([\d.]+)\s*Watts", re.IGNORECASE)


def parse_ipmi_dcmi(text: str) -> float:
    match = _IPMI_WATTS.search(text)
    if not match:
        raise MeterError(f"ipmi: no 'Instantaneous power reading' in: {text.strip()[:200]}")
    return float(match.group(1))


class IpmiMeter(PowerSampleMeter):
    """The BMC's DCMI power reading (wall power of the server), about 1 Hz."""

    name = "ipmi"

    def __init__(self, options):
        super().__init__(options)
        self.scope = "wall"

    @classmethod
    def probe(cls, options):
        if shutil.which(options.ipmi_command[0]) is None:
            return f"ipmi: {options.ipmi_command[0]} is not installed (apt-get install ipmitool)"
        try:
            parse_ipmi_dcmi(cls._query(options))
        except (MeterError, OSError, subprocess.SubprocessError) as exc:
            return f"ipmi: no DCMI power reading ({exc})"
        return None

    @staticmethod
    def _query(options) -> str:
        proc = subprocess.run(list(options.ipmi_command), capture_output=True, text=True,
                              timeout=10, check=False)
        return proc.stdout + proc.stderr

    def _read(self) -> None:
        self._append(parse_ipmi_dcmi(self._query(self.options)))

    def _begin(self) -> None:
        self._read()
        self._poller = _Poller(self._read, self.options.ipmi_interval_s)
        self._poller.start()

    def _end(self) -> None:
        self._poller.stop()
        self._read()


class WattsUpMeter(PowerSampleMeter):
    """A WattsUp Pro style serial meter in external logging mode (the paper's meter).

    Protocol: ``#R,W,0;`` clears the meter's memory, ``#L,W,3,E,,1;`` asks for
    one record a second on the port, each ``#d,...;`` record's fourth field is
    tenths of watts, and ``#L,W,3,I,,1;`` returns the meter to internal logging.
    """

    name = "wattsup"

    def __init__(self, options):
        super().__init__(options)
        import serial  # pyserial

        if not options.wattsup_port:
            raise MeterError("wattsup: no serial port configured (meter.wattsup_port)")
        self.scope = "wall"
        self._port = serial.Serial(options.wattsup_port, options.wattsup_baud, timeout=0.1)
        self._reader: threading.Thread | None = None

    @classmethod
    def probe(cls, options):
        if not options.wattsup_port:
            return "wattsup: no serial port configured (meter.wattsup_port, e.g. /dev/ttyUSB0)"
        if not os.path.exists(options.wattsup_port):
            return f"wattsup: {options.wattsup_port} does not exist"
        try:
            import serial  # noqa: F401
        except ImportError:
            return "wattsup: pyserial is not installed"
        return None

    def _command(self, text: str) -> None:
        self._port.write(text.encode("ascii"))
        self._port.flush()

    def _read_loop(self) -> None:
        buffer = b""
        while not self._stop_reading.is_set():
            buffer += self._port.read(256)
            while b";" in buffer:
                record, buffer = buffer.split(b";", 1)
                fields = record.decode("ascii", "replace").strip().split(",")
                if fields and fields[0].endswith("#d") and len(fields) > 3:
                    try:
                        self._append(float(fields[3]) / 10.0)
                    except ValueError:
                        continue
                    self._first.set()

    def _begin(self) -> None:
        self._stop_reading = threading.Event()
        self._first = threading.Event()
        self._command("#R,W,0;")
        self._command("#L,W,3,E,,1;")
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        if not self._first.wait(3.0):
            self._end()
            raise MeterError(f"wattsup: no record from {self.options.wattsup_port} within 3 s")

    def _end(self) -> None:
        self._command("#L,W,3,I,,1;")
        self._stop_reading.set()
        if self._reader:
            self._reader.join()

    def close(self) -> None:
        self._port.close()


def read_power_trace(path: str) -> list[tuple[float, float]]:
    """(unix time, watts) rows of a CSV with timestamp and watts columns.

    Timestamps may be unix seconds or ISO 8601 (UTC assumed when no offset).
    """
    rows: list[tuple[float, float]] = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            stamp, watts = row.get("timestamp"), row.get("watts")
            if stamp is None or watts is None:
                raise MeterError(f"trace: {path} needs the columns timestamp,watts")
            try:
                t = float(stamp)
            except ValueError:
                parsed = dt.datetime.fromisoformat(stamp)
                if parsed.tzinfo is None:
                    parsed = parsed.replace(tzinfo=dt.timezone.utc)
                t = parsed.timestamp()
            rows.append((t, float(watts)))
    return rows


class TraceMeter(PowerSampleMeter):
    """A power log written by any external logger (smart plug, PDU, bench meter)."""

    name = "trace"

    def __init__(self, options):
        super().__init__(options)
        reason = self.probe(options)
        if reason:
            raise MeterError(reason)
        self.scope = "wall"

    @classmethod
    def probe(cls, options):
        if not options.trace_path:
            return "trace: no power trace file configured (meter.trace_path)"
        if not os.path.isfile(options.trace_path):
            return f"trace: {options.trace_path} does not exist"
        return None

    def start(self) -> None:
        self._wall0 = time.time()
        self._t0 = time.monotonic()

    def stop(self) -> Reading:
        elapsed = time.monotonic() - self._t0
        wall1 = self._wall0 + elapsed
        samples = read_power_trace(self.options.trace_path)
        energy = integrate_power(samples, self._wall0, wall1)
        inside = [(t - self._wall0, w) for t, w in samples if self._wall0 <= t <= wall1]
        return Reading(energy, inside, self.name, self.scope, self.method, elapsed)


class PerfMeter(Meter):
    """RAPL through perf's power PMU: package and dram energy of the whole machine."""

    name = "perf"
    events = ("power/energy-pkg/", "power/energy-ram/")

    def __init__(self, options):
        super().__init__(options)
        reason = self.probe(options)
        if reason:
            raise MeterError(reason)
        have_ram = os.path.exists(os.path.join(options.perf_events_dir, "energy-ram"))
        self.active_events = self.events if have_ram else self.events[:1]
        self.scope = "package+dram" if have_ram else "package"

    @classmethod
    def probe(cls, options):
        if shutil.which(options.perf_command) is None:
            return "perf: not installed (apt-get install linux-perf)"
        if not os.path.exists(os.path.join(options.perf_events_dir, "energy-pkg")):
            return f"perf: no power/energy-pkg event ({options.perf_events_dir} missing)"
        return None

    def start(self) -> None:
        fd, self._out = tempfile.mkstemp(prefix="wattzip-perf-", suffix=".csv")
        os.close(fd)
        argv = [self.options.perf_command, "stat", "-a", "-x,", "-o", self._out,
                "-e", ",".join(self.active_events)]
        self._t0 = time.monotonic()
        self._proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stop(self) -> Reading:
        elapsed = time.monotonic() - self._t0
        self._proc.send_signal(signal.SIGINT)
        _, err = self._proc.communicate(timeout=10)
        try:
            energy = parse_perf_stat(Path(self._out).read_text())
        finally:
            os.unlink(self._out)
        if energy is None:
            raise MeterError(f"perf: no energy counted; perf said: {err.decode()[:300]}")
        return Reading(energy, [], self.name, self.scope, self.method, elapsed)


def parse_perf_stat(text: str) -> float | None:
    """Sum the Joules of perf stat -x, output; None when nothing was counted."""
    total, found = 0.0, False
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) >= 3 and fields[1] == "Joules" and "energy" in fields[2]:
            try:
                total += float(fields[0])
                found = True
            except ValueError:
                continue
    return total if found else None


METERS: dict[str, type[Meter]] = {
    cls.name: cls
    for cls in (PowercapMeter, PerfMeter, IpmiMeter, WattsUpMeter, TraceMeter, ModelMeter)
}


def probe_all(options: MeterOptions) -> dict[str, str | None]:
    return {name: cls.probe(options) for name, cls in METERS.items()}


def open_meter(order: list[str], options: MeterOptions, require_measured: bool = False) -> Meter:
    """The first usable meter of `order`; a clear error naming every reason otherwise."""
    reasons = []
    for name in order:
        cls = METERS.get(name)
        if cls is None:
            raise MeterError(f"unknown meter {name!r}; valid: {', '.join(METERS)}")
        if require_measured and cls.method != "measured":
            reasons.append(f"{name}: gives estimated energy, and this study requires a measured "
                           "meter")
            continue
        reason = cls.probe(options)
        if reason is None:
            return cls(options)
        reasons.append(reason)
    hint = ("; this study requires a measured meter (meter.require_measured: true): run it on a "
            "machine with RAPL, IPMI or an external meter, or set require_measured: false to "
            "accept estimated energy" if require_measured else "")
    raise MeterError("no usable energy meter: " + "; ".join(reasons) + hint)


@dataclass
class IdleResult:
    """Average idle power over count windows of seconds each (paper 5.1)."""

    windows_w: list[float] = field(default_factory=list)
    source: str = ""
    scope: str = ""
    method: str = ""
    seconds: float = 0.0

    @property
    def mean_w(self) -> float:
        return sum(self.windows_w) / len(self.windows_w)

    @property
    def sd_w(self) -> float:
        n = len(self.windows_w)
        if n < 2:
            return 0.0
        m = self.mean_w
        return (sum((w - m) ** 2 for w in self.windows_w) / (n - 1)) ** 0.5


def measure_idle(meter: Meter, count: int, seconds: float, progress=None) -> IdleResult:
    result = IdleResult(source=meter.name, scope=meter.scope, method=meter.method,
                        seconds=seconds)
    for i in range(count):
        meter.start()
        time.sleep(seconds)
        reading = meter.stop()
        result.windows_w.append(reading.mean_power_w)
        if progress:
            progress(f"idle window {i + 1}/{count}: {reading.mean_power_w:.2f} W")
    return result
