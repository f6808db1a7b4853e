"""One versioned run record: built in one place, its version in every journal line and runs.csv."""

from __future__ import annotations

import dataclasses
import json

import pytest

from wattzip import __version__, machine, meters, records
from wattzip.errors import RecordError
from wattzip.machine import system
from wattzip.measure import provenance, repeats
from wattzip.run_record import RUN_COLUMNS, SCHEMA_VERSION, RunRecord

from .test_figures import FIXTURE
from .test_runner import make_job

pytestmark = pytest.mark.pure

# The design brief's "One run record" (../shared/design.md), factors spread in runs.csv.
CONTRACT = ("testbed", "file_type", "input_bytes", "input_sha256", "codec", "level", "op",
            "repeat", "started_at", "ended_at", "elapsed_s", "user_s", "sys_s", "wait_s",
            "energy_j", "idle_power_w", "energy_passive_j", "energy_active_j", "meter_source",
            "meter_scope", "meter_method", "samples", "output_bytes", "verified", "exit_code",
            "tool_version")


def test_the_record_holds_the_contracts_fields():
    names = {f.name for f in dataclasses.fields(RunRecord)}
    assert set(CONTRACT) | {"factors", "schema_version"} <= names
    assert set(CONTRACT) <= set(RUN_COLUMNS) and RUN_COLUMNS[-1] == "schema_version"


def test_a_jobs_runs_say_their_version_in_the_journal_and_runs_csv(small_inputs, tmp_path):
    journal = tmp_path / "j.jsonl"
    model = meters.ModelMeter(meters.MeterOptions(interval_s=0.05))
    job = make_job(small_inputs, tmp_path, "gz-1", min=2, max=2,
                   meter_identity=model.identity({}), model=model.model)
    repeats.run_job(job, model, journal, log=lambda m: None)
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    assert lines and all(x["schema_version"] == SCHEMA_VERSION for x in lines)
    assert all(x["energy_passive_j"] is not None and x["factors"] for x in lines)
    assert all(x["peak_rss_bytes"] > 0 for x in lines)  # gzip's peak memory, in bytes
    out = tmp_path / "runs.csv"
    records.write_runs_csv(records.read_journal(journal), out)
    rows = records.read_runs_csv(out)
    assert {r["schema_version"] for r in rows} == {SCHEMA_VERSION}
    assert {r["op"] for r in rows} == {"compress-write", "decompress-read"}
    assert all(isinstance(r["peak_rss_bytes"], int) for r in rows)


def test_every_run_says_the_host_boot_and_wattzip_that_measured_it(small_inputs, tmp_path,
                                                                   monkeypatch):
    """Run or not (a read whose write failed is recorded unrun): a reboot between two runs
    of one job shows in their records, and so does an upgrade of wattzip."""
    monkeypatch.setattr(system, "host_identity", lambda: {
        "hostname": "node-a", "slurm_node": "n1", "slurm_job_id": "42"})
    monkeypatch.setattr(machine, "boot_id", lambda: "boot-1")
    journal = tmp_path / "j.jsonl"
    model = meters.ModelMeter(meters.MeterOptions(interval_s=0.05))
    job = make_job(small_inputs, tmp_path, "gz-1", min=2, max=2,
                   meter_identity=model.identity({}), model=model.model)
    repeats.run_job(job, model, journal, log=lambda m: None)
    skipped = repeats._skipped_read(job, "decompress-read", 3, None, job.key()).to_dict()
    who = {"hostname": "node-a", "slurm_node": "n1", "slurm_job_id": "42",
           "boot_id": "boot-1", "wattzip_version": __version__,
           **provenance.source_of_code()}  # the code that measured, in every record
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    assert lines and all({k: r[k] for k in who} == who for r in [*lines, skipped])
    out = tmp_path / "runs.csv"
    records.write_runs_csv(lines, out)
    assert all({k: r[k] for k in who} == who for r in records.read_runs_csv(out))


