"""The machine is left as it was found: journaled changes, undone after SIGKILL, one lock.

Real loop devices, mounts, cgroups and the real disk's I/O scheduler; a fake
sysfs only for the governor (this VM has no cpufreq). A process that holds a
change is SIGKILLed, so it cannot undo anything; the next wattzip command does.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from wattzip import machine
from wattzip.errors import WattzipError
from wattzip.machine import factors, system, undoers
from wattzip.measure import spec as specs

from .job_files import spec_text
from .real_machine import loops_of, mounted, other_schedulers

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
WATTZIP = [sys.executable, "-m", "wattzip"]
REPO = Path(__file__).resolve().parent.parent


def holder(code: str, ready: Path) -> subprocess.Popen:
    """A Python process that makes some changes, says so, and waits to be killed."""
    script = textwrap.dedent(code) + f"\nopen({str(ready)!r}, 'w').close()\nimport time\n" \
        "time.sleep(600)\n"
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None, "the holder died before it was ready"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return proc


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def restore() -> str:
    out = subprocess.run([*WATTZIP, "restore"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stderr


def test_a_killed_job_s_medium_is_unmounted_and_its_loop_freed(tmp_path):
    target = tmp_path / "target"
    proc = holder(f"""
        from wattzip.machine.media import Medium
        Medium(name="m", kind="image", path={str(target)!r}, size="16MiB").attach()
    """, tmp_path / "ready")
    kill(proc)
    image = target.with_name("target.img")
    assert mounted(target) and loops_of(image)  # what SIGKILL leaves
    said = restore()
    assert not mounted(target) and not loops_of(image)
    assert "undid what a killed wattzip process left" in said and str(target) in said


def test_a_killed_test_session_s_mount_is_undone_by_the_next_session(tmp_path):
    """The tests' own hygiene (tests/conftest.py): a session of the tests killed while its
    medium was mounted journals to a folder of its own; the next session, started with
    no state folder of its own yet, undoes it before any test."""
    killed = Path(tempfile.mkdtemp(prefix="wattzip-test-state-"))
    target = tmp_path / "target"
    proc = holder(f"""
        import os
        os.environ["{machine.STATE_DIR_ENV}"] = {str(killed)!r}
        from wattzip.machine.media import Medium
        Medium(name="m", kind="image", path={str(target)!r}, size="16MiB").attach()
    """, tmp_path / "ready")
    kill(proc)
    assert mounted(target)
    env = {k: v for k, v in os.environ.items() if k != machine.STATE_DIR_ENV}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "--collect-only", "tests/test_layers.py"], cwd=REPO, env=env,
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert not mounted(target) and not loops_of(target.with_name("target.img")), out.stderr
    assert "undid what a killed wattzip process left" in out.stderr
    shutil.rmtree(killed)  # (kept if the test fails: the next session undoes it)


def test_a_killed_job_s_scheduler_on_the_real_disk_is_restored(tmp_path):
    disk = system.scheduler_disk(str(tmp_path))
    original = factors.current_io_scheduler(disk)
    other, then = other_schedulers(disk, 2)
    proc = holder(f"""
        from wattzip.machine import factors
        held = factors.applied({disk!r}, {{'io_scheduler': {other!r}}})  # kept, not restored
        held.__enter__()
    """, tmp_path / "ready")
    kill(proc)
    assert factors.current_io_scheduler(disk) == other
    # The next job first undoes the leftover, so it reads the machine's own value as the
    # original, not the leftover, and puts that back at its end.
    with machine.session("job"), factors.applied(disk, {"io_scheduler": then}) as effect:
        assert effect["io_scheduler"] == then
    assert factors.current_io_scheduler(disk) == original


def fake_cpufreq(root: Path, governor: str = "schedutil") -> list[Path]:
    files = []
    for cpu in range(2):
        d = root / f"devices/system/cpu/cpu{cpu}/cpufreq"
        d.mkdir(parents=True)
        (d / "scaling_governor").write_text(governor + "\n")
        (d / "scaling_available_governors").write_text("performance powersave schedutil\n")
        files.append(d / "scaling_governor")
    return files


def test_a_killed_job_s_governors_are_restored(tmp_path, monkeypatch):
    monkeypatch.setenv(undoers.FAKE_SYSFS_ENV, str(tmp_path))  # where restore may write
    files = fake_cpufreq(tmp_path)
    proc = holder(f"""
        from wattzip.machine import factors
        held = factors.applied(None, {{'governor': 'powersave'}}, sysfs={str(tmp_path)!r})
        held.__enter__()
    """, tmp_path / "ready")
    kill(proc)
    assert {f.read_text() for f in files} == {"powersave"}
    restore()
    assert {f.read_text().strip() for f in files} == {"schedutil"}


def test_a_killed_job_s_cgroup_is_removed(tmp_path):
    proc = holder(f"""
        from wattzip.machine import throttle
        t = throttle.Throttle(["vda"], 50_000_000)
        t.create()
        inside = t.entered()
        inside.__enter__()
        open({str(tmp_path / "cgroup")!r}, "w").write(str(t.path))
    """, tmp_path / "ready")
    cgroup = Path((tmp_path / "cgroup").read_text())
    kill(proc)
    assert cgroup.exists()
    restore()
    assert not cgroup.exists()


def test_a_killed_job_s_emulated_machine_is_undone(tmp_path, monkeypatch):
    """The emulated machine's cgroups (a cpuset and a memory limit, under this process's
    own) and its hotplug (on a fake sysfs: taking a real CPU away would reach every
    session on this machine) stay after a SIGKILL and are undone by `wattzip restore`."""
    monkeypatch.setenv(undoers.FAKE_SYSFS_ENV, str(tmp_path))  # where restore may write
    online = tmp_path / "devices" / "system" / "cpu" / "cpu1" / "online"
    online.parent.mkdir(parents=True)
    online.write_text("1\n")
    proc = holder(f"""
        from wattzip.machine import emulated, throttle
        offline = emulated.others_offline([0], {str(tmp_path)!r})
        offline.__enter__()
        t = throttle.Throttle([], None, cpus=[0], memory_bytes=2**30)
        t.create()
        inside = t.entered()
        inside.__enter__()
        open({str(tmp_path / "cgroups")!r}, "w").write(
            "\\n".join(str(path) for _, _, path in t.groups.values()))
    """, tmp_path / "ready")
    cgroups = [Path(p) for p in (tmp_path / "cgroups").read_text().split()]
    kill(proc)
    assert len(cgroups) == 2 and all(c.exists() for c in cgroups)
    assert online.read_text().strip() == "0"
    restore()
    assert not any(c.exists() for c in cgroups) and online.read_text().strip() == "1"


def test_a_killed_job_s_processes_are_killed(tmp_path):
    proc = holder("""
        import subprocess
        from wattzip import machine
        # No guard: as when it dies with the job (a Slurm timeout kills the whole cgroup).
        held = machine.session("test", guarded=False)
        held.__enter__()
        child = subprocess.Popen(["sh", "-c", "sleep 600 & sleep 600"], process_group=0)
    """, tmp_path / "ready")
    tag = machine.owner_tag({"pid": proc.pid, "start": machine.process_start(proc.pid)})
    kill(proc)
    assert len(undoers.owned_processes(tag)) >= 2  # sh and its sleeps outlive the job
    restore()
    assert undoers.owned_processes(tag) == []


def test_sigterm_unwinds_idle_and_restores_the_scheduler(tmp_path):
    disk = system.scheduler_disk(str(tmp_path))
    original = factors.current_io_scheduler(disk)
    (other,) = other_schedulers(disk, 1)
    spec = spec_text(specs.IDLE, tmp_path, setting={"io_scheduler": other},
                     idle={"count": 100, "min_count": 3, "seconds": 0.5})
    proc = subprocess.Popen([*WATTZIP, "idle", "--spec", spec], stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 30
    while factors.current_io_scheduler(disk) != other:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert factors.current_io_scheduler(disk) == original


def test_a_second_command_waits_and_names_the_holder(tmp_path):
    proc = holder("""
        from wattzip import machine
        held = machine.session("job", "tb1", "/data/study-a")
        held.__enter__()
    """, tmp_path / "ready")
    try:
        lines: list[str] = []
        t0 = time.monotonic()
        with pytest.raises(machine.MachineError, match=f"pid {proc.pid} .*tb1.*study-a"), \
                machine.session("job", wait_s=1.5, log=lines.append):
            pass
        assert time.monotonic() - t0 >= 1.5
        assert lines and f"pid {proc.pid} (job, testbed tb1" in lines[0]
    finally:
        kill(proc)
    with machine.session("job", wait_s=5):  # the kernel freed it with its holder
        pass


def test_a_restore_that_fails_names_what_stays_changed(tmp_path):
    target = tmp_path / "scheduler"
    target.mkdir()  # a file that cannot be written back (root ignores permissions)
    entry = machine.note("sysfs", str(target), "none")
    with pytest.raises(WattzipError, match=f"stay changed: sysfs {target}"):
        machine.undo([e for e in machine.pending() if e["id"] == entry])
    machine.undone(entry)


def test_idle_refuses_a_machine_that_is_not_quiet(tmp_path):
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        spec = spec_text(specs.IDLE, tmp_path, quiet={"wait_s": 3},
                         idle={"count": 1, "min_count": 3, "seconds": 1})
        out = subprocess.run([*WATTZIP, "idle", "--spec", spec], capture_output=True,
                             text=True, check=False)
    finally:
        busy.kill()
        busy.wait()
    assert out.returncode == 2  # busy for longer than it waits: a busy machine, refused
    assert out.stderr.count("the machine was not idle") == 1 and "sh (pid" in out.stderr
    assert "discarded, measuring it again once the machine is quiet" in out.stderr
    assert "waiting up to 3 s for it to be quiet" in out.stderr
    assert "idle window 1: the machine stayed busy for 3 s (other processes used" in out.stderr


def kill_workflow(root: Path) -> None:
    """SIGKILL every process working in root (Snakemake, its jobs and their scripts,
    whatever sessions or parents they have), until none is left."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                with contextlib.suppress(OSError):
                    if os.readlink(entry / "cwd").startswith(str(root)):
                        found.append(int(entry.name))
        if not found:
            return
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    raise AssertionError(f"processes in {root} survive SIGKILL")


