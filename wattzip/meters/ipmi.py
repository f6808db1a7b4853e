"""The BMC's DCMI power reading (wall power of a server) through ipmitool."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass

from wattzip.errors import MeterError
from wattzip.meters.base import MeterOptions, Poller, PowerSampleMeter

_WATTS = re.compile(r"Instantaneous power reading:\s*([\d.]+)\s*Watts", re.IGNORECASE)
_STATE = re.compile(r"Power reading state is:\s*(\w+)", re.IGNORECASE)
_PERIOD = re.compile(r"Sampling period:\s*(\d+)\s*(Milliseconds|Seconds)", re.IGNORECASE)


@dataclass
class DcmiReading:
    watts: float
    sampling_period_s: float | None


def parse_ipmi_dcmi(text: str) -> DcmiReading:
    """The instantaneous watts and the BMC's sampling period of `ipmitool dcmi power reading`.

    A BMC whose power reading state is 'deactivated' prints numbers that are
    no reading (often 0 W): that is an error, not a sample.
    """
    state = _STATE.search(text)
    if state and state.group(1).lower() != "activated":
        raise MeterError(f"ipmi: the BMC's power reading state is {state.group(1)!r}, so its "
                         "numbers are no reading; activate it (ipmitool dcmi power activate)")
    match = _WATTS.search(text)
    if not match:
        raise MeterError(f"ipmi: no 'Instantaneous power reading' in: {text.strip()[:200]}")
    period = _PERIOD.search(text)
    period_s = None
    if period:
        period_s = int(period.group(1)) / (1000.0 if period.group(2).lower().startswith("milli")
                                           else 1.0)
    return DcmiReading(float(match.group(1)), period_s)


QUERY_TIMEOUT_S = 10
# ipmitool's flags whose value is a secret (password, user, Kg key): kept out of every
# identity and message, which runs.csv and provenance.json carry.
_SECRET_FLAGS = frozenset({"-P", "-U", "-k", "-y"})


def _options(command) -> list[tuple[str, str | None, int]]:
    """Each option's flag, its value and the index of the word holding the value, as
    ipmitool reads them: `-H host` or glued, `-Hhost`."""
    found = []
    for i, word in enumerate(command):
        if len(word) > 2 and word[:2] in (*_SECRET_FLAGS, "-H") and not word.startswith("--"):
            found.append((word[:2], word[2:], i))
        elif word in (*_SECRET_FLAGS, "-H") and i + 1 < len(command):
            found.append((word, command[i + 1], i + 1))
    return found


def secret_on_command_line(command) -> str | None:
    """Why a command may not be run (None: it may): a password or key given on it (-P,
    -k, -y) is read by every user of the machine, in `ps` while each query runs and in
    the job's spec files. ipmitool reads it from a file (-f) or the environment (-E)."""
    given = sorted({flag for flag, _, _ in _options(command) if flag in ("-P", "-k", "-y")})
    if not given:
        return None
    return (f"ipmi: the command {shown_command(command)} gives {' and '.join(given)} on its "
            "command line, where every user of this machine can read it (ps, and each "
            "job's spec); give the password in a file of root's (-f FILE) or in the "
            "environment (-E, from IPMI_PASSWORD) instead")


def shown_command(command) -> str:
    """The command as a record may show it: the value of each secret flag masked."""
    shown = list(command)
    for flag, _, at in _options(command):
        if flag in _SECRET_FLAGS:
            shown[at] = f"{flag}***" if shown[at].startswith(flag) else "***"
    return " ".join(shown)


def bmc_of(command) -> str:
    """The BMC a command reads: the host of -H (ipmitool's remote BMC), else this
    machine's own ("local")."""
    return next((value for flag, value, _ in _options(command) if flag == "-H"), "local")


class IpmiMeter(PowerSampleMeter):
    """Polled DCMI readings (about 1 Hz), integrated linearly over the run.

    One reading is taken as the run starts and one after it ends, so the
    samples always cover the run. The BMC averages over its own sampling
    period: a run shorter than that period is flagged in its record.
    """

    name = "ipmi"
    scope = "wall"

    def __init__(self, options):
        super().__init__(options)
        self.resolution_s = None

    def device(self) -> dict:
        return {"bmc": bmc_of(self.options.ipmi_command),
                "tool": self.options.ipmi_command[0]}

    @classmethod
    def probe(cls, options):
        if not options.ipmi_command:
            return "ipmi: the command that reads power is empty (meter.ipmi_command)"
        tool = options.ipmi_command[0]
        if shutil.which(tool) is None:
            if options.ipmi_command == MeterOptions.ipmi_command:
                return f"ipmi: {tool} is not installed (apt-get install ipmitool)"
            return (f"ipmi: {tool}, the command given to read power, is not found or not "
                    "executable (--ipmi-command, meter.ipmi_command)")
        try:
            parse_ipmi_dcmi(cls._query(options))
        except (MeterError, OSError, subprocess.SubprocessError) as exc:
            return f"ipmi: no DCMI power reading ({exc})"
        return None

    @staticmethod
    def _query(options) -> str:
        try:
            proc = subprocess.run(list(options.ipmi_command), capture_output=True, text=True,
                                  timeout=QUERY_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise MeterError(f"ipmi: {shown_command(options.ipmi_command)} gave no answer within "
                             f"{QUERY_TIMEOUT_S} s (a hung BMC? `ipmitool mc reset cold` "
                             "resets it)") from None
        return proc.stdout + proc.stderr

    def _read(self) -> None:
        # The BMC answers somewhere inside the query (ipmitool's start, its session over
        # the LAN, the request, its exit: 0.1-2 s); stamped on return, every reading would
        # lag by most of that, and a run's first second of load would read as idle. The
        # query's midpoint is off by at most half of it.
        launched = time.monotonic()
        reading = parse_ipmi_dcmi(self._query(self.options))
        if reading.sampling_period_s:
            self.resolution_s = reading.sampling_period_s
        self._append(reading.watts, when=(launched + time.monotonic()) / 2)

    def _begin(self) -> None:
        self._read()
        self._poller = Poller(self._read, self.options.ipmi_interval_s)
        self._poller.start()

    def _end(self, t1: float) -> None:
        self._poller.stop()
        self._read()
