"""What a testbed's results carry with them (provenance.json): the machine (its host and
boot, as each run record and idle calibration names them), the codecs' versions and
commands, the meter, wattzip's version."""

from __future__ import annotations

from wattzip import __version__, machine
from wattzip.machine import system, trust
from wattzip.workload import codec_registry


def who_measured() -> dict:
    """Who measures now, as every run record and idle calibration names it: the host, its
    Slurm node and job, this boot of its kernel (a number from another boot may describe
    another machine state) and wattzip's version."""
    return {**system.host_identity(), "boot_id": machine.boot_id(),
            "wattzip_version": __version__}


def testbed_provenance(target_dir: str, codecs: list, meter, testbed: str,
                       description: str | None) -> dict:
    """provenance.json: the machine, the codecs' versions and commands, the meter (or the
    error that kept it from opening), wattzip's version."""
    info = system.provenance(trust.trusted_folder(target_dir, "the primary medium's folder"))
    who = who_measured()
    info["boot_id"] = who["boot_id"]  # a run's boot_id other than this: rebooted since
    info["wattzip"] = who["wattzip_version"]
    info["tool_versions"] = {c.name: codec_registry.version(c) for c in codecs}
    info["codec_argv"] = {c.name: " ".join(c.compress) for c in codecs}
    info["meter"] = ({"error": str(meter)} if isinstance(meter, Exception) else
                     {"source": meter.name, "scope": meter.scope, "method": meter.method})
    info["testbed"] = testbed
    info["description"] = description
    return info
