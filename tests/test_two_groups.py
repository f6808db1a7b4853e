"""An arm whose runs fall in two groups (a VM whose speed switches between levels): named
with each group's mean in the job's log, summary.csv, the report and `wattzip bench`."""

from __future__ import annotations

import random

import pytest

from wattzip import stats
from wattzip.analysis import cell_summary
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.measure import job_summary

from .test_runner import make_job

pytestmark = pytest.mark.pure

# Six runs at about 1.0 s and four at about 1.5 s: two speed levels.
TWO_LEVELS = [1.00, 1.01, 0.99, 1.02, 1.00, 0.98, 1.50, 1.52, 1.49, 1.51]


def test_two_speed_levels_are_two_groups_and_one_spread_is_not():
    groups = stats.two_groups(TWO_LEVELS)
    assert (groups.low_n, groups.high_n) == (6, 4)
    assert round(groups.low_mean, 3) == 1.0 and round(groups.high_mean, 3) == 1.505
    rng = random.Random(3)
    assert stats.two_groups([rng.gauss(1.0, 0.05) for _ in range(30)]) is None
    assert stats.two_groups(TWO_LEVELS[:4] + TWO_LEVELS[-3:]) is None  # too few runs
    assert stats.two_groups([1.0] * 9 + [2.0]) is None  # one run apart: an outlier


def runs_of(elapsed):
    return [{"testbed": "t", "setting": "s", "file_type": "text", "codec": "gz-1",
             "op": "compress-write", "repeat": i + 1, "verified": True, "elapsed_s": t,
             "energy_j": 10 * t, "input_bytes": 1, "output_bytes": 1}
            for i, t in enumerate(elapsed)]


def test_the_job_s_log_names_the_arm_and_the_groups_means(small_inputs, tmp_path):
    runs = runs_of(TWO_LEVELS)
    runs += [{**r, "op": "decompress-read", "elapsed_s": 0.2, "energy_j": 2.0}
             for r in runs]
    lines = []
    job = make_job(small_inputs, tmp_path, "gz-1", min=2, max=10)
    job_summary.summary(job, runs, lines.append)
    warned = [x for x in lines if x.startswith("warning:")]
    assert len(warned) == 1 and "text/gz-1 compress-write: its runs fall in two groups" \
        in warned[0]
    assert "elapsed_s: 6 runs around 1.000, 4 around 1.505" in warned[0]


def test_summary_csv_and_the_report_say_which_cell():
    rows = cell_summary.summarize(runs_of(TWO_LEVELS), AnalysisOptions())
    assert rows[0]["two_groups"].startswith("elapsed_s: 6 runs around 1.000, 4 around 1.505")
    said = cell_summary.describe_two_groups(rows)
    assert said.startswith("The runs of 1 cell(s) fall in two groups")
    assert "s text gz-1 compress-write (elapsed_s: 6 runs" in said
    assert cell_summary.describe_two_groups(
        cell_summary.summarize(runs_of([1.0] * 10), AnalysisOptions())) == ""


def test_wattzip_bench_exports_and_warns_of_two_groups():
    from wattzip.bench import summary
    from wattzip.bench.commands import Command

    runs = [{**r, "op": "0", "user_s": 0.1, "sys_s": 0.0, "exit_code": 0,
             "peak_rss_bytes": 1} for r in runs_of(TWO_LEVELS)]
    out = summary.summarize(Command("sleep 1", "sleep 1", {}), runs)
    assert out["two_groups"].startswith("elapsed_s: 6 runs around 1.000, 4 around 1.505")
