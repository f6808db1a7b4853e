"""Root on a shared server (issue 30): a killed job's tools die with it, signals do what
the user meant, paths cannot be turned against root, the lock cannot be taken by a
user, and each change is made where the jobs make it. (The journal's trust:
test_journal_trust.py.)

Real loop devices, mounts, processes and users; each test fails on a wattzip that
follows links, compares unresolved paths or binds an abstract socket.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from wattzip import machine
from wattzip.machine import undoers
from wattzip.measure import spec as specs

from .job_files import spec_text
from .real_machine import loops_of, mounted
from .test_machine import WATTZIP, fake_cpufreq, holder, kill, restore

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def run(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*WATTZIP, *argv], capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})


def test_a_job_killed_alone_leaves_tools_that_the_first_recovery_kills(tmp_path):
    """SIGKILL of the job process only (the OOM killer's choice): its tool, in a process
    group of its own and working in the mount, keeps the mount busy; the next command
    kills it first, so its first recovery frees the mount and the loop device."""
    target = tmp_path / "target"
    proc = holder(f"""
        import subprocess
        from wattzip import machine
        from wattzip.machine.media import Medium
        # No guard: as when it dies with the job (a Slurm timeout kills the whole cgroup).
        held = machine.session("job", guarded=False)  # kept: a dropped one undoes at once
        held.__enter__()
        Medium(name="m", kind="image", path={str(target)!r}, size="16MiB").attach()
        subprocess.Popen(["sleep", "600"], cwd={str(target)!r}, process_group=0)
    """, tmp_path / "ready")
    kill(proc)
    image = target.with_name("target.img")
    assert mounted(target) and loops_of(image)
    out = run("restore")
    assert out.returncode == 0, out.stderr
    assert not mounted(target) and not loops_of(image)


def test_a_job_killed_alone_is_undone_at_once_by_its_guard(tmp_path):
    """No next command needed: the killed job's guard kills its tool and frees its mount
    and loop device within seconds."""
    target = tmp_path / "target"
    proc = holder(f"""
        import subprocess
        from wattzip import machine
        from wattzip.machine.media import Medium
        held = machine.session("job")  # kept: a dropped one would undo at once
        held.__enter__()
        Medium(name="m", kind="image", path={str(target)!r}, size="16MiB").attach()
        tool = subprocess.Popen(["sleep", "600"], cwd={str(target)!r}, process_group=0)
        open({str(tmp_path / "tool")!r}, "w").write(str(tool.pid))
    """, tmp_path / "ready")
    tool = int((tmp_path / "tool").read_text())
    kill(proc)
    image = target.with_name("target.img")
    deadline = time.monotonic() + 30
    while mounted(target) or loops_of(image) or machine.process_start(tool):
        assert time.monotonic() < deadline, "the killed job's changes outlived it"
        time.sleep(0.1)
    assert not machine.pending()

def test_nohup_hang_up_is_ignored_and_sigterm_still_undoes(tmp_path):
    """Under nohup (SIGHUP ignored) a hang-up changes nothing; SIGTERM still stops."""
    script = (f"import signal, time\nfrom wattzip import machine\n"
              f"with machine.session('test'):\n"
              f"    open({str(tmp_path / 'ready')!r}, 'w').close()\n"
              f"    time.sleep(3)\n")
    proc = subprocess.Popen(["nohup", sys.executable, "-c", script], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (tmp_path / "ready").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(timeout=30) == 0
    out = run("restore")
    assert out.returncode == 0, out.stderr


def test_sigterm_under_nohup_still_undoes_and_stops(tmp_path):
    folder = tmp_path / "wattzip-made"
    script = (f"import os, time\nfrom wattzip import machine\n"
              f"with machine.session('test'):\n"
              f"    os.mkdir({str(folder)!r})\n"
              f"    machine.note('dir', {str(folder)!r})\n"
              f"    open({str(tmp_path / 'ready')!r}, 'w').close()\n"
              f"    time.sleep(60)\n")
    proc = subprocess.Popen(["nohup", sys.executable, "-c", script], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (tmp_path / "ready").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert not folder.exists()


def test_an_image_through_a_symlinked_folder_is_detached_and_attached_again(tmp_path):
    """/data linked to /srv/data: the kernel names the loop's backing file by its resolved
    path, and the medium compares resolved paths, so its job frees the loop device."""
    from wattzip.machine.media import Medium

    (tmp_path / "srv").mkdir()
    (tmp_path / "data").symlink_to(tmp_path / "srv")
    medium = Medium(name="m", kind="image", path=str(tmp_path / "data" / "target"),
                    size="16MiB")
    for _ in range(2):
        medium.attach()
        medium.detach()
    assert not loops_of(tmp_path / "srv" / "target.img")


def test_an_existing_file_at_the_image_path_is_refused_by_name(tmp_path):
    from wattzip.machine.media import Medium, MediumError

    theirs = tmp_path / "target.img"
    theirs.write_bytes(b"someone's data\n")
    medium = Medium(name="m", kind="image", path=str(tmp_path / "target"), size="16MiB")
    with pytest.raises(MediumError, match=f"{theirs} exists and is not an image wattzip"):
        medium.attach()
    assert theirs.read_bytes() == b"someone's data\n"


def test_a_link_planted_at_the_image_path_is_never_followed(tmp_path):
    from wattzip.machine.media import Medium, MediumError

    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    (tmp_path / "target.img").symlink_to(victim)
    medium = Medium(name="m", kind="image", path=str(tmp_path / "target"), size="16MiB")
    with pytest.raises(MediumError, match="not an image wattzip made"):
        medium.attach()
    assert victim.read_bytes() == b"precious\n"


def test_a_mount_point_that_is_not_empty_is_refused(tmp_path):
    from wattzip.machine.media import Medium, MediumError

    target = tmp_path / "target"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    medium = Medium(name="m", kind="tmpfs", path=str(target), size="1MiB")
    with pytest.raises(MediumError, match="is not empty"):
        medium.attach()
    assert not mounted(target) and (target / "notes.txt").read_text() == "mine\n"


def test_a_tmpfs_larger_than_the_memory_is_refused(tmp_path):
    from wattzip.machine.media import Medium, MediumError

    medium = Medium(name="m", kind="tmpfs", path=str(tmp_path / "t"), size="64TiB")
    with pytest.raises(MediumError, match="exceeds the memory available"):
        medium.attach()
    assert not mounted(tmp_path / "t")


NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
          "/usr/bin/python3", "-c"]


def test_an_unprivileged_user_can_neither_take_nor_fake_the_lock(tmp_path):
    """Today's abstract socket could be bound by anyone, holding every study off; the
    lock file lives where only root may go."""
    name = machine.LOCK_NAME
    squatter = subprocess.Popen([*NOBODY, textwrap.dedent(f"""
        import socket, sys, time
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind("\\0" + {name!r})  # what took the old lock
        s.listen(1)
        try:
            open({machine.LOCK_DIR!r} + "/" + {name!r} + ".lock", "a")
            print("opened", flush=True)
        except OSError as exc:
            print("refused", exc.errno, flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert squatter.stdout.readline().startswith("refused")
        with machine.session("job", wait_s=2):
            pass
    finally:
        squatter.kill()
        squatter.wait()


def test_a_second_study_cannot_name_a_lock_of_its_own(tmp_path, monkeypatch):
    """A study measuring (a real holder of the machine) and a second one started with
    WATTZIP_LOCK_NAME set to a lock of its own: the second waits for the machine
    like any other command, and gives up, so the two never measure at once."""
    proc = holder("""
        from wattzip import machine
        held = machine.session("job", "first", "the first study")  # kept: the lock held
        held.__enter__()
    """, tmp_path / "ready")
    try:
        monkeypatch.setenv("WATTZIP_LOCK_NAME", "second-study")
        with (pytest.raises(machine.MachineError, match="the machine is busy: pid"),
              machine.session("job", "second", "the second study", wait_s=1)):
            pass
    finally:
        kill(proc)


def test_the_wattsup_port_opens_only_under_the_lock(tmp_path):
    from wattzip import meters
    from wattzip.errors import MeterError

    from .test_meter_edges import FakeWattsUp

    device = FakeWattsUp(before_w=80.0, after_w=80.0, step_s=0.0)
    try:
        meter = meters.WattsUpMeter(meters.MeterOptions(wattsup_port=device.port))
        with pytest.raises(MeterError, match="only under the machine's lock"):
            meter.start()
        assert device.received == []  # not one byte to the meter of whoever measures
        meter.close()
    finally:
        device.close()


def test_idle_sets_the_scheduler_on_the_jobs_device_not_the_root_disk(tmp_path):
    """A block medium (a real loop device here) whose mount point sits on the root disk:
    the idle calibration sets the scheduler on the medium's device, as the jobs do."""
    from wattzip.machine import factors, system

    image = tmp_path / "disk.img"
    image.write_bytes(b"")
    os.truncate(image, 16 << 20)
    loop = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True,
                          text=True, check=True).stdout.strip()
    root_disk = system.scheduler_disk(str(tmp_path))
    before = factors.current_io_scheduler(root_disk)
    try:
        spec = spec_text(specs.IDLE, tmp_path / "mnt", setting={"io_scheduler": "kyber"},
                         medium={"name": "disk", "kind": "block", "device": loop},
                         idle={"count": 2, "min_count": 2, "seconds": 1,
                               "max_other_load": 1})
        proc = subprocess.Popen([*WATTZIP, "idle", "--spec", spec], stderr=subprocess.PIPE,
                                text=True)
        seen = set()
        while proc.poll() is None:
            seen.add(factors.current_io_scheduler(os.path.basename(loop)))
            assert factors.current_io_scheduler(root_disk) == before
            time.sleep(0.05)
        assert proc.returncode == 0, proc.stderr
        assert "kyber" in seen
        assert factors.current_io_scheduler(os.path.basename(loop)) == "none"
    finally:
        subprocess.run(["losetup", "--detach", loop], check=False)


def test_idle_on_an_emulated_disk_leaves_the_host_disk_s_scheduler_as_it_is(tmp_path):
    """An emulated disk (an image holding its inputs, one budget): its jobs set the
    scheduler of its loop device, which exists only while a job runs. The idle
    calibration sets none: the host's disk under the image (the root disk here, every
    user's) is not the jobs' device and keeps its scheduler throughout."""
    from wattzip.machine import factors, system

    host = system.scheduler_disk(str(tmp_path))
    before = factors.current_io_scheduler(host)
    other = next(s for s in factors.offered_io_schedulers(host) if s != before)
    spec = spec_text(specs.IDLE, tmp_path / "mnt",
                     setting={"io_scheduler": other, "bandwidth": "30MB/s"},
                     medium={"name": "disk", "kind": "image", "size": "16MiB",
                             "inputs": "on-medium"},
                     idle={"count": 1, "seconds": 0.5, "max_other_load": 1})
    proc = subprocess.Popen([*WATTZIP, "idle", "--spec", spec], stderr=subprocess.PIPE,
                            text=True)
    while proc.poll() is None:
        assert factors.current_io_scheduler(host) == before
        time.sleep(0.02)
    assert proc.returncode == 0, proc.stderr.read()
    assert "the emulated disk's loop device exists only while a job runs" in proc.stderr.read()


def test_a_link_planted_at_a_partial_or_output_file_is_never_followed(tmp_path):
    """Another user's link at the name root writes next (a .partial beside a result, a
    copy's target): the write fails instead of going where the link points."""
    from wattzip import records
    from wattzip.workload import inputs

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "out.json.partial").symlink_to(victim)
    with pytest.raises(OSError):
        records.write_text_atomically(tmp_path / "out.json", "{}\n")
    (tmp_path / "copy.bin.partial").symlink_to(victim)
    src = tmp_path / "src.bin"
    src.write_bytes(b"x" * 100)
    with pytest.raises(OSError):
        inputs.copy_through_user_space(src, tmp_path / "copy.bin")
    (tmp_path / "zero.bin.partial").symlink_to(victim)
    with pytest.raises(OSError):
        inputs.generate("zero", 1 << 16, tmp_path / "zero.bin", progress=False)
    assert victim.read_text() == "precious\n"


