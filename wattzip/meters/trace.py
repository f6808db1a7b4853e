"""A power log written by any external logger (smart plug, PDU, bench meter)."""

from __future__ import annotations

import csv
import datetime as dt
import os
import stat
import time
import zoneinfo

from wattzip.errors import MeterError
from wattzip.meters.base import Meter, Reading, integrate_power, missing_path_reason
from wattzip.resources import schema_default


def logger_zone(timezone: str | None) -> zoneinfo.ZoneInfo | None:
    """The logger's time zone (None without one); a name that is no zone is an error."""
    if not timezone:
        return None
    try:
        return zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise MeterError(f"trace: time zone {timezone!r} is not an IANA zone name "
                         "(e.g. UTC, Europe/Berlin)") from None


def read_power_trace(path: str, timezone: str | None = None) -> list[tuple[float, float]]:
    """(unix time, watts) rows of a CSV with timestamp and watts columns.

    Timestamps may be unix seconds or ISO 8601. One without a UTC offset is read in
    the logger's `timezone` (an IANA name the testbed config gives), and refused
    without one: guessing UTC would shift every run by the zone's offset.
    A torn last line (the logger is writing it) is skipped.
    """
    zone = logger_zone(timezone)
    rows: list[tuple[float, float]] = []
    try:
        # O_NONBLOCK: a FIFO (or a device) swapped in at the name would block the open,
        # with the machine's lock held; it is refused instead.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:  # rotated or deleted by its logger during a run
        raise MeterError(f"trace: cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise MeterError(f"trace: {path} is not a regular file (a FIFO or device would "
                         "leave the run waiting); point trace_path at the logger's file")
    f = open(fd, newline="", encoding="utf-8")
    with f:
        for line, row in enumerate(csv.DictReader(f), 2):
            stamp, watts = row.get("timestamp"), row.get("watts")
            if "timestamp" not in row or "watts" not in row:
                raise MeterError(f"trace: {path} needs the columns timestamp,watts")
            if not stamp or not watts:
                continue
            try:
                t = float(stamp)
            except ValueError:
                try:
                    parsed = dt.datetime.fromisoformat(stamp)
                except ValueError:
                    continue
                if parsed.tzinfo is None:
                    if zone is None:
                        raise MeterError(
                            f"trace: {path}, line {line}: timestamp {stamp!r} has no UTC "
                            "offset; name the logger's time zone in the testbed config "
                            "(meter.trace_timezone, e.g. UTC or Europe/Berlin)") from None
                    parsed = parsed.replace(tzinfo=zone)
                t = parsed.timestamp()
            try:
                rows.append((t, float(watts)))
            except ValueError:
                continue
    return rows


class TraceMeter(Meter):
    """Power samples (timestamp, instantaneous watts) that must cover the run's interval.

    A logger writes behind real time, so stop() waits up to trace_wait_s for
    a sample at or after the run's end. A trace that starts after the run
    began, or still ends before it finished, fails the run: never extrapolate.
    """

    name = "trace"
    scope = "wall"
    # The power log; the logger's IANA time zone, for timestamps written without an
    # offset; how long to wait after a run for the samples that cover it.
    OPTIONS = {"trace_path": None, "trace_timezone": None,
               "trace_wait_s": schema_default("meter.trace_wait_s")}

    def __init__(self, options):
        super().__init__(options)
        self.require_usable()

    def device(self) -> dict:
        """The log's file and its owner (by uid, which no name service changes): a logger
        often runs as a user, and whoever can write the file sets the energy, so each run
        names who that was."""
        path = self.options.trace_path  # as configured: a logger may rotate what it names
        try:
            uid = os.stat(path).st_uid
        except OSError as exc:
            raise MeterError(f"trace: cannot read {path}: {exc.strerror}") from None
        return {"trace": path, "owner_uid": uid}

    @classmethod
    def probe(cls, options):
        """Usable: a file (its logger may not have written it yet) whose first line, once
        written, names the columns timestamp and watts, and a zone that is one."""
        path = options.trace_path
        reason = missing_path_reason("trace", path, "trace_path", "power trace file")
        if reason:
            return reason
        if not os.path.isfile(path):
            return f"trace: {path} is not a file (a power log with timestamp,watts columns)"
        try:
            logger_zone(options.trace_timezone)
            with open(path, newline="", encoding="utf-8") as f:
                first = f.readline(4096)
        except MeterError as exc:
            return str(exc)
        except (OSError, UnicodeDecodeError) as exc:
            return f"trace: cannot read {path}: {exc}"
        header = next(csv.reader([first]), []) if first.endswith("\n") else []
        if header and not {"timestamp", "watts"} <= set(header):
            # Its line is not quoted: the path may lead to any file root can read.
            return (f"trace: {path} is not a power log: its first line does not name the "
                    "columns timestamp,watts")
        return None

    def start(self) -> None:
        self._wall0 = time.time()
        self._t0 = time.monotonic()

    def stop(self) -> Reading:
        elapsed = time.monotonic() - self._t0
        wall1 = self._wall0 + elapsed
        deadline = time.monotonic() + self.options.trace_wait_s
        while True:
            samples = read_power_trace(self.options.trace_path, self.options.trace_timezone)
            last = max((t for t, _ in samples), default=float("-inf"))
            if last >= wall1 or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        try:
            energy = integrate_power(samples, self._wall0, wall1, hold_edges=False)
        except MeterError as exc:
            raise MeterError(f"trace {self.options.trace_path}: {exc} (waited "
                             f"{self.options.trace_wait_s:g} s for the logger)") from None
        inside = [(t - self._wall0, w) for t, w in samples if self._wall0 <= t <= wall1]
        self.resolution_s = _median_spacing(samples)
        return Reading(energy, inside, self.name, self.scope, self.method, elapsed,
                       self.short_run_flags(elapsed))


def _median_spacing(samples: list[tuple[float, float]]) -> float | None:
    """The logger's sampling period, as its samples show it."""
    times = sorted(t for t, _ in samples)
    gaps = sorted(b - a for a, b in zip(times, times[1:], strict=False) if b > a)
    return gaps[len(gaps) // 2] if gaps else None
