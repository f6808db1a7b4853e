"""The emulated machine's logic (config machine:), without touching the machine: its
config, the CPUs it picks, the job's cgroup on fake cgroup v1 and v2 trees, hotplug on a
fake sysfs under a journal of the test's own, and the pre-flight's refusal of a file the
page cache would hold. The real cgroups are test_machine.py's and test_emulated_run.py's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wattzip import machine
from wattzip.errors import ConfigError, FactorError
from wattzip.machine import emulated, throttle, undoers
from wattzip.machine.emulated import EmulatedMachine
from wattzip.model import checks
from wattzip.model.study import Study

pytestmark = pytest.mark.pure
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def journal(monkeypatch):
    """machine.note/pending/undo on a list of the test's own, undone by the real undoers."""
    entries: list[dict] = []

    def note(kind, target, original=None, **extra):
        entries.append({"id": str(len(entries)), "kind": kind, "target": target,
                        "original": original, "extra": extra})
        return entries[-1]["id"]

    def undo(chosen, *args, **kwargs):
        for entry in reversed(chosen):
            undoers.UNDO[entry["kind"]](entry)
            entries.remove(entry)

    monkeypatch.setattr(machine, "note", note)
    monkeypatch.setattr(machine, "pending", lambda: list(entries))
    monkeypatch.setattr(machine, "undo", undo)
    return entries


def test_the_config_s_machine_is_read_and_described():
    m = EmulatedMachine.of({"cpus": 1, "memory": "1GiB"})
    assert (m.cpus, m.memory_bytes, m.hotplug, m.emulated) == (1, 2**30, False, True)
    assert m.describe() == ("1 CPU (a cpuset), 1GiB of memory, page cache included "
                            "(a memory cgroup)")
    assert not EmulatedMachine.of({}).emulated and EmulatedMachine.of(None).describe() == ""
    with pytest.raises(ConfigError, match="give machine.cpus"):
        EmulatedMachine.of({"hotplug": True})


def test_the_lowest_cpus_the_job_may_use_are_chosen():
    assert emulated.parse_cpu_list("0-2,5,7-8\n") == [0, 1, 2, 5, 7, 8]
    assert emulated.choose_cpus(2, {5, 3, 9}) == [3, 5]
    with pytest.raises(FactorError, match="may run on 1 CPU"):
        emulated.choose_cpus(2, {4})


def fake_v1(root: Path) -> dict[str, Path]:
    """cgroup v1: a hierarchy per controller, the caller in caller/ of each."""
    homes = {}
    for controller, files in {"blkio": ["blkio.throttle.read_bps_device"],
                              "cpuset": ["cpuset.cpus", "cpuset.mems"],
                              "memory": ["memory.limit_in_bytes"]}.items():
        home = root / controller / "caller"
        home.mkdir(parents=True)
        for name in files:
            (root / controller / name).write_text("")
        (home / "cpuset.mems").write_text("0-1\n")
        homes[controller] = home
    return homes


def test_v1_puts_the_cpuset_and_the_memory_limit_in_their_hierarchies_under_the_caller(
        tmp_path, monkeypatch, journal):
    homes = fake_v1(tmp_path)
    monkeypatch.setattr(throttle, "own_cgroup", lambda root, version, c="blkio": homes[c])
    t = throttle.Throttle([], None, name="wattzip-test", v1_root=str(tmp_path / "blkio"),
                          v2_root=str(tmp_path / "none"), cpus=[0], memory_bytes=2**30)
    assert t.version == 1 and t.controllers == ["cpuset", "memory"]
    t.create()
    cpuset, memory = homes["cpuset"] / "wattzip-test", homes["memory"] / "wattzip-test"
    assert (cpuset / "cpuset.mems").read_text() == "0-1\n"  # the caller's, before any task
    assert t.applied_machine() == {"cpus": [0], "memory_bytes": 2**30}
    assert (memory / "memory.limit_in_bytes").read_text() == f"{2**30}\n"
    # Each journaled as the throttle's cgroup is: the caller's cgroup is where it returns.
    assert [(e["kind"], e["target"], e["extra"]["return_to"]) for e in journal] == [
        ("cgroup", str(cpuset), str(homes["cpuset"])),
        ("cgroup", str(memory), str(homes["memory"]))]


