"""The energy budget, term by term, with meters that behave like the hardware's interfaces:
a sampling meter whose power steps inside the run, a logger that writes each record late."""

from __future__ import annotations

import math
import threading
import time

import pytest

from wattzip.analysis import cell_summary, uncertainty, verdicts
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.meters import MeterOptions
from wattzip.meters.base import PowerSampleMeter, integrate_averages
from wattzip.meters.coefficients import Coefficients, table
from wattzip.stats import half_width, stdev

pytestmark = pytest.mark.pure

SQRT3 = math.sqrt(3)


def runs(energies, source="wattsup", seconds=10.0, method="measured", **extra):
    return [{"energy_j": e, "elapsed_s": seconds, "meter_interval_s": seconds,
             "energy_passive_j": 50.0 * seconds, "energy_active_j": e - 50.0 * seconds,
             "meter_source": source, "meter_method": method, "verified": True, **extra}
            for e in energies]


def test_the_accuracy_table_cites_a_source_for_every_stated_number():
    table_ = uncertainty.accuracies()
    assert table_["wattsup"].rel == 0.015 and table_["wattsup"].abs_w == 0.3
    assert table_["ipmi"].abs_w == 0.5 and table_["ipmi"].update_interval_s == 1.0
    assert table_["powercap"].rel is None  # Intel states none: said, not guessed
    for acc in table_.values():
        if acc.rel or acc.abs_w:
            assert acc.source


def test_repeat_term_is_the_standard_error_of_the_mean():
    energies = [1000.0, 1010.0, 990.0, 1005.0]
    b = uncertainty.budget(runs(energies), "energy_j")
    assert b.components["repeat"] == pytest.approx(stdev(energies) / 2)


def test_meter_term_is_the_stated_accuracy_as_a_rectangle_and_does_not_average_away():
    few = uncertainty.budget(runs([1000.0] * 3), "energy_j")
    many = uncertainty.budget(runs([1000.0] * 30), "energy_j")
    expected = math.hypot(0.015 * 1000, 0.3 * 10) / SQRT3  # 1.5 % + 3 counts over 10 s
    assert few.components["meter"] == pytest.approx(expected)
    assert many.components["meter"] == pytest.approx(expected)
    assert few.dominant == "meter"  # no spread at all: the meter is what limits us
    # Active energy is a difference of the same meter's readings: the offset cancels.
    active = uncertainty.budget(runs([1000.0] * 3), "energy_active_j")
    assert active.components["meter"] == pytest.approx(0.015 * 500 / SQRT3)


def test_a_meter_with_no_stated_accuracy_is_named_not_guessed():
    b = uncertainty.budget(runs([100.0, 101.0, 99.0], source="powercap"), "energy_j")
    assert any("states no gain accuracy" in n for n in b.notes)


class SteppingMeter(PowerSampleMeter):
    """A sampling meter on a true power that steps from 50 W to 150 W inside the run,
    read every `interval_s` like IPMI's DCMI reading (whole watts)."""

    name = "ipmi"

    def __init__(self, step_after_s: float, interval_s: float):
        super().__init__(MeterOptions())
        self.scope, self.step_after_s, self.interval_s = "wall", step_after_s, interval_s

    def true_power(self, t: float) -> float:
        return 150.0 if t - self._start >= self.step_after_s else 50.0

    def _begin(self) -> None:
        self._start, self._halt = time.monotonic(), threading.Event()

        def poll():
            while True:
                now = time.monotonic()
                self._append(round(self.true_power(now)), now)
                if self._halt.wait(self.interval_s):
                    return

        self._thread = threading.Thread(target=poll, daemon=True)
        self._thread.start()

    def _end(self, t1: float) -> None:
        self._halt.set()
        self._thread.join()


