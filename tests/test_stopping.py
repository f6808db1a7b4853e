"""When a job stops: the paper's rule, and the verdict design's planned looks."""

from __future__ import annotations

import random

from wattzip.stopping import VerdictLooks, needs_more

OPS = ("compress-write", "decompress-read")


def runs(op_means: dict[str, float], n: int, cv: float, seed: int, energy=True):
    """n verified repeats of each operation, T and E with a CV around their means."""
    rng = random.Random(seed)
    out = []
    for repeat in range(1, n + 1):
        for op, m in op_means.items():
            t = rng.gauss(m, cv * m)
            out.append({"op": op, "repeat": repeat, "verified": True, "elapsed_s": t,
                        "energy_j": 40.0 * t if energy else None})
    return out


def baseline(n=8, cv=0.02, seed=1, energy=True):
    return runs({"plain-write": 10.0, "plain-read": 5.0}, n, cv, seed, energy)


def test_a_clear_saving_stops_at_the_first_look():
    looks = VerdictLooks((3, 5, 8), baseline())
    cheap = runs({"compress-write": 6.0, "decompress-read": 3.0}, 3, 0.02, seed=2)
    assert looks.decisions(cheap, OPS, 3) == {"T": "saves", "E": "saves"}
    assert not looks.needs_more(cheap, OPS)


def test_an_undecided_cell_goes_to_the_last_look_and_no_further():
    looks = VerdictLooks((3, 5, 8), baseline(cv=0.08), margin=0.001)
    close = {"compress-write": 10.05, "decompress-read": 4.98}
    for n, more in ((2, True), (3, True), (4, True), (5, True), (8, False)):
        assert looks.needs_more(runs(close, n, 0.08, seed=3), OPS) is more, n


def test_without_a_meter_the_time_verdict_decides_alone():
    looks = VerdictLooks((3, 5, 8), baseline(energy=False))
    cheap = runs({"compress-write": 6.0, "decompress-read": 3.0}, 3, 0.02, seed=4,
                 energy=False)
    assert looks.decisions(cheap, OPS, 3) == {"T": "saves"}
    assert not looks.needs_more(cheap, OPS)


def test_unverified_runs_do_not_count_toward_a_look():
    looks = VerdictLooks((3, 5, 8), baseline())
    cheap = runs({"compress-write": 6.0, "decompress-read": 3.0}, 3, 0.02, seed=5)
    cheap[0]["verified"] = False
    assert looks.needs_more(cheap, OPS)  # two good repeats of the write: below the look


def test_the_baseline_and_the_paper_rule_keep_their_own_stopping():
    plain = baseline(n=5, cv=0.001)
    assert not needs_more(plain, ("plain-write", "plain-read"), 5, 5, 0.05)
    assert needs_more(plain, ("plain-write", "plain-read"), 8, 8, 0.05)


def test_wrong_decisions_stay_rare_whichever_look_stops():
    """A codec 3% cheaper in truth, CV 5%: over many seeds, 'costs' (the wrong side) is
    rare, though the procedure looks three times."""
    wrong = decided = 0
    for seed in range(300):
        looks = VerdictLooks((3, 5, 8), baseline(cv=0.05, seed=1000 + seed), margin=0.0)
        mine = runs({"compress-write": 9.7, "decompress-read": 4.85}, 8, 0.05, seed=seed)
        n = next(k for k in looks.looks if not looks.needs_more(
            [r for r in mine if r["repeat"] <= k], OPS))
        verdict = looks.decisions([r for r in mine if r["repeat"] <= n], OPS, n)["T"]
        wrong += verdict == "costs"
        decided += verdict != "undecided"
    assert wrong / 300 <= 0.05
    assert decided > 0
