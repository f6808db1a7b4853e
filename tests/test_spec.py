"""A job's slice of the study as one spec (wattzip.measure.spec): the document the model
writes is the one the job runs, every shipped study's specs pass their schema, and a
hand run naming the study's config runs the same document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wattzip.measure import spec as specs
from wattzip.model import checks
from wattzip.model.study import Study

from .job_files import wattzip_job
from .test_design import BASE

REPO = Path(__file__).resolve().parent.parent
OVERLAYS = sorted(p.name for p in (REPO / "config").glob("*.yaml") if p.name != "schema.yaml")


@pytest.mark.parametrize("overlay", [None, *OVERLAYS])
def test_every_shipped_study_gives_its_jobs_specs_their_schema_takes(overlay, monkeypatch):
    monkeypatch.chdir(REPO)
    study = Study.from_files(["config.yaml", *([f"config/{overlay}"] if overlay else [])])
    for testbed in study.testbeds:
        assert checks.spec_problems(study, testbed) == []


def test_a_spec_carries_the_config_s_own_meter_and_names(monkeypatch, tmp_path):
    """Nothing is translated on the way: the meter is the testbed's `meter:` as the config
    holds it (its defaults filled in), the looking job the config's verdict whole."""
    monkeypatch.chdir(tmp_path)
    study = Study({**BASE, "meter": {"order": ["trace", "model"],
                                                 "trace_path": "/var/log/power.csv"},
                               "repeats": {**BASE["repeats"], "design": "verdict"},
                               "verdict": {"margin": 0.03}})
    job = next(j for j in study.jobs("tb") if j.codec == "gz-1")
    spec = study.job_spec(job)
    assert spec["meter"] == study.testbeds["tb"].meter
    assert spec["meter"]["trace_path"] == "/var/log/power.csv"
    assert spec["looks"]["runs"] == [3, 5, 8] and spec["verdict"]["margin"] == 0.03
    assert spec["verdict"] == study.config["verdict"]  # every key, defaults filled in
    assert specs.check(json.loads(specs.text(spec)), specs.JOB) == spec


def test_a_job_run_from_the_model_s_spec_and_from_its_config_is_one_job(job_files):
    """The spec the workflow writes, and the config a user names for the same job, make
    one job (one key): the second run resumes the first's runs and measures nothing anew."""
    journal = job_files["--journal"]
    first = wattzip_job(job_files)
    assert first.returncode == 0, first.stderr
    measured = journal.read_text().splitlines()
    assert len(measured) == 4  # 2 repeats of compress-write and decompress-read
    by_config = {"--configfile": journal.with_name("study.yaml"),
                 "--manifest": job_files["--manifest"], "--journal": journal,
                 "--out": job_files["--out"].with_name("2.jsonl")}
    second = wattzip_job(by_config, "--file-type", "text", "--codec", "gz-1")
    assert second.returncode == 0, second.stderr
    assert "resuming after 2 repeat(s)" in second.stderr
    assert journal.read_text().splitlines() == measured
    assert job_files["--out"].read_text() == by_config["--out"].read_text()


def test_a_job_measured_by_another_version_of_its_tool_is_not_resumed(job_files):
    """A tool upgraded between a killed job and its rerun: the runs in the journal were
    measured by the old gzip, and new ones would join them in one cell. The job refuses,
    names both versions, and adds nothing to the journal."""
    assert wattzip_job(job_files).returncode == 0
    journal = job_files["--journal"]
    runs = [json.loads(line) for line in journal.read_text().splitlines()]
    now = runs[0]["tool_version"]
    journal.write_text("".join(json.dumps({**r, "tool_version": "0.1"}) + "\n" for r in runs))
    before = journal.read_text()
    job_files["--out"].unlink()
    again = wattzip_job(job_files)
    assert again.returncode != 0
    assert f"measured by gzip 0.1, and gzip is {now} now" in again.stderr, again.stderr
    assert journal.read_text() == before and not job_files["--out"].exists()
