"""A testbed (one machine of the study) and the settings of the factors measured on it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from wattzip import resources
from wattzip.machine import throttle
from wattzip.machine.factors import KEEP, MACHINE_FACTORS
from wattzip.machine.media import Medium
from wattzip.records import FACTOR_COLUMNS

# Each factor, as the config names it, and its part of a setting's name (data/factors.csv's
# name and name_part, "{}" its value), in the table's order.
NAME_PARTS = {f["name"]: f["name_part"] for f in resources.factor_table()}
# The factors as the config names them (their columns: records.FACTOR_COLUMNS).
FACTORS = tuple(NAME_PARTS)


@dataclass(frozen=True)
class Testbed:
    """One machine of the study, with its own disks, meter and (on a cluster) node."""

    name: str
    description: str
    target_dir: str
    input_dir: str
    meter: dict = field(hash=False)
    slurm: dict | None = field(default=None, hash=False)
    host: str | None = None

    study: str = "default"

    def path(self, template: str) -> str:
        return template.format(testbed=self.name, study=self.study)


@dataclass(frozen=True)
class Setting:
    """One combination of the factors; `medium_spec` is the config's, {testbed} unreplaced."""

    name: str
    medium: str
    medium_spec: dict = field(hash=False, compare=False)
    copies: int
    bandwidth: str
    bandwidth_bytes_per_s: int | None
    # The values of the factors that are machine settings (MACHINE_FACTORS), by name.
    machine: dict = field(hash=False)
    # The threads of the multi-threaded codecs (config threads; 0: every core).
    threads: int = 0

    @classmethod
    def of(cls, values: dict, medium_spec: dict, threads_named: bool = False) -> Setting:
        """The setting of one value of each factor (FACTORS' names), named by their parts in
        data/factors.csv's order; an unlimited bandwidth leaves its part out, and a
        bandwidth goes into the name as its label ('50MB/s' -> 'bw-50MBps'); the threads
        are in the name only where the study sweeps them (`threads_named`)."""
        rate = throttle.parse_bandwidth(values["bandwidth"])
        shown = {**values, "bandwidth": throttle.bandwidth_label(values["bandwidth"])
                 if rate is not None else None,
                 "threads": values["threads"] if threads_named else None}
        name = ".".join(NAME_PARTS[f].format(shown[f]) for f in FACTORS if shown[f] is not None)
        rest = {f: value for f, value in values.items() if f not in MACHINE_FACTORS}
        return cls(name=name, medium_spec=medium_spec, bandwidth_bytes_per_s=rate,
                   machine={f: values[f] for f in MACHINE_FACTORS},
                   **{**rest, "bandwidth": str(values["bandwidth"])})

    def unconditioned(self, medium_kind: str) -> list[tuple[str, object]]:
        """The factors whose value here changes how a command runs, against a plain
        directory on the machine as it is: the medium's kind, every machine factor not
        left as it is, a bandwidth limit, more than one copy."""
        plain = {"medium": medium_kind == "directory",
                 "bandwidth": self.bandwidth_bytes_per_s is None,
                 "copies": self.copies == 1,
                 "threads": True,  # the commands' own flag: hyperfine runs them alike
                 **{name: value == KEEP for name, value in self.machine.items()}}
        return [(f, medium_kind if f == "medium" else self.column(f))
                for f in FACTORS if not plain[f]]

    def medium_on(self, testbed: Testbed) -> Medium:
        spec = {k: testbed.path(v) if isinstance(v, str) else v
                for k, v in self.medium_spec.items()}
        return Medium.from_spec(self.medium, spec)

    def placed_medium_on(self, testbed: Testbed) -> dict:
        """The medium on a testbed as the jobs' specs and the rules' params carry it: its
        fields, its paths inside the study's folder relative to it (workdir_relative)."""
        m = self.medium_on(testbed)
        return {**m.to_spec(), "path": workdir_relative(m.path),
                "image": workdir_relative(m.image)}

    def factors(self) -> dict:
        """The factor fields every run record of this setting carries."""
        return {"setting": self.name, **{c: self.column(c) for c in FACTOR_COLUMNS}}

    def column(self, name: str):
        """A factor's value by its name or column (a machine factor's from `machine`)."""
        return self.machine[name] if name in self.machine else getattr(self, name)

    def machine_factors(self) -> dict[str, str]:
        """The values of the factors that are machine settings (set by wattzip job and idle)."""
        return dict(self.machine)

    def value(self, factor: str):
        return self.bandwidth_bytes_per_s if factor == "bandwidth" else self.column(factor)


def workdir_relative(path: str | None) -> str | None:
    """A resolved path inside the working directory (the study's folder), relative to it.
    A job's spec and its rule's params name the medium so, and moving or copying the
    folder then changes no job: Snakemake measures nothing again. The command reading the
    spec resolves the path again, from the same working directory, to the same place."""
    if not path or not os.path.isabs(path):
        return path
    here = os.path.realpath(os.getcwd())
    return os.path.relpath(path, here) if os.path.commonpath([here, path]) == here else path


def medium_fields(spec: str | dict, emulated_disks: bool) -> dict:
    """A medium's config value as fields. An image in a study of emulated disks holds
    its inputs by default: SYSTOR '09 read and wrote one dedicated disk, so reading the
    input and writing the output share one bandwidth (wattzip.machine.onedisk), where inputs
    on a disk of their own would leave the write side of every codec bounded by reading
    its whole input through a separate budget."""
    out = {"path": spec} if isinstance(spec, str) else dict(spec)
    if out.get("kind") == "image" and "inputs" not in out:
        out["inputs"] = "on-medium" if emulated_disks else "separate"
    return out


@dataclass(frozen=True)
class DutyCycleWorkload:
    """HPC '14's workload: write phases between compute phases, measured as one run."""

    phases: int
    compute_s: float
    compute: str
    file_type: str
    codecs: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.phases} write phases, {self.compute_s:g} s {self.compute} compute each"