def test_provenance_names_the_host_boot_and_version_as_the_runs_do(tmp_path, monkeypatch):
    """A run is matched to its testbed's provenance.json by host, boot, version and source."""
    monkeypatch.setattr(machine, "boot_id", lambda: "boot-1")
    info = provenance.testbed_provenance(str(tmp_path), [], meters.ModelMeter(
        meters.MeterOptions()), "tb", None)
    run = repeats._job_fields(make_job({"text": (tmp_path / "in", {
        "sha256": "x", "size_bytes": 1})}, tmp_path, "plain"), 1, None, "k", None)
    assert (info["hostname"], info["boot_id"], info["wattzip"]) == (
        run["hostname"], run["boot_id"], run["wattzip_version"]) == (
        system.host_identity()["hostname"], "boot-1", __version__)
    assert info["source"] == {k: run[k] for k in info["source"]}
    assert set(info["source"]) == {"source_commit", "source_dirty", "source_digest"}


def test_a_version_4_record_is_read_with_no_boot_or_wattzip_version(tmp_path):
    """Records written before version 5 keep their version and have the columns empty."""
    line = {"testbed": "t", "file_type": "text", "codec": "gz-1", "op": "compress-write",
            "repeat": 1, "verified": True, "hostname": "vm", "schema_version": 4}
    record = RunRecord.from_dict(line)
    assert record.schema_version == 4 and record.boot_id is None and not record.extra
    out = tmp_path / "runs.csv"
    records.write_runs_csv([line], out)
    row = records.read_runs_csv(out)[0]
    assert row["schema_version"] == 4 and row["boot_id"] is None
    assert row["wattzip_version"] is None and row["hostname"] == "vm"
    assert SCHEMA_VERSION == 8 and {"boot_id", "wattzip_version"} <= set(RUN_COLUMNS)


def test_a_version_6_record_is_read_with_no_peak_memory(tmp_path):
    """Peak memory came with version 7: an older record's column is empty, not zero."""
    line = {"testbed": "t", "file_type": "text", "codec": "gz-1", "op": "compress-write",
            "repeat": 1, "verified": True, "schema_version": 6}
    assert RunRecord.from_dict(line).peak_rss_bytes is None
    out = tmp_path / "runs.csv"
    records.write_runs_csv([line], out)
    row = records.read_runs_csv(out)[0]
    assert row["schema_version"] == 6 and row["peak_rss_bytes"] is None


def test_a_version_5_record_s_model_estimate_is_read_as_the_estimated_energy(tmp_path):
    """Estimated energy says so wherever it rests: the model's estimate beside a real
    meter's reading, model_energy_j up to version 5, is estimated_energy_j in records and
    runs.csv read back, from a journal or from an old runs.csv alike."""
    line = {"testbed": "t", "file_type": "text", "codec": "gz-1", "op": "compress-write",
            "repeat": 1, "verified": True, "energy_j": 10.0, "model_energy_j": 12.5,
            "schema_version": 5}
    assert RunRecord.from_dict(line).estimated_energy_j == 12.5
    old_csv = tmp_path / "old.csv"
    old_csv.write_text("testbed,energy_j,model_energy_j,schema_version\nt,10.0,12.5,5\n")
    assert records.read_runs_csv(old_csv)[0]["estimated_energy_j"] == 12.5
    assert "model_energy_j" not in RUN_COLUMNS and "estimated_energy_j" in RUN_COLUMNS


def test_old_records_are_read_as_version_one(tmp_path):
    old = records.read_runs_csv(FIXTURE / "tiny" / "runs.csv")  # written before the version
    assert old and {r["schema_version"] for r in old} == {1}
    line = {"testbed": "t", "file_type": "text", "codec": "gz-1", "op": "compress-write",
            "repeat": 1, "verified": True, "factors": {"setting": "s", "copies": 1},
            "key": "an old job key"}
    journal = tmp_path / "old.jsonl"
    journal.write_text(json.dumps(line) + "\n")
    out = tmp_path / "runs.csv"
    records.write_runs_csv(records.read_journal(journal), out)
    row = records.read_runs_csv(out)[0]
    assert row["schema_version"] == 1 and row["setting"] == "s"


