"""Threads as a factor (config threads: [1, 2, ...]): each codec's time and energy at each
thread count, and the passive energy of the cores a run leaves idle.

Multi-threaded and single-threaded codecs are compared on what the whole machine spends
on the same input: its time and its energy, active and passive. A codec that keeps one
core busy leaves the others idle, and the machine draws their idle power all the same,
for as long as the codec runs; running faster on more threads saves that part. The
passive energy of the cores left idle is a run's passive energy (the idle calibration's
power over its meter interval, measured) times the share of the cores it did not use,
(cores - threads) / cores: the idle power split evenly over the cores, an attribution
the report states, not a reading of each core.
"""

from __future__ import annotations

import math

from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.cell_summary import GROUP, is_estimated, verified_groups
from wattzip.stats import half_width, mean

METRICS = {"elapsed_s": "elapsed_s", "energy_j": "energy_j",
           "energy_passive_j": "energy_passive_j"}


def cores(run: dict) -> int | None:
    """The cores the run's machine had: the emulated machine's, else the hardware threads
    the estimate's coefficients scale by (every run records them)."""
    return run.get("machine_cpus") or run.get("model_threads") or None


def idle_cores_j(run: dict) -> float | None:
    """The run's passive energy attributed to the cores it left idle."""
    n, passive = cores(run), run.get("energy_passive_j")
    if not n or passive is None:
        return None
    used = min(int(run.get("threads") or 1) * int(run.get("copies") or 1), n)
    return passive * (n - used) / n


def threads_table(rows: list[dict], options: AnalysisOptions) -> list[dict]:
    """One row per cell and operation: the threads its runs used, the machine's cores,
    and the mean time, energy, passive energy and the idle cores' share of it, each with
    its half-width at options.confidence. The thread count of the setting is its factor
    column (added when the rows are labelled)."""
    groups = verified_groups(rows)
    out = []
    for key in groups:
        runs = groups[key]
        row = dict(zip(GROUP, key, strict=True))
        row.update(tool=runs[0].get("tool"), level=runs[0].get("level"), n=len(runs),
                   threads_used=max(int(r.get("threads") or 1) for r in runs),
                   cores=cores(runs[0]),
                   meter_method="estimated" if is_estimated(runs) else runs[0].get("meter_method"))
        values = {stem: [r[field] for r in runs if r.get(field) is not None]
                  for stem, field in METRICS.items()}
        values["idle_cores_j"] = [v for r in runs if (v := idle_cores_j(r)) is not None]
        for stem, xs in values.items():
            row[f"mean_{stem}"] = mean(xs) if xs else math.nan
            row[f"hw_{stem}"] = (half_width(xs, options.confidence) if len(xs) > 1
                                 else math.nan)
        out.append(row)
    return out
