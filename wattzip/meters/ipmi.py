"""The BMC's DCMI power reading (wall power of a server) through ipmitool."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass

from wattzip.errors import MeterError
from wattzip.meters.base import Poller, PowerSampleMeter

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


# ipmitool's getopt string (ipmi_main.c): the letters followed by ':' take a value.
_GETOPT = "I:46hVvcgsEKYao:H:d:P:f:U:p:C:L:A:t:T:m:z:S:l:b:B:e:k:y:O:R:N:D:Z"
_TAKES_VALUE = frozenset(c for i, c in enumerate(_GETOPT)
                         if c != ":" and _GETOPT[i + 1: i + 2] == ":")


def _options(command) -> list[tuple[str, str | None, int, int]]:
    """Each option that takes a value, as ipmitool's (GNU) getopt reads them: its flag,
    its value, the index of the word holding the value and where in it the value starts
    (0: the whole next word). Flags bundle (`-vPsecret`, `-vvP secret`, `-EP x`), glue
    their value (`-Hhost`) or take the next word, anywhere before `--` (GNU getopt
    permutes: `ipmitool dcmi power reading -P x` gives -P too)."""
    found = []
    i = 1
    while i < len(command):
        word = command[i]
        if word == "--":
            break
        if word.startswith("-") and not word.startswith("--") and len(word) > 1:
            for j in range(1, len(word)):
                if word[j] not in _TAKES_VALUE:
                    continue
                if j + 1 < len(word):
                    found.append((f"-{word[j]}", word[j + 1:], i, j + 1))
                elif i + 1 < len(command):
                    i += 1
                    found.append((f"-{word[j]}", command[i], i, 0))
                break
        i += 1
    return found


def secret_on_command_line(command) -> str | None:
    """Why a command may not be run (None: it may): a password or key given on it (-P,
    -k, -y) is read by every user of the machine, in `ps` while each query runs and in
    the job's spec files. ipmitool reads it from a file (-f) or the environment (-E)."""
    given = sorted({flag for flag, _, _, _ in _options(command)
                    if flag in ("-P", "-k", "-y")})
    if not given:
        return None
    return (f"ipmi: the command {shown_command(command)} gives {' and '.join(given)} on its "
            "command line, where every user of this machine can read it (ps, and each "
            "job's spec); give the password in a file of root's (-f FILE) or in the "
            "environment (-E, from IPMI_PASSWORD) instead")


def shown_command(command) -> str:
    """The command as a record may show it: the value of each secret flag masked."""
    shown = list(command)
    for flag, _, at, start in _options(command):
        if flag in _SECRET_FLAGS:
            shown[at] = f"{shown[at][:start]}***" if start else "***"
    return " ".join(shown)


def bmc_of(command) -> str:
    """The BMC a command reads: the host of -H (ipmitool's remote BMC), else this
    machine's own ("local")."""
    return next((value for flag, value, _, _ in _options(command) if flag == "-H"), "local")


class IpmiMeter(PowerSampleMeter):
    """Polled DCMI readings (about 1 Hz), integrated linearly over the run.

    One reading is taken as the run starts and one after it ends, so the
    samples always cover the run. The BMC averages over its own sampling
    period: a run shorter than that period is flagged in its record.
    """

    name = "ipmi"
    OPTIONS = {"ipmi_command": ("ipmitool", "dcmi", "power", "reading"), "ipmi_interval_s": 1.0}
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
            if options.ipmi_command == cls.OPTIONS["ipmi_command"]:
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
