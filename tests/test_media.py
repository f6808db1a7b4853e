"""What the operations really do, on real filesystems on loop devices (needs root).

Checked from outside the code: filefrag for shared extents, fincore for the page
cache, /proc/self/mounts for the unmount flush, rusage for CPU time.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from wattzip import meters, records
from wattzip.analysis import cell_summary
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.stopping import RepeatRule
from wattzip.machine import media, throttle
from wattzip.machine.extents import check_owns_blocks
from wattzip.measure import cold_cache, repeats, runner
from wattzip.measure import spec as specs
from wattzip.measure.job import DutyCycle, MeasurementJob
from wattzip.workload import inputs

from .job_files import spec_text
from .real_machine import other_schedulers
from .test_runner import cached_bytes, make_job

PAPER = AnalysisOptions()  # the paper's design, its options stated

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/loop-control"),
    reason="mounting a loop device needs root and the loop driver")


@pytest.fixture
def model_meter():
    return meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60,
                                                 interval_s=0.05))


@pytest.fixture
def xfs(tmp_path):
    """A fresh XFS (reflinks on, as mkfs.xfs makes it) loop-mounted for one test."""
    if shutil.which("mkfs.xfs") is None:
        pytest.skip("xfsprogs is not installed")
    medium = media.Medium(name="xfs", kind="image", path=str(tmp_path / "xfs"), size="600MiB",
                          fs="xfs")
    medium.attach()
    yield medium
    medium.detach()


def filefrag_says_shared(path) -> bool:
    out = subprocess.run(["filefrag", "-v", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return "shared" in out


@needs_root
def test_cat_reflinks_on_xfs_and_the_extent_check_sees_it(xfs, small_inputs):
    src = os.path.join(xfs.path, "input.bin")
    shutil.copyfile(small_inputs["random"][0], src)
    with open(src, "rb") as fin, open(os.path.join(xfs.path, "by-cat"), "wb") as fout:
        subprocess.run(["cat"], stdin=fin, stdout=fout, check=True)
    with open(src, "rb") as fin, open(os.path.join(xfs.path, "by-dd"), "wb") as fout:
        subprocess.run(runner.plain_copy_argv(), stdin=fin, stdout=fout, check=True)
    os.sync()
    by_cat, by_dd = os.path.join(xfs.path, "by-cat"), os.path.join(xfs.path, "by-dd")
    assert filefrag_says_shared(by_cat) and not filefrag_says_shared(by_dd)
    owns, why = check_owns_blocks([by_cat])
    assert owns is False and "reflink" in why
    assert check_owns_blocks([by_dd]) == (True, "")


@needs_root
def test_plain_write_on_xfs_owns_its_blocks_and_a_reflinking_copy_fails(
        xfs, small_inputs, tmp_path, model_meter, monkeypatch):
    """The input on the same XFS as the target, where a reflink is possible."""
    src = os.path.join(xfs.path, "input.bin")
    shutil.copyfile(small_inputs["text"][0], src)
    entry = small_inputs["text"][1]
    job = MeasurementJob(testbed="t", file_type="text", input_path=src,
                         input_sha256=entry["sha256"], input_bytes=entry["size_bytes"], medium=xfs,
                         codec=None, repeats=RepeatRule(1, 1, 0.05))
    repeats.run_job(job, model_meter, tmp_path / "j.jsonl", log=lambda m: None)
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    write = runs[0]
    assert write["verified"] and write["own_blocks"] is True and write["tool"] == "dd"
    assert write["target_fs"] == "xfs" and write["copy_buffer_bytes"] == 128 * 1024
    assert write["user_s"] + write["sys_s"] > 0

    xfs.attach()  # run_job detached it; the next job reformats
    shutil.copyfile(small_inputs["text"][0], src)
    monkeypatch.setattr(runner, "plain_copy_argv", lambda *a: ["cat"])
    job = MeasurementJob(testbed="t", file_type="text", input_path=src,
                         input_sha256=entry["sha256"], input_bytes=entry["size_bytes"], medium=xfs,
                         codec=None, repeats=RepeatRule(1, 1, 0.05))
    repeats.run_job(job, model_meter, tmp_path / "k.jsonl", log=lambda m: None)
    write = records.read_jsonl([tmp_path / "k.jsonl"])[0]
    assert not write["verified"] and write["own_blocks"] is False
    assert "shared with another file" in write["failure"]


@needs_root
def test_unmount_flush_on_a_fresh_ext2_image(small_inputs, tmp_path, model_meter, monkeypatch):
    """SYSTOR '09's flush: the ext2 target is unmounted inside the measured region of every
    write, mounted again outside it, and every read starts with its file out of the cache."""
    medium = media.Medium(name="ext2", kind="image", path=str(tmp_path / "ext2"),
                          size="64MiB", fs="ext2", flush="unmount")
    job = make_job(small_inputs, tmp_path, "gz-1", medium=medium)
    unmounts, cached_before_read = [], []
    real_unmount, real_measure = media.Medium.unmount, repeats.measure

    def unmount(self):
        unmounts.append(runner.utc_now())
        real_unmount(self)

    def measure(operation, *a, **kw):
        if operation.op == "decompress-read":
            cached_before_read.append(cached_bytes(job.stored_paths()[0]))
        return real_measure(operation, *a, **kw)

    monkeypatch.setattr(media.Medium, "unmount", unmount)
    monkeypatch.setattr(repeats, "measure", measure)
    repeats.run_job(job, model_meter, tmp_path / "j.jsonl", log=lambda m: None)
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    assert all(r["verified"] for r in runs) and len(runs) == 4
    writes = [r for r in runs if r["op"] == "compress-write"]
    for w in writes:
        assert any(w["started_at"] < t < w["ended_at"] for t in unmounts), "unmount inside"
        assert w["flush"] == "unmount" and w["target_fs"] == "ext2"
        assert w["medium_kind"] == "image" and w["factors"]["cache_drop"] == "unmount"
    assert cached_before_read == [0, 0]
    assert not medium.is_mounted(), "detached after the job"


@needs_root
def test_systor11s_twenty_copies_at_once_on_ext3(small_inputs, tmp_path, model_meter,
                                                  monkeypatch):
    """SYSTOR '11's workload (config/systor11.yaml): 20 copies compressed at once, every one
    started before the first is waited for, onto a fresh ext3 image unmounted inside the
    write; each copy's output verified, the ratio of the copies' totals."""
    medium = media.Medium(name="ext3", kind="image", path=str(tmp_path / "ext3"),
                          size="64MiB", fs="ext3", flush="unmount")
    job = make_job(small_inputs, tmp_path, "gz-1", medium=medium, copies=20, min=1, max=1)
    started_together, real_reap = [], runner._reap

    def reap(procs, region):
        started_together.append(len(procs))  # started, none yet waited for
        return real_reap(procs, region)

    monkeypatch.setattr(runner, "_reap", reap)
    repeats.run_job(job, model_meter, tmp_path / "j.jsonl", log=lambda m: None)
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    assert all(r["verified"] for r in runs) and {r["copies"] for r in runs} == {20}
    assert started_together == [20, 20]  # the write's 20 copies, then the read's
    write = next(r for r in runs if r["op"] == "compress-write")
    assert write["target_fs"] == "ext3" and write["flush"] == "unmount"
    assert len(set(job.input_paths)) == 20 and len(job.stored_paths()) == 20
    assert not medium.is_mounted(), "detached after the job"


def test_global_drop_reads_the_tools_back_but_not_the_data(small_inputs, tmp_path):
    if not os.access(runner.DROP_CACHES, os.W_OK):
        pytest.skip("needs root for /proc/sys/vm/drop_caches")
    job = make_job(small_inputs, tmp_path, "gz-1")
    cold = cold_cache.ColdCache(job)
    gzip = os.path.realpath(shutil.which("gzip"))
    assert gzip in cold.tool_files and any("libc" in f for f in cold.tool_files)
    assert cold() == ("global", True)
    assert cached_bytes(gzip) >= os.path.getsize(gzip)  # whole pages
    assert cached_bytes(job.input_path) == 0


def test_copies_read_their_own_inputs_and_the_ratio_counts_every_copy(
        small_inputs, tmp_path, model_meter):
    path, entry = small_inputs["text"]
    local = tmp_path / "in" / "text.bin"
    local.parent.mkdir()
    shutil.copyfile(path, local)
    single = make_job(small_inputs, tmp_path / "one", "gz-1", max=1, min=1)
    single.input_path = str(local)
    repeats.run_job(single, model_meter, tmp_path / "one.jsonl", log=lambda m: None)
    job = make_job(small_inputs, tmp_path / "three", "gz-1", copies=3, max=1, min=1)
    job.input_path = str(local)
    repeats.run_job(job, model_meter, tmp_path / "three.jsonl", log=lambda m: None)
    assert len(set(job.input_paths)) == 3
    assert len({os.stat(p).st_ino for p in job.input_paths}) == 3
    assert all(inputs.sha256_file(p) == entry["sha256"] for p in job.input_paths)
    rows = records.load_runs([tmp_path / "one.jsonl", tmp_path / "three.jsonl"])
    for r in rows:
        r["setting"] = f"x{r['copies']}"
    ratios = {s["setting"]: s["compression_ratio"] for s in cell_summary.summarize(rows, PAPER)
              if s["op"] == "compress-write"}
    assert ratios["x3"] == pytest.approx(ratios["x1"], rel=1e-9)
    assert ratios["x1"] > 1.5


def test_parallel_run_has_utilization_not_a_negative_wait(model_meter):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two CPUs")
    argv = ["sh", "-c", "timeout 0.6 sh -c 'while :; do :; done' & "
                        "timeout 0.6 sh -c 'while :; do :; done'; wait"]
    record = runner.measure(runner.Operation("command", [argv], [os.devnull], [None]),
                            model_meter)
    assert record["cpu_utilization"] > 1.3
    assert record["wait_s"] is None


def wait_for_a_run(journal, seconds=90.0):
    """Until the job has journaled a run (its drift reference comes first, and takes a
    while on a slow machine), so a kill lands with runs to keep."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_text().count("\n") >= 1:
            return
        time.sleep(0.05)
    raise AssertionError(f"no run journaled in {journal} within {seconds} s")


