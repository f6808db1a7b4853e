"""The moderated design's shared plain arm: the prior a job reads from the other cells'
journals, a pair from each codec's job, the plan's one arm per setting and file type,
and the intervals that take the variances the verdict took."""

from __future__ import annotations

import io
import math
import random

import pytest

from wattzip import stats
from wattzip.analysis import moderated, run_tables
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.stopping import RepeatRule, VerdictLooks, needs_more
from wattzip.model.study import Study

from .test_moderated import CELL, OPS, runs

pytestmark = pytest.mark.pure


def test_a_job_reads_the_other_cells_last_measurements_of_its_setting_for_its_prior(tmp_path):
    from wattzip import records
    from wattzip.measure import measurement

    folder = tmp_path / "journal" / "s"
    rng = random.Random(4)
    # text/bz-1 was measured twice: a drift made its job measure again under a new key.
    # Its first measurement's runs are flagged in its output and left out of runs.csv's
    # verified runs, so the analysis's priors leave them out: the looks' must too.
    for r in runs({op: 3 * m for op, m in CELL.items()}, 2, 0.02, rng, "text-bz-1-drifted",
                  "bz-1"):
        records.append_journal(folder / "text" / "bz-1.jsonl",
                               {**r, "testbed": "tb", "file_type": "text"})
    for ftype, codec in (("text", "gz-1"), ("text", "bz-1"), ("zero", "gz-1")):
        for r in runs(CELL, 2, 0.02, rng, f"{ftype}-{codec}", codec):
            records.append_journal(folder / ftype / f"{codec}.jsonl",
                                   {**r, "testbed": "tb", "file_type": ftype})
    # The drift check's reference journal beside a job's holds no runs: not read as runs.
    records.append_journal(folder / "text" / "bz-1.jsonl.reference.jsonl",
                           {"key": "k", "phase": "before", "runs": [1.0, 1.1]})
    own = folder / "text" / "gz-1.jsonl"
    spec = {"looks": {"runs": [2, 4, 8], "kinds": ["T", "E"], "prior_journals": str(folder)},
            "repeats": {"design": "moderated", "moderated_looks": [2, 4, 8], "looks": [2, 4, 8]},
            "verdict": {"margin": 0.02, "reads_per_write": 1.0}}
    looks = measurement.verdict_looks(spec, str(own), "text")
    assert looks.options.moderated and looks.looks == (2, 4, 8) and looks.plain_type == "text"
    assert {r["job_key"] for r in looks.prior_runs} == {"text-bz-1", "zero-gz-1"}
    verdict_design = {**spec, "repeats": {**spec["repeats"], "design": "verdict"}}
    assert not measurement.verdict_looks(verdict_design).prior_runs


def shared_plain_study(codecs, rng, noise=0.02, meter=None):
    """Codec jobs of one setting measured one after another as wattzip.measure.interleaving
    schedules them under the moderated design (repeat_arms: one plain arm per file type,
    a pair from each job, more while it is short), each stopping at its first deciding
    look. `meter` adds the runs' meter fields. Returns every row and each job's decisions
    at the look it stopped at."""
    from types import SimpleNamespace

    from wattzip.measure.interleaving import repeat_arms

    rows, decided, clock = [], {}, [0]

    def run(ftype, name, op, repeat, mine, share):
        mean = CELL[op] * (1.5 if ftype == "binary" else 1.0)
        t = mean * (1 + noise * rng.gauss(0, 1))
        clock[0] += 1
        mine.append({"testbed": "tb", "setting": "s", "file_type": ftype, "codec": name,
                     "op": op, "repeat": repeat, "verified": True, "elapsed_s": t,
                     "energy_j": 40 * t, "meter_method": "measured", **(meter or {}),
                     "shared_plain_of": share, "job_key": f"{ftype}-{share or name}",
                     "started_at": f"2026-01-01T{clock[0]:06d}",
                     "ended_at": f"2026-01-01T{clock[0]:06d}.5"})

    for ftype, codec in codecs:
        looks = VerdictLooks((2, 4, 8), AnalysisOptions(looks=3, moderated=True),
                             prior_runs=tuple(rows), plain_type=ftype)
        mine, repeat = [], 0
        while needs_more(mine, OPS, RepeatRule(2, 8, 0.05), looks) and repeat < 8:
            repeat += 1
            for arm in repeat_arms(SimpleNamespace(looks=looks), ["plain", codec], repeat,
                                   mine):
                for op in ((*OPS,) if arm == codec else ("plain-write", "plain-read")):
                    run(ftype, "plain" if arm == "plain" else codec, op, repeat, mine,
                        codec if arm == "plain" else None)
        decided[(ftype, codec)] = (looks.decisions(mine, OPS, looks.runs_per_arm(mine, OPS)),
                                   mine)
        rows += mine
    return rows, decided


