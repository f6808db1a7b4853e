"""When a job stops: the paper's rule, the verdict design's planned looks against the
job's own plain arm (interleaved ABBA), and outliers that keep a job going."""

from __future__ import annotations

import argparse
import random

import pytest

from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.stopping import RepeatRule, VerdictLooks, needs_more, outliers, series
from wattzip.errors import WattzipError
from wattzip.measure import flags, measurement
from wattzip.model import repeat_design
from wattzip.model.config import merge_configs
from wattzip.model.study import Study
from wattzip.resources import schema_default

from .test_workflow import REPO

pytestmark = pytest.mark.pure

WATCH = schema_default("repeats.watch")  # what the paper's rule watches by default

OPS = ("compress-write", "decompress-read")
PLAIN = ("plain-write", "plain-read")
THREE_LOOKS = AnalysisOptions(looks=3)  # the study's options at looks 3, 5, 8


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


def plain_arm(n=8, cv=0.02, seed=1, energy=True):
    """The job's own plain arm (what its codec arm is compared with)."""
    return runs({"plain-write": 10.0, "plain-read": 5.0}, n, cv, seed, energy)


def job_runs(codec_means, n, cv=0.02, seed=2, plain_cv=0.02, plain_seed=1, energy=True):
    """One verdict-design job's runs: both arms, n repeats each."""
    return (plain_arm(n, plain_cv, plain_seed, energy)
            + runs(codec_means, n, cv, seed, energy))


CHEAP = {"compress-write": 6.0, "decompress-read": 3.0}


def test_a_clear_saving_stops_at_the_first_look():
    looks = VerdictLooks((3, 5, 8), THREE_LOOKS)
    cheap = job_runs(CHEAP, 3)
    assert looks.decisions(cheap, OPS, 3) == {"T": "saves", "E": "saves"}
    assert not looks.needs_more(cheap, OPS)
    assert not needs_more(cheap, OPS, RepeatRule(3, 8, 0.05), looks)


def test_the_looks_compare_with_the_jobs_own_plain_runs():
    """The same codec runs save against a slow plain arm and cost against a fast one: the
    verdict is decided on the plain runs in the job's own runs, no baseline elsewhere."""
    looks = VerdictLooks((3, 5, 8), THREE_LOOKS)
    codec = runs(CHEAP, 3, 0.02, seed=2)
    fast_plain = runs({"plain-write": 3.0, "plain-read": 1.5}, 3, 0.02, seed=1)
    assert looks.decisions(plain_arm(3) + codec, OPS, 3) == {"T": "saves", "E": "saves"}
    assert looks.decisions(fast_plain + codec, OPS, 3) == {"T": "costs", "E": "costs"}
    # A look needs n runs of each of the four operations, the plain arm's too.
    assert looks.runs_per_arm(plain_arm(2) + runs(CHEAP, 3, 0.02, seed=2), OPS) == 2
    assert looks.needs_more(plain_arm(2) + runs(CHEAP, 3, 0.02, seed=2), OPS)


def test_an_undecided_cell_goes_to_the_last_look_and_no_further():
    looks = VerdictLooks((3, 5, 8), AnalysisOptions(looks=3, margin=0.001))
    close = {"compress-write": 10.05, "decompress-read": 4.98}
    for n, more in ((2, True), (3, True), (4, True), (5, True), (8, False)):
        mine = job_runs(close, n, cv=0.08, seed=3, plain_cv=0.08)
        assert looks.needs_more(mine, OPS) is more, n


def test_a_decided_verdict_with_its_break_even_kind_open_goes_on():
    """A codec that saves at one read per write but reads as fast as plain (dr 0.05 s
    against a 0.1 s spread): its verdict is decided at the first look, its break-even
    kind (always, or only up to some n) is not, and the claims rest on the kind, so the
    job measures on to the next look, and no further than the last."""
    looks = VerdictLooks((3, 5, 8), THREE_LOOKS)
    even_read = {"compress-write": 6.0, "decompress-read": 4.95}
    for n, more in ((3, True), (5, True), (8, False)):
        mine = job_runs(even_read, n, seed=6)
        assert looks.decisions(mine, OPS, n) == {"T": "saves", "E": "saves"}, n
        assert looks.open_kinds(mine, OPS, n).keys() == {"T", "E"}, n
        assert looks.needs_more(mine, OPS) is more, n
    assert not looks.open_kinds(job_runs(CHEAP, 3), OPS, 3)  # always: dr 2 s, dw -4 s