@needs_root
def test_a_killed_job_leaves_no_mount_behind(small_inputs, tmp_path):
    path, entry = small_inputs["random"]
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({**entry, "path": str(path)}))
    mount_point = tmp_path / "ext2"
    spec = spec_text(specs.JOB, mount_point, repeats={"min": 50, "max": 50},
                     medium={"kind": "image", "size": "64MiB", "flush": "unmount"})
    argv = [sys.executable, "-m", "wattzip", "job", "--spec", spec, "--manifest",
            str(manifest), "--journal", str(tmp_path / "j.jsonl"),
            "--out", str(tmp_path / "o.jsonl")]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while media.mount_entry(str(mount_point)) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    wait_for_a_run(tmp_path / "j.jsonl")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    assert media.mount_entry(str(mount_point)) is None
    assert records.read_jsonl([tmp_path / "j.jsonl"]), "the runs before the kill are kept"


@needs_root
def test_loop_image_bypasses_the_host_page_cache(small_inputs, tmp_path):
    """The image's loop device does direct I/O, so a cold read from the medium is a real
    read of the disk, not of the image file's pages in the host's cache."""
    medium = media.Medium(name="e", kind="image", path=str(tmp_path / "e"), size="64MiB",
                          fs="ext2")
    medium.attach()
    try:
        info = medium.describe()
        assert info["loop_direct_io"] is True and info["target_device"].startswith("/dev/loop")
        shutil.copyfile(small_inputs["random"][0], os.path.join(medium.path, "f"))
        medium.cycle()
        assert cached_bytes(medium.image) == 0
    finally:
        medium.detach()
    assert subprocess.run(["losetup", "--associated", medium.image], capture_output=True,
                          text=True).stdout == "", "loop device freed"