def test_v2_enables_the_controllers_and_puts_one_cgroup_beside_the_caller(
        tmp_path, monkeypatch, journal):
    root = tmp_path / "unified"
    home = root / "user.slice" / "session.scope"
    home.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "user.slice" / "cgroup.subtree_control").write_text("memory\n")
    monkeypatch.setattr(throttle, "own_cgroup", lambda *args: home)
    t = throttle.Throttle([], None, name="wattzip-test", v1_root=str(tmp_path / "no-v1"),
                          v2_root=str(root), cpus=[1, 2], memory_bytes=512 * 2**20)
    t.create()
    job = root / "user.slice" / "wattzip-test"
    assert (t.version, t.path) == (2, job)
    assert (root / "user.slice" / "cgroup.subtree_control").read_text() == "+cpuset\n"
    assert (job / "cpuset.cpus").read_text() == "1,2\n"
    assert (job / "memory.max").read_text() == f"{512 * 2**20}\n"
    # The controller it enabled is journaled before it was, and before the cgroup
    control = root / "user.slice" / "cgroup.subtree_control"
    assert [(e["kind"], e["target"], e["extra"]) for e in journal] == [
        ("controllers", str(control), {"enabled": ["cpuset"]}),
        ("cgroup", str(job), {"return_to": str(home)})]
    # and disabled again by its undo (the kernel's file lists what is enabled: memory
    # stays, which the job found enabled), where the tests may write
    monkeypatch.setenv(undoers.FAKE_SYSFS_ENV, str(tmp_path))
    control.write_text("cpuset memory\n")
    undoers.UNDO["controllers"](journal[0])
    assert control.read_text() == "-cpuset\n"
    control.write_text("memory\n")  # disabled meanwhile: nothing to write
    undoers.UNDO["controllers"](journal[0])
    assert control.read_text() == "memory\n"
    monkeypatch.delenv(undoers.FAKE_SYSFS_ENV)
    with pytest.raises(machine.MachineError, match="cgroup.subtree_control under /sys/fs/cgroup"):
        undoers.UNDO["controllers"](journal[0])


def test_hotplug_takes_the_other_cpus_offline_and_brings_them_back(tmp_path, monkeypatch,
                                                                    journal):
    monkeypatch.setenv(undoers.FAKE_SYSFS_ENV, str(tmp_path))  # where the undo may write
    cpus = tmp_path / "devices" / "system" / "cpu"
    for n in range(4):
        (cpus / f"cpu{n}").mkdir(parents=True)
        if n:  # CPU 0 has no switch on most machines
            (cpus / f"cpu{n}" / "online").write_text("0\n" if n == 3 else "1\n")
    with emulated.others_offline([0], str(tmp_path)) as taken:
        assert taken == [1, 2]  # CPU 3 was offline already: left alone
        assert [(cpus / f"cpu{n}" / "online").read_text() for n in (1, 2, 3)] == ["0\n"] * 3
        assert [(e["kind"], e["original"]) for e in journal] == [("sysfs", "1")] * 2
    assert [(cpus / f"cpu{n}" / "online").read_text().strip() for n in (1, 2, 3)] == [
        "1", "1", "0"]
    assert journal == []
    said = []
    machine_1 = EmulatedMachine(cpus=1, hotplug=True)
    kept = min(os.sched_getaffinity(0))  # the lowest CPU this process may use stays
    with emulated.hotplugged(machine_1, said.append, str(tmp_path)):
        assert {n for n in (1, 2) if (cpus / f"cpu{n}" / "online").read_text() == "1\n"} \
            == {kept} - {0}
    assert (cpus / "cpu2" / "online").read_text().strip() == "1"
    assert "touches the whole machine" in said[0]


def test_the_undo_writes_only_a_cpu_s_online_switch_under_sys(tmp_path):
    with pytest.raises(machine.MachineError, match="refused"):
        undoers.UNDO["sysfs"]({"kind": "sysfs", "target": str(tmp_path / "online"),
                                "original": "1"})


def paper(**changes) -> Study:
    config = Study.from_files([REPO / "config.yaml", REPO / "config/paper.yaml"]).config
    return Study({**config, **changes})


def test_the_paper_overlay_refuses_a_file_the_page_cache_would_hold():
    study = paper()
    assert checks.machine_problems(study.config["machine"], study.file_size_bytes) == []
    (problem,) = checks.machine_problems(study.config["machine"], 2**30)
    assert "below 2 x the emulated machine's memory (1GiB" in problem
    assert "I/O could hide in it" in problem and "min_file_to_memory: 0" in problem
    assert problem in checks.design_problems(paper(file_size="1GiB"), "local")
    from wattzip.model import preflight

    settings = paper(file_size="1GiB").preflight_settings("local")
    with pytest.raises(preflight.PreflightError, match="page cache would hold"):
        preflight.run([], settings, 2**30, 1, {}, "/nonexistent", [])