def test_sampling_term_covers_a_power_step_between_two_readings():
    meter = SteppingMeter(step_after_s=0.23, interval_s=0.1)
    meter.start()
    time.sleep(0.5)
    reading = meter.stop()
    t0, t1 = meter._t0, meter._t0 + reading.elapsed_s
    step_at = meter._start + meter.step_after_s
    truth = 50.0 * (step_at - t0) + 150.0 * (t1 - step_at)
    gap, steps = uncertainty.sampling_terms(reading.samples)
    run = {"energy_j": reading.energy_j, "sample_gap_s": gap, "power_step_rss_w": steps,
           "meter_interval_s": reading.elapsed_s}
    u = uncertainty.run_sampling_u(run, uncertainty.accuracy("ipmi"))
    # IPMI's update interval (1 s) is what the term uses, not the faster polling.
    assert steps == pytest.approx(100.0) and u == pytest.approx(1.0 * 100 / (2 * SQRT3))
    assert abs(reading.energy_j - truth) <= 2 * u
    flat = uncertainty.run_sampling_u({**run, "power_step_rss_w": 0.0},
                                      uncertainty.accuracy("ipmi"))
    assert flat == 0.0  # a constant power is integrated exactly


def test_sampling_term_of_a_lagging_averaging_logger():
    """A WattsUp writes each second's mean power a second late; the run starts and ends
    between records, and the power steps inside the run."""
    def power(t):
        return 80.0 if t < 2.4 else 120.0

    t0, t1 = 0.3, 4.7
    records = []
    for k in range(1, 7):  # the mean of (k-1, k], arriving at k
        grid = [k - 1 + i / 1000 for i in range(1000)]
        records.append((float(k), sum(map(power, grid)) / 1000))
    energy = integrate_averages(records, t0, t1, 1.0)
    truth = 80.0 * (2.4 - t0) + 120.0 * (t1 - 2.4)
    gap, steps = uncertainty.sampling_terms(records)
    u = uncertainty.run_sampling_u({"energy_j": energy, "sample_gap_s": gap,
                                    "power_step_rss_w": steps},
                                   uncertainty.accuracy("wattsup"))
    assert 0 < abs(energy - truth) <= 2 * u


def test_counter_term_is_the_update_interval_at_each_edge():
    run = {"energy_j": 100.0, "meter_interval_s": 2.0}  # 50 W on RAPL's 1 ms counter
    u = uncertainty.run_sampling_u(run, uncertainty.accuracy("powercap"))
    assert u == pytest.approx(math.sqrt(2) * 50 * 0.001 / SQRT3)


def test_idle_term_enters_the_split_not_the_total():
    mine = runs([1000.0, 1001.0, 999.0], idle_power_u_w=1.0, idle_windows=10)
    total = uncertainty.budget(mine, "energy_j")
    passive = uncertainty.budget(mine, "energy_passive_j")
    active = uncertainty.budget(mine, "energy_active_j")
    assert total.components["idle"] == 0.0
    assert passive.components["idle"] == pytest.approx(1.0 * 10)
    assert active.components["idle"] == pytest.approx(1.0 * 10)
    assert passive.dominant == "idle"
    unknown = uncertainty.budget(runs([1000.0, 1001.0]), "energy_passive_j")
    assert any("idle power's interval" in n for n in unknown.notes)


def test_model_term_is_the_coefficient_tables_range():
    mine = runs([0.0] * 3, source="model", method="estimated", cpu_busy_s=5.0,
                model_threads=2)
    for r in mine:
        r["energy_j"] = Coefficients("x", 5.0, 15.0, 2, "", "").energy_j(10.0, 5.0)
    b = uncertainty.budget(mine, "energy_j")
    values = [Coefficients("r", r["min_w_per_thread"], r["max_w_per_thread"], 2, "", "")
              .energy_j(10.0, 5.0) for r in table()]
    assert b.components["model"] == pytest.approx((max(values) - min(values)) / (2 * SQRT3))
    assert b.components["meter"] == 0.0 and b.dominant == "model"


def test_combined_interval_is_never_narrower_than_the_repeats():
    energies = [1000.0, 1030.0, 985.0, 1012.0]
    b = uncertainty.budget(runs(energies), "energy_j")
    assert b.combined == pytest.approx(math.sqrt(sum(
        u * u for u in b.components.values() if not math.isnan(u))))
    assert b.expanded >= half_width(energies)


