"""One run's record, the contract between measure and analyze (design brief, "One run record").

A run's record was a dict assembled in several functions, with no version: a reader
could not tell an old record from a damaged one. RunRecord holds every field in one
place; each record says its schema version, in its journal line and in runs.csv's
schema_version column. Records written before the version was (version 1, the same
fields) are still read, and labelled 1.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wattzip.errors import RecordError

# 1: the records written before they held their version; 3: the budget's and the
# disturbance's fields (sample_gap_s ... drift_warning), absent from older records; 4:
# shared_plain_of, the moderated design's shared plain arm; 5: boot_id and
# wattzip_version, the boot and the wattzip that measured the run (empty before); 6:
# estimated_energy_j, the model's estimate beside the meter's, was model_energy_j (read
# under its new name); 7: peak_rss_bytes, the tools' peak resident memory, and
# source_commit, source_dirty, source_digest, the code that measured, and the CPU's
# state (package_temp_start_c ... throttle_events) (absent before); 8: machine_cpus and
# machine_memory_bytes, the emulated machine (absent before).
SCHEMA_VERSION = 8
RENAMED = {"model_energy_j": "estimated_energy_j"}
FACTOR_PREFIX = "factor_"
# A machine factor's value in effect, read back (wattzip.machine.factors' table): a
# column of runs.csv for every factor in the table, a field here or not.
IN_EFFECT_SUFFIX = "_in_effect"
# What every run record must hold to be read back.
RUN_REQUIRED = ("testbed", "file_type", "codec", "op", "repeat", "verified")


@dataclass(kw_only=True)
class RunRecord:
    """One run, its fields in runs.csv's column order (the design's data contract's
    names); `factors` spread into factor_<name> columns; `extra` keeps any field this
    version does not know, so that reading and writing a record loses nothing."""

    testbed: str | None = None
    setting: str | None = None
    file_type: str | None = None
    input_bytes: int | None = None
    input_sha256: str | None = None
    codec: str | None = None
    tool: str | None = None
    level: Any = None
    mount_option: str | None = None
    op: str | None = None
    repeat: int | None = None
    started_at: str | None = None  # UTC, ISO 8601
    ended_at: str | None = None
    elapsed_s: float | None = None
    meter_interval_s: float | None = None
    user_s: float | None = None
    sys_s: float | None = None
    # The largest resident set of the run's tools (wait4's ru_maxrss of each copy, the
    # largest copy's), in bytes; None where no tool ran.
    peak_rss_bytes: int | None = None
    wait_s: float | None = None  # elapsed - user - sys (paper 4.3)
    cpu_utilization: float | None = None
    cpu_busy_s: float | None = None
    energy_j: float | None = None
    idle_power_w: float | None = None
    energy_passive_j: float | None = None  # idle power x the meter's interval
    energy_active_j: float | None = None  # energy - passive
    meter_source: str | None = None
    meter_scope: str | None = None
    meter_method: str | None = None  # measured | estimated
    meter_id: str | None = None
    meter_identity: Any = None
    meter_flags: str | None = None
    samples: int | None = None
    # The energy budget's sampling and idle terms (wattzip.analysis.uncertainty).
    sample_gap_s: float | None = None
    power_step_rss_w: float | None = None
    idle_power_u_w: float | None = None
    idle_windows: int | None = None
    # The rest of the machine's load over the region (wattzip.measure.disturbance), and why a run
    # was left out as disturbed (load, steal, drift) or kept despite a drift.
    other_user_s: float | None = None
    other_user_share: float | None = None
    other_cpu_share: float | None = None
    steal_share: float | None = None
    cpu_pressure_share: float | None = None
    cpus: int | None = None
    # The CPU's state over the region (wattzip.machine.thermal): None where the machine
    # has no such sensor or counter.
    package_temp_start_c: float | None = None
    package_temp_end_c: float | None = None
    cpu_freq_mhz: float | None = None  # scaling_cur_freq's mean, at the start and the end
    throttle_events: int | None = None
    disturbed: str | None = None
    drift_warning: str | None = None
    paired_with: str | None = None  # the codec whose job's own plain arm this run is
    # The codec whose job measured this run of its setting and file type's one plain arm,
    # shared by all their codecs (the moderated design).
    shared_plain_of: str | None = None
    output_bytes: int | None = None
    verified: bool | None = None
    verification: str | None = None
    exit_code: int | None = None
    failure: str | None = None
    own_blocks: bool | None = None
    tools_warmed: bool | None = None
    threads: int | None = None
    copies: int | None = None
    phases: int | None = None
    copy_buffer_bytes: int | None = None
    medium_kind: str | None = None
    flush: str | None = None
    target_device: str | None = None
    target_fs: str | None = None
    mount_options: str | None = None
    loop_direct_io: bool | None = None
    # In the journal only: an image medium's file (its device is target_device).
    image: str | None = None
    scheduler_disk: str | None = None
    io_scheduler_in_effect: str | None = None
    governor_in_effect: str | None = None
    bandwidth_bytes_per_s: int | None = None
    bandwidth_applied_bytes_per_s: int | None = None
    bandwidth_budget: str | None = None
    input_layout: str | None = None
    emulated_disk_bytes: int | None = None
    # The emulated machine (config machine:) as the kernel held it for the job's cgroup:
    # its CPUs and memory limit in bytes, page cache included (None: the machine as is).
    machine_cpus: int | None = None
    machine_memory_bytes: int | None = None
    hostname: str | None = None
    slurm_node: str | None = None
    slurm_job_id: str | None = None
    boot_id: str | None = None  # the kernel's boot: a reboot makes another machine state
    wattzip_version: str | None = None
    # The code that measured (wattzip.measure.provenance.source_of_code): the checkout's
    # commit and whether it had changes (None from a wheel), its package files' sha256.
    source_commit: str | None = None
    source_dirty: bool | None = None
    source_digest: str | None = None
    tool_version: str | None = None
    trace: str | None = None
    model_row: str | None = None
    model_how: str | None = None
    model_min_w_per_thread: float | None = None
    model_max_w_per_thread: float | None = None
    model_threads: int | None = None
    model_source: str | None = None
    # The model's ESTIMATED energy of the run, beside whatever the meter read (the
    # model check); model_energy_j before version 6.
    estimated_energy_j: float | None = None
    simulated: bool | None = None  # a rehearsal's run (wattzip.model.rehearsal), never measured
    schema_version: int = SCHEMA_VERSION
    # In the journal only: the job's factors, key, and how the region ended.
    factors: dict = field(default_factory=dict)
    job_key: str | None = None
    succeeded: bool | None = None
    error: str | None = None
    argv: list | None = None
    extra: dict = field(default_factory=dict)

    @classmethod
    def new(cls, *parts: Mapping, **fields) -> RunRecord:
        """A run being recorded now (this version): a measured region's result, then its
        job's fields, each later part over the earlier."""
        record = cls()
        for part in (*parts, fields):
            record.update(part)
        record.schema_version = SCHEMA_VERSION
        return record

    @classmethod
    def from_dict(cls, entry: Mapping) -> RunRecord:
        """A journal's line: a record without a version is of version 1; fields not known
        here are kept in `extra`."""
        record = cls(schema_version=1)
        record._set({RENAMED.get(key, key): value for key, value in entry.items()},
                    keep_unknown=True)
        return record

    def update(self, fields: Mapping | None = None, **more) -> None:
        """Set fields of a record being made. A name this version does not know is a slip
        in the code that made it: refused, not filed away under `extra` where no column
        would show it."""
        self._set({**(fields or {}), **more}, keep_unknown=False)

    def _set(self, fields: Mapping, keep_unknown: bool) -> None:
        """Known fields as attributes, each machine factor's value in effect (a column
        whatever the factor table holds) and, read from a journal, any other in `extra`."""
        for key, value in fields.items():
            if key in FIELDS:
                setattr(self, key, value)
            elif key.endswith(IN_EFFECT_SUFFIX) or keep_unknown and not key.startswith("_"):
                self.extra[key] = value
            elif not key.startswith("_"):
                raise RecordError(f"run record: no field {key!r} in version {SCHEMA_VERSION} "
                                  "(wattzip.run_record.RunRecord)")

    def to_dict(self) -> dict:
        """The journal's line: every field (None where not measured), `extra` merged."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name != "extra"}
        return {**self.extra, **out}

    def row(self) -> dict:
        """runs.csv's row: the columns, the factors spread into factor_<name>."""
        row = {k: getattr(self, k) for k in RUN_COLUMNS}
        if isinstance(row["meter_identity"], dict):
            row["meter_identity"] = json.dumps(row["meter_identity"], sort_keys=True)
        factors = self.factors or {}
        row["setting"] = factors.get("setting", self.setting or "default")
        row["copies"] = factors.get("copies", self.copies or 1)
        for name, value in sorted(factors.items()):
            if name != "setting":
                row[FACTOR_PREFIX + name] = value
        row.update({k: v for k, v in sorted(self.extra.items()) if k.endswith(IN_EFFECT_SUFFIX)})
        return row


