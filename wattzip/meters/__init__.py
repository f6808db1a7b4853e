"""Energy meters behind one interface: start(), stop() -> Reading.

One module per backend (powercap RAPL, perf, IPMI DCMI, WattsUp, a power
trace file, the estimated utilization model, and none for time only), chosen
by name from METERS in a configured order. A module of this package that defines a
Meter naming itself is a backend: nothing here lists them.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, make_dataclass

from wattzip.errors import ConfigError, MeterError
from wattzip.meters.base import (
    REGISTERED,
    CounterMeter,
    Meter,
    PowerSampleMeter,
    Reading,
    SharedOptions,
    integrate_averages,
    integrate_power,
    not_comparable,
    sees_whole_machine,
)
from wattzip.meters.ipmi import IpmiMeter, parse_ipmi_dcmi, secret_on_command_line
from wattzip.meters.model import ModelMeter, read_cpu_times
from wattzip.meters.none import NoMeter
from wattzip.meters.perf import PerfMeter, parse_perf_stat
from wattzip.meters.powercap import PowercapMeter, RaplZone, discover_rapl_zones
from wattzip.meters.trace import TraceMeter, read_power_trace
from wattzip.meters.wattsup import WattsUpMeter
from wattzip.resources import load_schema

__all__ = [
    "METERS", "CounterMeter", "IdleResult", "IpmiMeter", "Meter", "MeterOptions", "ModelMeter",
    "NoMeter", "PerfMeter", "PowerSampleMeter", "PowercapMeter", "RaplZone", "Reading",
    "TraceMeter", "WattsUpMeter", "discover_rapl_zones", "integrate_averages",
    "integrate_power", "measure_idle", "open_meter", "parse_ipmi_dcmi", "parse_perf_stat",
    "check_names", "probe_all", "read_cpu_times", "read_power_trace", "options_of",
    "secret_on_command_line", "not_comparable", "sees_whole_machine",
]

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
# Every backend, in the config schema's order (meter.order's names), then the others.
_ORDER = load_schema()["properties"]["meter"]["properties"]["order"]["items"]["enum"]
METERS: dict[str, type[Meter]] = {
    name: REGISTERED[name] for name in [*_ORDER, *sorted(set(REGISTERED) - set(_ORDER))]}
# Everything a backend may read: the shared options and each backend's own (its OPTIONS).
MeterOptions = make_dataclass(
    "MeterOptions", [(name, object, field(default=default)) for cls in METERS.values()
                     for name, default in cls.OPTIONS.items()], bases=(SharedOptions,))
MeterOptions.__module__ = __name__


def probe_all(options: MeterOptions) -> dict[str, str | None]:
    return {name: cls.probe(options) for name, cls in METERS.items()}


# Where the requirement of a measured meter came from, and how to lift it, in the words of
# whoever set it: a study's config or a command's flag.
REQUIREMENT_HINTS = {
    "config": ("this study requires a measured meter (meter.require_measured: true): run it on "
               "a machine with RAPL, IPMI or an external meter, or set require_measured: false "
               "to accept estimated energy"),
    "flag": ("--require-measured asks for a measured meter: run it on a machine with RAPL, IPMI "
             "or an external meter, or leave out --require-measured to accept estimated energy"),
}


def _config_options() -> dict[str, str]:
    """The config's `meter:` keys that set a backend's option (a job's spec carries them
    as they are), each with the option it sets: its own name, a section's key joined to
    it ("model.idle_power_w": model_idle_power_w). Order and requirements are
    open_meter's."""
    keys = load_schema()["properties"]["meter"]["properties"]
    out = {}
    for key, declared in keys.items():
        if key in ("order", "require_measured", "require_whole_machine"):
            continue
        inner = declared.get("properties")
        out |= ({f"{key}.{name}": f"{key}_{name}" for name in inner} if inner else {key: key})
    options = {f.name for f in dataclasses.fields(MeterOptions)}
    if unknown := [key for key, option in out.items() if option not in options]:
        raise ConfigError(f"meter: {unknown} set no backend's option (a Meter's OPTIONS)")
    return out


CONFIG_OPTIONS = _config_options()


def config_value(meter: Mapping, key: str):
    """A `meter:` key's value ("model.idle_power_w" inside `model:`), None when absent."""
    section, _, name = key.rpartition(".")
    return ((meter.get(section) or {}) if section else meter).get(name)


