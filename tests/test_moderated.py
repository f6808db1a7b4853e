"""The moderated design: limma's prior, moderated variances and their coverage."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import special

from wattzip.analysis import moderated, run_tables, verdicts
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.stopping import RepeatRule, VerdictLooks, needs_more
from wattzip.model import rehearsal, repeat_design
from wattzip.model.study import Study

pytestmark = pytest.mark.pure


OPS = ("compress-write", "decompress-read")


@pytest.mark.parametrize("x", [0.05, 0.5, 1.0, 2.5, 7.0, 40.0, 500.0])
def test_the_polygammas_agree_with_scipy(x):
    assert moderated.digamma(x) == pytest.approx(special.digamma(x), rel=1e-9, abs=1e-9)
    assert moderated.trigamma(x) == pytest.approx(special.polygamma(1, x), rel=1e-9)
    assert moderated.trigamma_inverse(special.polygamma(1, x)) == pytest.approx(x, rel=1e-7)


def test_the_prior_is_recovered_from_many_cells():
    """Variances drawn from s0^2 d0 / chi2(d0), each seen on d = 2 df: the method of
    moments gives back d0 and s0^2 (the median over 100 studies of 60 arms)."""
    rng = np.random.default_rng(3)
    d0, s0_sq, fits = 8.0, 0.02 ** 2, []
    for _ in range(100):
        sigma2 = s0_sq * d0 / rng.chisquare(d0, size=60)
        s2 = sigma2 * rng.chisquare(2, size=60) / 2
        prior = moderated.fit_prior([(v, 2) for v in s2])
        fits.append((min(prior.d0, 1e3), prior.s0_sq / s0_sq))
    d0_hat, ratio = np.median(fits, axis=0)
    assert 5 < d0_hat < 14 and 0.85 < ratio < 1.15


def test_alike_cells_share_one_variance_and_too_few_share_none():
    alike = moderated.fit_prior([(1e-4, 3)] * 6)
    # Six arms of 3 df: the prior holds at most their 18 df less one arm's 3, never a
    # variance known exactly. exp(E[log s^2]) is below s^2 (by digamma(d/2) - log(d/2)),
    # which the prior undoes at each df.
    unbiased = 1e-4 * math.exp(math.log(1.5) - special.digamma(1.5)
                               + special.digamma(7.5) - math.log(7.5))
    assert alike.d0 == 15 and alike.s0_sq == pytest.approx(unbiased, rel=1e-6)
    assert alike.moderate(1e-4, 3)[1] == 18
    assert moderated.fit_prior([(1e-4, 3)] * 3) is moderated.NO_PRIOR
    assert moderated.NO_PRIOR.moderate(2e-4, 1) == (2e-4, 1.0)


def test_a_prior_from_a_study_s_first_arms_knows_no_more_than_they_do():
    """Four arms of 1 df that happen to agree (as often as not when their variances are
    equal): before, d0 was infinite and a second cell decided at 2 runs on a normal
    quantile; now an arm moderated by them has at most their 4 df."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        s2 = 1e-4 * rng.chisquare(1, size=4)
        prior = moderated.fit_prior([(v, 1) for v in s2])
        assert prior.d0 <= 3 and prior.moderate(float(s2[0]), 1)[1] <= 4


def test_a_cell_is_shrunk_toward_the_prior_unless_it_is_far_noisier():
    prior = moderated.Prior(d0=10.0, s0_sq=1e-4)
    # Below the F distribution's median (the guard leaves the upper half alone).
    s2, df = prior.moderate(0.4e-4, 1)
    assert s2 == pytest.approx((10 * 1e-4 + 0.4e-4) / 11) and df == 11
    assert not prior.outlying(0.4e-4, 1)
    assert prior.outlying(1.5e-4, 1) and moderated.GUARD == 0.5
    # 20x the prior's variance on 2 df: beyond the guard's F quantile, judged alone.
    assert prior.outlying(20e-4, 2)
    assert prior.moderate(20e-4, 2) == (20e-4, 2.0)


