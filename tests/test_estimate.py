"""The estimated-energy model: cited coefficients, matched to the CPU, checked for robustness
and against a real meter."""

from __future__ import annotations

import csv
import os
import time

import pytest

from wattzip import meters, records
from wattzip.analysis import robustness, run_tables
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.measure import repeats
from wattzip.meters import coefficients

from .sysfs import publish
from .test_meters import powercap  # noqa: F401 (a fake RAPL tree, as the kernel has it)
from .test_runner import make_job

pytestmark = pytest.mark.pure


@pytest.mark.parametrize(("name", "row"), [
    ("Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz", "Skylake"),
    ("Intel(R) Xeon(R) Gold 6230R CPU @ 2.10GHz", "Cascade Lake"),
    ("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", "Ice Lake"),
    ("Intel(R) Xeon(R) CPU E5-2670 0 @ 2.60GHz", "Sandy Bridge"),
    ("Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz", "Haswell"),
    ("Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz", "Broadwell"),
    ("AMD EPYC 7571", "EPYC 1st Gen"),
    ("AMD EPYC 7R32", "EPYC 2nd Gen"),
    ("AMD EPYC 7763 64-Core Processor", "EPYC 3rd Gen"),
    ("AMD EPYC 9654 96-Core Processor", "EPYC 4th Gen"),
])
def test_real_cpu_model_names_map_to_their_rows(name, row):
    m = coefficients.match(name, 4)
    assert (m.row, m.how, m.threads) == (row, "matched", 4)
    assert 0 < m.min_w_per_thread < m.max_w_per_thread < 10
    assert "SPECpower" in m.source


def test_generic_names_get_their_family_s_or_the_overall_average():
    epyc = coefficients.match("AMD EPYC", 2)  # what this VM reports
    amd = [r for r in coefficients.table() if r["family"] == "amd"]
    assert epyc.row == f"amd average of {len(amd)} rows" and "family" in epyc.how
    assert epyc.min_w_per_thread == pytest.approx(
        sum(r["min_w_per_thread"] for r in amd) / len(amd))
    unknown = coefficients.match("QEMU Virtual CPU version 2.5+", 2)
    assert unknown.row.startswith("average of all") and "every row" in unknown.how


def test_the_formula_on_a_constant_load(tmp_path):
    """A quarter of all threads busy: E = n W_min t + CPU-s (W_max - W_min), CPU-s = n t / 4."""
    stat = tmp_path / "stat"
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6130 CPU\n")
    stat.write_text("cpu  1000 0 1000 8000 0 0 0 0 0 0\n")
    meter = meters.ModelMeter(meters.MeterOptions(proc_stat=str(stat), cpuinfo=str(cpuinfo),
                                                  interval_s=10))
    assert meter.model.row == "Skylake"
    meter.start()
    publish(stat, "cpu  1200 0 1050 8750 0 0 0 0 0 0\n")  # busy +250 of +1000
    time.sleep(0.2)
    reading = meter.stop()
    n, t, m = os.cpu_count(), reading.elapsed_s, meter.model
    expected = n * m.min_w_per_thread * t + (n * t / 4) * (m.max_w_per_thread - m.min_w_per_thread)
    assert reading.energy_j == pytest.approx(expected, rel=1e-6)
    assert meter.coefficients()["row"] == "Skylake"


def test_a_real_meter_beside_the_model_gives_the_comparison(small_inputs, tmp_path,
                                                            powercap):  # noqa: F811
    meter = meters.PowercapMeter(meters.MeterOptions(powercap_root=str(powercap),
                                                     interval_s=0.01))
    job = make_job(small_inputs, tmp_path, "gz-1", meter_identity=meter.identity(),
                   model=coefficients.match("Intel(R) Xeon(R) Gold 6130 CPU", 2))
    zone = powercap / "intel-rapl:0" / "energy_uj"

    def draw():  # 20 W on the package while the runs go on (the counter a meter reads)
        start, t0 = int(zone.read_text()), time.monotonic()
        wrap = int((zone.parent / "max_energy_range_uj").read_text())
        while not done:
            publish(zone, f"{(start + int(20e6 * (time.monotonic() - t0))) % wrap}\n")
            time.sleep(0.005)

    import threading
    done = False
    writer = threading.Thread(target=draw)
    writer.start()
    try:
        repeats.run_job(job, meter, tmp_path / "j.jsonl", log=lambda m: None)
    finally:
        done = True
        writer.join()
    runs = [records.flatten(r) for r in records.read_journal(tmp_path / "j.jsonl")]
    assert all(r["meter_method"] == "measured" and r["estimated_energy_j"] > 0 for r in runs)
    rows = robustness.model_check(runs)
    assert len(rows) == len(runs) + 1 and rows[-1]["codec"] == "mean |error| %"
    assert rows[-1]["model_row"] == "Skylake"
    for row in rows[:-1]:
        assert row["error_pct"] == pytest.approx(
            100 * (row["estimated_j"] - row["measured_j"]) / row["measured_j"])


def test_estimated_verdicts_carry_their_robustness_mark(small_inputs, tmp_path):
    journal = tmp_path / "j.jsonl"
    model = meters.ModelMeter(meters.MeterOptions(interval_s=0.05))
    for codec in ("plain", "gz-1"):
        job = make_job(small_inputs, tmp_path, codec, min=3, max=3,
                       meter_identity=model.identity({"idle_power_w": model.model.idle_w}),
                       model=model.model, idle_power_w=model.model.idle_w)
        repeats.run_job(job, model, journal, log=lambda m: None)
    out = tmp_path / "runs.csv"
    records.write_runs_csv(records.read_journal(journal), out)
    run_tables.analyze([str(out)], tmp_path / "tables", options=AnalysisOptions())
    with open(tmp_path / "tables" / "breakeven.csv", newline="") as f:
        be = list(csv.DictReader(f))
    marks = {b["metric"]: b["model_robustness"] for b in be}
    assert marks["T"] == "" and marks["E"] in (robustness.ROBUST, robustness.DEPENDS)
