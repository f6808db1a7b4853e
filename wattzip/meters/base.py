"""The interface every energy meter implements, and how samples become joules.

A meter is started just before a run and stopped just after it. Its Reading
carries the energy of exactly the interval between start and stop (the
meter's interval, recorded beside the runner's), the power samples taken in
it, where they came from (source), what part of the machine they see (scope)
and whether they were measured or estimated. A meter that cannot vouch for the
whole interval raises MeterError: the run is then recorded as failed, never
given a number the meter did not see.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

from wattzip.errors import MeterError
from wattzip.resources import schema_default

# What a meter's scope sees, in the words its energy verdicts use (a run record's
# meter_scope); a scope starting "wall" sees the whole machine, as the papers' meters
# (a WattsUp at the wall) did, and its energy can be set beside theirs.
SCOPE_SEES = {"package+dram": "the CPU package and DRAM", "package": "the CPU package",
              "platform": "the processor's platform (RAPL psys)"}


def sees_whole_machine(scope: str | None) -> bool:
    """Whether a meter of this scope sees the whole machine (its power at the wall)."""
    return bool(scope) and scope.startswith("wall")


def not_comparable(scope: str) -> str:
    """Why energy of a narrower meter cannot be set beside the papers' wall power."""
    return (f"not comparable: the meter sees {SCOPE_SEES.get(scope, scope)}, not the disk "
            "(the papers measured the whole machine at the wall)")


@dataclass
class SharedOptions:
    """The options every polling meter reads; wattzip.meters.MeterOptions adds each
    meter's own (its OPTIONS)."""

    interval_s: float = schema_default("meter.interval_s")  # the config's defaults: the schema's


# Every meter by its name, each subclass of Meter that names itself (wattzip.meters
# orders them and imports every module of the package, so a new one is found).
REGISTERED: dict[str, type[Meter]] = {}


@dataclass
class Reading:
    """The energy of one meter interval; energy_j is None when nothing was metered."""

    energy_j: float | None
    samples: list[tuple[float, float]]  # (seconds since start, watts)
    source: str
    scope: str
    method: str
    elapsed_s: float  # the meter's own interval, start to stop
    flags: list[str] = field(default_factory=list)  # what a reader must know of this reading

    @property
    def mean_power_w(self) -> float:
        if self.energy_j is None or self.elapsed_s <= 0:
            return float("nan")
        return self.energy_j / self.elapsed_s


class Meter:
    """One energy meter. Subclasses set name/method and implement the hooks."""

    name = "meter"
    method = "measured"
    # The options it reads besides interval_s, with their defaults: a key of the config's
    # `meter:` (wattzip/data/schema.yaml) of the same name sets one ("model.idle_power_w"
    # sets model_idle_power_w); the others let a test point it at a fake.
    OPTIONS: dict[str, object] = {}
    # What part of the machine its readings cover. A backend that finds it on the machine
    # (RAPL's zones, perf's events) sets it when opened; the class's is its usual one,
    # which a rehearsal's SIMULATED runs of this meter say.
    scope = "unknown"
    # Shortest interval the meter can resolve (s); None for counters read on demand.
    resolution_s: float | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            REGISTERED[cls.name] = cls

    def __init__(self, options: SharedOptions):
        self.options = options

    @classmethod
    def probe(cls, options: SharedOptions) -> str | None:
        """None when usable here, else the reason it is not."""
        raise NotImplementedError

    def require_usable(self) -> None:
        """Raise the probe's reason as an error (for meters that probe as they open)."""
        reason = self.probe(self.options)
        if reason:
            raise MeterError(reason)

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> Reading:
        raise NotImplementedError

    def close(self) -> None:
        """Release devices held across runs (serial ports)."""

    def coefficients(self) -> dict | None:
        """What an estimate rests on (a model's coefficients); None for a measurement."""
        return None

    def device(self) -> dict | None:
        """Which device of its kind gives the readings (a serial port, a BMC, a logger's
        file); None for a meter that is this machine's own (its counters, a model)."""
        return None

    def identity(self, idle: dict | None = None) -> dict:
        """Everything a run's energy depends on besides the run: source, device, scope,
        method, coefficients, and the idle calibration its passive energy subtracts. Runs
        of two identities are never mixed: not in a job, not in a summary group."""
        ident = {"source": self.name, "scope": self.scope, "method": self.method,
                 "coefficients": self.coefficients()}
        device = self.device()
        if device is not None:
            ident["device"] = device
        if idle is not None:
            ident["idle"] = {k: idle.get(k) for k in ("idle_power_w", "measured_at",
                                                       "setting")}
        return ident

    def short_run_flags(self, elapsed_s: float) -> list[str]:
        if self.resolution_s and elapsed_s < self.resolution_s:
            return [f"shorter than the {self.name} meter's resolution of "
                    f"{self.resolution_s:g} s"]
        return []