def test_a_codec_whose_arms_are_noisier_is_moderated_towards_its_own_arms():
    """random/bz-1 at 512 MiB: a decompress-read of 2 runs whose CV lies above the study's
    median kept 1 degree of freedom (t = 76 at a look's half alpha), although bz-1's
    reads on the three cheaper file types showed the same noise; now its codec's arms
    are judged together, and it is moderated towards them."""
    study = moderated.Prior(d0=10.0, s0_sq=1e-4)
    own, codec_others = (2.5e-4, 1), [(2.2e-4, 1), (2.8e-4, 3), (2.4e-4, 1)]
    assert study.outlying(*own)  # arm by arm: its own variance, 1 df
    prior = moderated.arm_prior(study, own, codec_others)
    assert prior.d0 == 5 and prior.s0_sq == pytest.approx((2.2 + 3 * 2.8 + 2.4) / 5 * 1e-4)
    s2, df = prior.moderate(*own)
    assert df == 6 and s2 == pytest.approx((2.2 + 3 * 2.8 + 2.4 + 2.5) / 6 * 1e-4)
    # A quiet codec is moderated towards the study, its arm tested at ARM_GUARD only.
    quiet = moderated.arm_prior(study, (1.2e-4, 1), [(0.5e-4, 1), (0.6e-4, 3)])
    assert (quiet.d0, quiet.s0_sq, quiet.guard) == (10.0, 1e-4, moderated.ARM_GUARD)
    assert quiet.moderate(1.2e-4, 1)[1] == 11
    # ... unless the arm alone is far above it: its own variance.
    assert quiet.moderate(30e-4, 1) == (30e-4, 1.0)
    # A noisy arm with no other arm of its codec yet: no prior, as before.
    assert moderated.arm_prior(study, own, []) is moderated.NO_PRIOR
    # cell_priors finds the group by codec and kind: another codec's arms are not its.
    arms = {"w": ("plain-write", [1.0, 1.01], "plain"), "c": ("compress-write", [5, 5.1], "x"),
            "r": ("plain-read", [1.0, 1.01], "plain"), "d": ("decompress-read", [2, 2.1], "x")}
    others = [("decompress-read", [3, 3.3], "x"), ("decompress-read", [3, 3.01], "y"),
              *[("plain-read", [1, 1.0 + k / 1000], "plain") for k in range(1, 5)]]
    priors = moderated.cell_priors(arms, others)
    assert set(priors) == set("wcrd") and priors["d"].arms == 1  # x's other read arm


def runs(op_means, n, cv, rng, job_key, codec="gz-1"):
    return [{"op": op, "repeat": k, "verified": True, "job_key": job_key,
             "codec": "plain" if op.startswith("plain") else codec,
             "elapsed_s": m * (1 + cv * rng.gauss(0, 1)), "energy_j": None}
            for k in range(1, n + 1) for op, m in op_means.items()]


CELL = {"plain-write": 10.0, "plain-read": 5.0, "compress-write": 9.2,
        "decompress-read": 4.6}  # saves 8% of the baseline, CV 2%
WELCH, MODERATED = AnalysisOptions(looks=3), AnalysisOptions(looks=3, moderated=True)
RULES = {"reads_per_write": 1.0, "margin": 0.02}


def test_the_study_lets_a_cell_decide_its_verdict_at_two_runs():
    """At 2 runs per arm a cell's own Welch interval (1 df per arm) cannot decide an 8%
    saving; moderated by twelve other cells of the same noise it can, at alpha / 3. Its
    break-even kind stays open there (dr, 0.4 s, against a read's 0.1 s spread), and the
    claims rest on the kind: the job goes on (wattzip.analysis.stopping)."""
    rng = random.Random(5)
    mine = runs(CELL, 2, 0.02, rng, "me")
    others = tuple(r for k in range(12) for r in runs(CELL, 3, 0.02, rng, f"job{k}"))
    alone = VerdictLooks((2, 4, 8), WELCH)
    shared = VerdictLooks((2, 4, 8), MODERATED, prior_runs=others)
    assert alone.decisions(mine, OPS, 2) == {"T": "undecided"}
    assert shared.decisions(mine, OPS, 2) == {"T": "saves"}
    assert shared.open_kinds(mine, OPS, 2) and needs_more(mine, OPS, RepeatRule(2, 8, 0.05), shared)
    # With no other cell measured yet there is no prior: the cell goes on, on its own.
    assert VerdictLooks((2, 4, 8), MODERATED).decisions(mine, OPS, 2)["T"] == "undecided"


def study_coverage(rng, cells=12, noisy=False, looks=(2, 4, 8)):
    """One simulated study (cells measured in turn, each at the looks with the priors of
    the cells before it): the fraction of final intervals holding the true saving."""
    each = verdicts.look_confidence(0.95, len(looks))
    done, stopped = [], []
    for k in range(cells):
        saving = rng.choice((-0.2, -0.03, 0.0, 0.03, 0.2))
        means = {"w": 10.0, "r": 5.0, "c": 9.0, "d": 6.0 - saving * 15.0}
        cv = 0.02 * (4 if noisy and k == 0 else 1) * math.exp(rng.gauss(0, 0.3))
        arm = {a: [m * (1 + cv * rng.gauss(0, 1)) for _ in range(looks[-1])]
               for a, m in means.items()}
        groups = {"w": "plain", "c": f"c{k}", "r": "plain", "d": f"c{k}"}
        for n in looks:
            own = {a: (op, arm[a][:n], groups[a])
                   for a, op in zip("wcrd", run_tables.FOUR_OPS, strict=True)}
            v = moderated.decide(*(arm[a][:n] for a in "wcrd"),
                                 moderated.cell_priors(own, done), confidence=each, **RULES)
            if v.verdict != verdicts.UNDECIDED:
                break
        done += own.values()
        stopped.append((arm, n, 15.0 * saving, own))

    def rest(own):  # every arm of the study but the cell's own
        return [a for a in done if not any(a[1] is o[1] for o in own.values())]

    hits = [moderated.decide(*(arm[a][:n] for a in "wcrd"),
                             moderated.cell_priors(own, rest(own)), confidence=each, **RULES)
            for arm, n, _, own in stopped]
    return [v.lo <= truth <= v.hi for v, (_, _, truth, _) in zip(hits, stopped, strict=True)]