def region_fields(elapsed_s: float, cpu_s: float, energy_j: float | None,
                  idle_power_w: float | None, meter_interval_s: float | None) -> dict:
    """What a record derives from its region's measures, defined once for a measured run
    (wattzip.measure.runner) and a simulated one (wattzip.model.rehearsal): the wait
    (paper 4.3), the CPU utilization, and the passive energy over the meter's interval,
    the one its energy covers."""
    passive = (idle_power_w * meter_interval_s
               if idle_power_w is not None and energy_j is not None else None)
    return {
        # Undefined when the run used more CPU time than wall time (several threads or copies).
        "wait_s": elapsed_s - cpu_s if cpu_s <= elapsed_s else None,
        "cpu_utilization": cpu_s / elapsed_s if elapsed_s > 0 else None,
        "energy_j": energy_j,
        "idle_power_w": idle_power_w,
        "energy_passive_j": passive,
        "energy_active_j": energy_j - passive if passive is not None else None,
    }


def codec_fields(name: str, codec) -> dict:
    """A run's codec columns, measured or simulated: plain (no codec) is dd's copy
    (wattzip.measure.runner), without level or mount option."""
    return {"codec": name, "tool": codec.tool if codec else "dd",
            "level": codec.level if codec else None,
            "mount_option": codec.mount_option if codec else None}


