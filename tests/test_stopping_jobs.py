"""Real jobs under the verdict and moderated designs (gzip, the model meter): both arms
interleaved ABBA and resumed in that order after a kill, one plain arm per file type
shared by the moderated jobs, and an outlier that keeps a job going."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from wattzip import meters, records
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.stopping import VerdictLooks
from wattzip.machine import media
from wattzip.measure import measurement, repeats
from wattzip.workload import codec_registry

from .test_runner import make_job
from .test_stopping import OPS


def moderated_looks(prior_journals) -> dict:
    """A job spec's looks, verdict and repeats under the moderated design
    (wattzip.measure.spec)."""
    return {"looks": {"runs": [2, 3], "kinds": ["T", "E"],
                      "prior_journals": str(prior_journals)},
            "repeats": {"design": "moderated", "moderated_looks": [2, 3]},
            "verdict": {"margin": 0.02, "reads_per_write": 1.0}}


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
    job = make_job(small_inputs, tmp_path, "gz-1", min=2, max=4,
                   looks=VerdictLooks((2, 3, 4), AnalysisOptions(looks=3)),
                   factors={"setting": "s"})
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
        looks = measurement.verdict_looks(moderated_looks(tmp_path / "journal" / "s"),
                                          str(journals / f"{name}.jsonl"), "text")
        job = make_job(small_inputs, tmp_path, name, min=2, max=3,
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
    looks = VerdictLooks((3, 4), AnalysisOptions(looks=2))
    journal = tmp_path / "j.jsonl"
    first = make_job(small_inputs, tmp_path, "gz-1", min=3, max=4,
                     looks=looks)
    repeats.run_job(first, model_meter, journal, log=lambda m: None)
    rows = records.read_jsonl([journal])
    # A kill after the plain arm of repeat 3 (P C, C P, P | C P ...): the codec arm of
    # repeat 3 is what the job lacks.
    lines = journal.read_text().splitlines(keepends=True)[:10]
    assert [r["op"] for r in rows[8:10]] == ["plain-write", "plain-read"]
    journal.write_text("".join(lines))
    heard = []
    job = make_job(small_inputs, tmp_path, "gz-1", min=3, max=4, looks=looks)
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
    job = make_job(small_inputs, tmp_path, "gz-1", min=5, max=7,
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
                   min=2, max=3,
                   looks=VerdictLooks((2, 3), AnalysisOptions(looks=2)))
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
        looks = measurement.verdict_looks(moderated_looks(folder), str(journal), "text")
        job = make_job(small_inputs, tmp_path, name, min=2, max=3,
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