def throttle_available() -> bool:
    return os.geteuid() == 0 and (os.path.exists("/sys/fs/cgroup/blkio/blkio.throttle."
                                                 "read_bps_device")
                                  or os.path.exists("/sys/fs/cgroup/cgroup.controllers"))


@pytest.mark.skipif(not throttle_available(), reason="needs root and a blkio/io cgroup")
def test_throttled_plain_read_takes_the_configured_bandwidth(tmp_path, model_meter):
    """16 MiB read cold through a 20 MB/s cap: 0.84 s, within 10%; the cgroup is gone after."""
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(16 << 20))
    disk = runner_disk(path)
    rate = 20_000_000
    with throttle.throttled({"target": disk}, rate) as t:
        assert set(t.applied_bytes_per_s().values()) == {rate}  # read back from the kernel
        runner.drop_caches([str(path)])
        op = runner.Operation("plain-read", [runner.plain_copy_argv()], [str(path)], [None])
        record = runner.measure(op, model_meter, throttle=t)
        cgroup = t.path
    assert record["succeeded"]
    assert record["elapsed_s"] == pytest.approx((16 << 20) / rate, rel=0.10)
    assert not cgroup.exists()
    runner.drop_caches([str(path)])
    free = runner.measure(runner.Operation("plain-read", [runner.plain_copy_argv()],
                                           [str(path)], [None]), model_meter)
    assert free["elapsed_s"] < record["elapsed_s"] / 2, "the cap, not the disk, set the time"


