"""The factors of SYSTOR '11's design that are machine settings: I/O scheduler, CPU governor.

Each is checked before any measurement (a factor this machine cannot set is an
error naming it), set before a job's runs and restored after them
(`applied`, under the journal of wattzip.machine). MACHINE_FACTORS holds one entry per
factor: the jobs, the idle calibration, the pre-flight, the run records and the files the
undoers may restore take every factor from it, so a new one is an entry here.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from wattzip import machine  # the journal (its undoers read MACHINE_FACTORS at undo time)
from wattzip.errors import FactorError, did_you_mean

KEEP = "keep"  # the factor value that means "leave the machine as it is"
# Schedulers of the legacy block layer, gone since Linux 5.0, and their blk-mq successors.
LEGACY_SCHEDULERS = {"cfq": "bfq", "anticipatory": "bfq", "deadline": "mq-deadline",
                     "noop": "none"}
SYSFS = "/sys"
MODULES = "/lib/modules"
# The files below /sys, links resolved, that setting a factor writes (/sys/block/vda is a
# link into /sys/devices, cpuN/cpufreq one to cpufreq/policyN).
SCHEDULER_FILES = re.compile(r"(^|/)block/[^/]+/queue/scheduler$")
GOVERNOR_FILES = re.compile(r"^devices/system/cpu/(cpu[0-9]+/cpufreq|cpufreq/policy[0-9]+)"
                            r"/scaling_(governor|max_freq|min_freq)$")
# SYSTOR '11's highest and lowest CPU frequencies as values of the governor factor: each
# CPU's frequency pinned within its governor's range (scaling_min_freq and
# scaling_max_freq at cpuinfo_max_freq, or scaling_max_freq at cpuinfo_min_freq).
FREQUENCY_PINS = ("highest", "lowest")


def _scheduler_file(disk: str, sysfs: str = SYSFS) -> Path:
    return Path(sysfs) / "block" / disk / "queue" / "scheduler"


def _governor_files(sysfs: str = SYSFS) -> list[Path]:
    return [Path(p) for p in sorted(glob.glob(
        f"{sysfs}/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"))]


def check_io_scheduler(disk: str | None, value: str, sysfs: str = SYSFS,
                       modules: str = MODULES) -> None:
    if value == KEEP:
        return
    if not disk:
        raise FactorError(f"factor io_scheduler={value}: the target directory is on no block "
                          "device whose scheduler can be set")
    path = _scheduler_file(disk, sysfs)
    try:
        available = offered_io_schedulers(disk, sysfs)
    except OSError:
        raise FactorError(f"factor io_scheduler={value}: {path} is not readable") from None
    if value not in available:
        hint = ""
        if value in LEGACY_SCHEDULERS:
            hint = (f"; {value} belonged to the legacy block layer removed in Linux 5.0 "
                    f"(SYSTOR '11 used it), its blk-mq successor is "
                    f"{LEGACY_SCHEDULERS[value]}")
        elif module := scheduler_module(value, modules):
            hint = (f"; this kernel has {value} as the module {module}, not loaded: "
                    f"load it with 'modprobe {module}' (wattzip loads no module)")
        raise FactorError(f"factor io_scheduler={value}: {disk} offers only "
                          f"{', '.join(available)}{hint or did_you_mean(value, available)}")
    if not os.access(path, os.W_OK):
        raise FactorError(f"factor io_scheduler={value}: {path} is not writable (run as root)")


def check_governor(value: str, sysfs: str = SYSFS) -> None:
    """Every CPU must offer the governor (CPUs of a hybrid or multi-socket machine may
    offer different lists) and let it be written; a frequency pin (FREQUENCY_PINS), its
    limits read and written."""
    if value == KEEP:
        return
    files = _governor_files(sysfs)
    if not files:
        raise FactorError(f"factor governor={value}: this machine has no cpufreq "
                          "(a VM or a container?); remove the factor or set it to 'keep'")
    if value in FREQUENCY_PINS:
        for path, _ in frequency_pins(value, sysfs):
            if not os.access(path, os.W_OK):
                raise FactorError(f"factor governor={value}: {path} is missing or not "
                                  "writable (run as root)")
        return
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
                              f"{', '.join(available)}{did_you_mean(value, available)}")
        if not os.access(path, os.W_OK):
            raise FactorError(f"factor governor={value}: {path} is not writable "
                              "(run as root)")



def scheduler_module(name: str, modules: str = MODULES) -> str | None:
    """The module of this kernel that would provide the scheduler (the alias
    "<name>-iosched" the block layer asks modprobe for), if it has one."""
    alias = Path(modules) / os.uname().release / "modules.alias"
    try:
        lines = alias.read_text().splitlines()
    except OSError:
        return None
    wanted = f"{name}-iosched"
    return next((parts[2] for parts in map(str.split, lines)
                 if len(parts) == 3 and parts[:2] == ["alias", wanted]), None)


def offered_io_schedulers(disk: str, sysfs: str = SYSFS) -> list[str]:
    """The schedulers the disk's kernel offers now: those built in or loaded (bfq is a
    module on many kernels, and absent on some)."""
    return re.sub(r"[\[\]]", "", _scheduler_file(disk, sysfs).read_text()).split()


def current_io_scheduler(disk: str, sysfs: str = SYSFS) -> str:
    return scheduler_of(_scheduler_file(disk, sysfs))


def scheduler_of(path: Path) -> str:
    """The scheduler in brackets ("none [mq-deadline] bfq"); a file holding a single
    name (what was just written to a plain file) is that name."""
    text = path.read_text()
    match = re.search(r"\[(\S+)\]", text)
    if match:
        return match.group(1)
    names = text.split()
    return names[0] if len(names) == 1 else "none"


def _scheduler_in_effect(disk: str | None, sysfs: str = SYSFS) -> str | None:
    """The disk's scheduler, or None: no disk, or one without a scheduler to read."""
    try:
        return current_io_scheduler(disk, sysfs) if disk else None
    except OSError:
        return None


