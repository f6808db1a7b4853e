"""Factors set before a job and restored after, against a fake sysfs tree."""

import os

import pytest

from wattzip.errors import FactorError
from wattzip.machine import factors, undoers


class FakeSchedulerFile:
    """Like /sys/block/<disk>/queue/scheduler: writing a name selects it in brackets."""

    def __init__(self, path, available, current):
        self.path, self.available = path, available
        path.parent.mkdir(parents=True)
        self.select(current)

    def select(self, name):
        self.path.write_text(" ".join(f"[{a}]" if a == name else a for a in self.available) + "\n")


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    root = tmp_path / "sys"
    monkeypatch.setenv(undoers.FAKE_SYSFS_ENV, str(root))  # where restore may write
    sched = FakeSchedulerFile(root / "block" / "vdz" / "queue" / "scheduler",
                              ["none", "mq-deadline", "bfq"], "mq-deadline")
    for cpu in (0, 1):
        d = root / "devices" / "system" / "cpu" / f"cpu{cpu}" / "cpufreq"
        d.mkdir(parents=True)
        (d / "scaling_governor").write_text("schedutil\n")
        (d / "scaling_available_governors").write_text("performance powersave schedutil\n")
    return root, sched


def governors(root):
    return [p.read_text().strip() for p in
            sorted(root.glob("devices/system/cpu/cpu*/cpufreq/scaling_governor"))]


def test_set_during_the_job_and_restored_after(sysfs):
    root, sched = sysfs
    with factors.applied("vdz", {"io_scheduler": "bfq", "governor": "performance"},
                         sysfs=str(root)):
        # the kernel would show the new choice in brackets; the fake holds what was written
        assert sched.path.read_text().strip() == "bfq"
        assert governors(root) == ["performance", "performance"]
    assert sched.path.read_text().strip() == "mq-deadline"
    assert governors(root) == ["schedutil", "schedutil"]


def test_the_highest_and_lowest_frequencies_are_pinned_and_restored(sysfs):
    """SYSTOR '11's highest and lowest CPU frequencies, as values of the governor factor:
    each CPU's scaling limits pinned to its cpuinfo range's end, the value in effect read
    back, and every limit restored after."""
    root, _ = sysfs
    folders = sorted(root.glob("devices/system/cpu/cpu*/cpufreq"))
    for d in folders:
        for name, khz in (("cpuinfo_min_freq", 800000), ("cpuinfo_max_freq", 2400000),
                          ("scaling_min_freq", 800000), ("scaling_max_freq", 2000000)):
            (d / name).write_text(f"{khz}\n")

    def limits():
        return [(int((d / "scaling_min_freq").read_text()),
                 int((d / "scaling_max_freq").read_text())) for d in folders]

    with factors.applied(None, {"governor": "lowest"}, sysfs=str(root)) as effect:
        assert effect["governor"] == "lowest" and limits() == [(800000, 800000)] * 2
    with factors.applied(None, {"governor": "highest"}, sysfs=str(root)) as effect:
        assert effect["governor"] == "highest" and limits() == [(2400000, 2400000)] * 2
    assert limits() == [(800000, 2000000)] * 2
    assert factors.in_effect(None, str(root))["governor"] == "schedutil"
    (folders[1] / "cpuinfo_min_freq").unlink()
    with pytest.raises(FactorError, match="no cpuinfo_max_freq or cpuinfo_min_freq"):
        factors.check(None, {"governor": "lowest"}, str(root))


def test_restored_even_when_the_job_fails(sysfs):
    root, sched = sysfs
    with pytest.raises(RuntimeError), factors.applied("vdz", {"io_scheduler": "none"},
                                                         sysfs=str(root)):
        raise RuntimeError("a run died")
    assert sched.path.read_text().strip() == "mq-deadline"


def test_keep_touches_nothing(sysfs):
    root, sched = sysfs
    before = sched.path.read_text()
    with factors.applied("vdz", {"io_scheduler": "keep", "governor": "keep"},
                                sysfs=str(root)):
        pass
    assert sched.path.read_text() == before


def test_unknown_scheduler_names_the_factor_and_the_choices(sysfs):
    root, _ = sysfs
    expected = "io_scheduler=cfq: vdz offers only none, mq-deadline, bfq"
    with pytest.raises(FactorError, match=expected):
        factors.check_io_scheduler("vdz", "cfq", sysfs=str(root))


def test_a_scheduler_this_kernel_has_as_a_module_says_how_to_load_it(sysfs, tmp_path):
    """Debian's kernels build bfq and kyber as modules: until loaded, the disk does not
    offer them, and wattzip loads no module on its own."""
    root, _ = sysfs
    modules = tmp_path / "modules"
    (modules / os.uname().release).mkdir(parents=True)
    (modules / os.uname().release / "modules.alias").write_text(
        "alias kyber-iosched kyber_iosched\nalias bfq-iosched bfq\n")
    with pytest.raises(FactorError, match="offers only none, mq-deadline, bfq; this kernel "
                       "has kyber as the module kyber_iosched, not loaded: load it with "
                       "'modprobe kyber_iosched'"):
        factors.check_io_scheduler("vdz", "kyber", sysfs=str(root), modules=str(modules))
    with pytest.raises(FactorError, match=r"offers only none, mq-deadline, bfq$"):
        factors.check_io_scheduler("vdz", "foo", sysfs=str(root), modules=str(modules))


