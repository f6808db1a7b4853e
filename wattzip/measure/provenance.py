"""What a testbed's results carry with them (provenance.json): the machine (its host and
boot, as each run record and idle calibration names them), the codecs' versions and
commands, the meter, wattzip's version."""

from __future__ import annotations

from wattzip import __version__, machine
from wattzip.machine import system
from wattzip.workload import codec_registry


def testbed_provenance(target_dir: str, codecs: list, meter, testbed: str,
                       description: str | None) -> dict:
    """provenance.json: the machine, the codecs' versions and commands, the meter (or the
    error that kept it from opening), wattzip's version."""
    info = system.provenance(target_dir)
    info["boot_id"] = machine.boot_id()  # a run's boot_id other than this: rebooted since
    info["wattzip"] = __version__
    info["tool_versions"] = {c.name: codec_registry.version(c) for c in codecs}
    info["codec_argv"] = {c.name: " ".join(c.compress) for c in codecs}
    info["meter"] = ({"error": str(meter)} if isinstance(meter, Exception) else
                     {"source": meter.name, "scope": meter.scope, "method": meter.method})
    info["testbed"] = testbed
    info["description"] = description
    return info