def test_a_kind_the_study_does_not_ask_for_is_left_open():
    """A read as fast as plain (T's dr 0.05 s against a 0.1 s spread) that costs less
    energy (E's dr clearly positive): its E kind is decided (always), its T kind is not.
    Asked for E alone (a study's verdict.kind_metrics, no claim reading the cell's T),
    the job stops at its first look; asked for T and E, it goes on."""
    even_read = {"compress-write": 6.0, "decompress-read": 4.95}
    mine = [dict(r, energy_j=30.0 * r["elapsed_s"]) if r["op"] == "decompress-read" else r
            for r in job_runs(even_read, 3, seed=6)]
    both = VerdictLooks((3, 5, 8), THREE_LOOKS)
    energy = VerdictLooks((3, 5, 8), THREE_LOOKS, kind_metrics=("E",))
    assert both.open_kinds(mine, OPS, 3).keys() == {"T"}
    assert not energy.open_kinds(mine, OPS, 3)
    assert both.needs_more(mine, OPS) and not energy.needs_more(mine, OPS)
    looks = {"runs": [3, 5, 8], "kinds": ["E"], "prior_journals": None}
    spec = {"looks": looks, "repeats": {"design": "verdict", "looks": [3, 5, 8]},
            "verdict": {"margin": 0.02, "reads_per_write": 1.0}}
    assert measurement.verdict_looks(spec).kind_metrics == ("E",)
    # The spec's sections are the analysis's options: the looks decide as the report does.
    sections = {**spec, "verdict": {"reads_per_write": 2.0, "margin": 0.05}}
    assert measurement.verdict_looks(sections).options == AnalysisOptions.of_study(
        sections["repeats"], sections["verdict"])
    assert measurement.verdict_looks(sections).options.margin == 0.05
    assert measurement.verdict_looks({**spec, "looks": {**looks, "kinds": []}}
                                     ).kind_metrics == ()
    with pytest.raises(WattzipError, match="the looks must increase"):
        measurement.verdict_looks({**spec, "looks": {**looks, "runs": [3, 3]}})


def test_a_look_s_level_is_one_method_its_verdicts_and_kinds_both_read():
    """A look's level is VerdictLooks.look_confidence(n), alpha / looks by default: the
    verdicts and the break-even kinds both read it (benchmarks/guard_replay.py replays
    other splits of alpha over the looks through it)."""
    asked = []

    class Strict(VerdictLooks):
        def look_confidence(self, n):
            asked.append(n)
            return 1 - 1e-12

    looks, strict = VerdictLooks((3, 5, 8), THREE_LOOKS), Strict((3, 5, 8), THREE_LOOKS)
    assert looks.look_confidence(3) == looks.look_confidence(8) == 1 - 0.05 / 3
    cheap = job_runs(CHEAP, 3)
    assert not looks.needs_more(cheap, OPS)
    assert strict.decisions(cheap, OPS, 3) == {"T": "undecided", "E": "undecided"}
    assert strict.open_kinds(cheap, OPS, 3).keys() == {"T", "E"}
    assert strict.needs_more(cheap, OPS)
    assert set(asked) == {3}


def test_without_a_meter_the_time_verdict_decides_alone():
    looks = VerdictLooks((3, 5, 8), THREE_LOOKS)
    cheap = job_runs(CHEAP, 3, seed=4, energy=False)
    assert looks.decisions(cheap, OPS, 3) == {"T": "saves"}
    assert not looks.needs_more(cheap, OPS)


def test_unverified_runs_do_not_count_toward_a_look():
    looks = VerdictLooks((3, 5, 8), THREE_LOOKS)
    cheap = job_runs(CHEAP, 3, seed=5)
    cheap[-2]["verified"] = False  # the codec arm's third write
    assert looks.needs_more(cheap, OPS)  # two good repeats of the write: below the look
    plain_failed = job_runs(CHEAP, 3, seed=5)
    plain_failed[0]["verified"] = False  # the plain arm's first write
    assert looks.needs_more(plain_failed, OPS)


