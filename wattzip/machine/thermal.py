"""The CPU's thermal and frequency state at one moment, and what changed over a run.

A machine warms over a study: a run at 80 °C may run at another frequency, or be
throttled, than the same run at 45 °C. Each run records, read from sysfs:

- the CPU package's temperature at its start and end (hwmon's coretemp "Package id N"
  or k10temp's Tctl/Tdie, else the thermal zones x86_pkg_temp or cpu-thermal; the
  hottest package's);
- its effective frequency: the mean of every CPU's scaling_cur_freq, sampled at the
  start and the end (the kernel's own estimate, not APERF/MPERF over the run);
- its throttle events: the rise of the thermal_throttle counters over the run (each
  CPU's core_throttle_count, each package's package_throttle_count once).

A machine without a sensor (a VM, a container) records it absent (None), never a
guess. The root is injectable (SYSFS, or the `sysfs` argument) for tests.
"""

from __future__ import annotations

import contextlib
import glob
import os
from dataclasses import dataclass, field

SYSFS = "/sys"
PACKAGE_HWMONS = ("coretemp", "k10temp", "zenpower")
# k10temp's package sensor names; coretemp's start with "Package id".
K10_LABELS = ("Tdie", "Tctl")
PACKAGE_ZONES = ("x86_pkg_temp", "cpu-thermal", "cpu_thermal")


def _read(path: str) -> str | None:
    with contextlib.suppress(OSError, UnicodeDecodeError), open(path) as f:
        return f.read().strip()
    return None


def _number(path: str) -> int | None:
    text = _read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _hwmon_package_millic(hwmon: str, name: str) -> list[int]:
    """A package hwmon's package temperatures (m°C): coretemp's "Package id" inputs,
    k10temp's Tdie (else Tctl), or, without labels, its temp1_input."""
    labelled = {}
    for label_file in sorted(glob.glob(f"{hwmon}/temp*_label")):
        label = _read(label_file) or ""
        value = _number(label_file[:-len("label")] + "input")
        if value is not None:
            labelled[label] = value
    if name == "coretemp":
        return [v for k, v in labelled.items() if k.startswith("Package id")]
    for label in K10_LABELS:
        if label in labelled:
            return [labelled[label]]
    value = None if labelled else _number(f"{hwmon}/temp1_input")
    return [value] if value is not None else []


def package_temp_c(sysfs: str | None = None) -> float | None:
    """The hottest CPU package's temperature (°C), or None where no sensor shows one."""
    root = sysfs or SYSFS
    found = []
    for hwmon in sorted(glob.glob(f"{root}/class/hwmon/hwmon*")):
        name = _read(f"{hwmon}/name")
        if name in PACKAGE_HWMONS:
            found += _hwmon_package_millic(hwmon, name)
    if not found:
        for zone in sorted(glob.glob(f"{root}/class/thermal/thermal_zone*")):
            if _read(f"{zone}/type") in PACKAGE_ZONES:
                value = _number(f"{zone}/temp")
                if value is not None:
                    found.append(value)
    return max(found) / 1000 if found else None


def mean_cur_freq_mhz(sysfs: str | None = None) -> float | None:
    """Every CPU's scaling_cur_freq (kHz), averaged, in MHz; None without cpufreq."""
    root = sysfs or SYSFS
    values = [_number(p) for p in
              glob.glob(f"{root}/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq")]
    values = [v for v in values if v is not None]
    return sum(values) / len(values) / 1000 if values else None


def throttle_counts(sysfs: str | None = None) -> dict[str, int]:
    """The thermal_throttle counters by name: each CPU's core count, each package's
    package count once (every CPU of a package repeats it)."""
    root = sysfs or SYSFS
    counts: dict[str, int] = {}
    for cpu in sorted(glob.glob(f"{root}/devices/system/cpu/cpu[0-9]*")):
        for path in sorted(glob.glob(f"{cpu}/thermal_throttle/*_throttle_count")):
            value = _number(path)
            if value is None:
                continue
            kind = os.path.basename(path)
            if kind.startswith("package"):
                package = _read(f"{cpu}/topology/physical_package_id") or os.path.basename(cpu)
                counts[f"package{package}/{kind}"] = value
            else:
                counts[f"{os.path.basename(cpu)}/{kind}"] = value
    return counts


@dataclass(frozen=True)
class ThermalState:
    """The CPU's temperature, frequency and throttle counters at one moment."""

    temp_c: float | None
    freq_mhz: float | None
    throttles: dict = field(default_factory=dict)

    @classmethod
    def now(cls, sysfs: str | None = None) -> ThermalState:
        return cls(package_temp_c(sysfs), mean_cur_freq_mhz(sysfs), throttle_counts(sysfs))


def run_fields(start: ThermalState, end: ThermalState) -> dict:
    """A run's record fields from its two ends: temperatures, the mean frequency (None
    unless both ends read one) and the throttle events (None without counters)."""
    freqs = (start.freq_mhz, end.freq_mhz)
    shared = set(start.throttles) & set(end.throttles)
    return {
        "package_temp_start_c": start.temp_c,
        "package_temp_end_c": end.temp_c,
        "cpu_freq_mhz": None if None in freqs else sum(freqs) / 2,
        "throttle_events": (sum(max(end.throttles[k] - start.throttles[k], 0) for k in shared)
                            if shared else None),
    }
