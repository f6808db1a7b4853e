"""RAPL through perf's power PMU: package and dram energy of the whole machine.

perf takes a while to start (it opens an event per CPU), so a run started
right after launching it would lose its first moments, or all of a short run.
perf is therefore started with its events disabled (``-D -1``) and controlled
through a pair of FIFOs (``--control fifo:ctl,ack``): start() returns only
after perf has acknowledged ``enable``, and stop() after it acknowledged
``disable``, so the counted interval brackets the run.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from wattzip.errors import MeterError
from wattzip.machine import scratch
from wattzip.meters.base import Meter, Reading

NOT_COUNTED = ("<not counted>", "<not supported>")


def parse_perf_stat(text: str, events: tuple[str, ...]) -> float:
    """Joules summed over `events` from `perf stat -x,` output.

    An event that perf reports as <not counted> or <not supported>, or that is
    missing, is an error: a silently smaller scope would look like less energy.
    """
    joules: dict[str, float] = {}
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) < 3 or fields[2] not in events:
            continue
        if fields[0].strip() in NOT_COUNTED:
            raise MeterError(f"perf: event {fields[2]} was {fields[0].strip()}; its energy is "
                             "unknown, so the run has no energy")
        try:
            joules[fields[2]] = float(fields[0])
        except ValueError:
            raise MeterError(f"perf: cannot read the count of {fields[2]}: {line}") from None
    missing = [e for e in events if e not in joules]
    if missing:
        raise MeterError(f"perf: no count for {', '.join(missing)} in its output")
    return sum(joules.values())


class PerfMeter(Meter):
    name = "perf"
    scope = "package+dram"
    OPTIONS = {"perf_command": "perf",
               "perf_events_dir": "/sys/bus/event_source/devices/power/events",
               "perf_start_timeout_s": 10.0}
    events = ("power/energy-pkg/", "power/energy-ram/")

    def __init__(self, options):
        super().__init__(options)
        self.require_usable()
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

    def _send(self, command: str) -> float:
        """Send a control command; return when perf acknowledged it."""
        os.write(self._ctl, f"{command}\n".encode())
        deadline = time.monotonic() + self.options.perf_start_timeout_s
        buffer = b""
        while b"ack" not in buffer:
            if self._proc.poll() is not None:
                raise MeterError(f"perf exited ({self._proc.returncode}) before acknowledging "
                                 f"'{command}': {self._stderr()}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise MeterError(f"perf did not acknowledge '{command}' within "
                                 f"{self.options.perf_start_timeout_s:g} s")
            ready, _, _ = select.select([self._ack], [], [], min(left, 0.1))
            if ready:
                buffer += os.read(self._ack, 64)
        return time.monotonic()

    def _stderr(self) -> str:
        self._err.seek(0)
        return self._err.read().decode(errors="replace").strip()[:300]

    def start(self) -> None:
        self._dir, self._dir_change = scratch.make("wattzip-perf")
        ctl, ack = os.path.join(self._dir, "ctl"), os.path.join(self._dir, "ack")
        os.mkfifo(ctl)
        os.mkfifo(ack)
        # Read-write opens of a FIFO never block, whether perf has opened it yet or not.
        self._ctl = os.open(ctl, os.O_RDWR)
        self._ack = os.open(ack, os.O_RDWR)
        self._out = os.path.join(self._dir, "stat.csv")
        self._err = tempfile.TemporaryFile()
        argv = [self.options.perf_command, "stat", "-a", "-x,", "-o", self._out, "-D", "-1",
                "--control", f"fifo:{ctl},{ack}", "-e", ",".join(self.active_events)]
        self._proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=self._err)
        try:
            self._t0 = self._send("enable")
        except MeterError:
            self._cleanup()
            raise

    def stop(self) -> Reading:
        try:
            t1 = self._send("disable")
            self._proc.send_signal(signal.SIGINT)
            self._proc.wait(timeout=30)
            energy = parse_perf_stat(Path(self._out).read_text() if os.path.exists(self._out)
                                     else "", self.active_events)
        except (MeterError, subprocess.TimeoutExpired) as exc:
            raise MeterError(f"{exc}; perf said: {self._stderr()}") from None
        finally:
            self._cleanup()
        return Reading(energy, [], self.name, self.scope, self.method, t1 - self._t0)

    def _cleanup(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._ctl, self._ack):
            os.close(fd)
        self._err.close()
        scratch.remove(self._dir_change)
