"""RAPL through the kernel's powercap interface (/sys/class/powercap)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from wattzip.errors import MeterError
from wattzip.meters.base import CounterMeter

# Packages are "package-N", or "package-N-die-M" on multi-die parts, whose
# dies are separate top-level zones that together make the package.
PACKAGE_ZONE = re.compile(r"package-\d+(-die-\d+)?")


@dataclass
class RaplZone:
    path: Path
    name: str
    max_range_uj: int
    last_uj: int = 0
    total_uj: int = 0

    def read_uj(self) -> int:
        return int((self.path / "energy_uj").read_text())

    def advance(self) -> None:
        """Add the energy since the last read, undoing at most one wrap."""
        now = self.read_uj()
        delta = now - self.last_uj
        if delta < 0:
            delta += self.max_range_uj
        self.total_uj += delta
        self.last_uj = now


def _zone_dirs(base: Path) -> list[Path]:
    """Every zone folder, top level and nested, each zone id once.

    sysfs lists a subzone both nested (intel-rapl:0/intel-rapl:0:0) and at the
    top level (intel-rapl:0:0); its id, the folder's name, is unique, so a
    zone reachable both ways is counted once whether the two are links or not.
    """
    found: dict[str, Path] = {}
    for entry in sorted(base.iterdir()):
        for zone_dir in [entry, *sorted(p for p in entry.glob("*:*") if p.is_dir())]:
            if zone_dir.name.startswith("intel-rapl-mmio"):
                continue  # the MMIO interface repeats the MSR package zones
            if (zone_dir / "name").is_file():
                found.setdefault(zone_dir.name, zone_dir)
    return [found[k] for k in sorted(found)]


def discover_rapl_zones(root: str, psys: bool = False) -> tuple[list[RaplZone], str]:
    """Zones to sum, found by their name file, and the scope they cover.

    Packages (and their dies) and dram zones are summed; core/uncore subzones
    are part of their package and never added; psys (the whole platform) is
    used alone when asked for.
    """
    base = Path(root)
    if base.exists() and not base.is_dir():
        raise MeterError(f"powercap: {root} is not a folder; --powercap-root takes the "
                         "powercap tree's folder (e.g. /sys/class/powercap)")
    if not base.is_dir():
        raise MeterError(f"powercap: {root} does not exist (no RAPL here: a VM, a container, "
                         "or a CPU without RAPL); pass --powercap-root DIR if it lives elsewhere")
    zones: list[RaplZone] = []
    for zone_dir in _zone_dirs(base):
        name = (zone_dir / "name").read_text().strip()
        wanted = (name == "psys") if psys else bool(PACKAGE_ZONE.fullmatch(name)
                                                    or name == "dram")
        if not wanted:
            continue
        energy_file = zone_dir / "energy_uj"
        try:
            energy_file.read_text()
        except PermissionError:
            raise MeterError(
                f"powercap: {energy_file} is not readable; since Linux 5.10 energy_uj is "
                "readable by root only: run as root, or grant read access (chmod o+r)"
            ) from None
        except OSError as exc:
            raise MeterError(f"powercap: cannot read {energy_file}: {exc}") from None
        max_range = int((zone_dir / "max_energy_range_uj").read_text())
        zones.append(RaplZone(zone_dir, name, max_range))
    if not zones:
        wanted = "a psys zone" if psys else "package-N zones"
        raise MeterError(f"powercap: no {wanted} under {root}")
    names = {z.name for z in zones}
    scope = "platform" if psys else ("package+dram" if "dram" in names else "package")
    return zones, scope


class PowercapMeter(CounterMeter):
    name = "powercap"
    scope = "package+dram"
    OPTIONS = {"powercap_root": "/sys/class/powercap", "psys": False}
    # A wrap is undone only if no two happen between reads; this many reads
    # per shortest wrap period leaves a wide margin.
    assumed_max_power_w = 1000.0

    def __init__(self, options):
        super().__init__(options)
        self.zones, self.scope = discover_rapl_zones(options.powercap_root, options.psys)

    @classmethod
    def probe(cls, options):
        try:
            discover_rapl_zones(options.powercap_root, options.psys)
        except MeterError as exc:
            return str(exc)
        return None

    def _poll_interval_s(self) -> float:
        shortest_wrap_s = min(z.max_range_uj for z in self.zones) / 1e6 / self.assumed_max_power_w
        return min(self.options.interval_s, shortest_wrap_s / 4)

    def _reset(self, now: float) -> None:
        for zone in self.zones:
            zone.last_uj = zone.read_uj()
            zone.total_uj = 0

    def _read_energy_j(self, now: float) -> float:
        for zone in self.zones:
            zone.advance()
        return sum(z.total_uj for z in self.zones) / 1e6