def options_of(meter: Mapping) -> MeterOptions:
    """A testbed's `meter:` config as the backends' options: a key absent or null keeps
    the option's default."""
    given = {option: config_value(meter, key) for key, option in CONFIG_OPTIONS.items()}
    given = {option: value for option, value in given.items() if value is not None}
    if "ipmi_command" in given:
        given["ipmi_command"] = tuple(given["ipmi_command"].split())
        if problem := secret_on_command_line(given["ipmi_command"]):
            raise ConfigError(problem)
    return MeterOptions(**given)


def check_names(order: list[str]) -> None:
    """Every name of a meter order is a meter's: a misspelling is an error, not skipped."""
    unknown = [name for name in order if name not in METERS]
    if unknown:
        raise MeterError(f"unknown meter {unknown[0]!r}; valid: {', '.join(METERS)}")


def open_meter(meter: Mapping, required_by: str = "config",
               log: Callable[[str], None] | None = None) -> Meter:
    """The meter a `meter:` config (a testbed's, a spec's, or a command's flags as one)
    opens: the first usable of its order, `log` told when its energy is not measured; a
    clear error naming every reason otherwise."""
    order, options = list(meter["order"]), options_of(meter)
    require_whole_machine = bool(meter.get("require_whole_machine"))
    check_names(order)
    reasons = []
    for name in order:
        cls = METERS[name]
        if meter.get("require_measured") and cls.method != "measured":
            reasons.append(f"{name}: gives {cls.method} energy, not measured")
            continue
        if require_whole_machine and not sees_whole_machine(cls.scope):
            reasons.append(f"{name}: sees {cls.scope}, not the whole machine")
            continue
        reason = cls.probe(options)
        if reason is None:
            opened = cls(options)
            if log and opened.method == "estimated":
                log(f"note: energy comes from the {name} meter and is ESTIMATED, not measured")
            if log and opened.method == "none":
                log("note: no energy meter is used, so this measures time only (energy is "
                    "empty)")
            return opened
        reasons.append(reason)
    if require_whole_machine:
        hint = ("; this study requires a meter that sees the whole machine, as the papers' "
                "did (meter.require_whole_machine: true): a WattsUp, IPMI's system power or "
                "a wall logger (trace); set require_whole_machine: false to accept a narrower "
                "one, whose energy claims are then not comparable with the papers'")
    elif meter.get("require_measured"):
        hint = "; " + REQUIREMENT_HINTS[required_by]
    else:
        hint = "; for time only, without energy, use --meter none"
    raise MeterError("no usable energy meter: " + "; ".join(reasons) + hint)


@dataclass
class IdleResult:
    """Average idle power over count windows of seconds each (paper 5.1)."""

    windows_w: list[float] = field(default_factory=list)
    source: str = ""
    scope: str = ""
    method: str = ""
    seconds: float = 0.0

    @property
    def mean_w(self) -> float:
        return sum(self.windows_w) / len(self.windows_w)

    @property
    def sd_w(self) -> float:
        n = len(self.windows_w)
        if n < 2:
            return 0.0
        m = self.mean_w
        return (sum((w - m) ** 2 for w in self.windows_w) / (n - 1)) ** 0.5


def measure_idle(meter: Meter, count: int, seconds: float, progress=None) -> IdleResult:
    if meter.method == "none":
        raise MeterError("idle power needs an energy meter; --meter none measures time only")
    result = IdleResult(source=meter.name, scope=meter.scope, method=meter.method,
                        seconds=seconds)
    for i in range(count):
        meter.start()
        time.sleep(seconds)
        reading = meter.stop()
        result.windows_w.append(reading.mean_power_w)
        if progress:
            progress(f"idle window {i + 1}/{count}: {reading.mean_power_w:.2f} W")
    return result


def check_same_meter(idle: dict, meter: Meter, idle_path: str) -> None:
    """Idle power and runs must come from one meter (its kind, scope and device), or passive
    energy is meaningless."""
    have = (idle.get("meter_source"), idle.get("meter_scope"))
    want = (meter.name, meter.scope)
    if have != want:
        raise MeterError(
            f"the idle calibration {idle_path} was measured with the {have[0]} meter "
            f"(scope {have[1]}), but this job measures with the {want[0]} meter (scope "
            f"{want[1]}); idle power from another meter cannot be subtracted from its energy. "
            f"Delete {idle_path} so the calibration runs again with this meter"
        )
    measured_by = (idle.get("meter_identity") or {}).get("device")
    if measured_by is not None and measured_by != meter.device():
        raise MeterError(
            f"the idle calibration {idle_path} was measured by the {meter.name} meter "
            f"{measured_by}, but this job's is {meter.device()}: another device's idle "
            f"power cannot be subtracted from its energy. Delete {idle_path} so the "
            "calibration runs again with this meter")