def summary_rows(energies):
    """One cell's runs as the analysis reads them (a wattsup meter, 10 s each)."""
    return [dict(r, testbed="t", setting="s", file_type="text", codec="gz-1",
                 op="compress-write", repeat=i, input_bytes=1, user_s=1.0, sys_s=0.0,
                 wait_s=9.0, cpu_utilization=0.1)
            for i, r in enumerate(runs(energies), 1)]


def test_summary_names_the_dominant_term():
    rows = summary_rows([1000.0, 1001.0, 1000.5])
    (row,) = cell_summary.summarize(rows, AnalysisOptions())
    assert row["dominant_energy_j"] == "meter"
    assert row["U_energy_j"] > row["hw_energy_j"]


def test_energy_delay_has_a_budget_of_each_runs_energy_errors_times_its_time():
    rows = summary_rows([1000.0, 1001.0, 1000.5])
    (row,) = cell_summary.summarize(rows, AnalysisOptions())
    e_meter, t = row["u_energy_j_meter"], rows[0]["elapsed_s"]
    # every run lasted t: ET's meter term is E's times t, and it dominates as E's does
    assert row["u_et_js_meter"] == pytest.approx(e_meter * t)
    assert row["dominant_et_js"] == "meter" and row["U_et_js"] > row["hw_et_js"]


def test_verdict_decides_on_the_combined_interval():
    w, c, r, d = [100.0, 101.0, 99.0], [96.0, 97.0, 95.0], [50.0] * 3, [50.0] * 3
    rules = {"reads_per_write": 1.0, "margin": 0.001, "confidence": 0.95}
    plain = verdicts.decide(w, c, r, d, **rules)
    combined = verdicts.decide(w, c, r, d, **rules, type_b_var=4.0)
    assert combined.hi - combined.lo > plain.hi - plain.lo
    assert plain.verdict == verdicts.SAVES and combined.verdict == verdicts.UNDECIDED


def test_estimated_differences_leave_the_model_range_to_the_robustness_check():
    def est(energy):
        return runs([energy] * 3, source="model", method="estimated", cpu_busy_s=5.0,
                    model_threads=2)

    # The model's own counter term only: no meter accuracy, no coefficient range.
    var = uncertainty.type_b_variance([(1, est(100.0)), (-1, est(80.0))], "energy_j")
    assert var < 0.01


def test_the_report_names_the_budgets_largest_term():
    said = uncertainty.describe_dominant([{"dominant_energy_j": "meter"},
                                          {"dominant_energy_j": "repeat"},
                                          {"dominant_energy_j": "meter"}])
    assert "the meter's stated accuracy in 2, the repeats' spread in 1 of 3 groups" in said
    assert uncertainty.describe_dominant([{"dominant_energy_j": ""}]) == ""


def test_et_carries_each_runs_energy_errors_times_its_time():
    """ET = E T: a run's energy errors (the meter's gain and offset, its sampling) enter
    ET's difference times that run's time, by hand here."""
    gap, step = 1.0, 12.0
    a = runs([100.0] * 3, seconds=10.0, sample_gap_s=gap, power_step_rss_w=step)
    b = runs([80.0] * 2, seconds=20.0, sample_gap_s=gap, power_step_rss_w=step)
    value = 100.0 * 10.0 - 80.0 * 20.0
    seconds = 10.0 * 10.0 - 20.0 * 20.0
    meter = math.hypot(0.015 * value, 0.3 * seconds) / SQRT3
    per_run = gap * step / (2 * SQRT3)  # each run's sampling term in joules
    sampling = 3 * (per_run * 10.0) ** 2 / 3 ** 2 + 2 * (per_run * 20.0) ** 2 / 2 ** 2
    var = uncertainty.type_b_variance([(1, a), (-1, b)], "et_js")
    assert var == pytest.approx(meter ** 2 + sampling)
    assert uncertainty.type_b_variance([(1, a), (-1, b)], "elapsed_s") == 0.0
