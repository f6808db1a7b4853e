"""Factors set before a job and restored after, against a fake sysfs tree."""

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


def test_restored_even_when_the_job_fails(sysfs):
    root, sched = sysfs
    with pytest.raises(RuntimeError), factors.applied("vdz", {"io_scheduler": "none"},
                                                         sysfs=str(root)):
        raise RuntimeError("a run died")
    assert sched.path.read_text().strip() == "mq-deadline"


def test_keep_touches_nothing(sysfs):
    root, sched = sysfs
    before = sched.path.read_text()
    with factors.applied("vdz", {"io_scheduler": "keep", "governor": "keep"}, sysfs=str(root)):
        pass
    assert sched.path.read_text() == before


def test_unknown_scheduler_names_the_factor_and_the_choices(sysfs):
    root, _ = sysfs
    expected = "io_scheduler=cfq: vdz offers only none, mq-deadline, bfq"
    with pytest.raises(FactorError, match=expected):
        factors.check_io_scheduler("vdz", "cfq", sysfs=str(root))


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


def test_a_machine_factor_is_one_entry_from_its_flag_to_its_restore(sysfs, monkeypatch):
    """A factor that is a machine setting is one entry of MACHINE_FACTORS: the flag of
    wattzip job and idle, the check, the change journaled and undone, and the value in
    effect the runs record all come from it (here a second disk's scheduler, a file the
    undoers may restore)."""
    import argparse

    from wattzip.measure import options

    root, _ = sysfs
    log_disk = FakeSchedulerFile(root / "block" / "vdy" / "queue" / "scheduler",
                                 ["none", "kyber"], "none")
    monkeypatch.setitem(factors.MACHINE_FACTORS, "log_scheduler", factors.MachineFactor(
        lambda disk, value, s: factors.check_io_scheduler("vdy", value, s),
        lambda disk, s: [factors._scheduler_file("vdy", s)], factors.scheduler_of,
        lambda disk, s: factors.current_io_scheduler("vdy", s)))
    parser = argparse.ArgumentParser()
    options.add_setting_options(parser)
    wanted = options.machine_factors(parser.parse_args(["--log-scheduler", "kyber"]))
    assert wanted == {"io_scheduler": "keep", "governor": "keep", "log_scheduler": "kyber"}
    with pytest.raises(FactorError, match="vdy offers only none, kyber"):
        factors.check("vdz", {"log_scheduler": "bfq"}, str(root))
    with factors.applied("vdz", wanted, sysfs=str(root)) as effect:
        assert effect["log_scheduler"] == "kyber" == log_disk.path.read_text()
        assert factors.in_effect("vdz", str(root))["log_scheduler"] == "kyber"
    assert factors.current_io_scheduler("vdy", str(root)) == "none"
    with pytest.raises(FactorError, match="no machine factor nice"):
        factors.check("vdz", {"nice": "10"}, str(root))
