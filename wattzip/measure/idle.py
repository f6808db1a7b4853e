"""Idle power calibration (SYSTOR '09 5.1): windows measured with the machine quiet.

Windows are measured until the Student-t interval of their mean idle power is narrow
enough (`ci_target` of the mean), at least `min_count` and at most `count` of them (the
paper's 10 x 10 minutes). Looking after every window erodes the coverage an interval
claims, so each of the count - min_count + 1 possible looks is at 1 - 0.05 / looks
(Bonferroni): the interval reported holds at >= 95% whichever look stopped it.

Every window is journaled as it ends, so a killed calibration resumes; a window in
which the rest of the machine was busy is discarded and measured again, and several in
a row refuse the machine (another study, not a brief disturbance).

Each window and the calibration carry who measured them (`origin`: host, boot, testbed,
meter identity, wattzip's version). A resumed calibration reuses only the windows of this
host, this boot and this meter: idle power after a reboot (other services, firmware
state, temperatures) or on another node is another baseline, so those are measured again.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from wattzip import meters, records, stats
from wattzip.analysis import verdicts
from wattzip.errors import ConfigError
from wattzip.machine import MachineError, factors, system, thermal, trust
from wattzip.machine.emulated import EmulatedMachine, hotplugged
from wattzip.machine.factors import KEEP
from wattzip.measure import drift
from wattzip.measure import spec as specs
from wattzip.measure.disturbance import TICK, QuietLimits, busiest, load_share, process_jiffies
from wattzip.measure.provenance import who_measured
from wattzip.measure.runner import cpu_busy_jiffies, utc_now
from wattzip.meters import Meter
from wattzip.resources import schema_default

NOISY_IDLE_WINDOWS = 3  # in a row: the machine is busy, not briefly disturbed
# The drift reference's phases are the machine's, not a medium's: measured once per state
# of the machine (the setting's machine factors) and journaled here, beside the settings'
# own journals, so that settings differing only in medium or bandwidth share them.
PHASES_JOURNAL = "drift-reference.jsonl"
CONFIDENCE = 0.95  # overall, over all the looks


def origin(meter: Meter, testbed: str | None) -> dict:
    """Who measures now, named as the run records name them (`who_measured`: host, Slurm
    node and job, boot, wattzip's version), with the testbed and the meter's identity
    (without an idle calibration: this is the calibration)."""
    return {**who_measured(), **({"testbed": testbed} if testbed else {}),  # else the path
            # as a journal line holds it, so that a window read back compares equal
            "meter_identity": json.loads(json.dumps(meter.identity(), sort_keys=True))}


def _not_here(window: Mapping, here: Mapping) -> str | None:
    """Why a journaled window is no window of this calibration, or None when it is."""
    if window.get("hostname") is None or window.get("boot_id") is None:
        return "with no host or boot recorded (an older wattzip's)"
    if window["hostname"] != here["hostname"]:
        return f"on host {window['hostname']}"
    if window["boot_id"] != here["boot_id"]:
        return f"in another boot ({window['boot_id']})"
    if window.get("meter_identity") != here["meter_identity"]:
        return "by another meter identity"
    return None


def journaled_windows(journal: str, key: str, here: Mapping,
                      log: Callable[[str], None]) -> list[dict]:
    """The journal's windows of `key` measured here (`origin`: this host, this boot, this
    meter); the others are left out, and the log says which and why."""
    entries = records.read_journal(journal, key, ("key", "watts"))
    why = [_not_here(e, here) for e in entries]
    left_out = Counter(w for w in why if w)
    if left_out:
        log(f"idle: {sum(left_out.values())} window(s) in {journal} left out, measured "
            + "; ".join(f"{n} {w}" for w, n in left_out.items())
            + f", not on this host ({here['hostname']}) in this boot ({here['boot_id']}) "
            "by this meter: idle power on another machine or before a reboot is another "
            "baseline, so it is measured again")
    return [e for e, w in zip(entries, why, strict=True) if w is None]


def check_same_machine(calibration: Mapping, path: str,
                       testbed: str | None = None) -> str | None:
    """Refuse an idle calibration made on another host (or for another testbed) than the
    job reading it: another machine's idle power subtracted from this one's energy makes
    every passive and active energy wrong. A calibration from before hosts were recorded
    has nothing to compare: accepted. A note for the job's log when it was made in another
    boot of this host (idle power may have moved since), else None."""
    here = who_measured()
    theirs = calibration.get("hostname")
    if theirs is not None and theirs != here["hostname"]:
        raise MachineError(
            f"the idle calibration {path} was measured on host {theirs}, but this job runs on "
            f"{here['hostname']}: another machine's idle power cannot be subtracted from this "
            f"one's energy. Run the job on {theirs} (its testbed's node), or delete {path} "
            "so that the calibration runs again here")
    if testbed and calibration.get("testbed") not in (None, testbed):
        raise MachineError(
            f"the idle calibration {path} is testbed {calibration['testbed']}'s, not "
            f"{testbed}'s: delete it so that the calibration runs again for {testbed}")
    boot = calibration.get("boot_id")
    if boot is not None and boot != here["boot_id"]:
        return (f"the idle calibration {path} was measured in another boot of this host "
                f"({boot}, now {here['boot_id']}); delete it to calibrate this boot's idle "
                "power")
    return None


def first_look(count: int, min_count: int) -> int:
    """The windows before the first look: min_count, refused above count. The schema's
    default alone is cut to count, so a study of fewer windows (a test, a quick look)
    need not set it: it looks once, after all of them."""
    if min_count < 1:
        raise ConfigError(f"idle.min_count ({min_count}) must be at least 1")
    if min_count > count:
        if min_count == schema_default("idle.min_count"):
            return count
        raise ConfigError(f"idle.min_count ({min_count}) is above idle.count ({count}), "
                          "the most windows calibration measures; lower min_count or "
                          "raise count")
    return min_count


@dataclass(frozen=True)
class StoppingRule:
    """Stop once the interval's half-width is at most ci_target of the mean, looking
    after each window from the first look on, and at the maximum in any case."""

    count: int  # the most windows
    first: int  # windows before the first look
    ci_target: float

    @property
    def looks(self) -> int:
        return self.count - self.first + 1

    @property
    def confidence(self) -> float:
        return verdicts.look_confidence(CONFIDENCE, self.looks)

    def half_width_w(self, windows: Sequence[float]) -> float:
        return stats.half_width(windows, self.confidence)

    def met(self, windows: Sequence[float]) -> bool:
        return stats.ci_met(windows, self.ci_target, self.confidence)

    def stop(self, windows: Sequence[float]) -> str | None:
        """Why the calibration stops after these windows, or None to measure another."""
        n = len(windows)
        if n >= self.first and self.met(windows):
            return f"target met at look {n - self.first + 1} of {self.looks}"
        if n >= self.count:
            return f"reached the maximum of {self.count} window{'s' * (self.count != 1)}"
        return None

    def describe(self, windows: Sequence[float]) -> str:
        """The running mean and half-width, as the log says them after each window."""
        n, mean_w = len(windows), stats.mean(windows)
        if n < 2:
            return f"mean {mean_w:.2f} W (one window: no interval)"
        text = (f"mean {mean_w:.2f} W, half-width {self.half_width_w(windows):.2f} W "
                f"({stats.relative_half_width(windows, self.confidence):.1%} of the mean, "
                f"target {self.ci_target:.1%}) at {100 * self.confidence:.4g}% confidence")
        if n < self.first:
            return f"{text}; first look after {self.first} windows"
        return f"{text}; look {n - self.first + 1} of {self.looks}"


def _measure_windows(meter: Meter, seconds: float, rule: StoppingRule, windows: list[float],
                     max_other_load: float, journal: tuple[str, dict] | None,
                     log: Callable[[str], None], wait_s: float, stamps: list,
                     temps: list) -> str:
    """Measure idle windows onto `windows` (when each ended onto `stamps`, the CPU
    package's temperature then onto `temps`) until `rule`
    stops, journaling each as it ends (`journal`: its path, and the key and origin each
    line holds); a window in which other processes worked is discarded and measured again
    once the machine is quiet (waited for up to `wait_s`; NOISY_IDLE_WINDOWS in a row are
    an error). The reason the rule stopped."""
    quiet, noisy, reason = QuietCheck(), 0, None
    # the idle windows' own limit; steal is not judged here (it adds no load to idle)
    waiting = QuietLimits(max_other_cpu=max_other_load, max_steal=1.0, wait_s=wait_s,
                          count_system=True)  # judged as the window is, kernel time too
    while reason is None:
        watts = meters.measure_idle(meter, 1, seconds).windows_w[0]
        try:
            quiet.require_quiet(max_other_load, f"idle window {len(windows) + 1}")
        except MachineError as exc:  # discarded, never averaged in
            noisy += 1
            if noisy >= NOISY_IDLE_WINDOWS:
                raise
            log(f"{exc}; discarded, measuring it again once the machine is quiet")
            waiting.wait_until_quiet(log, f"idle window {len(windows) + 1}")
            quiet.restart()  # the wait is no part of the next window
            continue
        noisy = 0
        windows.append(watts)
        stamps.append(utc_now())
        temps.append(thermal.package_temp_c())
        if journal:
            path, fields = journal
            records.append_journal(path, {**fields, "watts": watts, "at": stamps[-1],
                                          "package_temp_c": temps[-1]})
        estimated = " ESTIMATED" if meter.method == "estimated" else ""
        log(f"idle window {len(windows)}/{rule.count}: {watts:.2f} W{estimated}; "
            f"{rule.describe(windows)}")
        reason = rule.stop(windows)
    return reason


def reference_phases(meter: Meter, repeats: int, max_other_load: float, wait_s: float,
                     log: Callable[[str], None], gap_s: float = drift.PHASE_GAP_S) -> list:
    """The drift check's reference in phases (wattzip.measure.drift.calibrate_phases),
    measured again once the machine is quiet if other processes worked meanwhile: their
    load would widen the noise every job's drift is judged against."""
    waiting = QuietLimits(max_other_cpu=max_other_load, max_steal=1.0, wait_s=wait_s,
                          count_system=True)
    for attempt in range(1, NOISY_IDLE_WINDOWS + 1):
        quiet = QuietCheck()
        phases = drift.calibrate_phases(meter, repeats, gap_s)
        share, names = quiet.others_load()
        means = [stats.mean([r["elapsed_s"] for r in p]) for p in phases]
        if share <= max_other_load:
            log(f"drift reference: {len(phases)} phases of {repeats}, {gap_s:g} s apart: "
                f"mean {stats.mean(means):.3f} s, sd between phases {stats.stdev(means):.3f} s")
            return phases
        why = (f"drift reference phases: other processes used {share:.0%} of the CPUs "
               f"(limit {max_other_load:.0%}); busiest: {', '.join(names) or 'exited'}")
        if attempt == NOISY_IDLE_WINDOWS:
            raise MachineError(f"{why}, {attempt} times: their load would widen the noise "
                               "every job's drift is judged against; stop them and calibrate "
                               "again")
        log(f"{why}; measuring them again once the machine is quiet")
        waiting.wait_until_quiet(log, "the drift reference phases")
    raise AssertionError("unreachable: the last attempt returns or raises")


def _resumed_phases(journal: str | None, key: str, here: Mapping,
                    log: Callable[[str], None]) -> list | None:
    """The drift reference's phases journaled here (this host, boot and meter) in this
    state of the machine, by this setting's calibration or by one of another setting with
    the same machine factors, else None: measured again, they would judge the jobs' drift
    by another noise than the one their runs were measured under."""
    entries = [e for e in records.read_journal(journal, key, ("key", "phases"))
               if _not_here(e, here) is None] if journal else []
    if entries:
        log(f"drift reference: {len(entries[-1]['phases'])} phases found in {journal}")
    return entries[-1]["phases"] if entries else None


def _resume(journal: str | None, key: str, here: Mapping, rule: StoppingRule, seconds: float,
            log: Callable[[str], None]) -> tuple[list[float], list, list, str | None]:
    """The journal's windows measured here, as this calibration's first ones: the looks
    are replayed over them in order, so a resumed calibration stops where an unbroken one
    would: (the windows, when each ended, the package temperature then, why the rule
    stopped or None)."""
    entries = journaled_windows(journal, key, here, log) if journal else []
    windows: list[float] = []
    stamps: list[str | None] = []
    temps: list[float | None] = []
    reason = None
    for entry in entries:
        windows.append(float(entry["watts"]))
        stamps.append(entry.get("at"))
        temps.append(entry.get("package_temp_c"))
        reason = rule.stop(windows)
        if reason:
            break
    if entries:
        used = "" if len(windows) == len(entries) else f", the first {len(windows)} used"
        log(f"idle: {len(entries)} window(s) of {seconds:g} s found in {journal}{used}; "
            f"{rule.describe(windows)}")
    return windows, stamps, temps, reason


def calibrate(meter: Meter, *, count: int, seconds: float, setting: str, target_dir: str,
              min_count: int, ci_target: float,
              machine_factors: Mapping[str, str] | None = None, max_other_load: float = 0.1,
              quiet_wait_s: float = QuietLimits.wait_s, journal: str | None = None,
              log: Callable[[str], None] = print,
              medium=None, drift_repeats: int = 0, testbed: str | None = None,
              emulated: EmulatedMachine | None = None) -> dict:
    """The idle calibration of one setting (its machine factors applied, and the emulated
    machine's other CPUs offline where it asks for hotplug), as
    the JSON the jobs read: mean, sd and interval of the windows measured (at least
    min_count, at most count, fewer once the interval is within ci_target of the mean),
    why they stopped, the meter that measured them and who did (`origin`); with
    `drift_repeats`, the drift check's reference in phases (its noise between phases,
    which the jobs read)."""
    rule = StoppingRule(count, first_look(count, min_count), ci_target)
    trust.trusted_folder(target_dir, "the idle calibration's target folder")
    key = f"{meter.name}|{meter.scope}|{setting}|{seconds:g}"
    if emulated is not None and emulated.hotplug:  # another machine's idle power
        key += f"|{emulated.cpus} CPU(s) online"
    here = origin(meter, testbed)
    windows, stamps, temps, reason = _resume(journal, key, here, rule, seconds, log)
    state = json.dumps(dict(sorted((machine_factors or {}).items())))
    phases_key = f"{meter.name}|{meter.scope}|{state}|drift reference|{drift_repeats}"
    phases_journal = os.path.join(os.path.dirname(journal), PHASES_JOURNAL) if journal else None
    phases = _resumed_phases(phases_journal, phases_key, here, log) if drift_repeats else None
    if reason is None or drift_repeats and phases is None:  # else all from the journal
        # The device the jobs' I/O goes to (wattzip.machine.media), not the disk under an
        # unmounted mount point, which is usually the root disk.
        disk = medium.scheduler_disk() if medium else system.scheduler_disk(target_dir)
        values = dict(machine_factors or {})
        if medium is not None and medium.inputs == "on-medium":
            # An emulated disk (wattzip.machine.onedisk): its jobs set the scheduler of its
            # loop device, which does not exist now. The host's disk under the image is
            # not theirs to set (other users' I/O goes there), and idle moves no bytes.
            disk = None
            if values.pop("io_scheduler", KEEP) != KEEP:
                log("idle: the emulated disk's loop device exists only while a job runs: "
                    "its jobs set its I/O scheduler; none is set here")
        with hotplugged(emulated, log), factors.applied(disk, values):
            if reason is None:
                reason = _measure_windows(meter, seconds, rule, windows, max_other_load,
                                          journal and (journal, {"key": key, **here}), log,
                                          quiet_wait_s, stamps, temps)
            if drift_repeats and phases is None:
                phases = reference_phases(meter, drift_repeats, max_other_load,
                                          quiet_wait_s, log)
                if phases_journal:
                    records.append_journal(phases_journal, {"key": phases_key,
                                                            "phases": phases, **here})
    # When the last window averaged ended: a calibration whose windows and phases all come
    # from the journal (run again after a kill, or with its spec rewritten, in the same
    # boot) is the calibration its jobs recorded, so their runs are not measured again.
    measured_at = (stamps[-1] if stamps else None) or utc_now()
    met = rule.met(windows)
    log(f"idle: stopped after {len(windows)} of at most {count} windows: {reason}"
        + ("" if met else f" (the target of {ci_target:.1%} not met)"))
    result = meters.IdleResult(windows, meter.name, meter.scope, meter.method, seconds)
    half = rule.half_width_w(windows)
    # count is the windows averaged, as it always was (the report's "over N windows");
    # max_count is the config's idle.count.
    return {"idle_power_w": result.mean_w, "sd_w": result.sd_w, "windows_w": result.windows_w,
            "count": len(windows), "seconds": seconds, "setting": setting,
            "meter_source": result.source, "meter_scope": result.scope,
            "meter_method": result.method, "measured_at": measured_at,
            "max_count": count, "min_count": rule.first, "looks": rule.looks,
            "half_width_w": None if math.isnan(half) else half,
            "confidence": rule.confidence, "ci_target": ci_target, "ci_met": met,
            "stopped": reason, "reference_phases": phases,
            # The thermal gate's baseline (wattzip.measure.disturbance): the windows' mean
            # package temperature; None where no window read one.
            "package_temp_c": stats.mean(read) if (read := [t for t in temps
                                                            if t is not None]) else None,
            **here}


def calibrate_spec(meter: Meter, spec: Mapping, journal: str | None,
                   log: Callable[[str], None] = print) -> dict:
    """The idle calibration an idle spec describes (wattzip.measure.spec): its windows are
    the config's idle, keyword by key."""
    medium = specs.medium(spec)
    return calibrate(meter, **spec["idle"], setting=spec["setting"]["name"],
                     target_dir=medium.path, machine_factors=specs.machine_factors(spec),
                     quiet_wait_s=spec["quiet"]["wait_s"], journal=journal, log=log,
                     medium=medium, drift_repeats=spec["drift"]["repeats"],
                     testbed=spec["testbed"],
                     emulated=EmulatedMachine.of(spec.get("machine")))


class QuietCheck:
    """CPU time the rest of the machine used while this process measured idle power.

    Another study's load (in a chroot or a container this lock does not reach) would go
    into the idle baseline and every passive energy after it, with nothing to say so.
    """

    def __init__(self):
        self.cpus = os.cpu_count() or 1
        self.restart()

    def _own_jiffies(self) -> int:
        t = os.times()
        return round((t.user + t.system + t.children_user + t.children_system) * TICK)

    def restart(self) -> None:
        """Begin a new interval of the rest of the machine's load."""
        self.t0 = time.monotonic()
        self.busy0, self.own0 = cpu_busy_jiffies(), self._own_jiffies()
        self.procs0 = process_jiffies()

    def others_load(self) -> tuple[float, list[str]]:
        """(the other processes' share of all CPUs since the start, the busiest of them)."""
        seconds = time.monotonic() - self.t0
        others = (cpu_busy_jiffies() - self.busy0) - (self._own_jiffies() - self.own0)
        share = load_share(others / TICK, seconds, self.cpus)  # as a run's is judged
        return share, busiest(self.procs0, process_jiffies())

    def require_quiet(self, limit: float, what: str) -> None:
        """An error when the rest of the machine was busy since the last check (which
        starts a new interval either way)."""
        share, busiest = self.others_load()
        if share > limit:
            self.restart()
            raise MachineError(
                f"{what}: the machine was not idle: other processes used {share:.0%} of its "
                f"{self.cpus} CPUs (limit {limit:.0%}); busiest: "
                f"{', '.join(busiest) or 'processes that have exited'}. Their load would "
                "go into the idle baseline and every passive energy; stop them (another "
                "study in a container this lock cannot see?) and calibrate again")
        self.restart()
