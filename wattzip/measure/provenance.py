"""What a testbed's results carry with them (provenance.json): the machine (its host and
boot, as each run record and idle calibration names them), the codecs' versions and
commands, the meter, wattzip's version."""

from __future__ import annotations

from wattzip import __version__, machine
from wattzip.errors import WattzipError
from wattzip.machine import system, trust
from wattzip.machine.media import Medium
from wattzip.workload import codec_registry


def who_measured() -> dict:
    """Who measures now, as every run record and idle calibration names it: the host, its
    Slurm node and job, this boot of its kernel (a number from another boot may describe
    another machine state) and wattzip's version."""
    return {**system.host_identity(), "boot_id": machine.boot_id(),
            "wattzip_version": __version__}


def testbed_provenance(target_dir: str, codecs: list, meter, testbed: str,
                       description: str | None, medium: Medium | None = None) -> dict:
    """provenance.json: the machine, the primary medium (as its jobs see it), the codecs'
    versions and commands, the meter (or the error that kept it from opening), wattzip's
    version."""
    info = system.provenance(trust.trusted_folder(target_dir, "the primary medium's folder"))
    if medium is not None and medium.own_filesystem:
        info.update(mounted_medium(medium, info["target_dir"]))
    who = who_measured()
    info["boot_id"] = who["boot_id"]  # a run's boot_id other than this: rebooted since
    info["wattzip"] = who["wattzip_version"]
    info["tool_versions"] = {c.name: codec_registry.version(c) for c in codecs}
    info["codec_argv"] = {c.name: " ".join(c.compress) for c in codecs}
    info["meter"] = ({"error": str(meter)} if isinstance(meter, Exception) else
                     {"source": meter.name, "scope": meter.scope, "method": meter.method,
                      "device": _device(meter)})
    info["testbed"] = testbed
    info["description"] = description
    return info


def _device(meter) -> dict | None:
    """The meter's device, or why it could not be read (a log rotated away meanwhile)."""
    try:
        return meter.device()
    except WattzipError as exc:
        return {"error": str(exc)}


def mounted_medium(medium: Medium, mount_point: str) -> dict:
    """A medium wattzip mounts only while a job runs (an image, a tmpfs, a block device),
    described as its jobs see it: the folder under its mount point is not what they use.
    Its disk is the one its I/O reaches (under an image's file; none for a tmpfs)."""
    disk = medium.scheduler_disk()
    source = {"image": medium.image, "block": medium.device, "tmpfs": "memory"}
    return {"medium_kind": medium.kind,
            "target_device": {"device": medium.device, "disk": disk, "major_minor": None},
            **system.disk_description(disk),
            "filesystem": {"fstype": "tmpfs" if medium.kind == "tmpfs" else medium.fs,
                           "source": source.get(medium.kind), "mount_point": mount_point}}
