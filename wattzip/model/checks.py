"""The pre-flight checks that need no machine: what a study's design alone can refuse.

Rule preflight runs them on the testbed before anything is attached or measured,
and the rehearsal runs the same ones before it simulates a single run, so that a
design that cannot work stops before the first input is generated.
"""

from __future__ import annotations

from collections.abc import Mapping

from wattzip import meters, units
from wattzip.errors import ConfigError
from wattzip.machine.emulated import EmulatedMachine
from wattzip.machine.media import Medium
from wattzip.measure import spec as specs
from wattzip.measure.free_space import space_needed
from wattzip.model.study import Study
from wattzip.workload import codec_registry

# The meters that measure (every backend but the estimated model and none).
MEASURED_METERS = tuple(name for name, cls in meters.METERS.items() if cls.method == "measured")
# The measuring meters that see the whole machine, as the papers' did.
WHOLE_MACHINE = tuple(name for name in MEASURED_METERS
                      if meters.sees_whole_machine(meters.METERS[name].scope))


def medium_problems(name: str, spec: dict, codecs: list[str]) -> list[str]:
    """A setting's medium against the filesystem codecs it must carry."""
    out = []
    for codec in (c for c in map(codec_registry.get, codecs) if c.filesystem):
        # An input staged on the medium is staged without the codec's mount option
        # (wattzip.measure.staging.stage_on_medium), so it is read as the plain arm reads it.
        if spec.get("fs") != codec.filesystem:
            out.append(f"setting {name}: codec {codec.name} compresses in {codec.filesystem},"
                       f" but medium {spec['name']} is {spec.get('fs') or spec['kind']}; give"
                       f" it kind: image, fs: {codec.filesystem} (config factors.medium)")
    return out


def space_problems(name: str, spec: dict, needed_bytes: int) -> list[str]:
    """A medium of a given size (an image, a tmpfs) must hold what one job stores."""
    medium = Medium.from_spec(spec["name"], spec)
    if medium.kind not in ("image", "tmpfs") or not medium.size:
        return []
    size = units.parse_size(medium.size)
    if size >= needed_bytes:
        return []
    return [f"setting {name}: medium {medium.name} holds {size / 2**20:.0f} MiB, a job "
            f"stores up to {needed_bytes / 2**20:.0f} MiB (file_size, copies, duty phases); "
            "give it a larger size"]


def meter_problems(testbed: str, meter: dict) -> list[str]:
    """A study that requires measured energy must name a meter that can measure; no
    secret may stand on a meter's command line."""
    out = []
    if meter["require_measured"] and not set(meter["order"]) & set(MEASURED_METERS):
        out.append(f"testbed {testbed}: meter.require_measured is set, but meter.order "
                   f"{meter['order']} names no measuring backend (one of "
                   f"{', '.join(MEASURED_METERS)})")
    if meter.get("require_whole_machine") and not set(meter["order"]) & set(WHOLE_MACHINE):
        out.append(f"testbed {testbed}: meter.require_whole_machine is set, but meter.order "
                   f"{meter['order']} names no meter that sees the whole machine (one of "
                   f"{', '.join(WHOLE_MACHINE)}); set require_whole_machine: false to accept "
                   "a narrower one, whose energy claims are then not comparable")
    if meter.get("ipmi_command"):
        problem = meters.secret_on_command_line(meter["ipmi_command"].split())
        out += [f"testbed {testbed}: meter.ipmi_command: {problem}"] if problem else []
    return out


def machine_problems(machine: Mapping, file_size_bytes: int) -> list[str]:
    """The emulated machine's memory (config machine:) against the file size."""
    ratio = machine.get("min_file_to_memory") or 0
    memory = EmulatedMachine.of(machine).memory_bytes
    if not ratio or memory is None or file_size_bytes >= ratio * memory:
        return []
    return [f"file_size {units.format_size(file_size_bytes)} is below "
            f"{ratio:g} x the emulated machine's memory ({units.format_size(memory)}, "
            "machine.min_file_to_memory): the page cache would hold the file, and I/O could "
            "hide in it instead of reaching the disk (SYSTOR '09 wrote 2 GB files on 1 GB "
            "of RAM for this reason); give a larger file_size, less machine.memory, or "
            "machine.min_file_to_memory: 0 to accept it"]


def design_problems(study: Study, testbed: str) -> list[str]:
    """Everything the design of one testbed gets wrong, each problem in a sentence."""
    codecs = list(dict.fromkeys(
        study.codecs + [c for c in (study.duty.codecs if study.duty else ()) if c != "plain"]))
    problems = (meter_problems(testbed, study.testbeds[testbed].meter)
                + machine_problems(study.config["machine"], study.file_size_bytes))
    for name, setting in study.preflight_settings(testbed).items():
        spec = setting["medium"]
        problems += medium_problems(name, spec, codecs)
        needed = space_needed(study.file_size_bytes, setting["copies"],
                              study.duty.phases if study.duty else 1,
                              spec.get("inputs") == "on-medium")
        problems += space_problems(name, spec, needed)
    return problems + spec_problems(study, testbed)


def spec_problems(study: Study, testbed: str) -> list[str]:
    """Every spec the workflow would give a testbed's jobs and idle calibrations, checked
    as the commands check it (data/spec.schema.yaml), before anything is measured."""
    problems = []
    given = [(specs.JOB, study.job_spec(job)) for job in study.jobs(testbed)]
    given += [(specs.IDLE, study.idle_spec(testbed, s)) for s in study.settings]
    for kind, spec in given:
        try:
            specs.check(spec, kind, f"the {kind} spec of {spec.get('codec', 'idle')} in "
                                    f"setting {spec['setting']['name']}")
        except ConfigError as exc:
            problems.append(str(exc))
    return problems


def check_design(study: Study, testbed: str) -> None:
    problems = design_problems(study, testbed)
    if problems:
        # The first problem on the first line: what a console's error line shows.
        raise ConfigError("the study cannot run as designed: " + "\n  ".join(problems))
