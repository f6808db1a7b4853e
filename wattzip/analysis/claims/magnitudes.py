"""Claims of a number, not only of a direction: "about 10 times plain write's energy",
"pays back at about 2 reads per write", "power independent of the algorithm"; and the
statements a study here cannot test without the original's hardware.

Each number comes from the claim's `parameters` in claims.yaml (the paper's, quoted in
the entry's `quote`) with the tolerance the entry states: the paper's where it gives
one, else the project's reading of "about", said so in its comment. A claim holds when
its interval lies within the tolerance, is refuted when its interval lies wholly outside
it, and is not testable when the interval straddles an edge.
"""

from __future__ import annotations

import math

from wattzip.analysis.analysis_options import percent
from wattzip.analysis.claims.evidence import (
    _all_of,
    _cell_name,
    _needs,
    _unmeasured,
    factor_settings,
)
from wattzip.analysis.claims.registry import Outcome, check
from wattzip.analysis.ratio_to_off import OFF_OP, against
from wattzip.stats import mean


def _within(lo: float, hi: float, low: float, high: float) -> bool | None:
    """True when [lo, hi] lies within [low, high], False when wholly outside it."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    if low <= lo and hi <= high:
        return True
    if hi < low or lo > high:
        return False
    return None


def _above(iv) -> bool | None:
    """True when an interval of a difference lies above zero, False when below it."""
    return True if iv.lo > 0 else False if iv.hi < 0 else None


class _Parts:
    """A claim decided part by part (an interval each): every part's verdict, how it is
    shown, the undecided ones' names and what was not measured; decided as `_all_of`
    decides, and when not, said why."""

    def __init__(self):
        self.verdicts: list[bool | None] = []
        self.shown: list[str] = []
        self.undecided: list[str] = []
        self.missing: list[str] = []

    def add(self, verdict: bool | None, shown: str | None = None,
            undecided: str | None = None) -> None:
        self.verdicts.append(verdict)
        if shown is not None:
            self.shown.append(shown)
        if verdict is None and undecided is not None:
            self.undecided.append(undecided)

    def outcome(self, evidence: str, straddles="an interval straddles the tolerance's edge",
                **more) -> Outcome:
        why = "; ".join([*([straddles] if None in self.verdicts or not self.verdicts
                           else []), *([_unmeasured(self.missing)] if self.missing else [])])
        return Outcome(_all_of(self.verdicts, self.missing), evidence, why=why,
                       undecided=self.undecided, **{"rests_on": self.shown, **more})


def _band(expected: float, factor: float) -> tuple[float, float]:
    return expected / factor, expected * factor


def _ratio_band(item: dict, p: dict) -> tuple[float, float, str]:
    """The band of E_codec / E_plain a ratio item allows, and the paper's number: a share
    ("to 93 %") or a saving ("29% less"), each within_points percentage points either way,
    or a ratio ("10 times": within_factor either way). An item's `direction` ("more" or
    "less" than plain's, where the paper says so) cuts the band at 1."""
    if "share_pct" in item:  # "reduces it to 93 %"
        pct, points = item["share_pct"], p["within_points"]
        low, high, paper = (pct - points) / 100, (pct + points) / 100, f"{pct:g}% of plain's"
    elif "saving_pct" in item:
        pct, points = item["saving_pct"], p["within_points"]
        low, high, paper = 1 - (pct + points) / 100, 1 - (pct - points) / 100, \
            f"{pct:g}% saving"
    else:
        low, high = _band(item["ratio"], p["within_factor"])
        paper = f"x{item['ratio']:g}"
    direction = item.get("direction")
    return (max(low, 1.0) if direction == "more" else low,
            min(high, 1.0) if direction == "less" else high, paper)


def table_share(rows: list[dict], spec: dict) -> float:
    """An algorithm's energy as a percentage of off's in a reference table (HPC '14
    Table IV: `rows`), the rows of `spec`'s other keys alone (idle3_timer: disabled): a
    number the paper's table gives, not its text, derived where it is read."""
    where = {k: v for k, v in spec.items() if k != "algorithm"}
    energy = {r["algorithm"]: float(r["energy_wh"]) for r in rows
              if all(r[k] == v for k, v in where.items())}
    return round(100 * energy[spec["algorithm"]] / energy["off"], 1)


