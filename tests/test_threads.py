"""Threads as a factor (issue 80, item 3), from configs and made-up runs: a list of thread
counts is a setting each, the multi-threaded codecs run at every count and the
single-threaded ones once, a single value stays what it was, and the passive energy of
the cores a run leaves idle."""

from __future__ import annotations

import pytest

from wattzip.analysis import threads
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.errors import ConfigError
from wattzip.model.config import validate

from .test_design import BASE, study

pytestmark = pytest.mark.pure


def test_a_list_of_threads_is_a_setting_each_and_single_threaded_codecs_run_once():
    s = study(codecs=["zstdmt-3", "pigz-6", "gz-1"], threads=[1, 2], file_types=["text"])
    assert list(s.settings) == ["default.io-keep.gov-keep.x1.threads-1",
                                "default.io-keep.gov-keep.x1.threads-2"]
    assert "threads" in s.varied_factors
    jobs = {(s.settings[j.setting].threads, j.codec) for j in s.jobs("tb")}
    assert jobs == {(1, "zstdmt-3"), (1, "pigz-6"), (1, "gz-1"), (1, "plain"),
                    (2, "zstdmt-3"), (2, "pigz-6"), (2, "plain")}
    specs = {(j.setting, j.codec): s.job_spec(j)["threads"] for j in s.jobs("tb")}
    assert specs[("default.io-keep.gov-keep.x1.threads-2", "pigz-6")] == 2
    assert s.settings_rows()[1]["threads"] == 2


def test_one_value_of_threads_names_no_setting_after_it_and_both_forms_validate():
    one = study(threads=4)
    assert list(one.settings) == ["default.io-keep.gov-keep.x1"]
    assert one.job_spec(one.jobs("tb")[0])["threads"] == 4 and not one.varied_factors
    for value in (0, 3, [1, 2, 4]):
        validate({**BASE, "threads": value}, "test")
    for wrong in (-1, [], [1, 1], ["2"]):
        with pytest.raises(ConfigError, match="threads"):
            validate({**BASE, "threads": wrong}, "test")


def run(op: str, used: int, passive: float, **kw) -> dict:
    return {"testbed": "tb", "setting": "s", "file_type": "text", "codec": "pigz-6",
            "tool": "pigz", "level": "6", "op": op, "verified": True, "threads": used,
            "copies": 1, "model_threads": 4, "elapsed_s": 1.0, "energy_j": 30.0,
            "energy_passive_j": passive, "meter_method": "estimated", **kw}


def test_the_idle_cores_passive_energy_is_their_share_of_the_passive_energy():
    assert threads.idle_cores_j(run("compress-write", 1, 20.0)) == pytest.approx(15.0)
    assert threads.idle_cores_j(run("compress-write", 4, 20.0)) == 0.0
    assert threads.idle_cores_j(run("compress-write", 2, 20.0, machine_cpus=2)) == 0.0
    assert threads.idle_cores_j(run("compress-write", 1, None)) is None
    rows = [run("compress-write", 2, p) for p in (20.0, 22.0)]
    [row] = threads.threads_table(rows, AnalysisOptions())
    assert (row["threads_used"], row["cores"], row["meter_method"]) == (2, 4, "estimated")
    assert row["mean_idle_cores_j"] == pytest.approx(10.5)
    assert row["hw_idle_cores_j"] > 0