def test_the_paper_overlay_emulates_one_cpu_and_1_gib_in_every_spec():
    study = paper()
    job = study.jobs("local")[0]
    for spec in (study.job_spec(job), study.idle_spec("local", job.setting)):
        assert spec["machine"] == {"cpus": 1, "memory": "1GiB", "hotplug": False,
                                   "min_file_to_memory": 2}
    default = Study.from_files([REPO / "config.yaml"])
    assert "machine" not in default.job_spec(default.jobs("local")[0])
    assert checks.spec_problems(study, "local") == []


def test_the_paper_overlay_needs_a_meter_at_the_wall_unless_a_narrower_one_is_accepted():
    study = paper()
    assert checks.meter_problems("local", study.testbeds["local"].meter) == []
    rapl = {**study.testbeds["local"].meter, "order": ["powercap", "perf"]}
    (problem,) = checks.meter_problems("local", rapl)
    assert "require_whole_machine" in problem
    assert checks.meter_problems("local", {**rapl, "require_whole_machine": False}) == []


def test_the_paper_s_disk_is_its_data_sheet_s_rate():
    assert throttle.parse_bandwidth("ST373207LW") == 80_000_000
    assert throttle.disks()["ST373207LW"]["rpm"] == "10000"
    with pytest.raises(ConfigError, match="ST373207LW"):
        throttle.parse_bandwidth("ST000")
    assert os.path.basename(throttle.bandwidth_label("ST373207LW")) == "ST373207LW"


def test_the_report_states_the_emulated_machine_beside_the_real_one_and_the_paper_s():
    from wattzip.analysis.reference import read_reference
    from wattzip.machine import system
    from wattzip.model import layout
    from wattzip.report import macros

    design = {r["quantity"]: r for r in read_reference(
        REPO / "paper/reference/systor09_design.csv")[1]}
    params = layout.report_params(paper(), ["local"], "rehearsal", "figures")
    text = macros.machine_against_original(params["emulated_machine"], design)
    assert text.startswith("The measured tools ran on an emulated machine, 1 CPU (a cpuset), "
                           "1GiB of memory, page cache included")
    assert "the paper's server ran one processor unit (the maxcpus = 1 boot parameter)" in text
    assert "saw the whole machine" in macros.machine_against_original("", design)
    rows = {r["key"]: r["value"] for r in system.provenance_rows(
        {"emulated_machine": params["emulated_machine"], "memory_bytes": 2**33})}
    assert rows["memory"] == "8.0 GiB" and rows["emulated machine"].startswith("1 CPU")
    assert "real machine's" in rows["emulated machine"]
    settings = paper().settings_rows()
    assert {s["machine"] for s in settings} == {params["emulated_machine"]}


def test_each_departure_from_the_paper_s_setup_is_stated():
    assert paper().departures() == []
    config = paper().config
    changed = paper(file_size="256MiB", machine={**config["machine"], "cpus": None},
                    meter={**config["meter"], "require_whole_machine": False},
                    idle={**config["idle"], "min_count": 3})
    assert changed.departures() == [
        "file_size: 256MiB (the paper's setup: 2GiB)",
        "machine.cpus: null (the paper's setup: 1)",
        "meter.require_whole_machine: false (the paper's setup: true)",
        "idle.min_count: 3 (the paper's setup: 10)"]
    # Places are no setup; a study that claims no paper's setup states none.
    assert paper(target_dir="/srv/elsewhere", input_dir="/srv/in").departures() == []
    assert paper(paper_setup=None, file_size="1MiB").departures() == []
    from wattzip.report import macros

    assert macros.departures(None, []) == ""
    assert "without a departure" in macros.departures("config/paper.yaml", [])


def test_the_claims_table_says_not_comparable_and_shows_the_numbers():
    from wattzip.report import text_cells

    (row,) = text_cells.claim_rows([{
        "claim": "c", "source": "s", "setting": "all", "primary": "true", "estimated": "false",
        "verdict": "not comparable: the meter sees the CPU package and DRAM, not the disk",
        "evidence": "gz-1 saves 12 kJ"}])
    assert row["verdict"] == r"\emph{not comparable}"
    assert row["evidence"] == ("the meter sees the CPU package and DRAM, not the disk. "
                               "gz-1 saves 12 kJ")
