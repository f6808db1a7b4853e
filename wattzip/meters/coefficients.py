"""The estimated-energy model's coefficients: watts per hardware thread, cited, matched.

Where a machine has no power meter, energy is estimated from CPU time with
coefficients derived from SPECpower_ssj2008 (Cloud Carbon Footprint's table, shipped
in wattzip/data/cpu_power_coefficients.csv with its source and licence), matched to
the CPU from /proc/cpuinfo's model name and scaled by the machine's hardware
threads. The formula, stated once here and in the report:

    E = n_threads * W_min * t + CPU-seconds * (W_max - W_min)

W_min and W_max per hardware thread, t the elapsed time, CPU-seconds the busy CPU
time of the whole machine. It leaves out the disk, memory and fans; SPECpower's
load levels are not the OS's utilisation; a vCPU is not one physical thread; and
SPECpower publishes no error bars: the one spread stated is the table's own range
(wattzip.analysis.uncertainty's model term; the verdicts at its extremes,
wattzip.analysis.robustness).
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from wattzip.errors import MeterError

TABLE = "cpu_power_coefficients.csv"
FAMILIES = "cpu_power_families.csv"
SOURCE = ("Cloud Carbon Footprint (Apache-2.0), ccf-coefficients output/coefficients-aws-use.csv "
          "at b0032d9, derived from SPECpower_ssj2008 results")


@dataclass(frozen=True)
class Coefficients:
    """Watts per hardware thread, where they come from, and the threads they scale by."""

    row: str  # the table's microarchitecture, an average of rows, or "config"
    min_w_per_thread: float
    max_w_per_thread: float
    threads: int
    source: str
    how: str  # matched, family average, overall average, config

    @property
    def idle_w(self) -> float:
        return self.threads * self.min_w_per_thread

    def energy_j(self, elapsed_s: float, cpu_busy_s: float) -> float:
        """E = n_threads * W_min * t + CPU-seconds * (W_max - W_min)."""
        return (self.threads * self.min_w_per_thread * elapsed_s
                + cpu_busy_s * (self.max_w_per_thread - self.min_w_per_thread))

    def record_fields(self, elapsed_s: float, cpu_busy_s: float) -> dict:
        """A run record's model_* fields and the estimate of a run's energy
        (estimated_energy_j), beside whatever the meter read, and the coefficients it was
        made with."""
        return {"model_row": self.row, "model_how": self.how,
                "model_min_w_per_thread": self.min_w_per_thread,
                "model_max_w_per_thread": self.max_w_per_thread,
                "model_threads": self.threads, "model_source": self.source,
                "estimated_energy_j": self.energy_j(elapsed_s, cpu_busy_s)}

    def describe(self) -> str:
        return (f"{self.row} ({self.how}): {self.min_w_per_thread:.2f}-"
                f"{self.max_w_per_thread:.2f} W per thread x {self.threads} threads; "
                f"{self.source}")


def _rows(name: str) -> list[dict]:
    text = resources.files("wattzip").joinpath("data", name).read_text()
    return list(csv.DictReader(io.StringIO("".join(
        line for line in text.splitlines(keepends=True) if not line.startswith("#")))))


@cache
def table() -> tuple[dict, ...]:
    rows = _rows(TABLE)
    for r in rows:
        r["min_w_per_thread"] = float(r["min_w_per_thread"])
        r["max_w_per_thread"] = float(r["max_w_per_thread"])
    return tuple(rows)


def cpu_model_name(cpuinfo: str = "/proc/cpuinfo") -> str:
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _average(rows: list[dict], name: str, how: str, threads: int) -> Coefficients:
    return Coefficients(
        row=name, threads=threads, how=how, source=SOURCE,
        min_w_per_thread=sum(r["min_w_per_thread"] for r in rows) / len(rows),
        max_w_per_thread=sum(r["max_w_per_thread"] for r in rows) / len(rows))


def match(model_name: str, threads: int | None = None) -> Coefficients:
    """The table's row for a CPU model name; a generic or unknown name gets its family's
    average, or the average of every row."""
    threads = threads or os.cpu_count() or 1
    rows = list(table())
    for r in rows:
        if re.search(r["match"], model_name, re.IGNORECASE):
            return Coefficients(r["microarchitecture"], r["min_w_per_thread"],
                                r["max_w_per_thread"], threads, SOURCE, "matched")
    for family in _rows(FAMILIES):
        if re.search(family["match"], model_name, re.IGNORECASE):
            members = [r for r in rows if r["family"] == family["family"]]
            return _average(members, f"{family['family']} average of {len(members)} rows",
                            f"{model_name!r} names no microarchitecture: its family's "
                            "average", threads)
    return _average(rows, f"average of all {len(rows)} rows",
                    f"{model_name!r} matches no row or family: the average of every row",
                    threads)


def extremes(threads: int) -> tuple[Coefficients, Coefficients]:
    """The table's rows with the lowest and the highest idle share W_min / W_max: what an
    estimated verdict depends on (scaling both coefficients changes no sign)."""
    rows = sorted(table(), key=lambda r: r["min_w_per_thread"] / r["max_w_per_thread"])
    return tuple(Coefficients(r["microarchitecture"], r["min_w_per_thread"],
                              r["max_w_per_thread"], threads, SOURCE, "table extreme")
                 for r in (rows[0], rows[-1]))


def configured(idle_power_w: float | None, max_power_w: float | None,
               threads: int | None = None, cpuinfo: str = "/proc/cpuinfo") -> Coefficients:
    """The config's whole-machine coefficients when given (an override), else the table's."""
    threads = threads or os.cpu_count() or 1
    if idle_power_w is None and max_power_w is None:
        return match(cpu_model_name(cpuinfo), threads)
    if idle_power_w is None or max_power_w is None:
        raise MeterError("model: give both coefficients, or neither to use the cited table "
                         "(meter.model.idle_power_w and max_power_w in a config, --model-idle-w "
                         "and --model-max-w on the command line)")
    if max_power_w < idle_power_w:
        raise MeterError(f"model: the full-load power ({max_power_w:g} W) is below the idle "
                         f"power ({idle_power_w:g} W)")
    return Coefficients("config", idle_power_w / threads, max_power_w / threads, threads,
                        "the testbed config (not a cited source)", "config")