@check("energy_ratio_to_plain")
def energy_ratio_to_plain(claim, ev):
    """Each named (file type, codec, operation) against plain's same operation, by
    Fieller's interval of the ratio of the mean energies, within the stated factor of the
    paper's ratio."""
    p = claim.parameters
    t = _Parts()
    for item in p["ratios"]:
        if "table_share" in item:  # the table's cells, not a number of the text
            item = {**item, "share_pct": table_share(ev.reference(claim.reference[0]),
                                                     item["table_share"])}
        ftype, codec, op = item["file_type"], item["codec"], item["op"]
        plain_op = OFF_OP.get(op, "plain-read")  # a read's plain arm is the plain read
        mine = ev.values(ftype, codec, op)
        plain = ev.values(ftype, "plain", plain_op)
        if len(mine) < 2 or len(plain) < 2:
            t.missing.append(f"{codec} {op} on {ftype}")
            continue
        ratio, lo, hi = against(mine, plain, ev.comparison_level())
        low, high, paper = _ratio_band(item, p)
        name = f"{ftype} {codec} {op} / {plain_op}"
        t.add(_within(lo, hi, low, high), f"{name} = {ratio:.2f} [{lo:.2f}, {hi:.2f}] (paper "
              f"{paper}: {low:.2f} to {high:.2f})", name)
    if not t.shown:
        return _needs(claim, ", ".join(t.missing))
    return t.outcome(f"E ratio, Fieller's {percent(ev.options.confidence)}% family: "
                     + "; ".join(t.shown))


@check("breakeven_value")
def breakeven_value(claim, ev):
    """Each named cell's break-even of the paper's kind ("pays back from n on"), its range
    over the intervals' rectangle within the stated factor of the paper's n."""
    p = claim.parameters
    factor = p["within_factor"]
    t, cells = _Parts(), []
    for item in p["cells"]:
        b = ev.cell(item["file_type"], item["codec"], item["metric"])
        if b is None:
            t.missing.append(f"{item['codec']} on {item['file_type']} ({item['metric']})")
            continue
        cells.append(b)
        low, high = _band(item["n_be"], factor)
        if not b["decided"]:
            t.add(None, undecided=f"{_cell_name(b)} could be {b['possible_kinds']}")
        elif b["kind"] != "at_least":
            t.add(False)
        else:
            t.add(_within(float(b["lo"]), float(b["hi"]), low, high), undecided=(
                f"{_cell_name(b)} [{b['lo']:.2f}, {b['hi']:.2f}] straddles {low:.2f} to "
                f"{high:.2f}"))
    if not cells:
        return _needs(claim, ", ".join(t.missing))
    shown = "; ".join(f"{_cell_name(b)} {b['display']} [{b['lo']:.2f}, {b['hi']:.2f}]"
                      for b in cells)
    paper = ", ".join(f"{i['codec']} {i['file_type']} {i['metric']} {i['n_be']:g}"
                      for i in p["cells"])
    return t.outcome(f"{shown} (paper: {paper}; within x{factor:g})", cells=cells,
                     rests_on=[_cell_name(b) for b in cells])