def runner_disk(path) -> str:
    from wattzip.machine import system

    return system.block_device(os.path.dirname(path))["disk"]


@needs_root
@pytest.mark.skipif(shutil.which("mkfs.btrfs") is None or shutil.which("compsize") is None,
                    reason="needs btrfs-progs and btrfs-compsize")
def test_btrfs_compression_ratio_is_measured_on_disk(small_inputs, tmp_path, model_meter):
    """compress-force=zstd:3: a zero file shrinks far, a random one not at all; both read
    back the same bytes through the filesystem."""
    from wattzip.workload import codec_registry

    ratios = {}
    for ftype in ("zero", "random"):
        medium = media.Medium(name="btrfs", kind="image", path=str(tmp_path / ftype),
                              size="256MiB", fs="btrfs", mount_options="compress-force=zstd:3")
        job = make_job(small_inputs, tmp_path / ftype, "plain", file_type=ftype,
                       medium=medium, min=1, max=1)
        job.codec = codec_registry.get("btrfs-zstd-3")
        journal = tmp_path / f"{ftype}.jsonl"
        repeats.run_job(job, model_meter, journal, log=lambda m: None)
        runs = records.read_jsonl([journal])
        assert [r["op"] for r in runs] == ["compress-write", "decompress-read"]
        assert all(r["verified"] for r in runs), runs
        assert "compress-force=zstd:3" in runs[0]["mount_options"]
        ratios[ftype] = job.input_bytes / runs[0]["output_bytes"]
    assert ratios["zero"] > 20
    assert 0.9 < ratios["random"] < 1.05


@needs_root
def test_scheduler_of_a_loop_image_is_switched_on_its_disk_and_restored_after_a_kill(
        small_inputs, tmp_path):
    from wattzip.machine import system

    path, entry = small_inputs["random"]
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({**entry, "path": str(path)}))
    mount_point = tmp_path / "ext2"
    disk = system.scheduler_disk(str(tmp_path))
    before = system.io_scheduler(disk)
    (want,) = other_schedulers(disk, 1)
    spec = spec_text(specs.JOB, mount_point, repeats={"min": 50, "max": 50},
                     setting={"io_scheduler": want},
                     medium={"kind": "image", "size": "64MiB"})
    argv = [sys.executable, "-m", "wattzip", "job", "--spec", spec, "--manifest",
            str(manifest), "--journal", str(tmp_path / "j.jsonl"),
            "--out", str(tmp_path / "o.jsonl")]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while system.io_scheduler(disk) != want and time.monotonic() < deadline:
        time.sleep(0.05)
    assert system.io_scheduler(disk) == want, "switched on the disk under the loop image"
    wait_for_a_run(tmp_path / "j.jsonl")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    assert system.io_scheduler(disk) == before, "restored after the kill"
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    assert runs and runs[0]["scheduler_disk"] == disk
    assert runs[0]["io_scheduler_in_effect"] == want


@pytest.mark.parametrize("codec_name", ["plain", "gz-1"])
def test_duty_cycle_run_covers_its_idle_phases(small_inputs, tmp_path, codec_name):
    """Three write phases, each followed by 0.4 s of idle compute, as one run: its time
    holds every phase, and its energy the idle power of the idle phases (HPC '14)."""
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=50, model_max_power_w=150,
                                                  interval_s=0.05))
    job = make_job(small_inputs, tmp_path, codec_name, min=1, max=1,
                   duty=DutyCycle(phases=3, compute_s=0.4))
    repeats.run_job(job, meter, tmp_path / "j.jsonl", log=lambda m: None)
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    assert [r["op"] for r in runs] == ["write-compute"]
    run = runs[0]
    assert run["verified"] and run["phases"] == 3
    assert run["elapsed_s"] >= 3 * 0.4
    assert run["energy_j"] >= 50 * 3 * 0.4  # at least idle power through the idle phases
    assert run["output_bytes"] > 0
    rows = records.load_runs([tmp_path / "j.jsonl"])
    ratio = cell_summary.summarize(rows, PAPER)[0]["compression_ratio"]
    single = job.input_bytes / (run["output_bytes"] / 3)
    assert ratio == pytest.approx(single)