def machine_state(root: Path) -> dict:
    """What a study under root could leave changed: its mounts and loop devices, wattzip's
    cgroups, and the disk's I/O scheduler."""
    mounts = sorted(line.split()[1] for line in open("/proc/self/mounts")
                    if line.split()[1].startswith(str(root)))
    loops = subprocess.run(["losetup", "--list", "--noheadings", "--output", "BACK-FILE"],
                           capture_output=True, text=True, check=False).stdout
    cgroups = sorted(p.name for p in Path("/sys/fs/cgroup/blkio").glob("wattzip-*"))
    disk = system.scheduler_disk(str(root))
    return {"mounts": mounts, "cgroups": cgroups,
            "loops": sorted(f for f in loops.split() if f.startswith(str(root))),
            "scheduler": factors.current_io_scheduler(disk)}


@pytest.mark.workflow
def test_a_killed_preflight_leaves_nothing_behind(tmp_path):
    """SIGKILL the pre-flight rule (Snakemake and its script) the moment it has journaled
    a loop device, a mount, a cgroup: after `wattzip restore` the machine is as before,
    and the pre-flight then runs to its end."""
    from .test_workflow import SNAKEMAKE, TINY, workflow_copy

    root = workflow_copy(tmp_path / "wf", rehearsed=True)
    argv = [*SNAKEMAKE, "results/tiny/tiny/preflight.json", "--cores", "1", "--configfile",
            str(TINY)]
    before = machine_state(root)
    hit = set()
    for kind in ("loop", "mount", "cgroup"):
        # What Snakemake asks of a user after a hard kill, before the same command again.
        subprocess.run([*argv, "--unlock"], cwd=root, capture_output=True, check=True)
        proc = subprocess.Popen(argv, cwd=root, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if any(e["kind"] == kind for e in machine.pending()):
                hit.add(kind)  # killed while held (its guard may undo it at once)
                break
            time.sleep(0.002)
        kill_workflow(root)  # Snakemake, and its jobs in sessions of their own
        proc.wait()
        restore()
        assert machine_state(root) == before, kind
        assert not machine.pending(), kind
    assert {"loop", "mount"} <= hit, f"kills landed only with {hit} held"
    subprocess.run([*argv, "--unlock"], cwd=root, capture_output=True, check=True)
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert machine_state(root) == before


def test_a_killed_but_unreaped_command_is_dead():
    """A SIGKILLed command whose parent has not reaped it yet (a zombie) owns nothing: its
    changes are leftovers at once, not when the parent gets round to waiting."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    owner = {"pid": child.pid, "start": machine.process_start(child.pid)}
    assert machine.is_alive(owner)
    os.kill(child.pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while Path(f"/proc/{child.pid}/stat").read_text().split(") ")[1][0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not machine.is_alive(owner)  # a zombie: not reaped yet, but dead
    child.wait()


SLOW_UNDO = """
import sys, time
from pathlib import Path
from wattzip import machine
from wattzip.machine import undoers
base, cut_short = Path(sys.argv[1]), sys.argv[2] == "cut-short"
remove = undoers.UNDO["dir"]

def slowly(entry):
    if not entry["target"].startswith(str(base)):  # what another test left: as it is
        return remove(entry)
    (base / "undoing").touch()
    if cut_short:
        raise RuntimeError("an undo cut short")
    time.sleep(0.5)
    remove(entry)

undoers.UNDO["dir"] = slowly  # in this process alone: its guard undoes as any command does
with machine.session("test"):
    for i in range(4):
        folder = base / f"wattzip-slow-{i}"
        machine.note("dir", str(folder))
        folder.mkdir()
    (base / "ready").touch()
    time.sleep(600)
"""


def slow_undoer(base: Path, how: str) -> tuple[subprocess.Popen, list[Path]]:
    """A session holding four folders whose undo takes 0.5 s each (or fails at once),
    waiting to be stopped; its stderr (and its guard's) goes to base/stderr."""
    with open(base / "stderr", "wb") as err:
        proc = subprocess.Popen([sys.executable, "-c", SLOW_UNDO, str(base), how],
                                stderr=err)
    deadline = time.monotonic() + 60
    while not (base / "ready").exists():
        assert proc.poll() is None and time.monotonic() < deadline, \
            (base / "stderr").read_text()
        time.sleep(0.02)
    return proc, [base / f"wattzip-slow-{i}" for i in range(4)]


def test_a_second_sigterm_during_the_undo_waits_until_it_is_done(tmp_path):
    """scancel, then Snakemake passing on its own SIGTERM (or Ctrl-C twice): the second
    signal comes while the first one's undo runs, and must not cut it short."""
    proc, folders = slow_undoer(tmp_path, "slow")
    owner = proc.pid
    proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 30
    while not (tmp_path / "undoing").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)  # during the first of four slow undos
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    said = (tmp_path / "stderr").read_text()
    assert not [f for f in folders if f.exists()], said
    assert not [e for e in machine.pending() if e["owner"]["pid"] == owner], said
    assert "stopping once its changes to the machine are undone" in said


def test_an_undo_cut_short_is_left_to_the_guard(tmp_path):
    """An undo that stops half-way (here an undoer's bug) must not send the guard away:
    the guard undoes what is left once the command has died."""
    proc, folders = slow_undoer(tmp_path, "cut-short")
    owner = proc.pid
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 60
    while [f for f in folders if f.exists()] or \
            [e for e in machine.pending() if e["owner"]["pid"] == owner]:
        assert time.monotonic() < deadline, (tmp_path / "stderr").read_text()
        time.sleep(0.05)
    assert "wattzip guard: pid" in (tmp_path / "stderr").read_text()

