"""A fake sysfs with CPU temperature sensors, cpufreq and throttle counters."""

from __future__ import annotations

from .sysfs import publish


class FakeThermal:
    """/sys/class/hwmon (a coretemp with two packages, or a k10temp), or a thermal zone,
    each CPU's scaling_cur_freq and thermal_throttle counters; values set as a test goes."""

    def __init__(self, root, kind: str = "coretemp", cpus: int = 2):
        self.root, self.cpus = root, cpus
        self.cpu = root / "devices" / "system" / "cpu"
        if kind == "coretemp":
            self.hwmon = root / "class" / "hwmon" / "hwmon3"
            self.hwmon.mkdir(parents=True)
            (self.hwmon / "name").write_text("coretemp\n")
            for i, label in ((1, "Package id 0"), (2, "Core 0"), (3, "Package id 1")):
                (self.hwmon / f"temp{i}_label").write_text(label + "\n")
            self.inputs = [self.hwmon / "temp1_input", self.hwmon / "temp3_input"]
            publish(self.hwmon / "temp2_input", "99000\n")  # a core, hotter: not the package
        elif kind == "k10temp":
            self.hwmon = root / "class" / "hwmon" / "hwmon0"
            self.hwmon.mkdir(parents=True)
            (self.hwmon / "name").write_text("k10temp\n")
            (self.hwmon / "temp1_label").write_text("Tctl\n")
            self.inputs = [self.hwmon / "temp1_input"]
        else:  # a thermal zone only
            zone = root / "class" / "thermal" / "thermal_zone0"
            zone.mkdir(parents=True)
            (zone / "type").write_text("x86_pkg_temp\n")
            self.inputs = [zone / "temp"]
        self.set_temp(40.0)
        for n in range(cpus):
            (self.cpu / f"cpu{n}" / "cpufreq").mkdir(parents=True)
            (self.cpu / f"cpu{n}" / "thermal_throttle").mkdir()
            (self.cpu / f"cpu{n}" / "topology").mkdir()
            (self.cpu / f"cpu{n}" / "topology" / "physical_package_id").write_text("0\n")
        self.set_freq_khz(2_000_000)
        self.throttled = 0
        self.throttle(0)

    def set_temp(self, celsius: float) -> None:
        for i, path in enumerate(self.inputs):  # the second package 5 °C cooler
            publish(path, f"{int((celsius - 5 * i) * 1000)}\n")

    def set_freq_khz(self, khz: int) -> None:
        for n in range(self.cpus):
            publish(self.cpu / f"cpu{n}" / "cpufreq" / "scaling_cur_freq", f"{khz}\n")

    def throttle(self, events: int) -> None:
        """`events` more package throttle events (seen by every CPU of the package) and
        one core event on cpu0 each."""
        self.throttled += events
        for n in range(self.cpus):
            d = self.cpu / f"cpu{n}" / "thermal_throttle"
            publish(d / "package_throttle_count", f"{self.throttled}\n")
            publish(d / "core_throttle_count", f"{self.throttled if n == 0 else 0}\n")