def test_the_baseline_and_the_paper_rule_keep_their_own_stopping():
    plain = plain_arm(n=5, cv=0.001)
    assert not needs_more(plain, PLAIN, RepeatRule(5, 5, 0.05))
    assert needs_more(plain, PLAIN, RepeatRule(8, 8, 0.05))


def steady(op_means: dict[str, float], n: int) -> list[dict]:
    """n repeats of each operation within 1% of its mean, none an outlier by itself."""
    offsets = (0.0, 1.0, -1.0, 0.5, -0.5, 0.8, -0.8, 0.3)
    return [{"op": op, "repeat": repeat, "verified": True,
             "elapsed_s": m * (1 + 0.01 * offsets[repeat - 1]),
             "energy_j": 40.0 * m * (1 + 0.01 * offsets[repeat - 1])}
            for repeat in range(1, n + 1) for op, m in op_means.items()]


STEADY_PLAIN = {"plain-write": 10.0, "plain-read": 5.0}


def with_outlier(rows, op, repeat, factor):
    """The rows with one run of an operation `factor` times slower (and costlier)."""
    for r in rows:
        if r["op"] == op and r["repeat"] == repeat:
            r["elapsed_s"] *= factor
            r["energy_j"] = r["energy_j"] and r["energy_j"] * factor
    return rows


def test_an_outlier_is_found_by_its_modified_z_from_five_runs_on():
    """Of fewer runs, median/MAD is degenerate (of three, the odd one out always scores
    high): nothing is called an outlier before OUTLIER_MIN_RUNS."""
    four = with_outlier(runs({"compress-write": 6.0}, 4, 0.01, seed=6), "compress-write", 2, 5)
    assert outliers(four, ["compress-write"]) == []
    five = with_outlier(runs({"compress-write": 6.0}, 5, 0.01, seed=6), "compress-write", 2,
                        5)
    [found] = outliers(five, ["compress-write"])
    assert (found.op, found.repeat) == ("compress-write", 2)
    assert [m for m, _, _ in found.scores] == ["T", "E"]
    assert all(z > 3.5 for _, _, z in found.scores)
    assert found.describe().startswith("r2 compress-write is an outlier (T ")


def test_under_the_paper_rule_an_outlier_costs_one_more_repeat_once():
    """The paper's rule would stop at 5 (a wide target), but a run is an outlier: one
    more repeat, once for that outlier (it stays an outlier: recomputing its Z after
    every run would otherwise run the job to max); never beyond max; it stays in the
    runs."""
    def at(n):
        return with_outlier(steady(CHEAP, n), "decompress-read", 2, 5)

    clean = steady(CHEAP, 5)
    assert not needs_more(clean, OPS, RepeatRule(5, 7, 10.0))
    heard = []
    five = at(5)
    assert needs_more(five, OPS, RepeatRule(5, 7, 10.0), log=heard.append)
    assert len(five) == 10 and max(r["elapsed_s"] for r in five) > 10, "never dropped"
    assert any("r2 decompress-read is an outlier" in m and "one more repeat" in m
               for m in heard)
    heard.clear()
    assert not needs_more(at(6), OPS, RepeatRule(5, 7, 10.0), log=heard.append)
    assert any("r2 decompress-read" in m and "kept the job going once already" in m
               for m in heard)
    later = with_outlier(steady(CHEAP, 6), "decompress-read", 6, 5)  # a new one at 6
    assert needs_more(later, OPS, RepeatRule(5, 7, 10.0))
    heard.clear()
    at_max = with_outlier(steady(CHEAP, 7), "decompress-read", 7, 5)
    assert not needs_more(at_max, OPS, RepeatRule(5, 7, 10.0), log=heard.append)
    assert any("r7 decompress-read" in m and "at the most repeats (7)" in m for m in heard)


