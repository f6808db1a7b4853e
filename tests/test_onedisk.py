"""The emulated disk with one budget for reads and writes (wattzip.machine.onedisk), on real loop
devices over FUSE (needs root).

What the disk did is read from outside the code under test: the wall clock, the bytes
the kernel's loop device moved (/sys/block/loopN/stat), and the mounts and loop devices
left behind (/proc/self/mounts, losetup).
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wattzip import machine, meters, records
from wattzip.analysis import run_tables
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.stopping import RepeatRule
from wattzip.machine import media, onedisk
from wattzip.measure import repeats
from wattzip.measure.job import MeasurementJob
from wattzip.workload import inputs
from wattzip.workload.codec_registry import get as codec

RATE = 30_000_000  # the paper's laptop disk, 30 MB/s
MIB = 1 << 20

needs_fuse = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/loop-control")
    or not os.path.exists("/dev/fuse"),
    reason="an emulated disk needs root, the loop driver and FUSE")


def sectors_moved(loop: str) -> tuple[int, int]:
    """(bytes read, bytes written) by a block device, as the kernel counts them."""
    fields = Path(f"/sys/block/{os.path.basename(loop)}/stat").read_text().split()
    return int(fields[2]) * 512, int(fields[6]) * 512


def test_the_plan_charges_one_disk_the_input_and_the_output():
    """64 MB in, 16 MB stored, at 10 MB/s: on one disk the write moves 80 MB through one
    budget (8 s), on two the larger side alone bounds it (6.4 s); a CPU-bound pair keeps
    its CPU time; unlimited, the pilot's times stand."""
    from wattzip.model.plan import pair_s

    rate = {"write_s_per_byte": 1e-9, "read_s_per_byte": 1e-9, "stored_per_byte": 0.25}
    moved = 64e6
    assert pair_s(rate, moved, 10_000_000, one_disk=True) == pytest.approx(8.0 + 1.6)
    assert pair_s(rate, moved, 10_000_000, one_disk=False) == pytest.approx(6.4 + 1.6)
    slow_cpu = {**rate, "write_s_per_byte": 2e-7}
    assert pair_s(slow_cpu, moved, 10_000_000, one_disk=True) == pytest.approx(12.8 + 1.6)
    assert pair_s(rate, moved, None, one_disk=True) == pytest.approx(0.128)


def test_one_budget_charges_reads_and_writes_alike():
    """The virtual clock: 3 MB read then 3 MB written at 30 MB/s wait 0.1 s and 0.2 s."""
    budget = onedisk.BandwidthBudget(RATE)
    assert budget.charge(3_000_000, "read") == pytest.approx(0.1, abs=onedisk.BURST_S + 0.01)
    assert budget.charge(3_000_000, "write") == pytest.approx(0.2, abs=onedisk.BURST_S + 0.01)
    assert budget.moved == {"read": 3_000_000, "write": 3_000_000}
    assert onedisk.BandwidthBudget(None).charge(10**9, "read") == 0.0


@pytest.fixture
def disk(tmp_path):
    """An ext2 image behind one 30 MB/s budget, loop-mounted, with a 64 MiB file on it."""
    medium = media.Medium(name="laptop", kind="image", path=str(tmp_path / "ext2"),
                          size="512MiB", fs="ext2", inputs="on-medium")
    medium.share_budget(RATE)
    medium.attach()
    try:
        with medium.unthrottled():
            Path(medium.path, "a.bin").write_bytes(os.urandom(64 * MIB))
            os.sync()
        yield medium
    finally:
        medium.detach()


@needs_fuse
def test_a_simultaneous_read_and_write_share_one_bandwidth(disk):
    """64 MiB read and 64 MiB written at once take about 128 MiB / 30 MB/s = 4.47 s,
    where two budgets (the kernel's blkio throttle) would take 2.24 s."""
    assert disk.budget_applied_bytes_per_s() == RATE
    loop = disk.source
    subprocess.run(["sh", "-c", "echo 3 > /proc/sys/vm/drop_caches"], check=True)
    before = sectors_moved(loop)
    t0 = time.monotonic()
    reader = subprocess.Popen(["dd", f"if={disk.path}/a.bin", "of=/dev/null", "bs=128K",
                               "status=none"])
    writer = subprocess.Popen(["dd", "if=/dev/zero", f"of={disk.path}/b.bin", "bs=128K",
                               "count=512", "conv=fsync", "status=none"])
    assert reader.wait() == 0 and writer.wait() == 0
    elapsed = time.monotonic() - t0
    read, written = (b - a for a, b in zip(before, sectors_moved(loop), strict=True))
    assert read >= 64 * MIB and written >= 64 * MIB  # the kernel's own count
    ideal = (read + written) / RATE
    assert ideal == pytest.approx(128 * MIB / RATE, rel=0.05)
    assert elapsed == pytest.approx(ideal, rel=0.12), (elapsed, ideal)


