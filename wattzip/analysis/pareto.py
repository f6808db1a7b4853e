"""Pareto views of the trade-off: cost per GB of a write and n reads against the ratio.

A codec is on the front when no other (plain included, as compression off) costs no
more and compresses no less; the reads per write are the paper's server range and a
read-heavy workload.
"""

from __future__ import annotations

import math
from collections import defaultdict

# Reads per write of the Pareto views: one read, the common server ratios the paper
# names (2-4, its upper end), and a read-heavy workload.
PARETO_READS = (1, 4, 20)
GB = 1e9


def pareto_front(points: list[tuple[float, float]]) -> list[bool]:
    """For (cost, ratio) points: True where no other point costs no more and compresses
    no less, and is better in one of the two (lower cost, higher ratio is better)."""
    return [not any(c2 <= c and r2 >= r and (c2 < c or r2 > r) for c2, r2 in points)
            for c, r in points]


def pareto_table(summary: list[dict]) -> list[dict]:
    """Energy and time per GB of input for a write and n reads, against the ratio, with
    each (file type, n, metric)'s Pareto front marked; plain is compression off."""
    by = {(s["testbed"], s["setting"], s["file_type"], s["codec"], s["op"]): s
          for s in summary if s["n"]}
    cells = sorted({k[:4] for k in by}, key=lambda k: tuple(map(str, k)))
    out = []
    for metric, stem in (("energy_j_per_gb", "mean_energy_j"),
                         ("seconds_per_gb", "mean_elapsed_s")):
        for n in PARETO_READS:
            groups: dict[tuple, list[dict]] = defaultdict(list)
            for cell in cells:
                write, read = (("plain-write", "plain-read") if cell[3] == "plain"
                               else ("compress-write", "decompress-read"))
                w, r = by.get((*cell, write)), by.get((*cell, read))
                if not w or not r or math.isnan(w[stem]) or math.isnan(r[stem]):
                    continue
                gb = w["input_bytes"] * w.get("copies", 1) / GB
                groups[cell[:3]].append({
                    "testbed": cell[0], "setting": cell[1], "file_type": cell[2],
                    "codec": cell[3], "metric": metric, "reads": n,
                    "cost": (w[stem] + n * r[stem]) / gb,
                    "compression_ratio": w["compression_ratio"],
                    "estimated": metric.startswith("energy") and (
                        w["meter_method"] == "estimated"),
                })
            for rows in groups.values():
                front = pareto_front([(x["cost"], x["compression_ratio"]) for x in rows])
                for x, on in zip(rows, front, strict=True):
                    out.append({**x, "on_front": on})
    return out
