"""A WattsUp Pro style serial meter in external logging mode (the paper's meter)."""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import stat
import termios
import threading
import time

from wattzip import machine
from wattzip.errors import MeterError
from wattzip.meters.base import PowerSampleMeter, integrate_averages, missing_path_reason

INTERNAL_LOGGING = "#L,W,3,I,,1;"


class WattsUpMeter(PowerSampleMeter):
    """Wall power, one record a second, each the average of the second before it.

    Protocol: ``#L,W,3,E,,1;`` asks for one record a second on the port, each
    ``#d,...;`` record's fourth field is tenths of watts, and ``#L,W,3,I,,1;`` returns
    the meter to internal logging. Its memory (``#R,W,0;`` would clear it) is left as
    it is: external logging does not need it cleared, and it may hold another user's log.
    The record that covers a run's last moments arrives up to a second after
    the run; stop() waits for it (bounded) instead of guessing that second.
    Records carry no time of their own and reach us late by a delay that
    varies (the USB adapter's latency timer, a reader thread behind a busy
    compressor), so each is stamped on the meter's cadence (``on_meters_clock``).
    """

    name = "wattsup"
    scope = "wall"
    OPTIONS = {"wattsup_port": None, "wattsup_baud": 115200, "wattsup_interval_s": 1.0}

    def __init__(self, options):
        super().__init__(options)
        import serial  # noqa: F401 - pyserial is here, or this fails now, not mid-study

        if not options.wattsup_port:
            raise MeterError("wattsup: no serial port configured (meter.wattsup_port)")
        self.resolution_s = options.wattsup_interval_s
        self._port = None  # opened by start(), under the machine's lock
        self._reader: threading.Thread | None = None
        self._change: str | None = None

    @classmethod
    def probe(cls, options):
        reason = missing_path_reason("wattsup", options.wattsup_port, "wattsup_port",
                                     "serial port (e.g. /dev/ttyUSB0)")
        if reason:
            return reason
        if not stat.S_ISCHR(os.stat(options.wattsup_port).st_mode):
            return (f"wattsup: {options.wattsup_port} is not a serial port (a character "
                    "device such as /dev/ttyUSB0)")
        try:
            import serial  # noqa: F401
        except ImportError:
            return "wattsup: pyserial is not installed"
        return None

    def _open(self) -> None:
        """The port, opened only while this process holds the machine: a second command
        waiting for the lock must not talk to the meter of the one measuring."""
        import serial

        if self._port is not None:
            return
        if not machine.held():
            raise MeterError("wattsup: the meter's port is opened only under the machine's "
                             "lock (inside a wattzip command's session)")
        others = other_readers(self.options.wattsup_port)
        if others:
            raise MeterError(f"wattsup: {self.options.wattsup_port} is open in process "
                             f"{', '.join(map(str, others))}; each record reaches one reader, "
                             "so stop that reader (a logger, a terminal) first")
        try:
            # flock (another wattzip, any pyserial program) and TIOCEXCL (every other
            # user's process): none opens the port while this one reads it.
            self._port = serial.Serial(self.options.wattsup_port, self.options.wattsup_baud,
                                       timeout=0.05, exclusive=True)
            fcntl.ioctl(self._port.fileno(), termios.TIOCEXCL)
        except (serial.SerialException, OSError) as exc:
            self.close()
            raise MeterError(f"wattsup: cannot open {self.options.wattsup_port} for this "
                             f"process alone: {exc}") from None

    def device(self) -> dict:
        """The port as configured and the adapter's stable names (/dev/serial/by-id holds
        its serial number): the ttyUSB it is now may be another meter after a replug, and
        this meter another ttyUSB."""
        port = self.options.wattsup_port
        by_id = "/dev/serial/by-id"
        try:
            device = os.path.realpath(port)
            names = sorted(name for name in os.listdir(by_id)
                           if os.path.realpath(os.path.join(by_id, name)) == device)
        except OSError:  # no adapter with a serial number (udev removes the folder)
            names = []
        return {"port": port, "by_id": names}

    def _command(self, text: str) -> None:
        self._port.write(text.encode("ascii"))
        self._port.flush()

    def _read_loop(self) -> None:
        import serial

        buffer = b""
        while not self._stop_reading.is_set():
            try:
                # What is waiting, at least a byte: read(n) would hold a record
                # until n bytes or the port's timeout (up to 50 ms) had passed.
                buffer += self._port.read(max(1, self._port.in_waiting))
            except serial.SerialException:
                time.sleep(0.01)  # a pty reports readiness with no data while it settles
                continue
            while b";" in buffer:
                record, buffer = buffer.split(b";", 1)
                fields = record.decode("ascii", "replace").strip().split(",")
                if fields and fields[0].endswith("#d") and len(fields) > 3:
                    try:
                        self._append(float(fields[3]) / 10.0)
                    except ValueError:
                        continue
                    with self._arrived:
                        self._arrived.notify_all()

    def _snapshot(self) -> list[tuple[float, float]]:
        return on_meters_clock(super()._snapshot(), self.resolution_s)

    def _latest(self) -> float:
        samples = self._snapshot()
        return samples[-1][0] if samples else float("-inf")

    def _wait_for_record_after(self, t: float, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        with self._arrived:
            while not self._latest() > t:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._arrived.wait(left)
        return True

    def _begin(self) -> None:
        self._open()
        self._stop_reading = threading.Event()
        self._arrived = threading.Condition()
        # Journaled first: a killed job's meter is set back to internal logging by the
        # next wattzip command (or `wattzip restore`), not left streaming to the port.
        self._change = machine.note("serial", self.options.wattsup_port, "internal logging",
                                    command=INTERNAL_LOGGING, baud=self.options.wattsup_baud)
        self._command("#L,W,3,E,,1;")
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        # The first record closes the period the run starts in; wait for it.
        if not self._wait_for_record_after(float("-inf"), 3 * self.resolution_s + 1):
            self._stop()
            raise MeterError(f"wattsup: no record from {self.options.wattsup_port} within "
                             f"{3 * self.resolution_s + 1:g} s")

    def _end(self, t1: float) -> None:
        got = self._wait_for_record_after(t1, 2 * self.resolution_s + 0.5)
        self._stop()
        if not got:
            raise MeterError(f"wattsup: no record arrived within {2 * self.resolution_s + 0.5:g}"
                             " s after the run ended, so its last moments were not metered")

    def _energy(self, samples, t0, t1):
        return integrate_averages(samples, t0, t1, self.resolution_s)

    def _stop(self) -> None:
        self._command(INTERNAL_LOGGING)
        if self._change:
            machine.undone(self._change)
            self._change = None
        self._stop_reading.set()
        if self._reader:
            self._reader.join()

    def close(self) -> None:
        if self._port is not None:
            # A serial tty leaves exclusive mode at its last close; one another side
            # keeps (a pty, a console) would stay in it: left as it was found. A port
            # unplugged meanwhile refuses the ioctl, and is closed all the same.
            try:
                with contextlib.suppress(OSError):
                    fcntl.ioctl(self._port.fileno(), termios.TIOCNXCL)
            finally:
                self._port.close()
                self._port = None


def other_readers(port: str) -> list[int]:
    """The other processes that hold the port's device open (as /proc shows them)."""
    try:
        device = os.stat(port).st_rdev
    except OSError:
        return []
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:  # gone, or not ours to read
            continue
        if any(_is_device(f"/proc/{pid}/fd/{fd}", device) for fd in fds):
            found.append(int(pid))
    return sorted(found)


def _is_device(fd_path: str, device: int) -> bool:
    """Only what an fd names under /dev is looked at: a stat of any other would follow
    it to a network filesystem, and a dead server would hang the meter's start."""
    try:
        if not os.readlink(fd_path).startswith("/dev/"):
            return False
        st = os.stat(fd_path)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == device


CLOCK_WINDOW_RECORDS = 16
"""Records each side that place one record on the meter's clock: enough for one
of them to have come within a few ms of the latency timer's best (16 ms timer:
stamps within 3 ms, tests/test_meter_edges.py), few enough that a clock off by
100 ppm moves only about 3 ms across them."""


def on_meters_clock(records: list[tuple[float, float]],
                    period_s: float) -> list[tuple[float, float]]:
    """(arrival, W) records → (end of the period each covers, W).

    The meter sends a record at the end of each period by its own clock; it
    arrives after a delay that is never negative. Within a window of records,
    the one that arrived soonest after its period's end places that clock best,
    so each record is stamped at the lowest of the window's arrivals, each
    moved by whole periods, and never later than it arrived. A record lost on
    the line is skipped, not counted: periods are counted from the gaps.
    """
    if len(records) < 2:
        return list(records)
    periods = [0]
    for (before, _), (after, _) in itertools.pairwise(records):
        periods.append(periods[-1] + max(1, round((after - before) / period_s)))
    phases = [t - k * period_s for (t, _), k in zip(records, periods, strict=True)]
    stamped = []
    for i, ((arrived, watts), k) in enumerate(zip(records, periods, strict=True)):
        window = phases[max(0, i - CLOCK_WINDOW_RECORDS): i + CLOCK_WINDOW_RECORDS + 1]
        stamped.append((min(arrived, min(window) + k * period_s), watts))
    return stamped
