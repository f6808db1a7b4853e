"""The evidence a check reads: one testbed's analysis tables and runs, seen from one setting.
"""

from __future__ import annotations

import copy
import functools
from collections import defaultdict
from dataclasses import dataclass

from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.claims.registry import Claim, Outcome
from wattzip.analysis.reference import read_reference
from wattzip.meters.base import sees_whole_machine
from wattzip.records import FACTOR_COLUMNS
from wattzip.resources import ReferenceDir, reference_file
from wattzip.stats import Interval, welch_interval

# Per-run quantities a check may read beside a run's own columns (Evidence.values): the
# energy-delay product (SYSTOR '09's ET) and the machine's CPU utilization (all CPUs'
# busy time over the run's, HPC '14's "CPU Util.", compression inside the kernel included).
DERIVED = {
    "et": lambda r: r["energy_j"] * r["elapsed_s"]
    if r.get("energy_j") is not None and r.get("elapsed_s") is not None else None,
    "machine_cpu_utilization": lambda r: r["cpu_busy_s"] / r["elapsed_s"]
    if r.get("cpu_busy_s") is not None and r.get("elapsed_s") else None,
}


@dataclass
class Evidence:
    """The analysis tables and runs of one testbed, seen from one setting (or all)."""

    testbed: str
    setting: str | None
    summary: list[dict]
    breakeven: list[dict]
    correlation: list[dict]
    runs: list[dict]
    reference_dir: ReferenceDir | None
    options: AnalysisOptions  # the study's: the checks decide by its levels
    # The comparisons the check decides from, each held at alpha / family (Bonferroni):
    # wattzip.analysis.claims.checked runs a check until this is their number.
    family: int = 1
    # The codecs a claim is about (the paper's tools: claims.scope), None: every codec
    # measured. codecs() lists these alone, so that a "no tool" claim is decided on them.
    codec_scope: frozenset[str] | None = None

    def __post_init__(self) -> None:
        self.comparisons = 0  # the intervals the check has asked for so far
        self._values: dict[tuple, list[dict]] = defaultdict(list)
        for r in self.runs:
            if r.get("verified") and r.get("testbed") == self.testbed:
                self._values[(r["setting"], r["file_type"], r["codec"], r["op"])].append(r)

    def with_family(self, family: int) -> Evidence:
        """The same evidence for a check held to a family of `family` comparisons, its
        count started anew (the runs' index is shared, not built again)."""
        trial = copy.copy(self)
        trial.family, trial.comparisons = family, 0
        return trial

    def in_setting(self, rows: list[dict], setting: str | None = None) -> list[dict]:
        setting = setting or self.setting
        return [r for r in rows if r["testbed"] == self.testbed and r["setting"] == setting]

    def summary_row(self, file_type, codec, op, setting=None) -> dict | None:
        for r in self.in_setting(self.summary, setting):
            if (r["file_type"], r["codec"], r["op"]) == (file_type, codec, op) and r["n"]:
                return r
        return None

    def budgets(self, setting: str) -> set[str]:
        """How a setting's emulated disk gave out its bandwidth (runs' bandwidth_budget):
        "one for reads and writes", "each device's reads and writes apart"."""
        return {r["bandwidth_budget"] for rows in self._values.values() for r in rows
                if r["setting"] == setting and r.get("bandwidth_budget")}

    def cell(self, file_type, codec, metric, setting=None) -> dict | None:
        for r in self.in_setting(self.breakeven, setting):
            if (r["file_type"], r["codec"], r["metric"]) == (file_type, codec, metric):
                return r
        return None

    def values(self, file_type, codec, op, metric="energy_j", setting=None) -> list[float]:
        runs = self._values.get((setting or self.setting, file_type, codec, op), [])
        get = DERIVED.get(metric, lambda r: r.get(metric))
        return [v for r in runs if (v := get(r)) is not None]

    def comparison_level(self, count: int = 1) -> float:
        """The confidence of `count` more of the check's intervals, counted: alpha split
        over the check's family of comparisons (Bonferroni) and, under the verdict
        design, over the planned looks the runs stopped at, so that the claim's verdict
        holds at the study's confidence, not at each comparison's."""
        self.comparisons += count
        return 1 - self.options.alpha / (max(self.family, 1) * max(self.options.looks, 1))

    def difference(self, a: tuple, b: tuple, metric="energy_j", setting_a=None,
                   setting_b=None) -> Interval:
        """Interval of mean(a) - mean(b), a and b (file type, codec, op), one comparison
        of the check's family."""
        return self.sum_difference([a], [b], metric, setting_a, setting_b)

    def sum_difference(self, a: list[tuple], b: list[tuple], metric="energy_j",
                       setting_a=None, setting_b=None) -> Interval:
        """Interval of the sum of a's means less the sum of b's, each (file type, codec,
        op): one write and one read of a codec against another's, one comparison."""
        return welch_interval([(1, self.values(*k, metric, setting=setting_a)) for k in a]
                              + [(-1, self.values(*k, metric, setting=setting_b)) for k in b],
                              self.comparison_level())

    def codecs(self, all_codecs: bool = False) -> list[str]:
        """The codecs measured in the setting, those of codec_scope alone unless
        `all_codecs`."""
        found = {r["codec"] for r in self.in_setting(self.summary) if r["codec"] != "plain"}
        if self.codec_scope is not None and not all_codecs:
            found &= self.codec_scope
        return sorted(found)

    def file_types(self) -> list[str]:
        return sorted({r["file_type"] for r in self.in_setting(self.summary)})

    @functools.cached_property
    def settings(self) -> list[str]:
        return list(self.setting_factors)

    @functools.cached_property
    def setting_factors(self) -> dict[str, dict]:
        """Each setting's factor columns (and primary flag), as the summary carries them."""
        out = {}
        for r in self.summary:
            if r["testbed"] == self.testbed:
                out.setdefault(r["setting"], {k: r.get(k) for k in (*FACTOR_COLUMNS,
                                                                     "primary")})
        return out

    def reference(self, name: str) -> list[dict]:
        return read_reference(reference_file(f"{name}.csv", self.reference_dir))[1]

    def _rows(self) -> list[dict]:
        rows = self.summary if self.setting is None else self.in_setting(self.summary)
        return [r for r in rows if r["testbed"] == self.testbed]

    def estimated(self) -> bool:
        return any(r.get("meter_method") == "estimated" for r in self._rows())

    def narrower_scope(self) -> str | None:
        """The scope of a meter that saw less than the whole machine (RAPL's CPU package
        and DRAM), if one measured the runs read: the papers' energy was whole-machine
        power at the wall, so such energy cannot be set beside theirs."""
        return next((r["meter_scope"] for r in self._rows() if r.get("meter_scope")
                     and r.get("meter_method") == "measured"
                     and not sees_whole_machine(r["meter_scope"])), None)