def test_a_shared_plain_arm_takes_a_pair_from_each_job_and_the_analysis_agrees():
    """The moderated design's one plain arm per setting and file type: the first job of a
    type measures as many plain pairs as its first look needs, every later job one, plain
    first and last in turn; each cell's verdict in the analysis is the one its job
    stopped on (its codec's runs against the shared arm as it stood then)."""
    rng = random.Random(5)
    codecs = [(ftype, f"c{k}") for k in range(6) for ftype in ("text", "binary")]
    rows, decided = shared_plain_study(codecs, rng)
    pairs = {"text": 0, "binary": 0}
    for ftype, codec in codecs:
        mine = decided[(ftype, codec)][1]
        plain = [r for r in mine if r["codec"] == "plain"]
        n = max(r["repeat"] for r in mine)
        # One pair, and as many more as bring the arm up to the job's last repeat.
        assert len(plain) == 2 * (1 + max(0, n - pairs[ftype] - 1)), (ftype, codec)
        assert {r["shared_plain_of"] for r in plain} == {codec}
        pairs[ftype] += len(plain) // 2
    assert sum(pairs.values()) < 2 * len(codecs)  # fewer than a plain arm per codec
    orders = [[r["codec"] == "plain" for r in decided[(ftype, codec)][1]][:4]
              for ftype, codec in codecs if ftype == "text"]
    assert orders[1] == [True, True, False, False]  # the arm's 3rd pair: plain first
    assert orders[2] == [False, False, True, True]  # its 4th: plain last
    table = run_tables.breakeven_table(rows, AnalysisOptions(looks=3, moderated=True))
    assert len(table) == 3 * len(codecs)
    for ftype, codec in codecs:
        job = decided[(ftype, codec)][0]
        cell = {b["metric"]: b["verdict"] for b in table
                if (b["file_type"], b["codec"]) == (ftype, codec)}
        assert job == {k: cell[k] for k in job}, (ftype, codec)
    late = [b for b in table if b["codec"] == "c5" and b["metric"] == "T"]
    assert all(b["verdict"] != "undecided" for b in late)  # the prior decides at 2


def test_the_plan_counts_one_shared_plain_arm_per_setting_and_file_type():
    """Under the moderated design the plain arm is timed once per setting and file type
    (K codecs' pairs and one more for the first look), not once per codec."""
    from wattzip.model import layout, plan

    study = Study.from_files(["config.yaml", "config/paper.yaml",
                              "config/paper-moderated.yaml"])
    arms = plan.measured_arms(study, study.jobs(study.first_testbed))
    plain = [(job, p) for job, p in arms if job.codec == "plain"]
    cells = len(study.settings) * len(study.file_types)
    assert len(plain) == cells
    assert {p.min for _, p in plain} == {len(study.codecs) + 1}
    verdict = Study({**study.config,
                                 "repeats": {**study.config["repeats"], "design": "verdict"}})
    own = [j for j, _ in plan.measured_arms(verdict, verdict.jobs(verdict.first_testbed))
           if j.codec == "plain"]
    assert len(own) == cells * len(study.codecs)
    # snakemake -n's summary counts the runs as the plan does (it counted a plain arm per
    # codec under the moderated design: 352-1408 against the plan's 272-848).
    said = io.StringIO()
    layout.print_study_summary(study, "/nonexistent", said)
    lo = sum(2 * p.min for _, p in arms)
    assert "(+ one plain arm per setting and file type)" in said.getvalue()
    assert f" {lo}-{sum(2 * p.max for _, p in arms)} measured runs" in said.getvalue()