@pytest.mark.parametrize("noisy", [False, True], ids=["alike", "one noisy codec"])
def test_simulated_coverage_holds_at_95_percent(noisy):
    rng = random.Random(11)
    covered = [hit for _ in range(60) for hit in study_coverage(rng, noisy=noisy)]
    assert sum(covered) / len(covered) >= 0.95


def cell_rows(ftype, codec, means, n, rng, clock, cv=0.02):
    out = []
    for k in range(1, n + 1):
        for op, m in means.items():
            t = m * (1 + cv * rng.gauss(0, 1))
            name = "plain" if op.startswith("plain") else codec
            clock.append(len(clock))
            out.append({"testbed": "tb", "setting": "s", "file_type": ftype, "codec": name,
                        "op": op, "repeat": k, "verified": True, "elapsed_s": t,
                        "energy_j": 40 * t, "paired_with": codec if name == "plain" else "",
                        "meter_method": "measured",
                        "started_at": f"2026-01-01T00:{len(clock):04d}",
                        "ended_at": f"2026-01-01T00:{len(clock):04d}.5"})
    return out


def test_the_analysis_gives_each_cell_the_verdict_its_job_stopped_on():
    """Each cell moderated by the priors its job fitted: its own arms and the cells
    measured before it (the first cell has none, and is judged alone)."""
    rng, clock = random.Random(2), []
    rows = [r for k in range(10) for r in cell_rows("text", f"c{k}", CELL, 2, rng, clock)]
    welch = run_tables.breakeven_table(rows, WELCH)
    shared = run_tables.breakeven_table(rows, MODERATED)
    decided = [sum(b["verdict"] != "undecided" for b in t if b["metric"] == "T")
               for t in (welch, shared)]
    assert decided[0] < decided[1]
    both = [(a["verdict"], b["verdict"]) for a, b in zip(welch, shared, strict=True)
            if "undecided" not in (a["verdict"], b["verdict"])]
    assert all(a == b for a, b in both)
    first = [b for b in shared if b["codec"] == "c0" and b["metric"] == "T"]
    assert first[0]["verdict"] == "undecided"  # no cell before it: no prior
    looks = VerdictLooks((2, 4, 8), MODERATED,
                         prior_runs=tuple(r for r in rows if r["codec"] in ("c0", "c1")
                                          or r["paired_with"] in ("c0", "c1")))
    mine = [r for r in rows if "c2" in (r["codec"], r["paired_with"])]
    job = looks.decisions(mine, OPS, 2)
    assert job == {k: b["verdict"] for k in ("T", "E") for b in shared
                   if b["codec"] == "c2" and b["metric"] == k}


def test_the_design_names_the_moderated_one():
    study = Study.from_files(["config.yaml"])
    config = {**study.config, "repeats": {**study.config["repeats"], "design": "moderated"}}
    mod = Study(config)
    assert mod.verdict_design and mod.moderated_design
    assert repeat_design.describe(mod).startswith(
        "the moderated design: planned looks at 2, 3, 4, 8")
    job = next(j for j in mod.jobs(mod.first_testbed) if j.file_type != "dutycycle")
    assert mod.repeat_plan(job).looks == (2, 3, 4, 8)
    order = mod.measure_order(mod.first_testbed, lambda j: -len(j.codec))
    assert mod.previous_job(order[1], lambda j: -len(j.codec)) == order[0]
    assert mod.previous_job(order[0], lambda j: -len(j.codec)) is None
    assert study.previous_job(job) is None  # the paper's rule: no order imposed


