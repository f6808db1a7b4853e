"""When a job stops: the paper's rule, the verdict design's planned looks against the
job's own plain arm (interleaved ABBA), and outliers that keep a job going."""

from __future__ import annotations

import json
import os
import random
import shutil

import pytest

from wattzip import meters, records
from wattzip.analysis.stopping import VerdictLooks, needs_more, outliers
from wattzip.errors import WattzipError
from wattzip.machine import media
from wattzip.measure import measurement, repeats
from wattzip.workload import codec_registry

from .test_runner import make_job

OPS = ("compress-write", "decompress-read")
PLAIN = ("plain-write", "plain-read")


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
    looks = VerdictLooks((3, 5, 8))
    cheap = job_runs(CHEAP, 3)
    assert looks.decisions(cheap, OPS, 3) == {"T": "saves", "E": "saves"}
    assert not looks.needs_more(cheap, OPS)
    assert not needs_more(cheap, OPS, 3, 8, 0.05, looks)


def test_the_looks_compare_with_the_jobs_own_plain_runs():
    """The same codec runs save against a slow plain arm and cost against a fast one: the
    verdict is decided on the plain runs in the job's own runs, no baseline elsewhere."""
    looks = VerdictLooks((3, 5, 8))
    codec = runs(CHEAP, 3, 0.02, seed=2)
    fast_plain = runs({"plain-write": 3.0, "plain-read": 1.5}, 3, 0.02, seed=1)
    assert looks.decisions(plain_arm(3) + codec, OPS, 3) == {"T": "saves", "E": "saves"}
    assert looks.decisions(fast_plain + codec, OPS, 3) == {"T": "costs", "E": "costs"}
    # A look needs n runs of each of the four operations, the plain arm's too.
    assert looks.runs_per_arm(plain_arm(2) + runs(CHEAP, 3, 0.02, seed=2), OPS) == 2
    assert looks.needs_more(plain_arm(2) + runs(CHEAP, 3, 0.02, seed=2), OPS)


def test_an_undecided_cell_goes_to_the_last_look_and_no_further():
    looks = VerdictLooks((3, 5, 8), margin=0.001)
    close = {"compress-write": 10.05, "decompress-read": 4.98}
    for n, more in ((2, True), (3, True), (4, True), (5, True), (8, False)):
        mine = job_runs(close, n, cv=0.08, seed=3, plain_cv=0.08)
        assert looks.needs_more(mine, OPS) is more, n


def test_a_decided_verdict_with_its_break_even_kind_open_goes_on():
    """A codec that saves at one read per write but reads as fast as plain (dr 0.05 s
    against a 0.1 s spread): its verdict is decided at the first look, its break-even
    kind (always, or only up to some n) is not, and the claims rest on the kind, so the
    job measures on to the next look, and no further than the last."""
    looks = VerdictLooks((3, 5, 8))
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
    both, energy = VerdictLooks((3, 5, 8)), VerdictLooks((3, 5, 8), kind_metrics=("E",))
    assert both.open_kinds(mine, OPS, 3).keys() == {"T"}
    assert not energy.open_kinds(mine, OPS, 3)
    assert both.needs_more(mine, OPS) and not energy.needs_more(mine, OPS)
    assert measurement.verdict_looks("3,5,8", 1.0, 0.02, kinds="E").kind_metrics == ("E",)
    assert measurement.verdict_looks("3,5,8", 1.0, 0.02, kinds="").kind_metrics == ()
    with pytest.raises(WattzipError, match="--kinds 'ET'"):
        measurement.verdict_looks("3,5,8", 1.0, 0.02, kinds="ET")


def test_a_look_s_level_is_one_method_its_verdicts_and_kinds_both_read():
    """A look's level is VerdictLooks.look_confidence(n), alpha / looks by default: the
    verdicts and the break-even kinds both read it (benchmarks/guard_replay.py replays
    other splits of alpha over the looks through it)."""
    asked = []

    class Strict(VerdictLooks):
        def look_confidence(self, n):
            asked.append(n)
            return 1 - 1e-12

    looks, strict = VerdictLooks((3, 5, 8)), Strict((3, 5, 8))
    assert looks.look_confidence(3) == looks.look_confidence(8) == 1 - 0.05 / 3
    cheap = job_runs(CHEAP, 3)
    assert not looks.needs_more(cheap, OPS)
    assert strict.decisions(cheap, OPS, 3) == {"T": "undecided", "E": "undecided"}
    assert strict.open_kinds(cheap, OPS, 3).keys() == {"T", "E"}
    assert strict.needs_more(cheap, OPS)
    assert set(asked) == {3}