def test_another_user_s_process_with_the_owner_mark_is_not_the_command_s():
    """Anyone can read a command's pid and start time and copy its mark into their own
    processes' environment: those are not root's to kill, nor may they keep the undo
    waiting for them to go."""
    tag = machine.owner_tag({"pid": os.getpid(), "start": machine.process_start(os.getpid())})
    env = {**os.environ, undoers.OWNER_ENV: tag}
    mine = subprocess.Popen(["sleep", "600"], env=env)
    theirs = subprocess.Popen(["sleep", "600"], env=env, user=65534, group=65534)
    try:
        found = undoers.owned_processes(tag)
        assert mine.pid in found and theirs.pid not in found
    finally:
        for p in (mine, theirs):
            p.kill()
            p.wait()


def test_a_killed_command_s_scratch_folder_is_removed(tmp_path):
    """The drift reference's input (8 MiB made afresh in the temporary folder) and perf's
    FIFOs live in a scratch folder: a command killed while it holds one leaves it to the
    next command, which removes it."""
    proc = holder(f"""
        from wattzip.machine import scratch
        held = scratch.folder("wattzip-reference")
        open({str(tmp_path / "folder")!r}, "w").write(held.__enter__())
    """, tmp_path / "ready")
    folder = Path((tmp_path / "folder").read_text())
    kill(proc)
    assert folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) == 0o700
    restore()
    assert not folder.exists()