@needs_fuse
def test_a_killed_job_leaves_its_emulated_disk_to_the_next_command(tmp_path):
    """SIGKILL after the disk is up: the ext2 mount, the loop device over the FUSE file,
    the FUSE mount and the daemon are all undone by the next command (recover)."""
    script = (
        "import os, sys, time\n"
        "from wattzip.machine import media\n"
        f"m = media.Medium(name='k', kind='image', path={str(tmp_path / 'k')!r}, "
        "size='64MiB', inputs='on-medium')\n"
        f"m.share_budget({RATE})\n"
        "m.attach()\n"
        "print(m.source, flush=True)\n"
        "time.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    loop = proc.stdout.readline().strip()
    assert loop.startswith("/dev/loop")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    mounts = Path("/proc/self/mounts").read_text()
    assert str(tmp_path / "k.img.onedisk") in mounts  # the daemon outlived its job
    machine.recover(log=lambda m: None)
    mounts = Path("/proc/self/mounts").read_text()
    assert str(tmp_path / "k") not in mounts
    held = subprocess.run(["losetup", "--list", "--noheadings", "--output", "BACK-FILE"],
                          capture_output=True, text=True).stdout
    assert str(tmp_path) not in held
    assert not [e for e in machine.pending() if str(tmp_path) in e["target"]]
    # Its mount point and its daemon's log were journaled too: nothing stays beside the image.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k", "k.img"]


@needs_fuse
def test_on_a_30_mbs_disk_gz1_saves_time_on_write_and_read(tmp_path):
    """The paper's layout on a 30 MB/s emulated disk: a plain write reads and writes
    64 MiB through one budget (about 2.2 s); gzip -1 writes a third of the bytes and is
    clearly faster; with 3 repeats the T break-even of gz-1 on text is decided: always."""
    path = tmp_path / "text.bin"
    entry = inputs.generate("text", 32 * MIB, path, seed=2009, progress=False)
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20, model_max_power_w=60,
                                                  interval_s=0.1))
    runs = []
    for name in ("plain", "gz-1"):
        medium = media.Medium(name="laptop", kind="image", path=str(tmp_path / name),
                              size="512MiB", fs="ext2", flush="unmount", inputs="on-medium")
        job = MeasurementJob(testbed="t", file_type="text", input_path=str(path),
                             input_sha256=entry["sha256"], input_bytes=entry["size_bytes"],
                             medium=medium, codec=None if name == "plain" else codec(name),
                             repeats=RepeatRule(3, 3, 0.05), idle_power_w=20.0,
                             bandwidth_bytes_per_s=RATE, factors={"setting": "laptop"})
        journal = tmp_path / f"{name}.jsonl"
        log = []
        repeats.run_job(job, meter, journal, log=log.append)
        assert any("staging the input on the medium" in line for line in log)
        runs += records.read_jsonl([journal])
    assert all(r["verified"] for r in runs)
    assert {r["input_layout"] for r in runs} == {"on-medium"}
    assert {r["bandwidth_budget"] for r in runs} == {"one for reads and writes"}
    assert {r["bandwidth_applied_bytes_per_s"] for r in runs} == {RATE}

    def mean_s(codec_name, op):
        times = [r["elapsed_s"] for r in runs if r["codec"] == codec_name and r["op"] == op]
        assert len(times) == 3
        return sum(times) / len(times)

    # The bytes the emulated disk itself counted in each region: a plain write reads the
    # input and writes it (a copy that did less, a reflink, would show here); gzip -1
    # writes a third of them; a read reads what was stored.
    moved = {(r["codec"], r["op"]): r["emulated_disk_bytes"] for r in runs}
    assert moved[("plain", "plain-write")] >= 2 * 32 * MIB
    assert moved[("plain", "plain-read")] >= 32 * MIB
    assert moved[("gz-1", "compress-write")] < 0.7 * moved[("plain", "plain-write")]
    plain_write = mean_s("plain", "plain-write")
    assert plain_write == pytest.approx(64 * MIB / RATE, rel=0.15)
    assert mean_s("gz-1", "compress-write") < 0.8 * plain_write
    assert mean_s("gz-1", "decompress-read") < 0.8 * mean_s("plain", "plain-read")
    rows = [{**r, "testbed": "t", "setting": "laptop"} for r in runs]
    cell = [b for b in run_tables.breakeven_table(rows, AnalysisOptions()) if b["metric"] == "T"]
    assert len(cell) == 1
    assert (cell[0]["kind"], cell[0]["decided"]) == ("always", True), cell[0]


