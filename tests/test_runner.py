"""The runner and jobs on real small files with real gzip and lzop."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
import sys

import pytest

from wattzip import meters, records
from wattzip.analysis.stopping import RepeatRule
from wattzip.machine import media
from wattzip.measure import job as job_module
from wattzip.measure import repeats, runner
from wattzip.measure.job import MeasurementJob
from wattzip.workload import codec_registry


@pytest.fixture
def model_meter():
    opts = meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60, interval_s=0.05)
    return meters.ModelMeter(opts)


def make_job(small_inputs, tmp_path, codec_name, file_type="text", **kw):
    path, entry = small_inputs[file_type]
    codec = None if codec_name == "plain" else codec_registry.get(codec_name)
    rule = {"min": 2, "max": 2, "ci_target": 0.05}  # the repeat rule's, given by name
    rule.update((k, kw.pop(k)) for k in list(rule) if k in kw)
    defaults = dict(repeats=RepeatRule(**rule), idle_power_w=20.0)
    defaults.update(kw)
    medium = defaults.pop("medium", None) or media.Medium(path=str(tmp_path / "target"))
    return MeasurementJob(testbed="t", file_type=file_type, input_path=str(path),
                          input_sha256=entry["sha256"], input_bytes=entry["size_bytes"],
                          medium=medium, codec=codec, **defaults)


def test_one_compress_write_record(small_inputs, tmp_path, model_meter):
    job = make_job(small_inputs, tmp_path, "gz-6")
    os.makedirs(job.target_dir)
    rec = runner.measure(job.write_operation(), model_meter, idle_power_w=20.0)
    assert rec["succeeded"] and rec["exit_code"] == 0
    assert rec["user_s"] > 0
    assert rec["wait_s"] == pytest.approx(rec["elapsed_s"] - rec["user_s"] - rec["sys_s"])
    assert rec["energy_passive_j"] == pytest.approx(20.0 * rec["meter_interval_s"])
    assert rec["energy_active_j"] == pytest.approx(rec["energy_j"] - rec["energy_passive_j"])
    assert rec["meter_method"] == "estimated"
    assert rec["started_at"] < rec["ended_at"]
    assert job.verify() == (True, "")


@pytest.mark.parametrize("codec_name", ["gz-1", "lzo-1", "plain", "ppmd"])
def test_job_records_every_run_verified(small_inputs, tmp_path, model_meter, codec_name):
    job = make_job(small_inputs, tmp_path, codec_name, trace_dir=str(tmp_path / "traces"))
    journal = tmp_path / "journal.jsonl"
    summary = repeats.run_job(job, model_meter, journal, log=lambda m: None)
    runs = records.read_jsonl([journal])
    assert summary["repeats"] == 2 and summary["failed"] == 0
    assert [r["op"] for r in runs] == list(job.ops) * 2
    assert all(r["verified"] for r in runs)
    write = runs[0]
    assert 0 < write["output_bytes"] < job.input_bytes or codec_name == "plain"
    assert write["factors"]["cache_drop"] in ("global", "per-file")
    assert os.path.exists(write["trace"])
    assert not any(os.path.exists(p) for p in job.stored_paths()), "target cleaned up"


def test_compress_reports_exit_2_on_random_yet_verifies(small_inputs, tmp_path, model_meter):
    job = make_job(small_inputs, tmp_path, "c-16", file_type="random", max=1, min=1)
    repeats.run_job(job, model_meter, tmp_path / "j.jsonl", log=lambda m: None)
    write = records.read_jsonl([tmp_path / "j.jsonl"])[0]
    assert write["exit_code"] == 2 and write["verified"]
    assert write["output_bytes"] > job.input_bytes  # compress expands random data


def corrupting_codec(tmp_path):
    """gzip whose decompressor flips one byte of its output."""
    script = tmp_path / "bad-gunzip"
    script.write_text(f"#!/bin/sh\ngzip -d -c | {sys.executable} -c \"import sys; "
                      "d = bytearray(sys.stdin.buffer.read()); d[100] ^= 1; "
                      "sys.stdout.buffer.write(d)\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return dataclasses.replace(codec_registry.get("gz-1"), name="gz-bad", decompress=(str(script),))


def test_corrupting_decompressor_is_recorded_not_verified(small_inputs, tmp_path, model_meter):
    job = make_job(small_inputs, tmp_path, "gz-1", max=5)
    job.codec = corrupting_codec(tmp_path)
    summary = repeats.run_job(job, model_meter, tmp_path / "j.jsonl", log=lambda m: None)
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    assert len(runs) == 4, "two failed repeats in a row stop the job, all runs recorded"
    assert summary["failed"] == 4
    assert all(not r["verified"] for r in runs)
    assert "sha256 mismatch" in runs[0]["failure"]
    assert runs[1]["failure"].startswith("not run")
    # The read not run names its job as the write does: what ran, under which meter.
    identity = ("testbed", "codec", "tool", "level", "tool_version", "threads", "job_key",
                "meter_id", "input_sha256", "idle_power_u_w")
    assert runs[1]["tool"] == "gzip" and runs[1]["meter_id"] and runs[1]["tool_version"]
    assert {k: runs[1][k] for k in identity} == {k: runs[0][k] for k in identity}
    assert runs[1]["schema_version"] == runs[0]["schema_version"]


def test_repeated_identical_output_is_verified_by_identity_not_trusted_blindly(
        small_inputs, tmp_path, model_meter):
    job = make_job(small_inputs, tmp_path, "gz-6")
    os.makedirs(job.target_dir)
    runner.measure(job.write_operation(), model_meter)
    assert job.verify() == (True, "")
    assert len(job._verified_digests) == 1  # the next identical file needs no decompression
    stored = job.stored_paths()[0]
    data = bytearray(open(stored, "rb").read())
    data[len(data) // 2] ^= 0xFF  # a different file must be decompressed and checked again
    open(stored, "wb").write(data)
    ok, why = job.verify()
    assert not ok and "decompress" in why


def cached_bytes(path):
    """Bytes of the file in the page cache, as util-linux's fincore reports them."""
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return int(out.strip())


