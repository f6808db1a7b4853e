"""A job measured on the emulated machine (config machine:): its measured command sees one
CPU and the memory limit from inside, its output is flushed by unmounting an ext2 image,
and afterwards every cgroup, CPU and mount is as it was. Real cgroups, a real loop-mounted
ext2 image; the SIGKILL case is test_machine.py's."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from wattzip import meters, records
from wattzip.machine import media
from wattzip.machine.emulated import EmulatedMachine
from wattzip.measure import repeats
from wattzip.workload import codec_registry

from .job_files import wattzip_job
from .test_runner import make_job

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (cgroups, mounts)")
MEMORY = 256 * 2**20

# Run inside the measured region as the codec's compressor: what the command sees of its
# CPUs and of its memory cgroup's limit (v1 memory.limit_in_bytes, v2 memory.max), then
# gzip as the codec would.
PROBE = """
import json, os, subprocess, sys
cpus = sorted(os.sched_getaffinity(0))
nproc = int(subprocess.run(["nproc"], capture_output=True, text=True).stdout)
for line in open("/proc/self/cgroup").read().splitlines():
    number, controllers, path = line.split(":", 2)
    if "memory" in controllers.split(","):
        limit = open(f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes").read()
        break
    if number == "0" and os.path.exists(f"/sys/fs/cgroup{path}/memory.max"):
        limit = open(f"/sys/fs/cgroup{path}/memory.max").read()
with open(sys.argv[1], "a") as seen:
    seen.write(json.dumps({"cpus": cpus, "nproc": nproc, "memory_cgroup": path,
                           "limit": int(limit)}) + "\\n")
os.execvp("gzip", ["gzip", "-1", "-c"])
"""


def probe_codec(tmp_path: Path) -> codec_registry.Codec:
    script = tmp_path / "probe-gzip"
    script.write_text(f"#!{sys.executable}\n{PROBE}")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    seen = tmp_path / "seen.jsonl"
    wrapper = tmp_path / "probe"
    wrapper.write_text(f"#!/bin/sh\nexec {script} {seen}\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return dataclasses.replace(codec_registry.get("gz-1"), name="gz-probe",
                               compress=(str(wrapper),))


def machine_state(folder: Path) -> dict:
    """What the job may change and must leave as it was, of what this test owns (other
    sessions mount and make cgroups on this machine meanwhile): the CPUs online, this
    process's cgroups, the mounts under the test's folder."""
    mounts = [line for line in Path("/proc/self/mounts").read_text().splitlines()
              if str(folder) in line]
    return {"online": Path("/sys/devices/system/cpu/online").read_text(),
            "own": Path("/proc/self/cgroup").read_text(), "mounts": mounts}


def test_a_job_on_the_emulated_machine_sees_one_cpu_and_its_memory_limit(
        small_inputs, tmp_path, noted):
    medium = media.Medium(name="ext2", kind="image", path=str(tmp_path / "ext2"),
                          size="64MiB", fs="ext2", flush="unmount")
    job = make_job(small_inputs, tmp_path, "gz-1", medium=medium, min=1, max=1, threads=1,
                   machine=EmulatedMachine(cpus=1, memory_bytes=MEMORY))
    job.codec = probe_codec(tmp_path)
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20,
                                                  model_max_power_w=60, interval_s=0.05))
    before = machine_state(tmp_path)
    repeats.run_job(job, meter, tmp_path / "j.jsonl", log=lambda m: None)
    runs = records.read_jsonl([tmp_path / "j.jsonl"])
    assert [r["op"] for r in runs] == ["compress-write", "decompress-read"]
    assert all(r["verified"] for r in runs)
    (seen,) = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    assert seen["cpus"] == [min(os.sched_getaffinity(0))] and seen["nproc"] == 1
    assert seen["limit"] == MEMORY and os.path.basename(seen["memory_cgroup"]).startswith(
        "wattzip-")
    write = runs[0]
    assert (write["machine_cpus"], write["machine_memory_bytes"]) == (1, MEMORY)
    assert write["flush"] == "unmount" and write["target_fs"] == "ext2"
    assert machine_state(tmp_path) == before
    # Every cgroup the job made (one per v1 hierarchy, or v2's one) is gone, every mount too.
    made = {kind: [target for k, target, _ in noted if k == kind] for kind in ("cgroup", "mount")}
    assert len(made["cgroup"]) in (1, 2) and made["mount"]
    assert not any(os.path.exists(c) for c in made["cgroup"])
    assert not any(os.path.ismount(m) for m in made["mount"])


def test_wattzip_job_takes_the_emulated_machine_from_its_spec(job_files):
    """The spec the study model writes carries the config's machine: `wattzip job` runs
    the tools on it and every run record states it as the kernel held it."""
    spec = json.loads(job_files["--spec"].read_text())
    spec["machine"] = {"cpus": 1, "memory": "256MiB", "hotplug": False,
                       "min_file_to_memory": 0}
    job_files["--spec"].write_text(json.dumps(spec))
    before = machine_state(job_files["--spec"].parent)
    done = wattzip_job(job_files)
    assert done.returncode == 0, done.stderr
    runs = records.read_jsonl([job_files["--out"]])
    assert runs and {(r["machine_cpus"], r["machine_memory_bytes"], r["threads"])
                     for r in runs} == {(1, MEMORY, 1)}
    assert machine_state(job_files["--spec"].parent) == before