def current_governor(path: Path) -> str:
    return path.read_text().strip()


def frequency_pins(value: str, sysfs: str = SYSFS) -> list[tuple[Path, str]]:
    """The files a frequency pin writes, in order, and what: "highest" raises each CPU's
    scaling_max_freq, then its scaling_min_freq, to cpuinfo_max_freq; "lowest" lowers
    scaling_max_freq to cpuinfo_min_freq (undone in the reverse order)."""
    out = []
    for governor in _governor_files(sysfs):
        folder = governor.parent
        try:
            top = (folder / "cpuinfo_max_freq").read_text().strip()
            bottom = (folder / "cpuinfo_min_freq").read_text().strip()
        except OSError:
            raise FactorError(f"factor governor={value}: {folder} has no cpuinfo_max_freq "
                              "or cpuinfo_min_freq to pin the frequency to") from None
        out += ([(folder / "scaling_max_freq", top), (folder / "scaling_min_freq", top)]
                if value == "highest" else [(folder / "scaling_max_freq", bottom)])
    return out


def _governor_writes(disk: str | None, sysfs: str, value: str) -> list[tuple[Path, str]]:
    if value in FREQUENCY_PINS:
        return frequency_pins(value, sysfs)
    return [(path, value) for path in _governor_files(sysfs)]


def _pinned(sysfs: str = SYSFS) -> str | None:
    """"highest" or "lowest" where every CPU's frequency is pinned so, else None."""
    for value in FREQUENCY_PINS:
        try:
            pins = frequency_pins(value, sysfs)
            if pins and all(path.read_text().strip() == want for path, want in pins):
                return value
        except (OSError, FactorError):
            return None
    return None


@dataclass(frozen=True)
class MachineFactor:
    """A factor that is a setting of this machine in sysfs: how a value is checked
    (disk, value, sysfs), the files setting it writes (disk, sysfs), one file's value
    now (its old value, journaled before it is written), the value in effect, read
    back (disk, sysfs; None where the machine has none), and which files below /sys,
    links resolved, an undo of it may write (root restores only the files it knows,
    whatever a journal names)."""

    check: Callable[[str | None, str, str], None]
    # (disk, sysfs, value) -> the files setting the value writes, in order, and what.
    writes: Callable[[str | None, str, str], list[tuple[Path, str]]]
    current: Callable[[Path], str]
    in_effect: Callable[[str | None, str], str | None]
    restorable: re.Pattern


def in_effect(disk: str | None, sysfs: str = SYSFS) -> dict[str, str | None]:
    """Every machine factor's value in effect, read back (the run records' `*_in_effect`)."""
    return {name: f.in_effect(disk, sysfs) for name, f in MACHINE_FACTORS.items()}


def check(disk: str | None, values: Mapping[str, str], sysfs: str = SYSFS) -> None:
    """Whether this machine can set every machine factor's value (FactorError if not)."""
    unknown = set(values) - set(MACHINE_FACTORS)
    if unknown:
        raise FactorError(f"no machine factor {', '.join(sorted(unknown))}: this machine "
                          f"sets {', '.join(MACHINE_FACTORS)}")
    for name, value in values.items():
        MACHINE_FACTORS[name].check(disk, value, sysfs)


def governors_in_effect(sysfs: str = SYSFS) -> str | None:
    """The governor every CPU runs, read back ("a,b" when they differ; None: no cpufreq)."""
    values = sorted({current_governor(p) for p in _governor_files(sysfs)})
    return ",".join(values) or None


MACHINE_FACTORS: dict[str, MachineFactor] = {
    "io_scheduler": MachineFactor(check_io_scheduler,
                                  lambda disk, sysfs, value: [(_scheduler_file(disk, sysfs),
                                                               value)],
                                  scheduler_of, _scheduler_in_effect, SCHEDULER_FILES),
    "governor": MachineFactor(lambda disk, value, sysfs: check_governor(value, sysfs),
                              _governor_writes, current_governor,
                              lambda disk, sysfs: _pinned(sysfs) or governors_in_effect(sysfs),
                              GOVERNOR_FILES),
}


def written_by_a_factor(rel: str) -> bool:
    """Whether a file below /sys (relative, links resolved) is one a machine factor writes."""
    return any(f.restorable.search(rel) for f in MACHINE_FACTORS.values())


@contextlib.contextmanager
def applied(disk: str | None, values: Mapping[str, str], sysfs: str = SYSFS
            ) -> Iterator[dict]:
    """Set the machine factors' `values` (MACHINE_FACTORS' names; "keep" or left out:
    as the machine is) for the duration of a job, then restore what was there.

    Each change is journaled machine-wide before it is made (wattzip.machine), so a
    job killed before it could restore is undone by the next wattzip command; a
    restore that fails is an error naming what stayed changed. Yields what is in
    effect, read back: {"io_scheduler": ..., "governor": ...}.
    """
    check(disk, values, sysfs)
    made: list[str] = []
    effect = in_effect(disk, sysfs)
    try:
        for name, factor in MACHINE_FACTORS.items():
            value = values.get(name, KEEP)
            if value == KEEP:
                continue
            for path, text in factor.writes(disk, sysfs, value):
                made.append(machine.note("sysfs", str(path), factor.current(path)))
                path.write_text(text)
            effect[name] = factor.in_effect(disk, sysfs)
            if effect[name] != value:
                raise FactorError(f"factor {name}={value}: {effect[name]} is in effect "
                                  "after switching")
        yield effect
    finally:
        machine.undo([e for e in machine.pending() if e["id"] in made])