def test_a_record_keeps_fields_this_version_does_not_know():
    entry = {"testbed": "t", "op": "plain-write", "tape_label": "LTO-7 A1", "_samples": [1]}
    record = RunRecord.from_dict(entry)
    assert record.schema_version == 1 and record.extra == {"tape_label": "LTO-7 A1"}
    back = record.to_dict()
    assert back["tape_label"] == "LTO-7 A1" and "_samples" not in back
    assert RunRecord.from_dict(back) == record


def test_a_record_being_made_refuses_a_field_this_version_does_not_know():
    """A misspelt field would have been filed under `extra`, in no column of runs.csv."""
    with pytest.raises(RecordError, match="no field 'energy_joules'"):
        RunRecord.new({"testbed": "t", "op": "plain-write"}, energy_joules=1.0)
    record = RunRecord.new({"testbed": "t", "io_scheduler_in_effect": "bfq", "_samples": [1]})
    assert record.schema_version == SCHEMA_VERSION
    assert record.row()["io_scheduler_in_effect"] == "bfq"


def test_a_rehearsals_runs_are_records_of_this_version(tmp_path):
    from .test_rehearsal import _simulated_runs

    rows = records.read_runs_csv(_simulated_runs(tmp_path))
    assert rows and {r["schema_version"] for r in rows} == {SCHEMA_VERSION}
    assert all(r["simulated"] is True for r in rows)


def test_a_simulated_record_derives_its_fields_as_a_measured_one_does(tmp_path):
    """The wait, the CPU utilization and the passive energy are defined once
    (run_record.region_fields), for the runner's records and the rehearsal's alike."""
    from .test_rehearsal import _simulated_runs

    for r in records.read_runs_csv(_simulated_runs(tmp_path)):
        cpu_s = r["user_s"] + r["sys_s"]
        assert r["cpu_utilization"] == pytest.approx(cpu_s / r["elapsed_s"])
        if cpu_s <= r["elapsed_s"]:
            assert r["wait_s"] == pytest.approx(r["elapsed_s"] - cpu_s)
        assert r["energy_passive_j"] == pytest.approx(r["idle_power_w"] * r["meter_interval_s"])
        assert r["energy_active_j"] == pytest.approx(r["energy_j"] - r["energy_passive_j"])
        assert r["tool"] == ("dd" if r["codec"] == "plain" else r["tool"])


def test_a_run_using_more_cpu_than_wall_time_has_no_wait_and_no_energy_no_passive():
    from wattzip.run_record import region_fields

    threaded = region_fields(2.0, 3.0, 50.0, 10.0, 2.1)
    assert threaded["wait_s"] is None and threaded["cpu_utilization"] == 1.5
    assert threaded["energy_passive_j"] == pytest.approx(21.0)  # over the meter's interval
    unmetered = region_fields(2.0, 1.0, None, 10.0, None)
    assert unmetered["energy_passive_j"] is None and unmetered["energy_active_j"] is None


@pytest.mark.parametrize("order", [["ipmi", "model"], ["powercap"], ["model"]])
def test_a_simulated_run_says_the_scope_and_method_its_meter_says(tmp_path, order):
    """The rehearsal's runs of a meter carry that meter's own scope and method (its class:
    meters.METERS), not a table of their own: IPMI's DCMI reading is the wall's."""
    import yaml

    from wattzip.model import rehearsal
    from wattzip.model.study import Study

    from .test_workflow import REPO, TINY

    overlay = tmp_path / "meter.yaml"
    overlay.write_text(yaml.safe_dump({"meter": {"order": order, "require_measured":
                                                 order != ["model"]}}))
    study = Study.from_files([REPO / "config.yaml", TINY, overlay])
    runs = tmp_path / "runs.csv"
    rehearsal.synthesize(study, "tiny", runs)
    meter = meters.METERS[order[0]]
    assert {(r["meter_source"], r["meter_scope"], r["meter_method"])
            for r in records.read_runs_csv(runs)} == {(meter.name, meter.scope, meter.method)}
    assert meters.METERS["ipmi"].scope == "wall"


def test_a_meter_opened_reports_its_class_scope_where_nothing_on_the_machine_narrows_it():
    for name in ("model", "none"):
        opened = meters.open_meter({"order": [name]})
        assert opened.scope == meters.METERS[name].scope != "unknown"
        opened.start()
        assert opened.stop().scope == opened.scope