def factor_settings(ev: Evidence, factor: str) -> dict[str, str]:
    """Each value of one factor (a FACTOR_COLUMNS column) -> the setting that has it and the
    primary setting's values of every other factor, so that a comparison changes that factor
    alone. Unset values (no cap, "keep") are left out."""
    info = ev.setting_factors
    primary = next((f for f in info.values() if f.get("primary")), None)
    if primary is None:
        return {}
    others = [f for f in FACTOR_COLUMNS if f != factor]
    out = {}
    for name, f in info.items():
        if all(str(f.get(o)) == str(primary.get(o)) for o in others):
            value = f.get(factor)
            if value not in (None, "", "keep"):
                out[str(value)] = name
    return out


def first_measured(by: dict[str, str], value) -> str | None:
    """Of a claim's factor value, or its list of alternatives (the highest frequency:
    [highest, performance]), the first that `by` (factor_settings) has; None if none."""
    return next((str(v) for v in (value if isinstance(value, list) else [value])
                 if str(v) in by), None)


def shown_value(value) -> str:
    """A claim's factor value, or its alternatives as "highest or performance"."""
    return " or ".join(map(str, value)) if isinstance(value, list) else str(value)


def _cell_name(b: dict) -> str:
    return f"{b['file_type']} {b['codec']} {b['metric']}"


def _fmt(cells: list[dict]) -> str:
    return "; ".join(f"{b['file_type']} {b['codec']} {b['display']}" for b in cells)


def _needs(claim: Claim, what: str) -> Outcome:
    return Outcome(None, why=f"needs {what} ({claim.overlay})")


def _all_of(parts: list[bool | None], missing: list[str]) -> bool | None:
    """A claim of several parts: refuted by one part decided against it, held only when
    every part it names was measured and decided for it."""
    if False in parts:
        return False
    return None if missing or None in parts or not parts else True


def _unmeasured(missing: list[str]) -> str:
    return "not measured: " + ", ".join(missing)


def _sign(iv: Interval) -> int | None:
    """+1 or -1 when the interval excludes zero, else None (undecided)."""
    return 1 if iv.lo > 0 else -1 if iv.hi < 0 else None
