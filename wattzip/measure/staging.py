"""A job's input where its runs read it: one copy per run's worth, or staged onto the
fresh medium through user space, checked by sha256, outside every measured region."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from wattzip.errors import ConfigError
from wattzip.machine import system, trust
from wattzip.measure.job import MeasurementJob
from wattzip.workload.inputs import copy_through_user_space


def _input_copies(job: MeasurementJob, sources: list[str], folder: Path, what: str,
                  log: Callable[[str], None]) -> list[str]:
    """Copies of the input in `folder`, one per source, named by its sha256 and kept when
    whole: through user space (never a reflink), outside every measured region, each
    checked against the input's sha256."""
    trust.trusted_folder(folder, "the input copies' folder")
    _check_room(job, [folder / f"{job.input_sha256[:16]}.{i}" for i in range(len(sources))],
                folder, what)
    paths = []
    for i, source in enumerate(sources):
        path = folder / f"{job.input_sha256[:16]}.{i}"
        if not (path.exists() and path.stat().st_size == job.input_bytes):
            log(f"{job.file_type}: {what} {i + 1}/{len(sources)} at {path}")
            # a copy of other bytes is removed, never left under the name runs read
            copy_through_user_space(source, path, sha256=job.input_sha256)
        paths.append(str(path))
    return paths


def _check_room(job: MeasurementJob, paths: list[Path], folder: Path, what: str) -> None:
    """The copies still to write fit on `folder`'s disk, before the first is written: a
    disk filled by them would leave the journal (often on the same disk) unwritable."""
    missing = [p for p in paths if not (p.exists() and p.stat().st_size == job.input_bytes)]
    needed = job.input_bytes * len(missing)
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise ConfigError(f"{folder} has {free / 2**20:.1f} MiB free; {what} needs "
                          f"{len(missing)} copies of {job.input_bytes / 2**20:.1f} MiB "
                          f"({needed / 2**20:.1f} MiB): free space, or lower `copies`")


def prepare_input_copies(job: MeasurementJob, log: Callable[[str], None]) -> None:
    """One input file per copy (copies > 1), so the N readers do real I/O each, beside
    the input and kept for the next job."""
    job.input_paths = (_input_copies(job, [job.input_path] * job.copies,
                                     Path(job.input_path).parent / "copies",
                                     "making input copy", log)
                       if job.copies > 1 else [job.input_path])


def stage_on_medium(job: MeasurementJob, log: Callable[[str], None]) -> None:
    """SYSTOR '09's layout: the input on the disk the runs write to, so that reading it
    and writing the output share that disk (and an emulated disk's one budget); staged
    onto the freshly attached medium without the emulated disk's budget."""
    if job.medium.inputs != "on-medium":
        return
    compressing = job.codec.mount_option if job.codec else ""
    with job.medium.unthrottled(), _mounted_without(job.medium, compressing):
        job.input_paths = _input_copies(job, job.sources(), Path(job.medium.path) / "inputs",
                                        f"staging the input on the medium {job.medium.name}",
                                        log)
        system.sync_filesystems(job.input_paths)
    if compressing:  # what the kernel stored, not what the mount options say
        stored = sum(on_disk_bytes(p) for p in job.input_paths)
        if stored < 0.99 * job.input_bytes * len(job.input_paths):
            raise ConfigError(f"medium {job.medium.name}: the input staged for "
                              f"{job.codec.name} takes {stored} bytes on disk, less than its "
                              f"{job.input_bytes}: it was compressed, and reading it would "
                              "cost the codec less than the plain arm")
        log(f"{job.file_type}: the staged input takes {stored} bytes on disk, uncompressed "
            f"(staged without {compressing})")


@contextlib.contextmanager
def _mounted_without(medium, option: str):
    """The medium mounted without a filesystem codec's option while the input is staged:
    the codec compresses the outputs it writes, never the input the runs read (a plain
    arm reads the same bytes from the disk)."""
    if not option:
        yield
        return
    full = medium.mount_options
    medium.unmount()
    medium.mount_options = ",".join(o for o in full.split(",") if o and o != option)
    medium.mount()
    try:
        yield
    finally:
        medium.unmount()
        medium.mount_options = full
        medium.mount()


def on_disk_bytes(path: str) -> int:
    """Bytes a file takes on a compressing btrfs (compsize's Disk Usage), after its
    filesystem is written back (only its own: wattzip.machine.system.sync_filesystems)."""
    system.sync_filesystems([path])
    try:
        proc = subprocess.run(["compsize", "-b", path], capture_output=True, text=True,
                              check=False)
    except FileNotFoundError:
        raise ConfigError("a filesystem codec (btrfs-*) reads its on-disk size with compsize, "
                          "which is not installed; install btrfs-compsize") from None
    for line in proc.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == "TOTAL":
            return int(fields[2])
    raise ConfigError(f"compsize -b {path} gave no TOTAL line ({proc.stderr.strip()[:200]}); "
                      "install btrfs-compsize")