@check("power_independent")
def power_independent(claim, ev):
    """Each codec's mean power (energy / time) in compress-write on the file type against
    plain write's, by Fieller's interval of the ratio of mean energy per second, within the
    stated share."""
    p = claim.parameters
    ftype, share = p["file_type"], p["within_share"]
    if ev.estimated():  # the model's power follows CPU utilization by construction
        return Outcome(None, why="the power of ESTIMATED energy is the utilization model's, "
                       "not a measurement: a power meter would test it")

    def power(codec, op):
        runs = ev._values.get((ev.setting, ftype, codec, op), [])
        return [r["energy_j"] / r["elapsed_s"] for r in runs
                if r.get("energy_j") is not None and r.get("elapsed_s")]

    plain = power("plain", "plain-write")
    codecs = [c for c in ev.codecs() if len(power(c, "compress-write")) >= 2]
    if len(plain) < 2 or not codecs:
        return _needs(claim, f"compressed and plain writes of {ftype}")
    t = _Parts()
    for codec in codecs:
        ratio, lo, hi = against(power(codec, "compress-write"), plain, ev.comparison_level())
        t.add(_within(lo, hi, 1 - share, 1 + share),
              f"{codec} {ratio:.2f} [{lo:.2f}, {hi:.2f}]", codec)
    return t.outcome(f"{ftype} compress-write power / plain write's: " + "; ".join(t.shown)
                     + f" (independent: within {share:.0%})")


@check("more_system_time")
def more_system_time(claim, ev):
    """The named codecs' compress-write system time against every other codec's of the
    paper's on the file type, by Welch's interval of the difference of the means: holds
    when every one is decidedly longer, refuted when one is decidedly shorter."""
    p = claim.parameters
    ftype, named = p["file_type"], p["codecs"]
    ours = [c for c in named if len(ev.values(ftype, c, "compress-write", "sys_s")) >= 2]
    others = [c for c in ev.codecs() if c not in named
              and len(ev.values(ftype, c, "compress-write", "sys_s")) >= 2]
    if not ours or not others:
        return _needs(claim, f"{', '.join(named)} and other codecs' writes of {ftype}")
    t = _Parts()
    for a in ours:
        for b in others:
            iv = ev.difference((ftype, a, "compress-write"), (ftype, b, "compress-write"),
                               "sys_s")
            t.add(_above(iv), f"{a} - {b} {iv.estimate:+.2f} s [{iv.lo:+.2f}, {iv.hi:+.2f}]",
                  f"{a} vs {b}")
    t.missing = [f"{c} on {ftype}" for c in named if c not in ours]
    return t.outcome(f"{ftype} compress-write system time: " + "; ".join(t.shown),
                     "some differences are within the intervals")


@check("more_energy_by_level")
def more_energy_by_level(claim, ev):
    """One tool's compress-write energy against another's at each level both ran, by
    Welch's interval: holds when at least `share` of the levels are decidedly dearer for
    the first tool ("usually") and refuted when more than the rest are decidedly cheaper."""
    p = claim.parameters
    ftype, dearer, cheaper, share = p["file_type"], p["dearer"], p["cheaper"], p["share"]
    levels = sorted({c.partition("-")[2] for c in ev.codecs()
                     if c.partition("-")[0] == dearer}
                    & {c.partition("-")[2] for c in ev.codecs()
                       if c.partition("-")[0] == cheaper})
    levels = [lv for lv in levels if ev.summary_row(ftype, f"{dearer}-{lv}", "compress-write")
              and ev.summary_row(ftype, f"{cheaper}-{lv}", "compress-write")]
    if not levels:
        return _needs(claim, f"{dearer} and {cheaper} at the same levels on {ftype}")
    signs, shown = [], []
    for lv in levels:
        iv = ev.difference((ftype, f"{dearer}-{lv}", "compress-write"),
                           (ftype, f"{cheaper}-{lv}", "compress-write"))
        signs.append(1 if iv.lo > 0 else -1 if iv.hi < 0 else 0)
        shown.append(f"level {lv}: {iv.estimate:+.0f} J [{iv.lo:+.0f}, {iv.hi:+.0f}]")
    n = len(signs)
    ok = (True if signs.count(1) >= share * n else
          False if signs.count(-1) > (1 - share) * n else None)
    return Outcome(ok, f"{ftype} compress-write energy, {dearer} - {cheaper}: "
                   + "; ".join(shown), why="too many levels within the intervals",
                   undecided=[s for s, g in zip(shown, signs, strict=True) if g == 0],
                   rests_on=shown)