def test_cache_drop_falls_back_to_per_file_eviction(tmp_path, monkeypatch):
    """Without write access to drop_caches (not root), each file is evicted with fadvise."""
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(4 << 20))
    path.read_bytes()
    assert cached_bytes(path) > 0
    monkeypatch.setattr(runner, "DROP_CACHES", str(tmp_path / "no" / "drop_caches"))
    assert runner.drop_caches([str(path), str(tmp_path / "missing")]) == "per-file"
    assert cached_bytes(path) == 0


def test_global_cache_drop_empties_the_cache(tmp_path):
    if not os.access(runner.DROP_CACHES, os.W_OK):
        pytest.skip("needs root for /proc/sys/vm/drop_caches")
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(4 << 20))
    path.read_bytes()
    # written back first: its filesystem only (syncfs), not every one of the machine
    assert runner.drop_caches([str(path)]) == "global"
    assert cached_bytes(path) == 0


def test_failing_command_is_recorded(small_inputs, tmp_path, model_meter):
    op = runner.Operation("compress-write", [["gzip", "--no-such-flag"]],
                          [str(small_inputs["text"][0])], [str(tmp_path / "o")])
    rec = runner.measure(op, model_meter)
    assert not rec["succeeded"] and rec["exit_code"] != 0 and rec["error"]


