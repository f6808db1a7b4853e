"""The codec's own cost beside its I/O and the table in lzbench's shape (issue 80, items
2 and 4), from made-up runs: the numbers, their intervals and the Markdown cells."""

from __future__ import annotations

import math

import pytest

from wattzip.analysis import codec_cost
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.cell_summary import summarize
from wattzip.report import codec_cells
from wattzip.resources import operations, operations_where
from wattzip.stats import half_width

pytestmark = pytest.mark.pure
SIZE = 100_000_000  # 100 MB of input
TIMES = {"compress-write": [2.0, 2.2, 2.1], "compress-only": [0.5, 0.52, 0.48],
         "decompress-read": [1.0, 1.1, 1.05], "decompress-only": [0.25, 0.26, 0.24],
         "plain-write": [1.0, 1.0, 1.0], "plain-read": [0.8, 0.8, 0.8]}


def runs() -> list[dict]:
    out = []
    for op, times in TIMES.items():
        for i, t in enumerate(times, 1):
            out.append({"testbed": "tb", "setting": "s", "file_type": "silesia",
                        "codec": "plain" if op.startswith("plain") else "zstd-3",
                        "tool": "zstd", "level": "3", "op": op, "repeat": i,
                        "verified": True, "elapsed_s": t, "user_s": t, "sys_s": 0.0,
                        "wait_s": 0.0, "cpu_utilization": 1.0, "energy_j": 10 * t,
                        "energy_active_j": 4 * t, "energy_passive_j": 6 * t,
                        "input_bytes": SIZE, "copies": 1, "meter_method": "estimated",
                        "output_bytes": SIZE // 4 if op == "compress-write" else None})
    return out


def test_the_operations_are_declared_once_and_each_codec_only_one_splits_an_io_one():
    assert operations_where(region="io") == ("plain-write", "compress-write", "plain-read",
                                             "decompress-read")
    assert codec_cost.SPLITS == {"compress-only": "compress-write",
                                 "decompress-only": "decompress-read"}
    for op, io in codec_cost.SPLITS.items():
        assert operations()[op]["direction"] == operations()[io]["direction"]


def test_a_split_is_the_codec_s_mean_and_the_rest_with_welch_s_interval():
    options = AnalysisOptions()
    split = {r["op"]: r for r in codec_cost.split_table(runs(), options)}
    write = split["compress-write"]
    assert write["T_total"] == pytest.approx(2.1) and write["T_codec"] == pytest.approx(0.5)
    assert write["T_io"] == pytest.approx(1.6)
    assert write["T_io_lo"] < 1.6 < write["T_io_hi"]
    assert write["T_codec_share"] == pytest.approx(0.5 / 2.1)
    assert write["E_io"] == pytest.approx(16.0) and write["estimated"]
    assert set(split) == {"compress-write", "decompress-read"}  # no split of a plain arm


def test_lzbench_s_columns_are_input_mb_over_mean_time_and_joules_per_gb():
    [row] = codec_cost.lzbench_table(summarize(runs(), AnalysisOptions()))
    assert row["compression_ratio"] == pytest.approx(4.0)
    assert row["compress_codec_mb_s"] == pytest.approx(100 / 0.5)
    hw = half_width(TIMES["compress-only"])
    assert row["compress_codec_mb_s_lo"] == pytest.approx(100 / (0.5 + hw))
    assert row["compress_codec_mb_s_hi"] == pytest.approx(100 / (0.5 - hw))
    assert row["decompress_io_mb_s"] == pytest.approx(100 / 1.05)
    assert row["compress_io_j_per_gb"] == pytest.approx(21.0 / 0.1)
    assert row["estimated"]


def test_a_column_not_measured_is_empty_and_an_interval_reaching_zero_is_unbounded():
    no_codec_only = [r for r in runs() if operations()[r["op"]]["region"] == "io"]
    [row] = codec_cost.lzbench_table(summarize(no_codec_only, AnalysisOptions()))
    assert math.isnan(row["compress_codec_mb_s"]) and math.isnan(row["decompress_codec_j_per_gb"])
    assert codec_cost._per(100, 1.0, 2.0)[2] == math.inf
    cells = codec_cells.lzbench_rows([{**row, "primary": "true", "estimated": "true"}], " ")
    assert cells[0]["compress_codec_mb_s"] == "--"
    assert codec_cells.lzbench_rows([{**row, "primary": "true", "estimated": "true",
                                      "compress_io_mb_s_hi": math.inf}])[0][
        "compress_io_mb_s"].endswith(r"\,[unbounded]")


def test_a_per_gb_energy_s_interval_ends_at_zero():
    """A few noisy runs give a half-width beyond the mean: energy is never negative, so the
    interval's low end is zero, not below it."""
    noisy = [{**r, "energy_j": e} for r, e in zip(
        (r for r in runs() if r["op"] == "compress-only"), (1.0, 40.0, 2.0), strict=True)]
    [row] = codec_cost.lzbench_table(summarize(
        [r for r in runs() if r["op"] != "compress-only"] + noisy, AnalysisOptions()))
    assert row["compress_codec_j_per_gb_lo"] == 0.0
    assert row["compress_codec_j_per_gb_hi"] > row["compress_codec_j_per_gb"] > 0


def test_the_markdown_says_estimated_and_simulated_where_they_are():
    [row] = codec_cost.lzbench_table(summarize(runs(), AnalysisOptions()))
    text = codec_cells.lzbench_markdown([{**row, "primary": True, "simulated": True}], "95%")
    assert text.startswith("**SIMULATED") and "ESTIMATED energy" in text
    assert "| zstd-3 | silesia | 4.00 | 200.0 [" in text
    measured = codec_cells.lzbench_markdown([{**row, "primary": True, "estimated": False}],
                                            "95%")
    assert "SIMULATED" not in measured and "ESTIMATED" not in measured