def test_without_a_meter_the_time_verdict_decides_alone():
    looks = VerdictLooks((3, 5, 8))
    cheap = job_runs(CHEAP, 3, seed=4, energy=False)
    assert looks.decisions(cheap, OPS, 3) == {"T": "saves"}
    assert not looks.needs_more(cheap, OPS)


def test_unverified_runs_do_not_count_toward_a_look():
    looks = VerdictLooks((3, 5, 8))
    cheap = job_runs(CHEAP, 3, seed=5)
    cheap[-2]["verified"] = False  # the codec arm's third write
    assert looks.needs_more(cheap, OPS)  # two good repeats of the write: below the look
    plain_failed = job_runs(CHEAP, 3, seed=5)
    plain_failed[0]["verified"] = False  # the plain arm's first write
    assert looks.needs_more(plain_failed, OPS)


def test_the_baseline_and_the_paper_rule_keep_their_own_stopping():
    plain = plain_arm(n=5, cv=0.001)
    assert not needs_more(plain, PLAIN, 5, 5, 0.05)
    assert needs_more(plain, PLAIN, 8, 8, 0.05)


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
    assert not needs_more(clean, OPS, 5, 7, 10.0)
    heard = []
    five = at(5)
    assert needs_more(five, OPS, 5, 7, 10.0, log=heard.append)
    assert len(five) == 10 and max(r["elapsed_s"] for r in five) > 10, "never dropped"
    assert any("r2 decompress-read is an outlier" in m and "one more repeat" in m
               for m in heard)
    heard.clear()
    assert not needs_more(at(6), OPS, 5, 7, 10.0, log=heard.append)
    assert any("r2 decompress-read" in m and "kept the job going once already" in m
               for m in heard)
    later = with_outlier(steady(CHEAP, 6), "decompress-read", 6, 5)  # a new one at 6
    assert needs_more(later, OPS, 5, 7, 10.0)
    heard.clear()
    at_max = with_outlier(steady(CHEAP, 7), "decompress-read", 7, 5)
    assert not needs_more(at_max, OPS, 5, 7, 10.0, log=heard.append)
    assert any("r7 decompress-read" in m and "at the most repeats (7)" in m for m in heard)


def test_under_the_verdict_design_an_outlier_goes_on_to_the_next_look_up_to_the_last():
    looks = VerdictLooks((3, 5, 8))

    def at(n):  # a clear saving and kind (decided at every look), one plain read 5% off
        return with_outlier(steady({**STEADY_PLAIN, **CHEAP}, n), "plain-read", 2, 1.05)

    assert not needs_more(steady({**STEADY_PLAIN, **CHEAP}, 5), OPS, 3, 8, 0.05, looks)
    assert not needs_more(at(3), OPS, 3, 8, 0.05, looks)  # too few runs to call it
    heard = []
    assert looks.decisions(at(5), OPS, 5)["T"] != "undecided"
    assert needs_more(at(5), OPS, 3, 8, 0.05, looks, log=heard.append)
    assert any("r2 plain-read is an outlier" in m and "next planned look" in m for m in heard)
    assert needs_more(at(6), OPS, 3, 8, 0.05, looks)  # between the looks: on to 8
    heard.clear()
    assert not needs_more(at(8), OPS, 3, 8, 0.05, looks, log=heard.append)
    assert any("stays" in m and "at the last look (8)" in m for m in heard)