def test_a_run_records_its_tools_peak_memory_in_bytes(tmp_path, model_meter):
    """wait4's ru_maxrss is in KiB: a tool that holds 64 MiB shows at least that many bytes,
    the largest copy's."""
    hold = [sys.executable, "-c", "b = bytearray(64 << 20); b[::4096] = b'x' * len(b[::4096])"]
    small = [sys.executable, "-c", "pass"]
    op = runner.Operation("bench", [small, hold], [os.devnull] * 2, [None, None])
    rec = runner.measure(op, model_meter)
    assert rec["succeeded"] and 64 << 20 <= rec["peak_rss_bytes"] < 1 << 30


def test_killed_job_resumes_from_journal(small_inputs, tmp_path, model_meter):
    journal = tmp_path / "j.jsonl"
    repeats.run_job(make_job(small_inputs, tmp_path, "lzo-1", max=2), model_meter,
                  journal, log=lambda m: None)
    with open(journal, "a") as f:
        f.write('{"torn": ')  # a kill in mid-write
    logs = []
    job = make_job(small_inputs, tmp_path, "lzo-1", min=3, max=3)
    summary = repeats.run_job(job, model_meter, journal, log=logs.append)
    runs = repeats.read_journal(journal, job.key())
    assert [r["repeat"] for r in runs] == [1, 1, 2, 2, 3, 3]
    assert summary["repeats"] == 3
    assert any("resuming after 2" in m for m in logs)


def test_copies_run_concurrently(small_inputs, tmp_path, model_meter):
    job = make_job(small_inputs, tmp_path, "gz-1", copies=3, max=1, min=1)
    repeats.run_job(job, model_meter, tmp_path / "j.jsonl", log=lambda m: None)
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    assert runs[0]["copies"] == 3 and all(r["verified"] for r in runs)


def test_cli_measure_prints_one_run_record(tmp_path, small_inputs):
    out = tmp_path / "o.gz"
    proc = subprocess.run(
        [sys.executable, "-m", "wattzip", "measure", "--meter", "model", "--model-idle-w", "30",
         "--model-max-w", "90", "--idle-power", "30", "--stdin", str(small_inputs["text"][0]),
         "--stdout", str(out), "--json", "--", "gzip", "-1", "-c"],
        capture_output=True, text=True, check=True)
    record = json.loads(proc.stdout)
    for field in ("started_at", "ended_at", "elapsed_s", "user_s", "sys_s", "wait_s",
                  "energy_j", "idle_power_w", "energy_passive_j", "energy_active_j",
                  "meter_source", "meter_scope", "meter_method", "samples", "output_bytes",
                  "exit_code"):
        assert field in record
    assert record["meter_method"] == "estimated"
    assert record["output_bytes"] == out.stat().st_size > 0
    assert "ESTIMATED" in proc.stderr


def test_cli_meters_lists_every_backend():
    proc = subprocess.run([sys.executable, "-m", "wattzip", "meters", "--json"],
                          capture_output=True, text=True, check=True)
    names = [row["meter"] for row in json.loads(proc.stdout)]
    assert names == ["powercap", "perf", "ipmi", "wattsup", "trace", "model", "none"]