def in_effect_fields(values: Mapping[str, str | None]) -> dict:
    """The machine factors' values in effect as the record's `<name>_in_effect` fields."""
    return {name + IN_EFFECT_SUFFIX: value for name, value in values.items()}


FIELDS = frozenset(f.name for f in dataclasses.fields(RunRecord)) - {"extra"}
_JOURNAL_ONLY = ("factors", "job_key", "succeeded", "error", "argv", "image")
RUN_COLUMNS = tuple(f.name for f in dataclasses.fields(RunRecord)
                    if f.name not in (*_JOURNAL_ONLY, "extra"))
NUMERIC_COLUMNS = frozenset({
    "input_bytes", "repeat", "elapsed_s", "meter_interval_s", "user_s", "sys_s",
    "peak_rss_bytes", "wait_s",
    "cpu_utilization", "cpu_busy_s", "energy_j", "model_min_w_per_thread",
    "model_max_w_per_thread", "model_threads", "estimated_energy_j", "idle_power_w",
    "energy_passive_j", "energy_active_j",
    "samples", "sample_gap_s", "power_step_rss_w", "idle_power_u_w", "idle_windows",
    "other_user_s", "other_user_share", "other_cpu_share", "steal_share", "cpu_pressure_share",
    "cpus", "package_temp_start_c", "package_temp_end_c", "cpu_freq_mhz", "throttle_events",
    "output_bytes", "exit_code", "threads", "copies", "phases", "copy_buffer_bytes",
    "bandwidth_bytes_per_s", "bandwidth_applied_bytes_per_s", "emulated_disk_bytes",
    "machine_cpus", "machine_memory_bytes",
    "schema_version",
})
BOOLEAN_COLUMNS = frozenset({"verified", "own_blocks", "tools_warmed", "loop_direct_io",
                             "simulated", "source_dirty"})


def flatten(record: Mapping) -> dict:
    """A journal's record as runs.csv's row."""
    return RunRecord.from_dict(record).row()


def count_failed(runs) -> int:
    """Runs that failed or did not verify (records, journal lines or runs.csv rows): a
    disturbed run is not one, whatever its `verified`: it was measured again."""
    return sum(r.get("verified") not in (True, "true") and not r.get("disturbed")
               for r in runs)