def test_wrong_decisions_stay_rare_whichever_look_stops():
    """A codec 3% cheaper in truth, CV 5%: over many seeds, 'costs' (the wrong side) is
    rare, though the procedure looks three times (and goes on past outliers)."""
    wrong = decided = 0
    for seed in range(300):
        looks = VerdictLooks((3, 5, 8), margin=0.0)
        mine = job_runs({"compress-write": 9.7, "decompress-read": 4.85}, 8, cv=0.05,
                        seed=seed, plain_cv=0.05, plain_seed=1000 + seed)
        n = next(k for k in looks.looks if not needs_more(
            [r for r in mine if r["repeat"] <= k], OPS, 3, 8, 0.05, looks))
        verdict = looks.decisions([r for r in mine if r["repeat"] <= n], OPS, n)["T"]
        wrong += verdict == "costs"
        decided += verdict != "undecided"
    assert wrong / 300 <= 0.05
    assert decided > 0


# --- real jobs on the small inputs ---------------------------------------------------


@pytest.fixture
def model_meter():
    return meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60,
                                                 interval_s=0.05))


ARMS = {1: ["plain-write", "plain-read", "compress-write", "decompress-read"],
        0: ["compress-write", "decompress-read", "plain-write", "plain-read"]}


def abba_order(rows):
    """Each repeat's operations in journal order, against P C, C P, P C, ..."""
    by_repeat: dict[int, list[str]] = {}
    for r in rows:
        by_repeat.setdefault(r["repeat"], []).append(r["op"])
    return all(ops == ARMS[repeat % 2] for repeat, ops in by_repeat.items())


def test_a_verdict_job_measures_its_own_plain_arm_interleaved_abba(small_inputs, tmp_path,
                                                                    model_meter):
    job = make_job(small_inputs, tmp_path, "gz-1", min_repeats=2, max_repeats=4,
                   looks=VerdictLooks((2, 3, 4)), factors={"setting": "s"})
    journal = tmp_path / "j.jsonl"
    heard = []
    summary = repeats.run_job(job, model_meter, journal, log=heard.append)
    rows = records.read_jsonl([journal])
    assert {r["job_key"] for r in rows} == {job.key()}, "both arms are the job's runs"
    assert abba_order(rows) and len(rows) == 4 * summary["repeats"]
    assert [r["started_at"] for r in rows] == sorted(r["started_at"] for r in rows)
    assert summary["repeats"] in (2, 3, 4) and all(r["verified"] for r in rows)
    plain = [r for r in rows if r["op"].startswith("plain")]
    assert {r["codec"] for r in plain} == {"plain"} and {r["tool"] for r in plain} == {"dd"}
    assert {r["paired_with"] for r in plain} == {"gz-1"}
    assert not any(r.get("paired_with") for r in rows if r["codec"] == "gz-1")
    # Each arm wrote its own file: the plain copy the input's size, gzip's smaller.
    sizes = {r["op"]: r["output_bytes"] for r in rows if r["op"].endswith("write")}
    assert sizes["plain-write"] == job.input_bytes > sizes["compress-write"]
    assert not list((tmp_path / "target").iterdir()), "every arm's file removed"
    assert any(f"stopped at the look of {summary['repeats']} runs per arm" in m
               for m in heard)
    runs_csv = tmp_path / "runs.csv"
    records.write_runs_csv(rows, runs_csv)
    flat = records.load_runs([runs_csv])
    assert {r["paired_with"] for r in flat if r["codec"] == "plain"} == {"gz-1"}


