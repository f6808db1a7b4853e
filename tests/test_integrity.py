"""No run mixed, mislabelled or lost: each bad input gives its exact error or the right number."""

from __future__ import annotations

import csv
import json
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from wattzip import meters, records
from wattzip.analysis import run_tables
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.errors import ConfigError, FactorError, RecordError, WattzipError
from wattzip.machine import throttle
from wattzip.measure import free_space, repeats
from wattzip.model import plan
from wattzip.model.study import Study
from wattzip.workload import codec_registry

from .test_runner import corrupting_codec, make_job


@pytest.mark.parametrize(("text", "bytes_per_s"), [
    ("30MB/s", 30_000_000), ("30 MB/s", 30_000_000), ("30MBps", 30_000_000),
    ("240Mbps", 30_000_000), ("240Mbit/s", 30_000_000), ("240Mb/s", 30_000_000),
    ("30MiB/s", 30 * 2**20), ("1.5GB/s", 1_500_000_000), ("unlimited", None),
])
def test_bandwidth_units_are_read_as_written(text, bytes_per_s):
    assert throttle.parse_bandwidth(text) == bytes_per_s


@pytest.mark.parametrize("text", ["30", "30MB", "30 megabytes", "fast"])
def test_a_bandwidth_without_its_unit_is_refused(text):
    with pytest.raises(ConfigError, match="write a rate with its unit"):
        throttle.parse_bandwidth(text)


def test_a_throttle_that_cannot_reach_its_target_is_an_error_before_measuring():
    with pytest.raises(FactorError, match="cannot reach the target: no block device"), \
            throttle.throttled({"target": None, "input": "vda"}, 30_000_000):
        pass


def model(idle_w=20.0, max_w=60.0):
    return meters.ModelMeter(meters.MeterOptions(model_idle_power_w=idle_w,
                                                 model_max_power_w=max_w, interval_s=0.05))


def test_a_job_without_enough_verified_repeats_is_incomplete(small_inputs, tmp_path):
    job = make_job(small_inputs, tmp_path, "gz-1", max=5)
    job.codec = corrupting_codec(tmp_path)
    summary = repeats.run_job(job, model(), tmp_path / "j.jsonl", log=lambda m: None)
    assert summary["complete"] is False and summary["failed"] == 4


def test_a_resume_under_another_meter_identity_measures_again(small_inputs, tmp_path):
    journal = tmp_path / "j.jsonl"
    said: list[str] = []
    ids = []
    for coefficients in ((20.0, 60.0), (0.74, 3.5)):
        meter = model(*coefficients)
        job = make_job(small_inputs, tmp_path, "gz-1",
                       meter_identity=meter.identity({"idle_power_w": 20.0}))
        repeats.run_job(job, meter, journal, log=said.append)
        runs = repeats.read_journal(journal, job.key())
        assert len(runs) == 4 and len({r["meter_id"] for r in runs}) == 1
        ids.append(runs[0]["meter_id"])
    assert ids[0] != ids[1]
    assert any("another meter identity" in m for m in said)
    # Every run maps to exactly one identity, and a summary never holds two: the
    # analysis refuses a setting whose runs come from two identities.
    rows = [records.flatten(r) for r in records.read_journal(journal)]
    assert all(r["meter_id"] in ids for r in rows)
    out = tmp_path / "runs.csv"
    records.write_runs_csv(records.read_journal(journal), out)
    with pytest.raises(RecordError, match="runs of 2 meter identities"):
        run_tables.analyze([str(out)], tmp_path / "tables", options=AnalysisOptions())


