"""Claims over many cells at a stated family-wise confidence (Holm), and undecided cells
that say whether the study could have seen an effect."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats as sp

from wattzip.analysis import family, power, run_tables
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.claims import CHECKS, Evidence, checked, familywise, load_claims
from wattzip.records import FACTOR_COLUMNS
from wattzip.stats import Interval, t_ppf

from .test_analysis import cell

pytestmark = pytest.mark.pure

REFERENCE = Path(__file__).resolve().parent.parent / "paper" / "reference"


def test_holm_steps_down():
    # sorted: 0.005 <= 0.05/4, 0.01 <= 0.05/3, 0.03 > 0.05/2: stop there.
    assert family.holm([0.01, 0.04, 0.03, 0.005], 0.05) == [True, False, False, True]
    assert family.holm([0.04, 0.03], 0.05) == [False, False]  # each alone would be decided
    assert family.holm([0.001, 0.04], 0.05) == [True, True]  # the last step is at alpha / 1


def test_p_value_behind_an_interval_touching_zero_is_its_alpha():
    half = t_ppf(0.975, 4) * 2.0
    iv = Interval(half, 0.0, 2 * half, 4)
    assert family.p_nonzero(iv, 0.95) == pytest.approx(0.05)
    assert family.p_nonzero(Interval(1.0, -float("inf"), float("inf"), 0), 0.95) == 1.0


def test_a_cells_p_value_agrees_with_its_decision():
    for spread, expected in ((3.0, True), (60.0, False)):
        rows = cell("text", "gz-1", ew=1000, ec=1100, er=500, ed=400, n=4, spread=spread)
        for be in run_tables.breakeven_table(rows, AnalysisOptions()):
            if be["metric"] == "E":
                assert be["decided"] is expected
                assert (be["p_decided"] < 0.05) is expected


def breakeven_cell(codec: str, p: float) -> dict:
    return {"testbed": "tb", "setting": "s", "file_type": "zero", "codec": codec,
            "metric": "E", "kind": "always", "value": 0.0, "lo": 0.0, "hi": 0.0,
            "decided": p < 0.05, "possible_kinds": "always", "display": "∀",
            "p_decided": p, "verdict_note": "", "undecided_as": ""}


def test_a_claim_over_many_cells_holds_only_if_the_family_does():
    claim = next(c for c in load_claims(REFERENCE) if c.id == "zero_saves")
    codecs = ["gz-1", "gz-6", "lzo-1"]
    summary = [{"testbed": "tb", "setting": "s", "file_type": "zero", "codec": c,
                "op": "compress-write", "n": 3} for c in codecs]
    # Each decided alone at 95%; two of them do not survive Holm over three cells.
    breakeven = [breakeven_cell("gz-1", 0.001), breakeven_cell("gz-6", 0.04),
                 breakeven_cell("lzo-1", 0.03)]
    ev = Evidence("tb", "s", summary, breakeven, [], [], str(REFERENCE), AnalysisOptions())
    alone = CHECKS[claim.check](claim, ev)
    assert alone.ok is True  # three of three save: the per-cell reading
    out, stated = familywise(claim, ev, *checked(claim, ev))
    assert stated["family_cells"] == 3
    assert stated["familywise_confidence"] == "95% family-wise over 3 cells (Holm)"
    assert stated["holm_undecided"] == "zero gz-6 E; zero lzo-1 E"
    assert out.ok is None  # one of three surely saves: not enough to tell
    assert "Holm" in out.evidence


def test_a_testbed_wide_claim_holds_its_cells_family_wise_too():
    """The slow-disk claim is testbed-wide (it picks the slowest disk's setting): its two
    cells there, each decided alone at 95%, are one family, as a setting's claims are."""
    claim = next(c for c in load_claims(REFERENCE) if c.id == "slow_disk_text_time")
    disks = {"fast": None, "slow": 30_000_000}
    summary = [{"testbed": "tb", "setting": name, "file_type": "text", "codec": c,
                "op": "compress-write", "n": 3, "primary": bw is None,
                **{f: None for f in FACTOR_COLUMNS}, "bandwidth_bytes_per_s": bw}
               for name, bw in disks.items() for c in ("gz-1", "lzo-1")]
    breakeven = [{**breakeven_cell(c, p), "file_type": "text", "metric": "T",
                  "setting": "slow", "dw": -1.0, "dr": 1.0}
                 for c, p in (("gz-1", 0.04), ("lzo-1", 0.03))]
    ev = Evidence("tb", None, summary, breakeven, [], [], str(REFERENCE), AnalysisOptions())
    assert CHECKS[claim.check](claim, ev).ok is True  # each cell read at 95% alone
    out, stated = familywise(claim, ev, *checked(claim, ev))
    assert stated["familywise_confidence"] == "95% family-wise over 2 cells (Holm)"
    assert stated["holm_undecided"] == "text gz-1 T; text lzo-1 T"
    assert out.ok is None and "cannot decide" in out.why


def test_underpowered_and_no_effect_are_different_verdicts():
    # A wide interval: a 5% effect on a baseline of 1000 J could not have been seen.
    wide = power.assess(-40.0, 60.0, 6, 1000.0, 3, 0.05, 0.95)
    assert wide.kind == power.UNDERPOWERED
    q, z = sp.t.ppf(0.975, 6), sp.t.ppf(0.8, 6)
    assert wide.detectable == pytest.approx((q + z) * 50 / q)
    assert wide.runs_for_effect == pytest.approx(3 * (wide.detectable / 50) ** 2, abs=1)
    assert "runs per arm would detect 50 J" in wide.describe("J")
    # A narrow one: it could have seen 50 J and did not; any effect is under 12 J.
    narrow = power.assess(-8.0, 12.0, 6, 1000.0, 8, 0.05, 0.95)
    assert narrow.kind == power.NO_EFFECT and narrow.bound == 12.0
    assert narrow.describe("J").startswith("no effect larger than 12 J")


def test_an_undecided_cell_states_its_power():
    rows = cell("text", "gz-1", ew=1000, ec=1030, er=500, ed=470, n=3, spread=40)
    be = next(b for b in run_tables.breakeven_table(rows, AnalysisOptions()) if b["metric"] == "E")
    assert be["verdict"] == "undecided" and be["undecided_as"] == power.UNDERPOWERED
    assert be["detectable_saving"] > be["effect_of_interest"] == pytest.approx(0.05 * 1500)
    assert "underpowered" in be["verdict_note"]
