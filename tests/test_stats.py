import math

import pytest
from scipy import stats

from wattzip import stats as st

pytestmark = pytest.mark.pure


@pytest.mark.parametrize("df", [1, 2, 4, 9, 29, 200])
@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995])
def test_t_quantile_matches_scipy(df, p):
    assert st.t_ppf(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-9)


def test_half_width_matches_scipy_interval():
    xs = [10.2, 9.8, 10.5, 10.1, 9.9, 10.4]
    lo, hi = stats.t.interval(0.95, len(xs) - 1, loc=st.mean(xs), scale=stats.sem(xs))
    assert st.half_width(xs) == pytest.approx((hi - lo) / 2, rel=1e-9)


def test_half_width_undefined_for_one_value():
    assert math.isnan(st.half_width([3.0]))


def test_repeat_rule_min_then_target_then_max():
    tight = {"elapsed": [10.0, 10.01, 9.99], "energy": [100.0, 100.1, 99.9]}
    loose = {"elapsed": [10.0, 14.0, 6.0], "energy": [100.0, 100.1, 99.9]}
    assert st.need_more_repeats({"elapsed": [1.0, 1.0]}, 3, 10, 0.05)  # below min
    assert not st.need_more_repeats(tight, 3, 10, 0.05)  # target met
    assert st.need_more_repeats(loose, 3, 10, 0.05)  # one series too wide
    assert not st.need_more_repeats(loose, 3, 3, 0.05)  # max reached


def test_pearson_matches_scipy():
    xs = [1.0, 2.0, 3.5, 4.0, 7.0]
    ys = [2.1, 3.9, 7.2, 8.1, 13.8]
    assert st.pearson_r(xs, ys) == pytest.approx(stats.pearsonr(xs, ys)[0], rel=1e-12)
