"""What the terminal shows after a benchmark: hyperfine's result block per command with
the energy beside the time, then every command against the reference."""

from __future__ import annotations

from wattzip.bench.summary import ratio_text
from wattzip.meters import Meter


def seconds(x: float | None) -> str:
    """A duration in the unit that suits it (hyperfine's s / ms / µs)."""
    if x is None:
        return "-"
    if abs(x) >= 1:
        return f"{x:.3f} s"
    if abs(x) >= 1e-3:
        return f"{x * 1e3:.1f} ms"
    return f"{x * 1e6:.1f} µs"


def joules(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g} J"


def meter_line(meter: Meter, idle_power_w: float | None, idle_how: str) -> str:
    """The meter's method stated, ESTIMATED where it is estimated."""
    if meter.method == "none":
        return "Meter: none (time only, no energy)"
    method = "ESTIMATED (no meter reads this machine's power)" \
        if meter.method == "estimated" else "measured"
    idle = ("no idle power (give --idle-power-w W or --idle-windows N for the active / "
            "passive split)" if idle_power_w is None else f"idle {idle_power_w:.2f} W "
                                                          f"({idle_how})")
    return f"Meter: {meter.name} ({meter.scope}), {method}; {idle}"


def result_block(number: int, result: dict, method: str,
                 idle_power_w: float | None = None) -> list[str]:
    lines = [f"Benchmark {number}: {result['command']}"]
    sd = f" ± {seconds(result['stddev'])}" if result["stddev"] is not None else ""
    lines.append(f"  Time (mean ± σ):      {seconds(result['mean'])}{sd}    "
                 f"[User: {seconds(result['user'])}, System: {seconds(result['system'])}]")
    lines.append(f"  Range (min … max):    {seconds(result['min'])} … "
                 f"{seconds(result['max'])}    {len(result['times'])} runs")
    if result["energy_mean_j"] is not None:
        label = "ESTIMATED " if method == "estimated" else ""
        half = result["energy_half_width_j"]
        hw = f" ± {joules(half)}" if half is not None else ""
        split = ("" if result["energy_active_mean_j"] is None else
                 f"    [active {joules(result['energy_active_mean_j'])}, passive "
                 f"{joules(result['energy_passive_mean_j'])}]")
        level = f"{100 * result['energy_confidence']:.4g}%"
        lines.append(f"  Energy (mean ± {level}): {label}"
                     f"{joules(result['energy_mean_j'])}{hw}{split}")
        lines.append(f"  Mean power:           {label}{result['mean_power_w']:.2f} W")
        if (result["energy_active_mean_j"] or 0) < 0 and idle_power_w is not None:
            lines.append(f"  Note: the active energy is negative: the mean power "
                         f"({result['mean_power_w']:.2f} W) is below the idle power "
                         f"({idle_power_w:.2f} W). The "
                         "idle power is too high for this command, or it differs from idle "
                         "by less than the idle power's own spread")
    if result["outlier_runs"]:
        runs = ", ".join(str(r) for r in result["outlier_runs"])
        lines.append(f"  Warning: outlier run(s) {runs}: flagged and kept in every number "
                     "above (each cost one more run, unless at the last look or --max-runs)")
    earlier = [r for r in result.get("flagged_runs", ()) if r not in result["outlier_runs"]]
    if earlier:
        lines.append(f"  Note: run(s) {', '.join(map(str, earlier))} looked like outliers "
                     "among the runs before them (each cost one more run, or a look); "
                     f"among all {len(result['times'])} they are not")
    failed = sum(code != 0 for code in result["exit_codes"])
    if failed:
        lines.append(f"  Warning: {failed} run(s) exited non-zero (--ignore-failure)")
    return lines


def comparison_lines(rows: list[dict], method: str) -> list[str]:
    if not rows:
        return []
    conf = rows[0]["confidence"]
    lines = [f"Against {rows[0]['reference']!r} (ratios of means with Fieller's "
             f"{100 * conf:.4g}% interval; verdicts within ±{rows[0]['margin']:.0%}):"]
    for row in rows:
        lines.append(f"  {row['command']}")
        lines.append(f"    time   × {ratio_text(row['time']) if row['time'] else '-'}: "
                     f"{row['time']['verdict_text'] if row['time'] else '-'}")
        if row["energy"]:
            label = " ESTIMATED" if method == "estimated" else ""
            lines.append(f"    energy × {ratio_text(row['energy'])}: "
                         f"{row['energy']['verdict_text']}{label}")
    return lines


def render(results: list[dict], rows: list[dict], meter: Meter, idle_power_w: float | None,
           idle_how: str, stopped: str) -> str:
    lines = [meter_line(meter, idle_power_w, idle_how), ""]
    for number, result in enumerate(results, 1):
        lines += [*result_block(number, result, meter.method, idle_power_w), ""]
    lines += comparison_lines(rows, meter.method)
    lines.append(f"Stopped: {stopped}.")
    return "\n".join(lines)
