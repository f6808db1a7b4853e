"""The factors of SYSTOR '11's design that are machine settings: I/O scheduler, CPU governor.

Each is checked before any measurement (a factor this machine cannot set is an
error naming it), set before a job's runs and restored after them.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
from collections.abc import Iterator
from pathlib import Path

from wattzip import machine
from wattzip.errors import FactorError

KEEP = "keep"  # the factor value that means "leave the machine as it is"
# Schedulers of the legacy block layer, gone since Linux 5.0, and their blk-mq successors.
LEGACY_SCHEDULERS = {"cfq": "bfq", "anticipatory": "bfq", "deadline": "mq-deadline",
                     "noop": "none"}
SYSFS = "/sys"


def _scheduler_file(disk: str, sysfs: str = SYSFS) -> Path:
    return Path(sysfs) / "block" / disk / "queue" / "scheduler"


def _governor_files(sysfs: str = SYSFS) -> list[Path]:
    return [Path(p) for p in sorted(glob.glob(
        f"{sysfs}/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"))]


def check_io_scheduler(disk: str | None, value: str, sysfs: str = SYSFS) -> None:
    if value == KEEP:
        return
    if not disk:
        raise FactorError(f"factor io_scheduler={value}: the target directory is on no block "
                          "device whose scheduler can be set")
    path = _scheduler_file(disk, sysfs)
    try:
        text = path.read_text()
    except OSError:
        raise FactorError(f"factor io_scheduler={value}: {path} is not readable") from None
    available = re.sub(r"[\[\]]", "", text).split()
    if value not in available:
        hint = ""
        if value in LEGACY_SCHEDULERS:
            hint = (f"; {value} belonged to the legacy block layer removed in Linux 5.0 "
                    f"(SYSTOR '11 used it), its blk-mq successor is "
                    f"{LEGACY_SCHEDULERS[value]}")
        raise FactorError(f"factor io_scheduler={value}: {disk} offers only "
                          f"{', '.join(available)}{hint}")
    if not _writable(path):
        raise FactorError(f"factor io_scheduler={value}: {path} is not writable (run as root)")


def check_governor(value: str, sysfs: str = SYSFS) -> None:
    """Every CPU must offer the governor (CPUs of a hybrid or multi-socket machine may
    offer different lists) and let it be written."""
    if value == KEEP:
        return
    files = _governor_files(sysfs)
    if not files:
        raise FactorError(f"factor governor={value}: this machine has no cpufreq "
                          "(a VM or a container?); remove the factor or set it to 'keep'")
    for path in files:
        cpu = path.parent.parent.name
        listed = path.with_name("scaling_available_governors")
        try:
            available = listed.read_text().split()
        except OSError:
            raise FactorError(f"factor governor={value}: {listed} is missing or unreadable, "
                              f"so wattzip cannot tell whether {cpu} offers {value}") from None
        if value not in available:
            raise FactorError(f"factor governor={value}: {cpu} offers only "
                              f"{', '.join(available)}")
        if not _writable(path):
            raise FactorError(f"factor governor={value}: {path} is not writable "
                              "(run as root)")


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK)


def current_io_scheduler(disk: str, sysfs: str = SYSFS) -> str:
    """The scheduler in brackets ("none [mq-deadline] bfq"); a file holding a single
    name (what was just written to a plain file) is that name."""
    text = _scheduler_file(disk, sysfs).read_text()
    match = re.search(r"\[(\S+)\]", text)
    if match:
        return match.group(1)
    names = text.split()
    return names[0] if len(names) == 1 else "none"


def current_governor(path: Path) -> str:
    return path.read_text().strip()


@contextlib.contextmanager
def applied(disk: str | None, io_scheduler: str = KEEP, governor: str = KEEP,
            sysfs: str = SYSFS) -> Iterator[dict]:
    """Set the factors for the duration of a job, then restore what was there.

    Each change is journaled machine-wide before it is made (wattzip.machine), so a
    job killed before it could restore is undone by the next wattzip command; a
    restore that fails is an error naming what stayed changed. Yields what is in
    effect, read back: {"io_scheduler": ..., "governor": ...}.
    """
    check_io_scheduler(disk, io_scheduler, sysfs)
    check_governor(governor, sysfs)
    made: list[str] = []
    in_effect = {"io_scheduler": current_io_scheduler(disk, sysfs) if disk else None,
                 "governor": governors_in_effect(sysfs)}
    try:
        if io_scheduler != KEEP:
            path = _scheduler_file(disk, sysfs)
            made.append(machine.note("sysfs", str(path), current_io_scheduler(disk, sysfs)))
            path.write_text(io_scheduler)
            now = current_io_scheduler(disk, sysfs)
            if now != io_scheduler:
                raise FactorError(f"factor io_scheduler={io_scheduler}: {disk} still runs "
                                  f"{now} after switching")
            in_effect["io_scheduler"] = now
        if governor != KEEP:
            for path in _governor_files(sysfs):
                made.append(machine.note("sysfs", str(path), current_governor(path)))
                path.write_text(governor)
            in_effect["governor"] = governors_in_effect(sysfs)
            if in_effect["governor"] != governor:
                raise FactorError(f"factor governor={governor}: the CPUs run "
                                  f"{in_effect['governor']} after switching")
        yield in_effect
    finally:
        machine.undo([e for e in machine.pending() if e["id"] in made])


def governors_in_effect(sysfs: str = SYSFS) -> str | None:
    """The governor every CPU runs, read back ("a,b" when they differ; None: no cpufreq)."""
    values = sorted({current_governor(p) for p in _governor_files(sysfs)})
    return ",".join(values) or None