def test_one_journal_reader_names_every_damaged_line(tmp_path):
    path = tmp_path / "j.jsonl"
    good = {"testbed": "t", "file_type": "text", "codec": "gz-1", "op": "compress-write",
            "repeat": 1, "verified": True, "job_key": "k"}
    path.write_text(json.dumps(good) + "\n" + '{"torn": ' + "\n" + json.dumps(good) + "\n")
    with pytest.raises(RecordError, match=r"j.jsonl, line 2: not a JSON record"):
        records.read_journal(path, required=records.RUN_REQUIRED)
    path.write_text(json.dumps({k: v for k, v in good.items() if k != "op"}) + "\n")
    with pytest.raises(RecordError, match=r"line 1: the record has no op"):
        records.read_jsonl([path])
    # A torn last line is a write a kill cut short: left out, said, and cut off at the
    # next append, never kept as a damaged middle line.
    path.write_text(json.dumps(good) + "\n" + '{"testbed": "t", "fi')
    assert len(records.read_journal(path, required=records.RUN_REQUIRED)) == 1
    records.append_journal(path, good)
    assert len(records.read_journal(path, required=records.RUN_REQUIRED)) == 2


def test_a_torn_runs_csv_and_a_broken_manifest_are_named(tmp_path):
    out = tmp_path / "runs.csv"
    records.write_runs_csv([{"testbed": "t", "file_type": "text", "codec": "gz-1",
                             "op": "plain-write", "repeat": 1, "verified": True,
                             "elapsed_s": 1.5}] * 2, out)
    text = out.read_text()
    out.write_text(text[: text.rindex("\n", 0, len(text) - 1) + 30])
    with pytest.raises(RecordError, match=r"runs.csv, line 3: \d+ columns expected"):
        records.read_runs_csv(out)
    manifest = tmp_path / "text.bin.json"
    manifest.write_text('{"path": "x", ')
    with pytest.raises(RecordError, match="the input manifest is not JSON"):
        records.read_json(manifest, "input manifest")
    manifest.write_text('{"path": "x"}')
    with pytest.raises(RecordError, match="the input manifest has no sha256"):
        records.read_json(manifest, "input manifest", ("path", "sha256"))


WRITER = textwrap.dedent("""
    import sys
    from wattzip import records
    journal, table = sys.argv[1], sys.argv[2]
    runs = []
    for i in range(1, 100000):
        run = {"testbed": "t", "file_type": "text", "codec": "gz-1", "op": "plain-write",
               "repeat": i, "verified": True, "elapsed_s": 0.5, "failure": "x" * 500}
        records.append_journal(journal, run)
        runs.append(run)
        records.write_runs_csv(runs, table)
""")


def test_a_writer_killed_at_random_points_leaves_intact_or_named_files(tmp_path):
    rng = random.Random(2009)
    for attempt in range(8):
        journal, table = tmp_path / f"j{attempt}.jsonl", tmp_path / f"runs{attempt}.csv"
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(journal), str(table)])
        time.sleep(0.3 + rng.random() * 0.5)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        runs = records.read_journal(journal, required=records.RUN_REQUIRED)  # never raises
        assert [r["repeat"] for r in runs] == list(range(1, len(runs) + 1))
        if not table.exists():  # killed before its first table (a slow start, a busy machine)
            assert len(runs) <= 1
            continue
        rows = records.read_runs_csv(table)  # whole: written beside and renamed
        assert len(rows) in (len(runs), len(runs) - 1, len(runs) + 1)
        with open(table, newline="") as f:
            assert all(None not in row for row in csv.DictReader(f))


def test_a_pilot_command_that_fails_is_an_error(tmp_path):
    sample = tmp_path / "sample"
    sample.write_bytes(b"x" * 1000)
    with pytest.raises(WattzipError, match="the pilot's false failed"):
        plan._timed(["false"], str(sample), None)


def test_the_plan_adds_the_drift_check_s_reference_which_its_pilot_timed(tmp_path):
    """The pilot times the reference operation (real gzip, once per cache); the plan adds
    it at both ends of every job and in the calibration phases of each state of the machine."""
    timed = plan.pilot(["zero"], [], tmp_path / "pilot.json")
    assert 0 < timed["reference"] < 60
    study = Study.from_files(["config.yaml"])
    rates = {"reference": timed["reference"], **{f"gen|{t}": 1e-9 for t in study.file_types},
             **{f"{t}|{name}": {"write_s_per_byte": 1e-9, "read_s_per_byte": 1e-9}
                for t in study.file_types for name in ["plain", *study.codecs]}}
    off = Study({**study.config, "drift": {"repeats": 0, "max_change": 0.05}})
    added = (plan.estimate(study, rates).overhead_min_s
             - plan.estimate(off, rates).overhead_min_s)
    jobs = len(study.jobs(study.first_testbed))
    assert added > 2 * jobs * study.config["drift"]["repeats"] * timed["reference"]
    assert plan.estimate(study, rates).measured_min_s == plan.estimate(off, rates).measured_min_s