def test_a_job_decides_the_kinds_the_claims_read():
    """The jobs' looks decide the break-even kinds of verdict.kind_metrics (T and E by
    default) and those a claim names for its cells (slow_disk_text_time: T of gz-1 and
    lzo-1 on text; lzo_text_always_time: T of lzo-1 and lzo-3 on text); the job's spec
    carries them and the report's design sentence names them."""
    base = Study.from_files(["config.yaml", "config/paper-original-cells.yaml"])
    assert {tuple(base.job_spec(j)["looks"]["kinds"])
            for j in base.jobs(base.first_testbed)} == {("T", "E")}
    assert repeat_design.describe(base).endswith("its break-even kinds in T and E")
    config = {**base.config, "verdict": {**base.config["verdict"], "kind_metrics": ["E"]}}
    energy = Study(config)
    kinds = {(j.file_type, j.codec): energy.job_spec(j)["looks"]["kinds"]
             for j in energy.jobs(energy.first_testbed)}
    assert kinds[("text", "gz-1")] == kinds[("text", "lzo-1")] == kinds[("text", "lzo-3")] \
        == ["T", "E"]
    assert kinds[("text", "gz-6")] == kinds[("random", "lzo-1")] == ["E"]
    assert ("its break-even kind in E (also in T for gz-1 on text, lzo-1 on text, lzo-3 on "
            "text, which a claim reads)") in repeat_design.describe(energy)


def test_the_rehearsal_stops_each_job_as_its_looks_would():
    """The rehearsal's simulated jobs under planned looks run the jobs' own stopping rule
    (wattzip.analysis.stopping, the looks `wattzip job --spec` builds) over the runs of
    their setting simulated before them: each stops at a planned look, some after the
    first, and at each earlier look the rule said to go on."""
    study = Study.from_files(["config.yaml", "config/paper.yaml",
                              "config/paper-moderated.yaml"])
    sim = rehearsal.Simulator(study, study.first_testbed)
    runs, stops = [], []
    for job in study.jobs(study.first_testbed, "rehearsal"):
        plan = study.repeat_plan(job)
        looks = sim.looks(job, plan, runs)
        mine = sim.job_runs(job, runs)
        runs += mine
        n = looks.runs_per_arm(mine, OPS)
        assert n in plan.looks and not needs_more(mine, OPS, plan, looks), job
        for k in (k for k in plan.looks if k < n):
            assert needs_more([r for r in mine if r["repeat"] <= k], OPS, plan, looks), (job, k)
        stops.append(n)
    assert min(stops) == 2 and max(stops) > 2, stops


def test_the_plan_states_every_design_side_by_side(tmp_path):
    """From a pilot's rates (seconds per byte, as a cached pilot holds them): one pass is
    the floor, the moderated design's minimum (2 runs per arm) is below the verdict
    design's (3) and the paper's rule's (5); cheap cells are measured first. On an
    unlimited disk: behind the paper's emulated one every pair waits for the disk, and a
    codec's own plain arm costs the verdict design as much as the codec's."""
    from wattzip.model import plan

    unlimited = tmp_path / "unlimited.yaml"
    unlimited.write_text("factors: {bandwidth: [unlimited]}\n")
    study = Study.from_files(["config.yaml", "config/paper.yaml",
                              "config/paper-moderated.yaml", unlimited])
    rates = {f"gen|{t}": 1e-9 for t in study.file_types}
    for k, name in enumerate(["plain", *study.codecs]):
        for t in study.file_types:
            rates[f"{t}|{name}"] = {"write_s_per_byte": 1e-9 * (k + 1),
                                    "read_s_per_byte": 5e-10 * (k + 1),
                                    "stored_per_byte": 0.5}
    est = plan.all_designs(study, rates)
    assert list(est) == ["one pass", "paper", "verdict", "moderated"]
    floor = est["one pass"].measured_min_s
    assert floor < est["moderated"].measured_min_s < est["verdict"].measured_min_s
    assert est["verdict"].measured_min_s < est["paper"].measured_min_s
    assert est["one pass"].runs_min == 2 * len(study.file_types) * (len(study.codecs) + 1)
    lines = plan.side_by_side(est, "moderated").splitlines()
    assert [line.split()[0] for line in lines] == ["one", "paper", "verdict", "*"]
    order = study.measure_order(study.first_testbed, plan.cell_seconds(study, rates))
    costs = [plan.cell_seconds(study, rates)(j) for j in order]
    assert costs == sorted(costs) and order[0].codec == study.codecs[0]


def test_the_original_cells_overlay_plans_ppmd_on_every_file_type():
    """config/paper-original-cells.yaml measures PPMd on all four file types, as SYSTOR '09
    did (5.3, slides 16 and 23): its jobs are the moderated study's, PPMd's among them."""
    full = Study.from_files(["config.yaml", "config/paper.yaml",
                             "config/paper-moderated.yaml"])
    study = Study.from_files(["config.yaml", "config/paper.yaml",
                              "config/paper-original-cells.yaml"])
    assert study.repeats["design"] == "moderated"
    jobs = study.jobs(study.first_testbed)
    assert {j.file_type for j in jobs if j.codec == "ppmd"} == {"zero", "text", "binary",
                                                                 "random"}
    assert {(j.file_type, j.codec) for j in jobs} == {
        (j.file_type, j.codec) for j in full.jobs(full.first_testbed)}
    assert not study.scope.describe()