def test_overlap_check(tmp_path):
    base = {"testbed": "t", "file_type": "text", "codec": "gz-1", "op": "compress-write",
            "repeat": 1}
    a = {**base, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": "2026-01-01T00:00:02+00:00"}
    b = {**base, "started_at": "2026-01-01T00:00:01+00:00", "ended_at": "2026-01-01T00:00:03+00:00"}
    c = {**base, "started_at": "2026-01-01T00:00:03+00:00", "ended_at": "2026-01-01T00:00:04+00:00"}
    assert records.find_overlaps([a, c]) == []
    assert len(records.find_overlaps([a, b, c])) == 1


def test_each_distinct_output_is_decompressed_once_across_settings(small_inputs, tmp_path,
                                                                   model_meter, monkeypatch):
    """Three media (three settings) of one codec and input: gzip writes the same bytes on
    each, so one decompression verifies them all, and every record says how it was
    verified."""
    decompressions = []
    real = job_module.sha256_of_command

    def counted(argv, stdin):
        decompressions.append(argv)
        return real(argv, stdin)

    monkeypatch.setattr(job_module, "sha256_of_command", counted)
    cache = tmp_path / "verified.jsonl"
    for name in ("ssd", "sas", "sata"):
        job = make_job(small_inputs, tmp_path, "gz-6", verify_cache=str(cache),
                       medium=media.Medium(name=name, path=str(tmp_path / name)))
        repeats.run_job(job, model_meter, tmp_path / f"{name}.jsonl", log=lambda m: None)
    assert len(decompressions) == 1
    writes = [r for name in ("ssd", "sas", "sata")
              for r in records.read_journal(tmp_path / f"{name}.jsonl")
              if r["op"] == "compress-write"]
    assert all(r["verified"] for r in writes)
    how = [r["verification"] for r in writes]  # two repeats in each of the three settings
    assert how[0] == "decompressed"
    assert how[1] == how[3] == how[5] == "identical bytes verified earlier in this job"
    assert how[2] == how[4] == f"identical bytes verified by job {writes[0]['job_key']}"


def test_the_codec_alone_beside_its_io_on_the_stand_in_corpus(tmp_path, model_meter):
    """Issue 80, items 2 and 4, on the pinned stand-in corpus (tests/data/corpora): with
    codec_only each repeat measures, after its compress-write and decompress-read, the
    same commands from the page cache to /dev/null (no cache drop, no stored output), and
    the analysis splits each operation into the codec and the I/O and sets the
    lzbench-shaped table, its codec-only columns filled."""
    from pathlib import Path

    from wattzip.analysis import codec_cost
    from wattzip.analysis.analysis_options import AnalysisOptions
    from wattzip.analysis.cell_summary import summarize
    from wattzip.report import codec_cells
    from wattzip.workload import inputs

    corpora = Path(__file__).parent / "data" / "corpora"
    path = tmp_path / "in" / "user.bin"
    entry = inputs.generate("user", None, path, sources=[str(corpora / "standin")],
                            progress=False, declared=str(corpora / "standin.yaml"))
    job = make_job({"user": (path, entry)}, tmp_path, "gz-6", file_type="user",
                   codec_only=True)
    journal = tmp_path / "journal.jsonl"
    repeats.run_job(job, model_meter, journal, log=lambda m: None)
    runs = records.read_jsonl([journal])
    assert [r["op"] for r in runs] == [*job.ops, *job.codec_only_ops] * 2
    assert job.codec_only_ops == ("compress-only", "decompress-only")
    cached = [r for r in runs if r["op"] in job.codec_only_ops]
    assert all(r["verified"] and r["factors"]["cache_drop"] == repeats.CACHED for r in cached)
    assert {r["output_bytes"] for r in cached if r["op"] == "compress-only"} == {None}
    assert all(r["argv"][-1] == "-c" for r in cached if r["op"] == "compress-only")
    assert codec_registry.get("ppmd").streams is False  # 7-Zip writes its own file

    rows = [{**r, "setting": "s"} for r in runs]
    options = AnalysisOptions()
    split = codec_cost.split_table(rows, options)
    assert {(r["op"], r["codec_op"]) for r in split} == {
        ("compress-write", "compress-only"), ("decompress-read", "decompress-only")}
    assert all(r["T_codec_share"] > 0 and r["estimated"] for r in split)
    [lz] = codec_cost.lzbench_table(summarize(rows, options))
    assert lz["compress_codec_mb_s"] > 0 and lz["decompress_codec_mb_s"] > 0
    assert lz["compress_codec_mb_s"] == pytest.approx(
        entry["size_bytes"] / 1e6 / (sum(r["elapsed_s"] for r in cached
                                         if r["op"] == "compress-only") / 2))
    text = codec_cells.lzbench_markdown([{**lz, "primary": True}], "95%")
    assert "| gz-6 | user |" in text and "ESTIMATED" in text