def test_the_plan_prices_idle_calibration_from_its_first_look_to_every_window():
    """Idle calibration stops at its first look when the windows agree (the paper's 10 x 10
    minutes, looked at from the 3rd: 3 windows at the fewest): the plan's fewest counts
    those, its most all 10."""
    paper = Study.from_files(["config.yaml", "config/paper.yaml"]).config
    study = Study({**paper, "idle": {**paper["idle"], "min_count": 3}})
    rates = {"reference": 0.2, **{f"gen|{t}": 1e-9 for t in study.file_types},
             **{f"{t}|{name}": {"write_s_per_byte": 1e-9, "read_s_per_byte": 1e-9}
                for t in study.file_types for name in ["plain", *study.codecs]}}
    est = plan.estimate(study, rates)
    idle, settings = study.config["idle"], len(study.settings)
    assert (idle["count"], study.idle_first_look, idle["seconds"]) == (10, 3, 600)
    assert est.overhead_max_s - est.overhead_min_s == pytest.approx(7 * 600 * settings)
    three = Study({**study.config, "idle": {**idle, "count": 3}})
    assert plan.estimate(three, rates).overhead_max_s == pytest.approx(est.overhead_min_s)
    assert "at the fewest repeats and idle windows" in plan.describe(est)


@pytest.mark.parametrize("name", ["plain", *(c.name for c in codec_registry.resolve("paper"))])
def test_the_pilot_runs_every_paper_codec(tmp_path, small_inputs, name):
    """The default study's pilot, codec by codec: each output where its decompression
    finds it (7-Zip appends .7z to an archive named without it)."""
    rates = plan._pilot_codec(small_inputs["text"][0], name, tmp_path)
    assert rates["write_s_per_byte"] > 0 and rates["read_s_per_byte"] > 0
    assert 0 < rates["stored_per_byte"] <= (1.0 if name == "plain" else 0.9)


def test_trace_timestamps_without_an_offset_need_the_logger_s_zone(tmp_path):
    from wattzip.meters import MeterError, read_power_trace

    path = tmp_path / "power.csv"
    path.write_text("timestamp,watts\n2026-11-24T12:00:00,50\n2026-11-24T12:00:01+00:00,51\n")
    with pytest.raises(MeterError, match=r"power.csv, line 2: timestamp '2026-11-24T12:00:00' "
                                         r"has no UTC offset; name the logger's time zone"):
        read_power_trace(str(path))
    berlin = read_power_trace(str(path), "Europe/Berlin")
    utc = read_power_trace(str(path), "UTC")
    assert utc[0][0] - berlin[0][0] == 3600  # CET is UTC+1 in November
    assert berlin[1] == utc[1] == (utc[0][0] + 1, 51.0)  # an offset given is kept


def test_a_hung_ipmitool_is_a_named_error(tmp_path, monkeypatch):
    from wattzip.meters import ipmi

    monkeypatch.setattr(ipmi, "QUERY_TIMEOUT_S", 0.5)
    options = meters.MeterOptions(ipmi_command=("sleep", "30"))
    with pytest.raises(meters.MeterError, match=r"sleep 30 gave no answer within 0.5 s"):
        ipmi.IpmiMeter._query(options)


def test_one_free_space_rule_counts_copies_phases_and_the_image(tmp_path):
    assert free_space.space_needed(100, copies=2, phases=3) == 1500  # 2.5 x every file
    with pytest.raises(ConfigError, match=r"has .* GiB free; this study needs"):
        free_space.check_free_space(str(tmp_path), 1 << 60)
    image = tmp_path / "disk.img"
    image.write_bytes(b"")
    with pytest.raises(ConfigError, match="disk.img is .* GiB, but its disk .* has room"):
        free_space.check_free_space(str(tmp_path), 1, str(image), 1 << 60)