def identity_id(identity: dict) -> str:
    """A short name of a meter identity for tables (a hash of all of it)."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]


def missing_path_reason(meter: str, path: str | None, key: str, example: str) -> str | None:
    """Why a meter read from a configured file or device cannot be used, or None."""
    if not path:
        return f"{meter}: no {example} configured (meter.{key})"
    if not os.path.exists(path):
        return f"{meter}: {path} does not exist"
    return None


# --- from samples to energy ---------------------------------------------------------


def integrate_power(samples: list[tuple[float, float]], t0: float, t1: float,
                    hold_edges: bool = True) -> float:
    """Energy (J) of [t0, t1] from instantaneous (time, watts) samples, linear between them.

    With hold_edges the first and last values are held to the interval's
    edges (for meters polled at start and stop, whose edge samples are the
    run's own). Without it the samples must cover [t0, t1]: a sample at or
    before t0 and one at or after t1, else MeterError (never extrapolate).
    """
    if t1 <= t0:
        return 0.0
    pts = sorted(samples)
    if not pts:
        raise MeterError("the meter delivered no power sample for this run")
    if not hold_edges:
        require_cover(pts[0][0], pts[-1][0], t0, t1)

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


def integrate_averages(records: list[tuple[float, float]], t0: float, t1: float,
                       period_s: float) -> float:
    """Energy (J) of [t0, t1] from averaging records: (t, W) is the mean over the period before t.

    A logging meter such as the WattsUp reports, once a period, the average
    power of the period that just ended. The record that covers the run's end
    arrives up to a period after it; it must be there (MeterError otherwise).
    """
    if t1 <= t0:
        return 0.0
    pts = sorted(records)
    if not pts:
        raise MeterError("the meter delivered no power record for this run")
    spans = []
    for i, (t, w) in enumerate(pts):
        start = pts[i - 1][0] if i else t - period_s
        spans.append((start, t, w))
    require_cover(spans[0][0], spans[-1][1], t0, t1)
    return sum(w * max(0.0, min(b, t1) - max(a, t0)) for a, b, w in spans)


def require_cover(first: float, last: float, t0: float, t1: float) -> None:
    if first > t0:
        raise MeterError(f"the power samples start {first - t0:.3f} s after the run started; "
                         "the meter did not see the run's beginning")
    if last < t1:
        raise MeterError(f"the power samples end {t1 - last:.3f} s before the run ended; "
                         "the meter did not see the run's end")


class Poller:
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
    """A meter read as a cumulative energy counter (RAPL, the CPU-utilization model).

    Read at start and at stop, so the interval is exactly the meter's; the
    polls between only keep counter wraps resolvable and give a power trace.
    """

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
        self._poller = Poller(self._sample, self._poll_interval_s())
        self._poller.start()

    def stop(self) -> Reading:
        self._poller.stop()
        self._sample()
        t1, energy = self._last
        return Reading(energy, self._samples, self.name, self.scope, self.method, t1 - self._t0)


class PowerSampleMeter(Meter):
    """A meter that delivers (time, watts) samples on its own; energy is their integral."""

    def _begin(self) -> None:
        """Start delivering samples into self._append."""

    def _end(self, t1: float) -> None:
        """Stop delivering samples; may wait (bounded) for the samples covering t1."""

    def _energy(self, samples: list[tuple[float, float]], t0: float, t1: float) -> float:
        return integrate_power(samples, t0, t1)

    def _append(self, watts: float, when: float | None = None) -> None:
        with self._lock:
            self._samples.append((time.monotonic() if when is None else when, watts))

    def _snapshot(self) -> list[tuple[float, float]]:
        with self._lock:
            return list(self._samples)

    def start(self) -> None:
        self._lock = threading.Lock()
        self._samples: list[tuple[float, float]] = []
        self._begin()
        self._t0 = time.monotonic()

    def stop(self) -> Reading:
        t1 = time.monotonic()
        self._end(t1)
        samples = self._snapshot()
        energy = self._energy(samples, self._t0, t1)
        inside = [(t - self._t0, w) for t, w in samples if self._t0 <= t <= t1]
        return Reading(energy, inside, self.name, self.scope, self.method, t1 - self._t0,
                       self.short_run_flags(t1 - self._t0))