def test_a_killed_plan_s_pilot_folder_in_the_study_is_removed(tmp_path):
    """The pilot times the codecs on the study's own disk, in a scratch folder beside
    its cache: killed mid-pilot, it leaves that folder to the next command."""
    plan_folder = tmp_path / "plan"
    proc = holder(f"""
        import time
        from pathlib import Path
        from wattzip.model import plan
        def progress(message):
            open({str(tmp_path / "ready")!r}, "w").close()
            time.sleep(600)
        plan.pilot(["zero"], [], Path({str(plan_folder / "pilot.json")!r}), progress=progress)
    """, tmp_path / "ready")
    kill(proc)
    [left] = plan_folder.glob("wattzip-pilot-*")
    restore()
    assert not left.exists()


def test_a_governor_whose_cpu_went_away_is_undone_and_blocks_nothing(tmp_path, monkeypatch):
    """A CPU taken offline (its cpufreq folder gone) after a killed job set its governor:
    the next command's recovery restores the others and goes on, as the undoers promise
    for a target that is gone."""
    monkeypatch.setenv(undoers.FAKE_SYSFS_ENV, str(tmp_path))
    files = fake_cpufreq(tmp_path)
    proc = holder(f"""
        from wattzip.machine import factors
        held = factors.applied(None, {{'governor': 'powersave'}}, sysfs={str(tmp_path)!r})
        held.__enter__()
    """, tmp_path / "ready")
    kill(proc)
    shutil.rmtree(files[1].parent)  # cpu1 offline: the kernel removes its cpufreq folder
    restore()
    assert files[0].read_text().strip() == "schedutil"
    assert not [e for e in machine.pending() if str(tmp_path) in e["target"]]
    with machine.session("job"):  # nothing stays pending to refuse the next command
        pass


