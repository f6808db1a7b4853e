"""The codec's own cost beside its I/O (config codec_only): each compress-write and
decompress-read split into the codec alone (its codec-only operation, from the page cache
to /dev/null: data/operations.csv) and the rest, the I/O; and the table in lzbench's
shape (codec and level, ratio, compression and decompression speed of the codec alone and
with its I/O, joules per GB of each), so that the numbers stand beside lzbench's,
TurboBench's and `zstd -b`'s, which time the codec alone, in memory.
"""

from __future__ import annotations

import math

from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.cell_summary import (
    CELL,
    GROUP,
    has_metric,
    is_estimated,
    key_of,
    verified_groups,
)
from wattzip.resources import operations
from wattzip.stats import mean, welch_interval

MB, GB = 1e6, 1e9  # lzbench's MB/s: 10^6 bytes a second
# Each codec-only operation and the I/O operation it splits (data/operations.csv).
SPLITS = {op: row["splits"] for op, row in operations().items() if row["region"] == "codec"}
# The lzbench-shaped table's four measured columns: compression and decompression, of
# the codec alone and with its I/O, each an operation.
LZBENCH_COLUMNS = {
    "compress_codec": "compress-only", "compress_io": "compress-write",
    "decompress_codec": "decompress-only", "decompress_io": "decompress-read",
}
SPLIT_METRICS = {"T": "elapsed_s", "E": "energy_j"}


def split_table(rows: list[dict], options: AnalysisOptions) -> list[dict]:
    """Per cell and I/O operation that has codec-only runs beside it: its mean time and
    energy, the codec's part (the codec-only operation's mean), and the I/O's part (the
    difference, with its Welch interval at options.confidence) and the codec's share."""
    groups = verified_groups(rows)
    out = []
    for key in groups:
        cell, op = key[:4], key[4]
        if op not in SPLITS or (*cell, SPLITS[op]) not in groups:
            continue
        cached, io = groups[key], groups[(*cell, SPLITS[op])]
        row = {**dict(zip(CELL, cell, strict=True)), "tool": io[0].get("tool"),
               "level": io[0].get("level"), "op": SPLITS[op], "codec_op": op,
               "n": min(len(cached), len(io)), "estimated": is_estimated(io + cached)}
        for metric, stem in SPLIT_METRICS.items():
            whole = [r[stem] for r in io if has_metric(r, stem)]
            alone = [r[stem] for r in cached if has_metric(r, stem)]
            if not whole or not alone:
                row.update({f"{metric}_{c}": math.nan for c in
                            ("total", "codec", "io", "io_lo", "io_hi", "codec_share")})
                continue
            part = welch_interval([(1, whole), (-1, alone)], options.confidence)
            total, codec = mean(whole), mean(alone)
            row.update({f"{metric}_total": total, f"{metric}_codec": codec,
                        f"{metric}_io": part.estimate, f"{metric}_io_lo": part.lo,
                        f"{metric}_io_hi": part.hi,
                        f"{metric}_codec_share": codec / total if total else math.nan})
        out.append(row)
    return out


def _per(amount: float, mean: float, hw: float) -> tuple[float, float, float]:
    """amount / mean with the interval of the mean (mean ± hw) carried through: the
    interval of a speed from its time's, of a per-GB energy from its energy's. An
    interval reaching zero gives an unbounded end; none (one run) gives NaN ends."""
    if not mean or math.isnan(mean):
        return math.nan, math.nan, math.nan
    if math.isnan(hw):
        return amount / mean, math.nan, math.nan
    low_end = mean - hw
    return amount / mean, amount / (mean + hw), amount / low_end if low_end > 0 else math.inf


def lzbench_table(summary: list[dict]) -> list[dict]:
    """One row per cell with a compress-write (testbed, setting, file type, codec): its
    compression ratio, and for each of LZBENCH_COLUMNS the speed in MB/s (input MB over the
    mean time) and the energy in J per GB of input, each with the interval its mean's
    half-width gives (cell_summary's, at the study's confidence); NaN where the study did
    not measure that operation (codec-only operations off, a tool that cannot stream)."""
    by = {key_of(s, GROUP): s for s in summary if s["n"]}
    out = []
    for key in sorted(by, key=lambda k: tuple(map(str, k))):
        if key[4] != "compress-write":
            continue
        write = by[key]
        mb = write["input_bytes"] * int(write.get("copies") or 1) / MB
        row = {**dict(zip(CELL, key[:4], strict=True)), "tool": write["tool"],
               "level": write["level"], "compression_ratio": write["compression_ratio"],
               "input_mb": mb}
        measured = []
        for column, op in LZBENCH_COLUMNS.items():
            s = by.get((*key[:4], op))
            if s is None:
                s = {"mean_elapsed_s": math.nan, "hw_elapsed_s": math.nan,
                     "mean_energy_j": math.nan, "hw_energy_j": math.nan}
            else:
                measured.append(s)
            speed = _per(mb, s["mean_elapsed_s"], s["hw_elapsed_s"])
            gb = mb * MB / GB
            low = s["mean_energy_j"] - s["hw_energy_j"]
            # energy is never below zero: an interval reaching it ends there (NaN stays)
            energy = [e / gb for e in (s["mean_energy_j"], 0.0 if low < 0 else low,
                                       s["mean_energy_j"] + s["hw_energy_j"])]
            row.update({f"{column}_mb_s": speed[0], f"{column}_mb_s_lo": speed[1],
                        f"{column}_mb_s_hi": speed[2], f"{column}_j_per_gb": energy[0],
                        f"{column}_j_per_gb_lo": energy[1],
                        f"{column}_j_per_gb_hi": energy[2]})
        row["estimated"] = any(s.get("meter_method") == "estimated" for s in measured)
        out.append(row)
    return out