@check("no_ratio_gain")
def no_ratio_gain(claim, ev):
    """The higher levels' compression ratios against the lowest's on the file type: holds
    when each measured one is within `within_share` of it, refuted when one is beyond (the
    files are fixed: a ratio has no interval)."""
    p = claim.parameters
    ftype, base, share = p["file_type"], p["lowest"], p["within_share"]
    low = ev.summary_row(ftype, base, "compress-write")
    higher = [(c, r) for c in p["higher"] if (r := ev.summary_row(ftype, c, "compress-write"))]
    if low is None or not higher:
        return _needs(claim, f"{base} and a higher level on {ftype}")
    cr0 = float(low["compression_ratio"])
    parts = [float(r["compression_ratio"]) <= cr0 * (1 + share) for _, r in higher]
    missing = [c for c in p["higher"] if c not in dict(higher)]
    shown = "; ".join(f"{c} {float(r['compression_ratio']):.3f}" for c, r in higher)
    return Outcome(all(parts),
                   f"{ftype} ratio: {base} {cr0:.3f}; {shown} (no gain: within {share:.0%})"
                   + (f"; not in this study: {', '.join(missing)}" if missing else ""),
                   rests_on=[base, *dict(higher)])


@check("levels_flat_then_rising")
def levels_flat_then_rising(claim, ev):
    """One tool's compress-write energy across levels: each `flat` level within
    `within_share` of the first's (Fieller's interval of the ratio of the means), and each
    `rising` level decidedly above the one before it (Welch's interval)."""
    p = claim.parameters
    tool, ftype, share = p["tool"], p["file_type"], p["within_share"]
    flat, rising = p["flat"], p.get("rising", [])

    def energies(level):
        return ev.values(ftype, f"{tool}-{level}", "compress-write")

    t = _Parts()
    first = energies(flat[0])
    for level in flat[1:]:
        ratio, lo, hi = against(energies(level), first, ev.comparison_level())
        t.add(_within(lo, hi, 1 - share, 1 + share), f"{tool}-{level} / {tool}-{flat[0]} "
              f"{ratio:.3f} [{lo:.3f}, {hi:.3f}]", f"{tool}-{level}")
    before = flat[-1]
    for level in rising:
        iv = ev.difference((ftype, f"{tool}-{level}", "compress-write"),
                           (ftype, f"{tool}-{before}", "compress-write"))
        t.add(_above(iv), f"{tool}-{level} - {tool}-{before} {iv.estimate:+.0f} J "
              f"[{iv.lo:+.0f}, {iv.hi:+.0f}]", f"{tool}-{level}")
        before = level
    return t.outcome(f"{ftype} compress-write energy: " + "; ".join(t.shown)
                     + f" (flat: within {share:.0%})", "an interval straddles the edge")


@check("extreme_ratio_to_plain")
def extreme_ratio_to_plain(claim, ev):
    """The slides' best and worst cases: over the paper's tools on the named file types
    and operations, per metric (energy, time), the most saving (`extreme: best`) or the
    costliest (`worst`) ratio to plain's same operation, its Fieller interval against the
    paper's band (a saving of saving_pct[0] to saving_pct[1] %, or ratio_at_least times
    plain's and more)."""
    p = claim.parameters
    best = p["extreme"] == "best"
    if best:
        low, high = 1 - p["saving_pct"][1] / 100, 1 - p["saving_pct"][0] / 100
    else:
        low, high = p["ratio_at_least"], math.inf
    t = _Parts()
    for metric in p["metrics"]:
        ratios = {}
        for ftype in p["file_types"]:
            for codec in ev.codecs():
                for op in p["ops"]:
                    mine = ev.values(ftype, codec, op, metric)
                    plain = ev.values(ftype, "plain", OFF_OP.get(op, "plain-read"), metric)
                    if len(mine) >= 2 and len(plain) >= 2 and mean(plain):
                        ratios[(ftype, codec, op)] = (mine, plain)
        if not ratios:
            continue
        pick = (min if best else max)(ratios, key=lambda k: mean(ratios[k][0])
                                      / mean(ratios[k][1]))
        ratio, lo, hi = against(*ratios[pick], ev.comparison_level())
        name = f"{metric} {' '.join(pick)}"
        t.add(_within(lo, hi, low, high),
              f"{p['extreme']} {name} / plain's = {ratio:.2f} [{lo:.2f}, {hi:.2f}]", name)
    if not t.shown:
        return _needs(claim, f"the paper's tools and plain on {', '.join(p['file_types'])}")
    band = f"{low:.2f} to {high:.2f}" if best else f"{low:g} or more"
    return t.outcome("; ".join(t.shown) + f" (the slides: {band}, Fieller's "
                     f"{percent(ev.options.confidence)}% family)",
                     "an interval straddles the band's edge")