@pytest.fixture
def small_disk(tmp_path):
    """A real 1 MiB filesystem (a tmpfs) for the inputs."""
    disk = tmp_path / "inputs"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=755", "wattzip-test-inputs",
                    str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_input_copies_that_would_fill_the_disk_are_refused_before_the_first(small_disk):
    """copies: 4 of a 300 KiB input on a 1 MiB disk: refused before any copy is written,
    at the job and at the pre-flight, instead of filling the disk part way."""
    from types import SimpleNamespace

    from wattzip.errors import ConfigError
    from wattzip.measure import staging
    from wattzip.model import preflight
    from wattzip.workload import inputs

    entry = inputs.generate("random", 300 << 10, small_disk / "random.bin", progress=False)
    job = SimpleNamespace(input_path=entry["path"], copies=4, input_bytes=300 << 10,
                          input_sha256=entry["sha256"], file_type="random")
    with pytest.raises(ConfigError, match=r"4 copies of 0\.3 MiB"):
        staging.prepare_input_copies(job, lambda _: None)
    assert list((small_disk / "copies").iterdir()) == []
    with pytest.raises(preflight.PreflightError, match="copies: 4"):
        preflight.check_inputs(str(small_disk), [entry["path"]], 300 << 10, copies=4)
    preflight.check_inputs(str(small_disk), [entry["path"]], 300 << 10, copies=1)