def test_no_cpufreq_is_a_clear_error(tmp_path):
    with pytest.raises(FactorError, match="governor=powersave: this machine has no cpufreq"):
        factors.check_governor("powersave", sysfs=str(tmp_path))


def test_unavailable_governor(sysfs):
    root, _ = sysfs
    with pytest.raises(FactorError, match="cpu0 offers only performance, powersave"):
        factors.check_governor("ondemand", sysfs=str(root))


def test_a_legacy_scheduler_names_its_successor(sysfs):
    root, _ = sysfs
    with pytest.raises(FactorError, match="legacy block layer removed in Linux 5.0.*is bfq"):
        factors.check_io_scheduler("vdz", "cfq", sysfs=str(root))


def test_a_machine_factor_is_one_entry_from_its_spec_to_its_restore(sysfs, monkeypatch):
    """A factor that is a machine setting is one entry of MACHINE_FACTORS: its key in a
    spec's setting (wattzip job and idle), the check, the change journaled and undone, and
    the value in effect the runs record all come from it (here a second disk's scheduler,
    a file the undoers may restore)."""
    from wattzip.measure import spec

    root, _ = sysfs
    log_disk = FakeSchedulerFile(root / "block" / "vdy" / "queue" / "scheduler",
                                 ["none", "kyber"], "none")
    monkeypatch.setitem(factors.MACHINE_FACTORS, "log_scheduler", factors.MachineFactor(
        lambda disk, value, s: factors.check_io_scheduler("vdy", value, s),
        lambda disk, s, value: [(factors._scheduler_file("vdy", s), value)],
        factors.scheduler_of,
        lambda disk, s: factors.current_io_scheduler("vdy", s), factors.SCHEDULER_FILES))
    wanted = spec.machine_factors({"setting": {"name": "s", "log_scheduler": "kyber"}})
    assert wanted == {"io_scheduler": "keep", "governor": "keep", "log_scheduler": "kyber"}
    with pytest.raises(FactorError, match="vdy offers only none, kyber"):
        factors.check("vdz", {"log_scheduler": "bfq"}, str(root))
    with factors.applied("vdz", wanted, sysfs=str(root)) as effect:
        assert effect["log_scheduler"] == "kyber" == log_disk.path.read_text()
        assert factors.in_effect("vdz", str(root))["log_scheduler"] == "kyber"
    assert factors.current_io_scheduler("vdy", str(root)) == "none"
    with pytest.raises(FactorError, match="no machine factor nice"):
        factors.check("vdz", {"nice": "10"}, str(root))


def test_a_new_machine_factor_s_files_are_restored_and_its_value_in_effect_is_a_column(
        sysfs, monkeypatch, tmp_path):
    """The undoers restore the files a MACHINE_FACTORS entry says it writes, and no
    other (a journal names a file for root to write); the value in effect a job records
    for a new entry is a column of runs.csv, with no field of the run record to add.
    Here a disk's read-ahead, a file no shipped factor writes."""
    import re

    from wattzip import machine, records
    from wattzip.run_record import RunRecord, in_effect_fields

    root, _ = sysfs
    read_ahead = root / "block" / "vdz" / "queue" / "read_ahead_kb"
    read_ahead.write_text("128\n")
    entry = factors.MachineFactor(
        lambda disk, value, s: None, lambda disk, s, value: [(read_ahead, value)],
        lambda path: path.read_text().strip(), lambda disk, s: read_ahead.read_text().strip(),
        re.compile(r"(^|/)block/[^/]+/queue/read_ahead_kb$"))
    leftover = machine.note("sysfs", str(read_ahead), "128")
    read_ahead.write_text("4096")
    with pytest.raises(machine.MachineError, match="refused: a sysfs change may touch only"):
        machine.undo([e for e in machine.pending() if e["id"] == leftover])
    machine.undone(leftover)  # what a user's `wattzip restore` would report, forgotten here
    monkeypatch.setitem(factors.MACHINE_FACTORS, "read_ahead", entry)
    held = factors.applied("vdz", {"read_ahead": "1024"}, sysfs=str(root))
    effect = held.__enter__()  # killed inside the job: never exited
    assert read_ahead.read_text() == "1024" == effect["read_ahead"]
    machine.undo([e for e in machine.pending() if e["target"] == str(read_ahead)])
    assert read_ahead.read_text() == "4096"  # the value it found, put back and read back
    record = RunRecord.new({"testbed": "t", "file_type": "text", "codec": "gz-1", "op": "cw",
                            "repeat": 1, "verified": True},
                           in_effect_fields(factors.in_effect("vdz", str(root))))
    records.write_runs_csv([record.to_dict()], tmp_path / "runs.csv")
    header = (tmp_path / "runs.csv").read_text().splitlines()[0].split(",")
    assert {"io_scheduler_in_effect", "governor_in_effect", "read_ahead_in_effect"} <= set(header)
