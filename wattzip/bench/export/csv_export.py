"""--export-csv: hyperfine's columns (command, mean, stddev, median, user, system, min,
max, then parameter_NAME), then the energy's, ending with the meter's method."""

from __future__ import annotations

import csv
import io

TIME_COLUMNS = ("command", "mean", "stddev", "median", "user", "system", "min", "max")
ENERGY_COLUMNS = ("energy_mean_j", "energy_stddev_j", "energy_median_j", "energy_min_j",
                  "energy_max_j", "energy_half_width_j", "energy_active_mean_j",
                  "energy_passive_mean_j", "mean_power_w")


def render(document: dict) -> str:
    results = document["results"]
    names = list(dict.fromkeys(k for r in results for k in r.get("parameters", {})))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*TIME_COLUMNS, *(f"parameter_{n}" for n in names), *ENERGY_COLUMNS,
                     "meter_method"])
    method = document["meter"]["method"]
    for r in results:
        writer.writerow([*("" if r[c] is None else r[c] for c in TIME_COLUMNS),
                         *(r.get("parameters", {}).get(n, "") for n in names),
                         *("" if r[c] is None else r[c] for c in ENERGY_COLUMNS), method])
    return out.getvalue()