def test_the_throttle_s_cgroup_is_made_inside_the_caller_s_own():
    """A job running in a cgroup of its own (a Slurm job's, a systemd scope's; here one
    the test makes): the throttle's cgroup, and the tools measured in it, stay inside
    it, where scancel and time limits reach them, not at the hierarchy's root."""
    from wattzip.machine import throttle

    v1 = os.path.exists(os.path.join(throttle.V1_ROOT, "blkio.throttle.read_bps_device"))
    job = Path(throttle.V1_ROOT if v1 else throttle.V2_ROOT) / f"job_{os.getpid()}"
    task = job if v1 else job / "task_0"  # v2: processes only in leaves
    task.mkdir(parents=True)
    if not v1:
        (job / "cgroup.subtree_control").write_text("+io\n")
    try:
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            import os
            from wattzip.machine import throttle
            open({str(task / "cgroup.procs")!r}, "w").write(str(os.getpid()))
            t = throttle.Throttle([sorted(os.listdir("/sys/block"))[0]], 50_000_000)
            t.create()
            try:
                with t.entered():
                    print(t.path)
                    print(open("/proc/self/cgroup").read())
            finally:
                t.remove()
        """)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        made, *cgroups = proc.stdout.splitlines()
        assert Path(made).parent == job, made
        assert any(f"/{job.name}/{throttle.PREFIX}" in line for line in cgroups), cgroups
        assert not Path(made).exists()
    finally:
        if not v1:
            task.rmdir()
        job.rmdir()


def cgroup2_mount() -> Path | None:
    """Where the kernel's cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
    /sys/fs/cgroup/unified beside v1's controllers), or None."""
    for line in Path("/proc/mounts").read_text().splitlines():
        _source, where, fstype, *_ = line.split()
        if fstype == "cgroup2":
            return Path(where)
    return None


