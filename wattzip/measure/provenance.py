"""What a testbed's results carry with them (provenance.json): the machine (its host and
boot, as each run record and idle calibration names them), the codecs' versions and
commands, the meter, wattzip's version and the source it ran from."""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from pathlib import Path

import wattzip
from wattzip import __version__, machine
from wattzip.errors import WattzipError
from wattzip.machine import system, trust
from wattzip.machine.media import Medium
from wattzip.workload import codec_registry


def who_measured() -> dict:
    """Who measures now, as every run record and idle calibration names it: the host, its
    Slurm node and job, this boot of its kernel (a number from another boot may describe
    another machine state), wattzip's version and the source it runs from
    (`source_of_code`)."""
    return {**system.host_identity(), "boot_id": machine.boot_id(),
            "wattzip_version": __version__, **source_of_code()}


PACKAGE_DIR = Path(wattzip.__file__).resolve().parent
# git as root in a checkout: no lock taken on its index (another user's shell may be in
# it) and no fsmonitor hook run. git itself refuses a checkout root does not own
# (safe.directory): then the source is named by its files' digest alone.
_GIT = ("git", "-c", "core.fsmonitor=false")


def _git(*args: str, cwd: Path) -> str | None:
    """git's output in `cwd`, or None where git is missing, refuses or fails."""
    try:
        proc = subprocess.run([*_GIT, *args], cwd=cwd, capture_output=True, text=True,
                              timeout=20, check=False, stdin=subprocess.DEVNULL,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def package_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """sha256 over the package's files (their paths and bytes, compiled caches left out):
    what names an install from a wheel, where no commit does."""
    digest = hashlib.sha256()
    for path in sorted(p for p in package_dir.rglob("*")
                       if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(package_dir).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@functools.cache
def source_of_code(package_dir: Path = PACKAGE_DIR) -> dict:
    """The code that measures, once per process: the git commit of the checkout wattzip
    runs from and whether its tracked files (or untracked ones in the package) differ from
    it; both None for an install from a wheel (or where git is absent or refuses), which
    the package files' digest names. Never fails for want of git."""
    commit = dirty = None
    top = _git("rev-parse", "--show-toplevel", cwd=package_dir)
    # The package must be the checkout's own (tracked), not a wheel's copy installed
    # into a virtual environment that happens to sit inside some checkout.
    if top and _git("ls-files", "--error-unmatch", "__init__.py", cwd=package_dir):
        commit = (_git("rev-parse", "HEAD", cwd=package_dir) or "").strip() or None
        tracked = _git("status", "--porcelain", "--untracked-files=no", cwd=Path(top.strip()))
        untracked = _git("status", "--porcelain", "--", ".", cwd=package_dir)
        if commit and tracked is not None and untracked is not None:
            dirty = bool(tracked.strip() or untracked.strip())
    return {"source_commit": commit, "source_dirty": dirty,
            "source_digest": package_digest(package_dir)}


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
    info["source"] = {k: who[k] for k in ("source_commit", "source_dirty", "source_digest")}
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