def test_moderated_jobs_share_one_plain_arm_per_file_type(small_inputs, tmp_path,
                                                         model_meter):
    """Two codecs' jobs of one file type under the moderated design, one after the other:
    the first measures the plain pairs its first look needs, the second adds one pair
    to the same arm (plain first or last as the arm's pairs so far are even or odd),
    and its looks compare with all of them; each plain run names the job that measured
    it."""
    journals = tmp_path / "journal" / "s" / "text"
    journals.mkdir(parents=True)
    heard = []
    for name in ("gz-1", "lzo-1"):
        looks = measurement.verdict_looks("2,3", 1.0, 0.02, moderated=True,
                                          prior_journals=str(tmp_path / "journal" / "s"),
                                          own_journal=str(journals / f"{name}.jsonl"),
                                          file_type="text")
        job = make_job(small_inputs, tmp_path, name, min_repeats=2, max_repeats=3,
                       looks=looks, factors={"setting": "s"})
        repeats.run_job(job, model_meter, journals / f"{name}.jsonl", log=heard.append)
    first, second = (records.read_jsonl([journals / f"{n}.jsonl"]) for n in ("gz-1", "lzo-1"))
    plain = [[r for r in rows if r["codec"] == "plain"] for rows in (first, second)]
    # The first job's arm grows with its repeats (no prior: it may look twice); the
    # second finds it as long as its looks need and adds one pair.
    assert len(plain[0]) == 2 * max(r["repeat"] for r in first) and len(plain[1]) == 2
    assert {r["shared_plain_of"] for r in plain[0]} == {"gz-1"}
    assert {r["shared_plain_of"] for r in plain[1]} == {"lzo-1"}
    assert not any(r.get("paired_with") for r in first + second)
    assert [r["op"] for r in first[:8]] == [*ARMS[1], *ARMS[0]]
    assert [r["op"] for r in second[:4]] == ARMS[1 - len(plain[0]) // 2 % 2]
    assert any("lzo-1, against the text plain arm its setting's codecs share, "
               f"{len(plain[0]) // 2 + 1} pairs" in m for m in heard)
    assert not list((tmp_path / "target").iterdir()), "every arm's file removed"


def test_a_killed_verdict_job_resumes_both_arms_in_abba_order(small_inputs, tmp_path,
                                                              model_meter):
    looks = VerdictLooks((3, 4))
    journal = tmp_path / "j.jsonl"
    first = make_job(small_inputs, tmp_path, "gz-1", min_repeats=3, max_repeats=4,
                     looks=looks)
    repeats.run_job(first, model_meter, journal, log=lambda m: None)
    rows = records.read_jsonl([journal])
    # A kill after the plain arm of repeat 3 (P C, C P, P | C P ...): the codec arm of
    # repeat 3 is what the job lacks.
    lines = journal.read_text().splitlines(keepends=True)[:10]
    assert [r["op"] for r in rows[8:10]] == ["plain-write", "plain-read"]
    journal.write_text("".join(lines))
    heard = []
    job = make_job(small_inputs, tmp_path, "gz-1", min_repeats=3, max_repeats=4, looks=looks)
    summary = repeats.run_job(job, model_meter, journal, log=heard.append)
    again = records.read_jsonl([journal])
    assert any("resuming after 3" in m for m in heard)
    assert again[:10] == rows[:10]
    assert [r["op"] for r in again[10:12]] == ["compress-write", "decompress-read"]
    assert [r["repeat"] for r in again[10:12]] == [3, 3]
    assert abba_order(again) and len(again) == 4 * summary["repeats"]


def test_an_outlier_keeps_a_real_job_going_and_stays_in_its_runs(small_inputs, tmp_path,
                                                                  model_meter, monkeypatch):
    """The paper's rule with a wide target stops at min = 5; one compress-write ten times
    slower keeps the job measuring one more repeat, and the run stays, verified, in the
    journal."""
    real = repeats.measure
    calls = {"compress-write": 0}

    def measure(operation, *args, **kw):
        result = real(operation, *args, **kw)
        if operation.op == "compress-write":
            calls["compress-write"] += 1
            if calls["compress-write"] == 2:
                result["elapsed_s"] *= 10
        return result

    monkeypatch.setattr(repeats, "measure", measure)
    job = make_job(small_inputs, tmp_path, "gz-1", min_repeats=5, max_repeats=7,
                   ci_target=10.0)
    heard = []
    summary = repeats.run_job(job, model_meter, tmp_path / "j.jsonl", log=heard.append)
    rows = records.read_jsonl([tmp_path / "j.jsonl"])
    assert summary["repeats"] >= 6  # one more for r2 (other tiny runs may add their own)
    slow = [r for r in rows if r["op"] == "compress-write" and r["repeat"] == 2]
    assert slow[0]["verified"] and slow[0]["elapsed_s"] > 5 * min(
        r["elapsed_s"] for r in rows if r["op"] == "compress-write")
    assert any("r2 compress-write is an outlier" in m and "one more repeat" in m
               for m in heard)
    assert any("r2 compress-write is an outlier" in m and "stays" in m for m in heard)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mkfs.btrfs") is None
                    or shutil.which("compsize") is None,
                    reason="needs root, btrfs-progs and btrfs-compsize")