@check("factor_energy_savings")
def factor_energy_savings(claim, ev):
    """Each pair of a factor's settings (`pairs`: the faster, the slower and the paper's
    range of savings) on every compress-write cell measured in both: the faster's energy
    against the slower's, Fieller's interval within the range widened by within_points."""
    p = claim.parameters
    by = factor_settings(ev, p["factor"])
    t = _Parts()
    for pair in p["pairs"]:
        fast, slow = by.get(pair["faster"]), by.get(pair["slower"])
        cells = [] if fast is None or slow is None else [
            (r["file_type"], r["codec"]) for r in ev.in_setting(ev.summary, fast)
            if r["op"] == "compress-write" and r["n"]
            and ev.summary_row(r["file_type"], r["codec"], "compress-write", slow)]
        if not cells:
            t.missing.append(f"{pair['faster']} and {pair['slower']} on the same cells")
            continue
        least, most = pair["saving_pct"]
        low = 1 - (most + p["within_points"]) / 100
        high = 1 - (least - p["within_points"]) / 100
        for ftype, codec in cells:
            ratio, lo, hi = against(
                ev.values(ftype, codec, "compress-write", setting=fast),
                ev.values(ftype, codec, "compress-write", setting=slow),
                ev.comparison_level())
            name = f"{pair['faster']}/{pair['slower']} {ftype} {codec}"
            t.add(_within(lo, hi, low, high), f"{name} {ratio:.3f} [{lo:.3f}, {hi:.3f}] "
                  f"(paper {least:g}-{most:g}% less: {low:.2f} to {high:.2f})", name)
    if not t.shown:
        return _needs(claim, "; ".join(t.missing))
    return t.outcome("compress-write energy ratio: " + "; ".join(t.shown),
                     "an interval straddles the range's edge")


@check("cpu_share")
def cpu_share(claim, ev):
    """One codec's machine CPU utilization while writing against another's on the same
    file, Fieller's interval of the ratio of the means within within_points of the
    paper's share (HPC '14 Table II: lz4's CPU "around 68 %" of gzip-1's)."""
    p = claim.parameters
    t = _Parts()
    for item in p["shares"]:
        ftype, codec, of = item["file_type"], item["codec"], item["of"]
        mine = ev.values(ftype, codec, "compress-write", "machine_cpu_utilization")
        other = ev.values(ftype, of, "compress-write", "machine_cpu_utilization")
        if len(mine) < 2 or len(other) < 2:
            t.missing.append(f"{codec} and {of} on {ftype}")
            continue
        ratio, lo, hi = against(mine, other, ev.comparison_level())
        pct, points = item["share_pct"], p["within_points"]
        name = f"{ftype} {codec} / {of}"
        t.add(_within(lo, hi, (pct - points) / 100, (pct + points) / 100),
              f"{name} {ratio:.2f} [{lo:.2f}, {hi:.2f}] (paper {pct:g}%)", name)
    if not t.shown:
        return _needs(claim, ", ".join(t.missing))
    return t.outcome("machine CPU utilization while writing: " + "; ".join(t.shown)
                     + f" (within {p['within_points']:g} points)")


@check("needs_hardware")
def needs_hardware(claim, ev):
    """A statement that needs the original's hardware: not testable without it."""
    return Outcome(None, why=f"without {claim.parameters['needs_hardware']}")