def test_fieller_takes_the_variances_the_verdict_took():
    """Under the moderated design a cell's Fieller interval of n_be is built from its
    arms' variances moderated by the priors its job fitted, as its verdict is (the
    bounds computed here from the job's own looks); the difference's variance is the
    one the verdict's interval spends."""
    codecs = [("text", f"c{k}") for k in range(8)]
    rows, decided = shared_plain_study(codecs, random.Random(9))
    options = AnalysisOptions(looks=3, moderated=True)
    table = run_tables.breakeven_table(rows, options)
    mine = decided[("text", "c7")][1]
    looks = VerdictLooks((2, 4, 8), options, plain_type="text",
                         prior_runs=tuple(r for r in rows if r["ended_at"] < mine[0]["started_at"]))
    n = looks.runs_per_arm(mine, OPS)
    w, c, r, d = looks.arms(mine, OPS, "elapsed_s", n)
    priors = looks.priors((w, c, r, d), OPS, "elapsed_s", "c7")
    by_hand = stats.fieller(moderated.difference(c, w, priors["c"], priors["w"]),
                            moderated.difference(r, d, priors["r"], priors["d"]),
                            options.look_confidence)
    cell = next(b for b in table if b["codec"] == "c7" and b["metric"] == "T")
    assert by_hand and cell["fieller"] == "bounded"
    assert (cell["fieller_lo"], cell["fieller_hi"]) == pytest.approx(by_hand)
    welch = stats.fieller(stats.welch_difference(c, w), stats.welch_difference(r, d),
                          options.look_confidence)
    assert welch is None or welch != pytest.approx(by_hand)
    prior = moderated.Prior(6.0, 0.02 ** 2)
    x, y = [9.1, 9.3], [10.0, 10.2, 9.9]
    est, var, df = moderated.difference(x, y, prior, prior)
    iv = moderated.interval([(1, x, prior), (-1, y, prior)], 0.95)
    assert est == pytest.approx(iv.estimate) and df == pytest.approx(iv.df)
    assert iv.hi - est == pytest.approx(moderated._quantile(0.975, math.floor(df * 100))
                                        * math.sqrt(var))


def test_the_kind_rectangle_takes_the_variances_the_verdict_took():
    """Under the moderated design a cell's dw and dr intervals, whose rectangle decides
    its break-even kind, moderate each arm's variance by the prior its job fitted, as its
    verdict and Fieller's interval do: at two runs a Welch rectangle has one degree of
    freedom and leaves kinds open that the verdict's own variances decide."""
    from wattzip.analysis.arms import four_operations

    codecs = [("text", f"c{k}") for k in range(8)]
    rows, _ = shared_plain_study(codecs, random.Random(9))
    options = AnalysisOptions(looks=3, moderated=True)
    table = run_tables.breakeven_table(rows, options)
    ops = dict(four_operations(rows))[("tb", "s", "text", "c7")]
    v = {k: [r["elapsed_s"] for r in runs] for k, runs in ops.items()}
    priors = run_tables._job_priors(four_operations(rows), rows)[
        (("tb", "s", "text", "c7"), "elapsed_s")]
    each = options.difference_confidence
    cell = next(b for b in table if b["codec"] == "c7" and b["metric"] == "T")
    for (a, b), name in ((("c", "w"), "dw"), (("r", "d"), "dr")):
        by_hand = moderated.interval([(1, v[a], priors[a]), (-1, v[b], priors[b])], each)
        assert (cell[f"{name}_lo"], cell[f"{name}_hi"]) == pytest.approx(
            (by_hand.lo, by_hand.hi))
    welch = run_tables.breakeven_table(rows, AnalysisOptions(looks=3))
    widths = [sum(b["dw_hi"] - b["dw_lo"] for b in t if b["metric"] == "T")
              for t in (welch, table)]
    assert widths[1] < widths[0]
    opened = [sum(not b["decided"] for b in t) for t in (welch, table)]
    assert opened[1] <= opened[0]
    # The jobs read the same rectangle: a job that stopped before its last look left no
    # T or E kind open in the report, and one the report leaves open ran to the last.
    for b in table:
        if b["metric"] in ("T", "E"):
            assert b["decided"] or b["n"] == 8, (b["codec"], b["metric"], b["n"])
    assert any(b["n"] < 8 for b in table)


def test_the_jobs_looks_and_the_report_spend_the_same_energy_budget():
    """A real meter's Type B terms (a logger whose power moved between its readings)
    widen each E look of a job as they widen the report's verdict: the two agree on every
    cell, and the jobs measure on where looks without the budget would have stopped."""
    lagging = {"meter_source": "wattsup", "sample_gap_s": 1.0, "power_step_rss_w": 70.0}
    codecs = [("text", f"c{k}") for k in range(6)]
    rows, decided = shared_plain_study(codecs, random.Random(5), meter=lagging)
    table = run_tables.breakeven_table(rows, AnalysisOptions(looks=3, moderated=True))
    for ftype, codec in codecs:
        job = decided[(ftype, codec)][0]
        cell = {b["metric"]: b["verdict"] for b in table
                if (b["file_type"], b["codec"]) == (ftype, codec)}
        assert job == {k: cell[k] for k in job}, (ftype, codec)
    bare, _ = shared_plain_study(codecs, random.Random(5))
    assert len(rows) > len(bare)