@pytest.mark.skipif(cgroup2_mount() is None, reason="no cgroup v2 hierarchy mounted")
def test_the_throttle_s_cgroup_goes_beside_the_caller_s_own_under_cgroup_v2():
    """cgroup v2, real: a job in a cgroup of its own (job_<pid>/task_0, as a Slurm step's
    or a systemd scope's leaf) gets the throttle's cgroup beside it, inside job_<pid>, and
    comes back home after; where the parent cannot delegate io, the error names that
    parent, and nothing is made. On a machine whose io controller is cgroup v1's (this
    one's, v2 mounted empty beside it) io.max cannot be set: its devices are none, and the
    io delegation is left out after its error was seen."""
    from wattzip.machine import throttle

    root = cgroup2_mount()
    job = root / f"job_{os.getpid()}"
    task = job / "task_0"
    task.mkdir(parents=True)
    has_io = "io" in (root / "cgroup.controllers").read_text().split()
    try:
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            import os
            from wattzip.errors import FactorError
            from wattzip.machine import throttle
            open({str(task / "cgroup.procs")!r}, "w").write(str(os.getpid()))
            t = throttle.Throttle([], 50_000_000, v1_root="/nonexistent",
                                  v2_root={str(root)!r})
            print(t.version, t.home, t.path)
            if not {has_io!r}:
                try:
                    t.create()
                except FactorError as exc:
                    print("refused:", exc)
                throttle._delegate = lambda parent, controllers, what: []
            t.create()
            try:
                with t.entered():
                    print("in:", open("/proc/self/cgroup").read().splitlines()[-1])
                print("home:", open("/proc/self/cgroup").read().splitlines()[-1])
            finally:
                t.remove()
        """)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        said = proc.stdout.splitlines()
        version, home, made = said[0].split()
        assert (version, Path(home), Path(made).parent) == ("2", task, job), said
        name = Path(made).name
        assert said[-2:] == [f"in: 0::/{job.name}/{name}", f"home: 0::/{job.name}/task_0"]
        if not has_io:
            assert said[1].startswith(f"refused: bandwidth: the io controller(s) cannot be "
                                      f"enabled in {job} "), said
        assert not Path(made).exists() and not list(root.glob(f"{throttle.PREFIX}*"))
    finally:
        task.rmdir()
        job.rmdir()


def bounded(code: str, timeout_s: float = 20) -> subprocess.CompletedProcess:
    """`code` run in a Python of its own, which must end within `timeout_s`: a wait with
    no bound (the old code's) is killed and fails the test instead of hanging it."""
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                              capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still waiting after {timeout_s} s")


def test_a_trace_swapped_for_a_fifo_is_refused_not_waited_on(tmp_path):
    """A user who can write the trace's folder puts a FIFO at its name: the open would
    wait for a writer forever, with the machine's lock held."""
    fifo = tmp_path / "power.csv"
    os.mkfifo(fifo)
    proc = bounded(f"""
        from wattzip.errors import MeterError
        from wattzip.meters.trace import read_power_trace
        try:
            read_power_trace({str(fifo)!r})
        except MeterError as exc:
            print(exc)
    """, 10)
    assert "not a regular file" in proc.stdout, proc.stderr


def test_a_decompressor_s_long_stderr_does_not_deadlock_its_check():
    """A tool that writes 1 MiB to stderr before its stdout: stderr is read at once."""
    proc = bounded("""
        from wattzip.measure.runner import sha256_of_command
        argv = ["sh", "-c", "head -c 1048576 /dev/zero | tr '\\\\0' e >&2; echo out"]
        print(sha256_of_command(argv, None))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith(", 4, '')"), proc.stdout  # b"out\n", no error


def test_caches_are_dropped_after_syncing_only_the_study_s_filesystems(tmp_path,
                                                                       monkeypatch):
    """A global sync waits on every filesystem of the machine (a user's dead NFS mount,
    a stuck FUSE daemon): only the filesystems of the run's files are written back."""
    from wattzip.machine import system
    from wattzip.measure import runner

    def global_sync():
        raise AssertionError("a global sync")

    synced: list[int] = []
    real = system.sync_filesystems
    monkeypatch.setattr(os, "sync", global_sync)
    monkeypatch.setattr(system, "sync_filesystems",
                        lambda paths: (synced.append(len(paths)), real(paths)))
    out = tmp_path / "out.bin"
    out.write_bytes(b"x" * 4096)
    assert runner.drop_caches([str(out), str(tmp_path / "missing")]) in ("global", "per-file")
    assert synced == [2]
    from wattzip.errors import ConfigError
    from wattzip.measure import staging

    with contextlib.suppress(ConfigError):  # no compsize here: after the sync, named
        staging.on_disk_bytes(str(out))  # a staged input's size on a compressing btrfs
    assert synced == [2, 1]


@pytest.mark.parametrize("how", [
    # a set-user-ID root program nobody started: real uid nobody's, effective root's
    "import os; os.setresgid(65534, 65534, 65534); os.setresuid(65534, 0, 0)",
    # a process nobody made non-dumpable: its /proc files are root's
    "import os, ctypes; os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, "
    "65534); ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)"], ids=["setuid", "non-dumpable"])
def test_another_user_s_process_that_shows_as_root_s_is_not_the_command_s(how):
    """Another user's process with the command's mark that /proc shows as root's: its
    uids are read from /proc/PID/status, so it is neither root's to kill nor waited for."""
    tag = machine.owner_tag({"pid": os.getpid(), "start": machine.process_start(os.getpid())})
    theirs = subprocess.Popen(
        ["/usr/bin/python3", "-I", "-S", "-c", f"{how}; import time; print(flush=True); "
         "time.sleep(600)"], env={undoers.OWNER_ENV: tag}, stdout=subprocess.PIPE)
    try:
        theirs.stdout.readline()  # its uids set
        assert theirs.pid not in undoers.owned_processes(tag)
    finally:
        theirs.kill()
        theirs.wait()


def test_an_undo_s_commands_run_in_a_process_group_of_their_own():
    """A second Ctrl-C goes to the terminal's process group: the undo waits it out, and
    its umount, in a group of its own, never gets it."""
    out = undoers._run([sys.executable, "-c", "import os; print(os.getpgrp())"])
    assert int(out.stdout) != os.getpgrp()


def test_a_medium_command_past_its_time_is_a_medium_error(monkeypatch):
    """An unmount stuck past its bound is a MediumError (which the job and the undo
    report), not a TimeoutExpired through callers that catch wattzip's errors."""
    from wattzip.machine import media

    monkeypatch.setattr(media, "COMMAND_TIMEOUT_S", 0.2)
    with pytest.raises(media.MediumError, match="still running after 0.2 s"):
        media._output(["sleep", "5"], "medium m: unmount /x")


def test_the_crosscheck_s_threads_0_is_every_core_not_pigz_p_0():
    from wattzip.measure import crosscheck
    from wattzip.workload import codec_registry

    commands = crosscheck._commands(codec_registry.get("pigz-6"), "/x/out.gz", "/x/in", 0, "")
    assert f"-p {len(os.sched_getaffinity(0))} " in commands["compress-write"][0]


def test_the_emulated_disk_s_test_copy_has_a_bound(tmp_path, monkeypatch):
    """dd against a stuck FUSE daemon would wait forever with the lock held: a copy past
    its bound is killed and named."""
    from wattzip.errors import FactorError
    from wattzip.machine import onedisk

    monkeypatch.setattr(onedisk, "CEILING_TIMEOUT_S", 0.001)
    with pytest.raises(FactorError, match="still running after"):
        onedisk.copy_rates(str(tmp_path), 16 << 20, None)
    assert not (tmp_path / ".wattzip-ceiling").exists()


def test_a_host_renamed_within_a_boot_keeps_its_own_journal_entries():
    entry = {"host": "before-the-rename", "boot": machine.boot_id()}
    assert machine.is_here(entry)
    assert not machine.is_here({**entry, "boot": "another-boot"})


def test_another_user_s_process_name_reaches_the_terminal_escaped():
    """A user names a busy process with a terminal escape (prctl PR_SET_NAME): the quiet
    check's message shows it escaped."""
    from wattzip.measure import disturbance

    shown = disturbance.busiest({}, {1: ("\x1b]0;pwned\x07x", 500)})
    assert shown and "\x1b" not in shown[0] and "\\x1b]0;pwned\\x07x" in shown[0]


def test_the_plan_s_pilot_cache_is_written_whole_and_never_through_a_link(tmp_path):
    """A link at the cache's name (or a kill mid-write): the cache is replaced whole by
    a rename, and the file the link names is untouched."""
    from wattzip.model import plan

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    cache = tmp_path / "pilot.json"
    cache.symlink_to(victim)
    plan.save_cache(cache, {"gen|zero": 1e-9})
    assert victim.read_text() == "precious\n"
    assert not cache.is_symlink() and plan.read_cache(cache) == {"gen|zero": 1e-9}


@pytest.mark.parametrize("command", [["provenance"], ["meters"]], ids=["provenance", "meters"])
def test_meters_are_opened_only_under_the_machine_s_lock(tmp_path, command):
    """`wattzip provenance` and `wattzip meters` open or probe the meters (a WattsUp's
    port, the BMC): with another command holding the machine, they wait for it and
    give up after --lock-wait, touching no meter meanwhile."""
    from .test_machine import holder

    proc = holder("""
        from wattzip import machine
        held = machine.session("job", "tb")
        held.__enter__()
    """, tmp_path / "ready")
    try:
        out = run(*command, "--meter", "model", "--lock-wait", "0.5",
                  *(["--target-dir", str(tmp_path)] if command == ["provenance"] else []))
        assert out.returncode != 0 and "the machine is busy" in out.stderr, out.stderr[-500:]
    finally:
        kill(proc)
        restore()