def test_under_the_verdict_design_an_outlier_goes_on_to_the_next_look_up_to_the_last():
    looks = VerdictLooks((3, 5, 8), THREE_LOOKS)

    def at(n):  # a clear saving and kind (decided at every look), one plain read 5% off
        return with_outlier(steady({**STEADY_PLAIN, **CHEAP}, n), "plain-read", 2, 1.05)

    assert not needs_more(steady({**STEADY_PLAIN, **CHEAP}, 5), OPS, RepeatRule(3, 8, 0.05), looks)
    assert not needs_more(at(3), OPS, RepeatRule(3, 8, 0.05), looks)  # too few runs to call it
    heard = []
    assert looks.decisions(at(5), OPS, 5)["T"] != "undecided"
    assert needs_more(at(5), OPS, RepeatRule(3, 8, 0.05), looks, log=heard.append)
    assert any("r2 plain-read is an outlier" in m and "next planned look" in m for m in heard)
    assert needs_more(at(6), OPS, RepeatRule(3, 8, 0.05), looks)  # between the looks: on to 8
    heard.clear()
    assert not needs_more(at(8), OPS, RepeatRule(3, 8, 0.05), looks, log=heard.append)
    assert any("stays" in m and "at the last look (8)" in m for m in heard)


def test_wrong_decisions_stay_rare_whichever_look_stops():
    """A codec 3% cheaper in truth, CV 5%: over many seeds, 'costs' (the wrong side) is
    rare, though the procedure looks three times (and goes on past outliers)."""
    wrong = decided = 0
    for seed in range(300):
        looks = VerdictLooks((3, 5, 8), AnalysisOptions(looks=3, margin=0.0))
        mine = job_runs({"compress-write": 9.7, "decompress-read": 4.85}, 8, cv=0.05,
                        seed=seed, plain_cv=0.05, plain_seed=1000 + seed)
        n = next(k for k in looks.looks if not needs_more(
            [r for r in mine if r["repeat"] <= k], OPS, RepeatRule(3, 8, 0.05), looks))
        verdict = looks.decisions([r for r in mine if r["repeat"] <= n], OPS, n)["T"]
        wrong += verdict == "costs"
        decided += verdict != "undecided"
    assert wrong / 300 <= 0.05
    assert decided > 0


# --- real jobs on the small inputs ---------------------------------------------------


def timed(n: int, sys_cv: float) -> list[dict]:
    """n repeats of each codec operation, elapsed steady (1%) and its system time spread
    by sys_cv, as wattzip job records them (wait: elapsed less user and system)."""
    rng = random.Random(7)
    out = []
    for r in steady(CHEAP, n):
        user, system = 0.6 * r["elapsed_s"], rng.gauss(0.1, sys_cv * 0.1)
        out.append({**r, "user_s": user, "sys_s": system,
                    "wait_s": r["elapsed_s"] - user - system})
    return out


def test_the_paper_rule_watches_the_papers_four_times_where_the_config_says_so():
    """SYSTOR '09 4.3: 95% intervals of the mean elapsed, system, user and wait times.
    repeats.watch names them; config/paper.yaml's rule watches those four, carried to
    the job's spec and said in the report's design sentence."""
    paper = ("elapsed", "user", "system", "wait")
    wide = timed(5, sys_cv=0.3)
    assert not needs_more(wide, OPS, RepeatRule(5, 30, 0.05))  # T, E, ET are tight
    assert needs_more(wide, OPS, RepeatRule(5, 30, 0.05, paper))  # the system time is not
    assert not needs_more(timed(5, sys_cv=0.01), OPS, RepeatRule(5, 30, 0.05, paper))
    without_meter = [{**r, "energy_j": None} for r in timed(5, sys_cv=0.01)]
    assert set(series(without_meter, OPS, WATCH)) == {f"{op} elapsed" for op in OPS}
    assert set(series(without_meter, OPS, paper)) == {f"{op} {w}" for op in OPS for w in paper}
    several_cpus = [{**r, "wait_s": None} for r in timed(5, sys_cv=0.01)]  # no wait defined
    assert not needs_more(several_cpus, OPS, RepeatRule(5, 30, 0.05, paper))

    study = Study(merge_configs([REPO / "config.yaml", REPO / "config/paper.yaml"]))
    job = next(j for j in study.jobs(study.first_testbed) if j.codec != "plain")
    assert study.repeat_plan(job).watch == paper
    assert study.job_spec(job)["repeats"]["watch"] == list(paper)
    assert ("half-width of T, user time, system time and wait time (elapsed less user and "
            "system) was under 5%") in repeat_design.describe(study)
    assert flags.watch_list("elapsed,user,system,wait") == paper
    with pytest.raises(argparse.ArgumentTypeError, match="give some of elapsed,user"):
        flags.watch_list("elapsed,idle")
