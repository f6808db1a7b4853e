"""The verdict design's decision procedure, simulated against a known truth."""

from __future__ import annotations

import numpy as np
import pytest

from wattzip import stats
from wattzip.analysis import verdicts
from wattzip.analysis.analysis_options import AnalysisOptions

pytestmark = pytest.mark.pure

MEANS = {"w": 10.0, "r": 5.0}  # plain write and read; the codec's arms set the truth
RULES = {"reads_per_write": 1.0, "margin": 0.02}  # one read per write, a 2% margin


def arms(rng, truth_fraction, cv, n):
    """Runs of the four arms whose true saving S is truth_fraction of the baseline (n=1)."""
    baseline = MEANS["w"] + MEANS["r"]
    c = 8.0 - truth_fraction * baseline / 2
    d = 7.0 - truth_fraction * baseline / 2  # S = (10 + 5) - (c + d) = truth * baseline
    return [list(rng.normal(m, cv * m, n)) for m in (MEANS["w"], c, MEANS["r"], d)]


@pytest.mark.parametrize("cv", [0.02, 0.05, 0.10])
@pytest.mark.parametrize("truth", [0.08, -0.08, 0.0])
def test_wrong_decisions_stay_under_five_percent_whichever_look_stops(cv, truth):
    """Saves where compression truly costs (or saves nothing), costs where it truly saves
    (or costs nothing), with looks at n = 3, 5, 8 per arm, each at alpha/3."""
    rng = np.random.default_rng(2009)
    trials, wrong, undecided = 400, 0, 0
    for _ in range(trials):
        runs = arms(rng, truth, cv, 8)
        for n in (3, 5, 8):  # stop at the first look that decides
            verdict = verdicts.decide(*[a[:n] for a in runs], **RULES,
                                      confidence=verdicts.look_confidence(0.95, 3))
            if verdict.verdict != verdicts.UNDECIDED:
                break
        wrong_side = {verdicts.COSTS} if truth > 0 else {verdicts.SAVES} if truth < 0 else {
            verdicts.SAVES, verdicts.COSTS}
        wrong += verdict.verdict in wrong_side
        undecided += verdict.verdict == verdicts.UNDECIDED
    assert wrong / trials <= 0.05
    print(f"cv {cv:.0%} truth {truth:+.0%}: wrong {wrong / trials:.1%}, "
          f"undecided {undecided / trials:.1%}")


def test_the_four_verdicts_and_the_repeats_an_undecided_one_needs():
    rng = np.random.default_rng(1)
    def decide(*arms):
        return verdicts.decide(*arms, confidence=0.95, **RULES)

    assert decide(*arms(rng, 0.2, 0.01, 5)).verdict == verdicts.SAVES
    assert decide(*arms(rng, -0.2, 0.01, 5)).verdict == verdicts.COSTS
    assert decide(*arms(rng, 0.0, 0.001, 5)).verdict == verdicts.NEGLIGIBLE
    open_ = decide(*arms(rng, 0.05, 0.15, 3))
    assert open_.verdict == verdicts.UNDECIDED and open_.more_repeats >= 1
    assert "more repeats per arm" in open_.describe()


def test_fieller_is_unbounded_when_the_read_saving_reaches_zero():
    lo, hi = stats.fieller((2.0, 0.01, 10), (1.0, 0.01, 10))
    assert lo < 2.0 < hi and 0.9 < hi - lo < 1.2  # delta method: 2 x 2.23 x sqrt(0.05)
    assert stats.fieller((2.0, 0.01, 10), (0.1, 0.01, 10)) is None  # undetermined
    assert verdicts.look_confidence(0.95, 3) == pytest.approx(1 - 0.05 / 3)


def test_outliers_and_noisy_cells_are_flagged_not_dropped():
    from wattzip.analysis import cell_summary

    from .test_analysis import cell

    rows = cell("text", "gz-1", 100, 150, 80, 60, n=7, spread=1)
    writes = [r for r in rows if r["op"] == "compress-write"]
    writes[3]["elapsed_s"] *= 3  # one run the machine disturbed
    summary = {(s["codec"], s["op"]): s for s in cell_summary.summarize(rows, AnalysisOptions())}
    noisy = summary[("gz-1", "compress-write")]
    assert noisy["outlier_repeats"] == str(writes[3]["repeat"]) and noisy["n"] == 7
    assert noisy["cv_warning"] is True
    assert summary[("plain", "plain-write")]["outlier_repeats"] == ""