@needs_fuse
def test_a_budget_the_emulated_disk_cannot_deliver_is_refused(disk, monkeypatch):
    """Its daemon's own limit (a few hundred MB/s here) is measured with the budget lifted:
    30 MB/s is reachable, 50 GB/s is an error before anything is measured (after one try:
    the tries a shared host's slow moment gets are the next test's)."""
    monkeypatch.setattr(onedisk, "CEILING_TRIES", 1)
    rates = disk.check_budget_reachable()
    assert min(rates["read_bytes_per_s"], rates["write_bytes_per_s"]) > \
        onedisk.CEILING_MARGIN * RATE
    assert disk.budget_applied_bytes_per_s() == RATE  # the budget is back
    with pytest.raises(onedisk.FactorError, match="cannot emulate that disk"):
        onedisk.check_reachable(disk.path, 50_000_000_000)


def test_one_slow_moment_of_a_shared_host_does_not_refuse_a_budget(monkeypatch):
    """A test copy that falls short once (another guest's burst on the host disk: 38 MB/s
    where the host gives 350) is tried again (CEILING_PAUSE_S later); three short in a row
    are refused, every try named in the error."""
    rates = iter([(38e6, 69e6), (350e6, 170e6)])
    monkeypatch.setattr(onedisk, "copy_rates", lambda *a: next(rates))
    monkeypatch.setattr(onedisk, "CEILING_PAUSE_S", 0.0)
    got = onedisk.check_reachable("/unused", 50_000_000)
    assert got["read_bytes_per_s"] == 350e6 and len(got["tries"]) == 2
    monkeypatch.setattr(onedisk, "copy_rates", lambda *a: (38e6, 69e6))
    with pytest.raises(onedisk.FactorError, match=r"38/69, 38/69, 38/69 MB/s .* 3 tries"):
        onedisk.check_reachable("/unused", 50_000_000)


@needs_fuse
def test_a_budget_above_the_host_disk_s_cold_speed_is_refused(tmp_path, monkeypatch):
    """The host disk made slow for the daemon alone (a blkio cgroup capping its reads of
    the image at 10 MB/s): a 40 MB/s budget is refused, although the host's page cache
    would serve the image's bytes far faster (after one try, as above)."""
    from wattzip.machine import system, throttle

    monkeypatch.setattr(onedisk, "CEILING_TRIES", 1)
    medium = media.Medium(name="server", kind="image", path=str(tmp_path / "ext2"),
                          size="256MiB", fs="ext2", inputs="on-medium")
    medium.share_budget(40_000_000)
    medium.attach()
    cap = throttle.Throttle([system.scheduler_disk(medium.image)], 10_000_000,
                            name=f"wattzip-test-cold-{os.getpid()}")
    try:
        cap.create()
        (cap.path / "cgroup.procs").write_text(f"{medium._disk._proc.pid}\n")
        with pytest.raises(onedisk.FactorError, match="cannot emulate"):
            medium.check_budget_reachable()
    finally:
        cap.remove()
        medium.detach()


def test_an_emulated_disk_s_mount_point_and_log_are_undone_and_nothing_else(tmp_path):
    """A `dir` entry named *.onedisk removes an empty folder only; a `file` entry removes
    only an emulated disk's log, and a link at its name is removed, not followed."""
    point, log = tmp_path / "x.img.onedisk", tmp_path / "x.img.onedisk.log"
    point.mkdir()
    log.write_text("said\n")
    full = tmp_path / "y.img.onedisk"
    full.mkdir()
    (full / "theirs").write_text("keep")
    victim = tmp_path / "victim"
    victim.write_text("keep")
    linked = tmp_path / "z.img.onedisk.log"
    linked.symlink_to(victim)
    other = tmp_path / "notes.txt"
    other.write_text("keep")
    ids = [machine.note("dir", str(point)), machine.note("file", str(log)),
           machine.note("file", str(linked)), machine.note("dir", str(full)),
           machine.note("file", str(other))]
    try:
        with pytest.raises(machine.MachineError, match="stay changed") as failed:
            machine.undo([e for e in machine.pending() if e["id"] in ids])
    finally:
        for entry in machine.pending():
            if entry["id"] in ids:
                machine.undone(entry["id"])
    assert not os.path.lexists(point) and not os.path.lexists(log)
    assert not os.path.lexists(linked) and victim.read_text() == "keep"
    assert (full / "theirs").read_text() == "keep" and other.read_text() == "keep"
    said = str(failed.value)
    assert f"dir {full}" in said and "refused: a file change" in said and str(other) in said