def test_a_filesystem_codecs_plain_arm_writes_without_its_compression(small_inputs, tmp_path,
                                                                      model_meter):
    """btrfs compress-force is the codec's mount option: its plain arm, on the same image,
    is mounted without it (as the paper design's plain job is), switched each repeat."""
    codec = codec_registry.get("btrfs-zstd-3")
    medium = media.Medium(name="btrfs", kind="image", path=str(tmp_path / "btrfs"),
                          size="256MiB", fs="btrfs", mount_options=codec.mount_option)
    job = make_job(small_inputs, tmp_path, "plain", file_type="zero", medium=medium,
                   min_repeats=2, max_repeats=3, looks=VerdictLooks((2, 3)))
    job.codec = codec
    assert repeats.plain_arm(job).medium.mount_options == ""
    repeats.run_job(job, model_meter, tmp_path / "j.jsonl", log=lambda m: None)
    rows = records.read_jsonl([tmp_path / "j.jsonl"])
    assert abba_order(rows) and all(r["verified"] for r in rows)
    options = {r["op"]: r["mount_options"] for r in rows}
    assert "compress-force=zstd:3" in options["compress-write"]
    assert "compress-force" not in options["plain-write"]
    ratio = {r["op"]: job.input_bytes / r["output_bytes"] for r in rows
             if r["op"].endswith("write")}
    assert ratio["compress-write"] > 20 and ratio["plain-write"] == 1.0


def test_the_report_fits_the_prior_a_moderated_job_fitted_after_another_job_drifted(
        small_inputs, tmp_path, model_meter, monkeypatch):
    """A job the drift check measures again keeps its first measurement's runs in its
    journal, verified there, and flagged in its output, which runs.csv holds. The next
    jobs' looks fit their prior from the journals, the analysis from the outputs: both
    must read the same runs, or a job stops on a decision the report does not make.
    Real jobs one after another; only the drift check's verdict is forced, once."""
    from wattzip.analysis import run_tables
    from wattzip.analysis.arms import four_operations
    from wattzip.measure import drift
    from wattzip.measure.disturbance import DriftCheck

    folder, outputs = tmp_path / "journal" / "s", tmp_path / "runs"
    outputs.mkdir()
    verdicts_left = iter(["the reference operation's time changed by +9% (forced)"])
    monkeypatch.setattr(drift, "compare", lambda *a: next(verdicts_left, None))
    for name in ("gz-1", "bz-1", "lzo-1"):
        journal = folder / "text" / f"{name}.jsonl"
        looks = measurement.verdict_looks("2,3", 1.0, 0.02, moderated=True,
                                          prior_journals=str(folder),
                                          own_journal=str(journal), file_type="text")
        job = make_job(small_inputs, tmp_path, name, min_repeats=2, max_repeats=3,
                       looks=looks, factors={"setting": "s"}, drift=DriftCheck(2, 0.05))
        _, runs = drift.checked_job(job, model_meter, journal, log=lambda m: None)
        records.write_text_atomically(outputs / f"{name}.jsonl",
                                      "".join(json.dumps(r) + "\n" for r in runs))
    first = records.read_jsonl([folder / "text" / "gz-1.jsonl"])
    flagged = [r for r in records.read_jsonl([outputs / "gz-1.jsonl"]) if not r["verified"]]
    assert flagged and all(r["disturbed"].startswith("drift") for r in flagged)
    assert len({r["job_key"] for r in first}) == 2 and all(r["verified"] for r in first)

    rows = records.load_runs(sorted(outputs.glob("*.jsonl")))
    cells = four_operations(rows)
    analysis = run_tables._job_priors(cells, rows)
    own = records.last_measurement(records.read_jsonl([journal]))
    n = looks.runs_per_arm(own, OPS)
    for metric in ("elapsed_s", "energy_j"):
        fitted = looks.priors(looks.arms(own, OPS, metric, n), OPS, metric, "lzo-1")
        report = next(p for (cell, stem), p in analysis.items()
                      if cell[2:] == ("text", "lzo-1") and stem == metric)
        assert fitted == report, metric
