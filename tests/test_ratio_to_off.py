"""Each write against compression off (wattzip.analysis.ratio_to_off): HPC '14's runtime /
off and energy / off as the ratio of the two means, with Fieller's interval."""

from __future__ import annotations

import math
import subprocess

import pytest

from wattzip.analysis import cell_summary
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.ratio_to_off import against, moments
from wattzip.latex import interval_tex

from .test_analysis import run

pytestmark = pytest.mark.pure

OPTIONS = AnalysisOptions()


def runs(file_type, codec, op, elapsed, testbed="tb"):
    """One run per elapsed time; energy 10 W times it, so energy / off equals runtime / off."""
    return [run(file_type, codec, op, 10.0 * t, elapsed_s=t, repeat=i + 1, testbed=testbed)
            for i, t in enumerate(elapsed)]


def by_cell(summary):
    return {(r["testbed"], r["file_type"], r["codec"], r["op"]): r for r in summary}


def test_each_write_is_held_against_plains_write_of_its_file_and_testbed():
    """Plain's write of the same file and testbed is off; a read, and a write whose file
    has no plain write, have no ratio; plain's own row is 1, with no interval."""
    rows = (runs("text", "plain", "plain-write", [2.0, 2.1, 1.9])
            + runs("text", "gz-1", "compress-write", [5.0, 5.2, 4.8])
            + runs("text", "gz-1", "decompress-read", [1.0, 1.1, 0.9])
            + runs("zero", "gz-1", "compress-write", [1.0, 1.1, 0.9])
            + runs("text", "plain", "plain-write", [9.0, 9.1, 8.9], testbed="other"))
    cells = by_cell(cell_summary.summarize(rows, OPTIONS))
    gz = cells["tb", "text", "gz-1", "compress-write"]
    assert gz["elapsed_vs_off"] == pytest.approx(2.5)
    assert gz["elapsed_vs_off_lo"] < 2.5 < gz["elapsed_vs_off_hi"]
    assert gz["energy_vs_off"] == pytest.approx(2.5)
    plain = cells["tb", "text", "plain", "plain-write"]
    assert plain["elapsed_vs_off"] == 1.0 and math.isnan(plain["elapsed_vs_off_lo"])
    for key in (("tb", "text", "gz-1", "decompress-read"), ("tb", "zero", "gz-1",
                                                            "compress-write")):
        assert math.isnan(cells[key]["elapsed_vs_off"]), key


def test_a_duty_cycle_is_held_against_plains_run_of_the_same_workload():
    rows = (runs("text", "plain", "write-compute", [40.0, 41.0, 39.0])
            + runs("text", "gz-1", "write-compute", [50.0, 51.0, 49.0])
            + runs("text", "plain", "plain-write", [4.0, 4.1, 3.9]))
    gz = by_cell(cell_summary.summarize(rows, OPTIONS))["tb", "text", "gz-1", "write-compute"]
    assert gz["energy_vs_off"] == pytest.approx(1.25)


def test_an_arm_of_one_run_gives_the_ratio_without_an_interval():
    ratio, lo, hi = against([5.0], [2.0, 2.1, 1.9], 0.95)
    assert ratio == pytest.approx(2.5) and math.isnan(lo) and math.isnan(hi)
    assert interval_tex(ratio, lo, hi, 2) == "2.50"


def test_fiellers_interval_is_where_the_t_statistic_of_the_ratio_reaches_r_s_quantile():
    """At each end r, (a - r b) / sqrt(va + r^2 vb) is R's qt at the confidence, with the
    smaller arm's degrees of freedom: the interval's definition, not its formula."""
    arm, off = [5.0, 5.6, 4.7, 5.3], [2.0, 2.3, 1.8]
    ratio, lo, hi = against(arm, off, 0.95)
    (a, va, dfa), (b, vb, dfb) = moments(arm), moments(off)
    q = float(subprocess.run(["Rscript", "-e", f"cat(qt(0.975, {min(dfa, dfb)}))"],
                             capture_output=True, text=True, check=True).stdout)
    for end, sign in ((lo, 1), (hi, -1)):
        assert (a - end * b) / math.sqrt(va + end * end * vb) == pytest.approx(sign * q)
    assert lo < ratio < hi


def test_an_off_that_cannot_be_told_from_zero_leaves_the_ratio_unbounded():
    ratio, lo, hi = against([5.0, 5.1, 4.9], [0.1, 2.0, -1.5], 0.95)
    assert (lo, hi) == (-math.inf, math.inf)
    assert interval_tex(ratio, lo, hi, 2).endswith(r"\,[unbounded]")


def test_the_cell_prints_the_ratio_and_its_interval():
    assert interval_tex(0.84, 0.801, 0.884, 2) == r"0.84\,[0.80, 0.88]"
    assert interval_tex("", "", "", 2) == "--"
    assert interval_tex("0.84", "Inf", "-Inf", 2) == r"0.84\,[unbounded]"