def test_the_daemon_never_imports_a_wattzip_planted_in_the_current_folder(tmp_path,
                                                                          monkeypatch):
    """A root job started from a folder others can write (/tmp): `python -m` would put
    that folder first on the import path, and a planted `wattzip/` would run as root."""
    planted = tmp_path / "cwd" / "wattzip"
    planted.mkdir(parents=True)
    marker = tmp_path / "imported"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(planted.parent)
    with open(tmp_path / "log", "wb") as log:  # no such image: the daemon stops at once
        proc = onedisk.daemon("missing.img", "missing.img.onedisk", RATE, log.fileno(),
                              "onedisk-test-planted")
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = (tmp_path / "log").read_text(errors="replace")
    assert not marker.exists(), said
    assert str(tmp_path / "cwd" / "missing.img") in said  # made absolute before "/"


@needs_fuse
def test_a_disk_started_from_a_folder_with_a_planted_wattzip_runs_the_real_one(tmp_path,
                                                                             monkeypatch):
    """The same through OneDisk.start, the package's own way to start the daemon."""
    planted = tmp_path / "cwd" / "wattzip"
    planted.mkdir(parents=True)
    marker = tmp_path / "imported"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(planted.parent)
    Path("d.img").write_bytes(bytes(MIB))
    with started(Path("d.img")) as disk:
        with contextlib.suppress(onedisk.FactorError):  # a planted package cannot start it
            disk.start()
        assert not marker.exists()
        assert os.path.exists(disk.file)


@contextlib.contextmanager
def started(image: Path):
    """An emulated disk over `image`, its changes undone (and its daemon reaped) after."""
    disk = onedisk.OneDisk(str(image), RATE)
    try:
        yield disk
    finally:
        try:
            machine.undo([e for e in machine.pending() if e["id"] in disk.changes])
        finally:
            disk.wait_stopped()


@needs_fuse
def test_the_mount_point_and_the_log_are_journaled_before_they_are_made(tmp_path, noted):
    """A kill between making either and journaling it would leave it unknown to every
    later command; journaled first, both are gone after the disk is undone."""
    image = tmp_path / "d.img"
    image.write_bytes(bytes(MIB))
    point, log = f"{image}.onedisk", f"{image}.onedisk.log"
    with started(image) as disk:
        assert disk.start() == f"{point}/disk.img"
        assert ("dir", point, False) in noted and ("file", log, False) in noted
        assert stat.S_ISREG(os.lstat(log).st_mode) and os.lstat(log).st_mode & 0o777 == 0o600
    assert not os.path.lexists(point) and not os.path.lexists(log)


@needs_fuse
def test_a_mount_point_that_is_not_empty_is_refused(tmp_path):
    image = tmp_path / "d.img"
    image.write_bytes(bytes(MIB))
    point = Path(f"{image}.onedisk")
    point.mkdir()
    (point / "theirs").write_text("keep")
    with started(image) as disk, pytest.raises(onedisk.FactorError, match="is not empty"):
        disk.start()
    assert (point / "theirs").read_text() == "keep"
    assert str(point) not in Path("/proc/self/mounts").read_text()
    assert not [e for e in machine.pending() if str(point) in e["target"]]


@needs_fuse
def test_a_link_at_the_log_s_name_is_not_written_through(tmp_path):
    image = tmp_path / "d.img"
    image.write_bytes(bytes(MIB))
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    Path(f"{image}.onedisk.log").symlink_to(victim)
    with started(image) as disk:
        disk.start()
        assert victim.read_text() == "keep\n"
        assert not os.path.islink(f"{image}.onedisk.log")
    assert victim.read_text() == "keep\n"
