"""Check, before any measurement, everything that would otherwise fail mid-study.

The host, the codec binaries, the energy meter (and whether it is a measured one when
the study requires it), each setting's medium, factors and free space, a pinned corpus's
files (wattzip.workload.pinned), and room for the inputs. The checks that need no
machine (wattzip.model.checks) ran in the rehearsal already and run again here; the
rest attach each medium once, as the jobs will, and undo it. Each failure is a
PreflightError saying what to do.
"""

from __future__ import annotations

import os
import shutil

from wattzip import meters
from wattzip.errors import WattzipError
from wattzip.machine import factors, system, throttle, trust
from wattzip.machine.emulated import EmulatedMachine
from wattzip.machine.media import Medium
from wattzip.measure.free_space import check_free_space, space_needed
from wattzip.model import checks
from wattzip.units import parse_size
from wattzip.workload import codec_registry, inputs, pinned


class PreflightError(WattzipError):
    """A check before any measurement failed."""


def check_codecs(names: list[str]) -> dict[str, str | None]:
    versions = {name: codec_registry.version(codec_registry.get(name)) for name in names}
    missing = [codec_registry.get(n) for n, v in versions.items() if v is None]
    if missing:
        packages = " ".join(sorted({c.package for c in missing}))
        raise PreflightError("missing codec binaries: " + ", ".join(
            f"{c.name} needs {c.binary!r}" for c in missing)
            + f". Install them with: apt-get install {packages}")
    return versions


def check_meter(meter_config: dict) -> dict:
    meter = meters.open_meter(meter_config)
    try:
        return {"source": meter.name, "scope": meter.scope, "method": meter.method}
    finally:
        meter.close()


def check_setting(name: str, setting: dict, codecs: list[str], file_size: int,
                  duty_phases: int, input_dir: str) -> dict:
    """One setting on this machine: its medium made and mounted once, its free space, an
    emulated disk's ceiling, its scheduler, governor and throttle tried, all undone."""
    target, spec = setting["target_dir"], setting["medium"]
    medium = Medium.from_spec(spec["name"], spec)
    needed = space_needed(file_size, setting["copies"], duty_phases,
                          medium.inputs == "on-medium")
    # The rehearsal's checks of the design first (a pre-flight run alone has had no
    # rehearsal): they say what to change in the config before the machine is asked.
    problems = (checks.medium_problems(name, spec, codecs)
                + checks.space_problems(name, spec, needed))
    if problems:
        raise PreflightError("; ".join(problems))
    rate = throttle.parse_bandwidth(setting["bandwidth"])
    if medium.inputs == "on-medium":  # the emulated disk with one budget: tried here
        medium.share_budget(rate)
    try:
        medium.attach()
        disk = medium.scheduler_disk()
        free = shutil.disk_usage(target).free
        # The job's own rule (wattzip.measure.repeats): the same numbers, before anything runs.
        check_free_space(target, needed, medium.image,
                         parse_size(medium.size) if medium.image else 0)
        ceiling = medium.check_budget_reachable()  # an emulated disk delivers its budget
        factors.check(disk, {name: setting[name] for name in factors.MACHINE_FACTORS})
        # The job's cgroup tried once: the throttle, and the emulated machine's CPUs and
        # memory (a v2 parent that delegates no cpuset or memory is named here).
        emulated = EmulatedMachine.of(setting.get("machine"))
        capped = rate is not None and not medium.shares_budget
        if capped or emulated.emulated:
            devices = ({"target": system.block_device(target)["disk"],
                        "input": system.block_device(input_dir)["disk"]} if capped else {})
            with throttle.throttled(devices, rate if capped else None, emulated):
                pass
    except WattzipError as exc:
        raise PreflightError(f"setting {name}: {exc}") from exc
    finally:
        medium.detach()
    return {"disk": disk, "free_bytes": free, "needed_bytes": needed,
            "emulated_disk_ceiling": ceiling}


def check_input_dir(input_dir: str) -> None:
    """input_dir made, root's alone (wattzip.machine.trust); `wattzip gen` checks again."""
    try:
        trust.trusted_folder(input_dir, "input_dir")
    except WattzipError as exc:
        raise PreflightError(str(exc)) from exc


def check_inputs(input_dir: str, input_files: list[str], file_size: int,
                 copies: int = 1) -> dict:
    """What is not generated yet must fit where the inputs go, with the copies a setting
    of `copies` > 1 makes of each beside it (input_dir/copies, wattzip.measure.staging)."""
    check_input_dir(input_dir)
    missing = [p for p in input_files if not os.path.exists(p)]
    copies_dir = os.path.join(input_dir, "copies")
    held = (sum(e.stat().st_size for e in os.scandir(copies_dir) if e.is_file())
            if os.path.isdir(copies_dir) else 0)
    copy_bytes = max(0, file_size * len(input_files) * copies - held) if copies > 1 else 0
    needed, free = file_size * len(missing) + copy_bytes, shutil.disk_usage(input_dir).free
    if free < needed:
        raise PreflightError(
            f"input_dir {input_dir} has {free / 2**30:.2f} GiB free, the {len(missing)} "
            f"input file(s) to generate and their copies (copies: {copies}) need "
            f"{needed / 2**30:.2f} GiB; free space, lower `copies` or set input_dir elsewhere")
    return {"dir": input_dir, "to_generate": len(missing)}


def check_pinned(corpora: dict) -> dict:
    """Each pinned file type's source holds its declared corpus, file by file (sizes and
    sha256), before anything is measured: {file type: what was found}."""
    found = {}
    for file_type, pin in corpora.items():
        try:
            declared = inputs.declaration(file_type, pin["declared"])
            if not pin["source"]:
                raise PreflightError(f"file type {file_type}: give sources.{file_type}, the "
                                     f"folder of the unpacked corpus {declared.name}")
            found[file_type] = pinned.check(declared, pin["source"])
        except WattzipError as exc:
            raise PreflightError(f"file type {file_type}: {exc}") from exc
    return found


def run(codecs: list[str], settings: dict, file_size: int, duty_phases: int, meter: dict,
        input_dir: str, input_files: list[str], expect_node: str | None = None,
        expect_host: str | None = None, pinned_corpora: dict | None = None) -> dict:
    """Every check, in order; the report of what was found (rule preflight's output)."""
    system.check_host(expect_node, expect_host)
    # The file the emulated machine's page cache would hold (checks: the rehearsal's too).
    problems = [p for s in list(settings.values())[:1]
                for p in checks.machine_problems(s.get("machine") or {}, file_size)]
    if problems:
        raise PreflightError("; ".join(problems))
    report = {"host": system.host_identity(), "codecs": check_codecs(codecs)}
    if pinned_corpora:
        report["pinned"] = check_pinned(pinned_corpora)
    report["meter"] = check_meter(meter)
    check_input_dir(input_dir)
    report["settings"] = {name: check_setting(name, s, codecs, file_size, duty_phases,
                                              input_dir) for name, s in settings.items()}
    report["inputs"] = check_inputs(input_dir, input_files, file_size,
                                    max((s["copies"] for s in settings.values()), default=1))
    return report
