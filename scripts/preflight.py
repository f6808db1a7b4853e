"""Check, before any measurement, everything that would otherwise fail mid-study.

Codec binaries, the energy meter (and whether it is a measured one when the
study requires it), every factor's settability and the free space of every
target directory. Writes what it found; exits with a readable message if not.
"""

import atexit
import contextlib
import json
import os
import shlex
import shutil
import sys

from wattzip import checks, codec_registry, factors, machine, meters, system, throttle
from wattzip.errors import WattzipError
from wattzip.inputs import parse_size
from wattzip.media import Medium
from wattzip.study import check_free_space, space_needed

log = open(snakemake.log[0], "w")
# It attaches media and tries throttles: it holds the machine like a job, and whatever
# it changed is undone however it ends (atexit runs after sys.exit and an exception).
held = contextlib.ExitStack()
atexit.register(held.close)
held.enter_context(machine.session("preflight", snakemake.wildcards.testbed, os.getcwd()))


def fail(message):
    print(f"preflight: {message}", file=log, flush=True)
    print(f"wattzip preflight: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


node_flags = shlex.split(snakemake.params.node)
flags = dict(zip(node_flags[::2], node_flags[1::2], strict=True))
try:
    system.check_host(flags.get("--expect-node"), flags.get("--expect-host"))
except WattzipError as exc:
    fail(str(exc))
report = {"codecs": {}, "settings": {}, "host": system.host_identity()}
missing = []
for name in snakemake.params.codecs:
    codec = codec_registry.get(name)
    version = codec_registry.version(codec)
    report["codecs"][name] = version
    if version is None:
        missing.append(codec)
if missing:
    packages = " ".join(sorted({c.package for c in missing}))
    fail(
        "missing codec binaries: "
        + ", ".join(f"{c.name} needs {c.binary!r}" for c in missing)
        + f". Install them with: apt-get install {packages}"
    )

try:
    meter = meters.open_configured(snakemake.params.meter)
except WattzipError as exc:
    fail(str(exc))
report["meter"] = {"source": meter.name, "scope": meter.scope, "method": meter.method}
meter.close()

os.makedirs(snakemake.params.input_dir, exist_ok=True)
for name, setting in snakemake.params.settings.items():
    target = setting["target_dir"]
    spec = setting["medium"]
    # The checks that need no machine: the rehearsal ran the same ones (wattzip.checks).
    problems = checks.medium_problems(name, spec, snakemake.params.codecs)
    if problems:
        fail("; ".join(problems))
    medium = Medium.from_spec(spec["name"], spec)
    needed = space_needed(snakemake.params.file_size, setting["copies"],
                          snakemake.params.duty_phases, medium.inputs == "on-medium")
    rate = throttle.parse_bandwidth(setting["bandwidth"])
    if medium.inputs == "on-medium":  # the emulated disk with one budget: tried here
        medium.share_budget(rate)
    # A medium of its own is created and mounted once here, as the jobs will.
    try:
        medium.attach()
        disk = medium.scheduler_disk()
        free = shutil.disk_usage(target).free
        # The job's own rule (wattzip.study): the same numbers, before anything runs.
        check_free_space(target, needed, medium.image,
                         parse_size(medium.size) if medium.image else 0)
        ceiling = medium.check_budget_reachable()  # an emulated disk delivers its budget
        factors.check_io_scheduler(disk, setting["io_scheduler"])
        factors.check_governor(setting["governor"])
        if rate is not None and not medium.shares_budget:  # try the cgroup throttle once
            devices = {"target": system.block_device(target)["disk"],
                       "input": system.block_device(snakemake.params.input_dir)["disk"]}
            with throttle.throttled(devices, rate):
                pass
    except WattzipError as exc:
        fail(f"setting {name}: {exc}")
    finally:
        medium.detach()
    report["settings"][name] = {"disk": disk, "free_bytes": free, "needed_bytes": needed,
                                "emulated_disk_ceiling": ceiling}

# The inputs: what is not generated yet must fit where they go.
os.makedirs(snakemake.params.input_dir, exist_ok=True)
missing_inputs = [p for p in snakemake.params.input_files if not os.path.exists(p)]
needed = snakemake.params.file_size * len(missing_inputs)
free = shutil.disk_usage(snakemake.params.input_dir).free
if free < needed:
    fail(
        f"input_dir {snakemake.params.input_dir} has {free / 2**30:.2f} GiB free, the "
        f"{len(missing_inputs)} input file(s) to generate need {needed / 2**30:.2f} GiB; "
        "free space or set input_dir elsewhere"
    )
report["inputs"] = {"dir": snakemake.params.input_dir, "to_generate": len(missing_inputs)}

with open(snakemake.output[0], "w") as f:
    json.dump(report, f, indent=2)
print(json.dumps(report, indent=2), file=log)
