"""SYSTOR '09's claims: break-even kinds (Table 4), ratios (Table 3), energy against time,
and break-even in time against the disk's speed (the talk's laptop slides).
"""

from __future__ import annotations

import math

from wattzip.analysis.analysis_options import percent
from wattzip.analysis.breakeven import parse_display
from wattzip.analysis.claims.evidence import (
    Evidence,
    _all_of,
    _cell_name,
    _fmt,
    _needs,
    _sign,
    _unmeasured,
    factor_settings,
)
from wattzip.analysis.claims.registry import Claim, Outcome, check
from wattzip.analysis.ratio_to_off import against
from wattzip.stats import fisher_r_interval, mean

# --- break-even claims (SYSTOR '09 Table 4) -------------------------------------------


def declared_cells(claim: Claim, ev: Evidence) -> tuple[list[dict], list[str]]:
    """The break-even cells a claim declares in `cells` (its codecs, or every codec measured,
    on its file types) that were measured, and those it names by codec that were not. The
    jobs' looks read the same declaration (registry.kinds_read)."""
    p = claim.parameters["cells"]
    found, missing = [], []
    for f in p["file_types"]:
        for c in p.get("codecs") or ev.codecs():
            if b := ev.cell(f, c, p["metric"]):
                found.append(b)
            elif p.get("codecs"):
                missing.append(f"{c} on {f}")
    return found, missing


def _cells_in_scope(claim: Claim, ev: Evidence) -> tuple[list[tuple[dict, str]], list[str]]:
    """(our cell, the kind it should have), from the reference table or `expected`, and
    the cells the claim names (its codecs on its file types) that were not measured; a
    claim that names no codec ("no tool") is about the codecs measured on its file types."""
    found, missing = declared_cells(claim, ev)
    if "expected" in claim.parameters:
        return [(b, claim.parameters["expected"]) for b in found], missing
    p = claim.parameters["cells"]
    kinds = {(row["file_type"], row["codec"]): parse_display(row["display"]).kind
             for row in ev.reference(claim.reference[0]) if row["metric"] == p["metric"]}
    return [(b, kinds[key]) for b in found
            if (key := (b["file_type"], b["codec"])) in kinds], missing


@check("same_kind")
def same_kind(claim: Claim, ev: Evidence) -> Outcome:
    pairs, missing = _cells_in_scope(claim, ev)
    if not pairs:
        p = claim.parameters["cells"]
        return _needs(claim, f"{', '.join(p.get('codecs') or ['codecs'])} on "
                      f"{', '.join(p['file_types'])}")
    wrong = [b for b, kind in pairs if b["decided"] and b["kind"] != kind]
    open_ = [b for b, kind in pairs if not b["decided"]]
    cells = [b for b, _ in pairs]
    out = Outcome(None, f"{cells[0]['metric']} break-even: {_fmt(cells)}",
                  rests_on=[_cell_name(b) for b in cells], cells=cells,
                  undecided=[f"{_cell_name(b)} could be {b['possible_kinds']}" for b in open_])
    if wrong:
        out.ok = False
    elif missing:
        out.why = _unmeasured(missing)
    elif open_:
        out.why = "the confidence intervals cannot decide " + ", ".join(
            _cell_name(b) for b in open_)
    else:
        out.ok = True
    return out


@check("zero_saves")
def zero_saves(claim, ev):
    cells, _ = declared_cells(claim, ev)
    if len(cells) < claim.parameters["min_codecs"]:
        return _needs(claim, f"{claim.parameters['min_codecs']} or more codecs on zero files")
    n_max, share = claim.parameters["n_max"], claim.parameters["share"]

    def saves(kind, n):
        return kind == "always" or (kind == "at_least" and n <= n_max)

    yes = [b for b in cells if b["decided"] and saves(b["kind"], b["hi"] if
                                                      b["kind"] == "at_least" else 0)]
    no = [b for b in cells if b["decided"] and not saves(b["kind"], b["lo"] if
                                                         b["kind"] == "at_least" else 0)]
    need = share * len(cells)
    ok = True if len(yes) >= need else False if len(cells) - len(no) < need else None
    return Outcome(ok, f"{len(yes)} of {len(cells)} codecs surely save energy by n={n_max} "
                       f"(E break-even: {_fmt(cells)})",
                   why="too many cells undecided to tell", rests_on=[_cell_name(b) for b in cells],
                   cells=cells,
                   undecided=[_cell_name(b) for b in cells if b not in yes and b not in no])


@check("text_breakeven_high")
def text_breakeven_high(claim, ev):
    cells, missing = declared_cells(claim, ev)
    if not cells:
        return _needs(claim, "text with gzip or lzo-9")
    limit = claim.parameters["common_ratio_max"]
    # Table 4 gives these cells finite break-evens (the compression pays back, late): a
    # cell that never pays back is another kind, which refutes the paper's statement
    # rather than confirming it.
    above = [b for b in cells if b["decided"] and b["kind"] == "at_least" and b["lo"] > limit]
    below = [b for b in cells if b["decided"] and (b["kind"] in ("always", "at_most") or (
        b["kind"] == "at_least" and b["hi"] <= limit))]
    never = [b for b in cells if b["decided"] and b["kind"] == "never"]
    ok = (False if below or never else True if len(above) == len(cells) and not missing
          else None)
    why = (_unmeasured(missing) if missing and not below
           else f"the intervals straddle the common ratios (up to {limit:g})")
    evidence = f"E break-even: {_fmt(cells)}" + (
        f"; never pays back, where Table 4 gives a finite break-even: "
        f"{', '.join(_cell_name(b) for b in never)}" if never else "")
    return Outcome(ok, evidence, why=why,
                   rests_on=[_cell_name(b) for b in cells], cells=cells,
                   undecided=[_cell_name(b) for b in cells if b not in above + below + never])


# --- break-even against the disk's bandwidth (the talk's slides 36-37) -------------------


def _disk(bytes_per_s: str) -> str:
    return f"{float(bytes_per_s) / 1e6:g} MB/s"


@check("slow_disk_text_time")
def slow_disk_text_time(claim, ev):
    """Decided at the study's slowest emulated disk, every other factor the primary's: holds
    when each cell there is decided `expected`, refuted when one is decided otherwise."""
    p, expected = claim.parameters["cells"], claim.parameters["expected"]
    by_rate = factor_settings(ev, "bandwidth_bytes_per_s")
    if not by_rate:
        return _needs(claim, "a bandwidth factor with a capped disk")
    slowest = min(by_rate, key=float)
    setting, disk = by_rate[slowest], _disk(slowest)
    if float(slowest) > claim.parameters["slow_enough_bytes_per_s"]:
        # A fast disk that does not pay says nothing of a slow enough one.
        return _needs(claim, f"a disk of at most "
                             f"{_disk(claim.parameters['slow_enough_bytes_per_s'])} (the "
                             f"slowest here is {disk})")
    wanted = [(f, c) for f in p["file_types"] for c in p["codecs"]]
    cells = {key: ev.cell(*key, p["metric"], setting) for key in wanted}
    if not all(cells.values()):
        return _needs(claim, ", ".join(f"{c} on {f}" for (f, c), b in cells.items() if not b)
                      + f" at {disk}")
    cells = list(cells.values())
    original = {(r["file_type"], r["codec"]): r["display"]
                for r in ev.reference(claim.reference[0]) if r["metric"] == p["metric"]}
    # The signs say what "on write and read alike" asks: dw <= 0 (the write is no slower)
    # and dr >= 0 (the read is no slower).
    ours = "; ".join(f"{b['file_type']} {b['codec']} {b['display']} (dw {float(b['dw']):+.3g} "
                     f"s, dr {float(b['dr']):+.3g} s)" for b in cells)
    theirs = ", ".join(f"{b['codec']} {original.get((b['file_type'], b['codec']), '?')}"
                       for b in cells)
    evidence = (f"{p['metric']} break-even at {disk}, the slowest emulated disk: {ours} "
                f"(original: {theirs})")
    wrong = [b for b in cells if b["decided"] and b["kind"] != expected]
    apart = ev.budgets(setting) - {"one for reads and writes"}
    if wrong and apart:
        # Two budgets understate the write side's saving: a "no" there is the emulation's.
        return Outcome(None, evidence, why=f"at {disk} the emulated disk gave reads and writes "
                       f"{', '.join(sorted(apart))}, unlike the paper's one disk; give the "
                       "medium inputs: on-medium (one budget) to decide it")
    open_ = [b for b in cells if not b["decided"]]
    out = Outcome(None, evidence, rests_on=[f"{_cell_name(b)} at {disk}" for b in cells],
                  cells=cells,
                  undecided=[f"{_cell_name(b)} at {disk} could be {b['possible_kinds']}"
                             for b in open_])
    if wrong:
        out.ok = False
    elif open_:
        out.why = (f"the confidence intervals at {disk} cannot decide "
                   + ", ".join(_cell_name(b) for b in open_))
    else:
        out.ok = True
    return out


# --- single-testbed measurements ---------------------------------------------------------


@check("energy_time_linear")
def energy_time_linear(claim, ev):
    """Holds when every file type's R is decidedly above r_min (Fisher's interval), refuted
    when one is decidedly below it."""
    rs = [c for c in ev.in_setting(ev.correlation) if c["file_type"] != "all"]
    usable = [c for c in rs if c["r"] is not None and not math.isnan(c["r"])]
    if not usable or len(usable) < len(rs):
        return Outcome(None, why="R is undefined (fewer than 3 runs, or no spread in time or "
                                 "energy) for " + ", ".join(c["file_type"] for c in rs
                                                            if c not in usable) or "no runs")
    r_min, level = claim.parameters["r_min"], ev.comparison_level(len(usable))
    bounds = {c["file_type"]: fisher_r_interval(c["r"], int(c["n"]), level) for c in usable}
    above = [f for f, b in bounds.items() if b and b[0] > r_min]
    below = [f for f, b in bounds.items() if b and b[1] < r_min]
    # n counts a file type's runs of every codec and operation, pooled: the interval
    # treats them as one sample, so its level is nominal.
    note = (" (the model derives energy from CPU time, so a high R is partly by construction)"
            if ev.estimated() else "")
    evidence = ("; ".join(f"{c['file_type']} R={c['r']:.4f} " + (
        f"[{b[0]:.4f}, {b[1]:.4f}]" if (b := bounds[c["file_type"]]) else "[no interval]")
        for c in usable) + f" (Fisher's z {percent(level)}% interval over each file type's "
        "runs of every codec and operation)" + note)
    ok = False if below else True if len(above) == len(usable) else None
    open_ = [f for f in bounds if f not in above + below]
    return Outcome(ok, evidence, why=f"the intervals of R straddle {r_min:g} (or rest on "
                   "3 runs or fewer) for " + ", ".join(open_), undecided=[
                       f"{f} R could be above or below {r_min:g}" for f in open_],
                   rests_on=[f"{c['file_type']}: {c['n']} runs" for c in usable])


def _text_rows(ev, op) -> dict[str, dict]:
    return {c: r for c in ev.codecs() if (r := ev.summary_row("text", c, op))}


@check("ppmd_best_ratio")
def ppmd_best_ratio(claim, ev):
    cw = _text_rows(ev, "compress-write")
    if "ppmd" not in cw or len(cw) < 2:
        return _needs(claim, "ppmd and another codec on text")
    paper = next((r["display"] for r in ev.reference(claim.reference[0])
                  if (r["codec"], r["file_type"]) == ("ppmd", "text")), "?")
    best = max(cw, key=lambda c: cw[c]["compression_ratio"])
    return Outcome(best == "ppmd", f"ppmd CR {cw['ppmd']['compression_ratio']:.2f} (paper "
                                   f"{paper}); best is {best} {cw[best]['compression_ratio']:.2f}",
                   rests_on=[f"text compress-write of {len(cw)} codecs"])


def _ppmd_leads(ev, rows: dict[str, dict], op: str) -> bool | None:
    """True when ppmd's mean energy on text is decidedly above every other codec's, False
    when another's is decidedly above ppmd's; with no other codec, nothing is decided."""
    signs = [_sign(ev.difference(("text", "ppmd", op), ("text", c, op)))
             for c in rows if c != "ppmd"]
    return False if -1 in signs else True if signs and all(s == 1 for s in signs) else None


def _alike(ev, factor: float) -> tuple[bool | None, str]:
    """Whether ppmd's decompress-read energy is within `factor` of its compress-write's both
    ways, by Fieller's interval of the ratio of the means (an unbounded one decides nothing),
    and the ratio as the evidence states it."""
    level = ev.comparison_level()
    ratio, lo, hi = against(ev.values("text", "ppmd", "decompress-read"),
                            ev.values("text", "ppmd", "compress-write"), level)
    alike = (True if 1 / factor <= lo and hi <= factor
             else False if hi < 1 / factor or lo > factor else None)
    shown = (f"[{lo:.2f}, {hi:.2f}]" if math.isfinite(lo) and math.isfinite(hi)
             else "unbounded" if math.isinf(lo) else "none (fewer than two runs)")
    return alike, (f"ppmd E_d/E_c = {ratio:.2f}, Fieller's {percent(level)}% "
                   f"interval {shown} (alike: {1 / factor:g} to {factor:g})")


@check("ppmd_most_energy")
def ppmd_most_energy(claim, ev):
    """Holds when ppmd's energy is decidedly the highest in compress-write and in
    decompress-read and the ratio's interval lies within the alike band; refuted when a
    part is decided against it."""
    cw, dr = _text_rows(ev, "compress-write"), _text_rows(ev, "decompress-read")
    if "ppmd" not in cw or "ppmd" not in dr:
        return _needs(claim, "ppmd on text")
    parts = {"ppmd's lead in compress-write": _ppmd_leads(ev, cw, "compress-write"),
             "ppmd's lead in decompress-read": _ppmd_leads(ev, dr, "decompress-read")}
    alike, ratio = _alike(ev, claim.parameters["alike_factor"])
    parts["whether ppmd's decompression and compression energies are alike"] = alike
    top_c = max(cw, key=lambda c: cw[c]["mean_energy_j"])
    top_d = max(dr, key=lambda c: dr[c]["mean_energy_j"])
    open_ = [name for name, part in parts.items() if part is None]
    return Outcome(_all_of(list(parts.values()), []),
                   f"most energy: compress-write {top_c}, decompress-read {top_d}; {ratio}",
                   why="the intervals cannot decide " + "; ".join(open_), undecided=open_,
                   rests_on=["text compress-write and decompress-read"])


@check("cr_order_table3")
def cr_order_table3(claim, ev):
    cw = _text_rows(ev, "compress-write")
    ref = {}
    for r in ev.reference(claim.reference[0]):
        if r["file_type"] == "text":
            try:
                ref[r["codec"]] = float(r["display"])
            except ValueError:
                continue
    order = sorted((c for c in ref if c in cw), key=lambda c: -ref[c])
    missing = [f"{c} on text" for c in ref if c not in cw]
    gap = claim.parameters["min_relative_gap"]
    # Every pair Table 3 orders, not only neighbours: a tie between two neighbours must
    # not hide the order of the codecs on either side of it.
    pairs = [(a, b) for i, a in enumerate(order) for b in order[i + 1:]
             if ref[a] > ref[b] * (1 + gap)]
    if not pairs:
        return _needs(claim, "two or more of Table 3's codecs on text")
    wrong = [f"{a} {cw[a]['compression_ratio']:.2f} < {b} {cw[b]['compression_ratio']:.2f}"
             for a, b in pairs if cw[a]["compression_ratio"] < cw[b]["compression_ratio"]]
    evidence = ("text CR in Table 3's order: " + ", ".join(
        f"{c} {cw[c]['compression_ratio']:.2f}" for c in order) + f"; {len(pairs)} pairs "
        "ordered by Table 3" + (f", violated: {'; '.join(wrong)}" if wrong else ", all held"))
    return Outcome(_all_of([not wrong], missing), evidence, why=_unmeasured(missing),
                   rests_on=[f"text compress-write of {len(order)} codecs"])


def _could_be_lowest(ev, rows: dict[str, dict], metric: str) -> tuple[str, list[str]]:
    """The codec of the lowest mean text compress-write `metric`, and every codec that could
    be the lowest: it and those whose interval of the difference to it reaches zero."""
    lowest = min(rows, key=lambda c: rows[c][f"mean_{metric}"])
    return lowest, [c for c in rows if c == lowest or ev.difference(
        ("text", c, "compress-write"), ("text", lowest, "compress-write"), metric).lo <= 0]


@check("fastest_most_efficient")
def fastest_most_efficient(claim, ev):
    """Holds when one codec alone could be the fastest and it alone could use the least
    energy; refuted when no codec that could be the fastest could use the least."""
    cw = _text_rows(ev, "compress-write")
    if len(cw) < 2:
        return _needs(claim, "two or more codecs on text")
    fastest, could_be_fastest = _could_be_lowest(ev, cw, "elapsed_s")
    thriftiest, could_be_thriftiest = _could_be_lowest(ev, cw, "energy_j")
    evidence = (f"text compress-write: fastest {fastest} (could be: "
                f"{', '.join(could_be_fastest)}), least energy {thriftiest} (could be: "
                f"{', '.join(could_be_thriftiest)})")
    rests_on = [f"text compress-write of {len(cw)} codecs"]
    if could_be_fastest == could_be_thriftiest == [fastest]:
        return Outcome(True, evidence, rests_on=rests_on)
    if not set(could_be_fastest) & set(could_be_thriftiest):
        return Outcome(False, evidence, rests_on=rests_on)
    open_ = [f"could be the fastest: {', '.join(could_be_fastest)}",
             f"could use the least energy: {', '.join(could_be_thriftiest)}"]
    return Outcome(None, evidence, why="the intervals cannot separate them: "
                   + "; ".join(open_), undecided=open_, rests_on=rests_on)


# --- the energy-delay ranking (SYSTOR '09 5.3, Figure 2(e), 2(f)) ------------------------


@check("et_ranking")
def et_ranking(claim, ev):
    """Each tier's codecs decidedly below every codec of the tiers after it in the ET of
    one compress-write and one decompress-read ("considering both read and write
    workloads"), by Welch's interval of the difference of the sums; the paper's other
    tools measured form the last tier. Refuted by a pair decidedly in the other order."""
    p = claim.parameters
    ftype, ops = p["file_type"], ("compress-write", "decompress-read")

    def measured(codec):
        return all(len(ev.values(ftype, codec, op, "et")) >= 2 for op in ops)

    named = [c for tier in p["tiers"] for c in tier]
    tiers = [[c for c in tier if measured(c)] for tier in p["tiers"]]
    tiers.append([c for c in ev.codecs() if c not in named and measured(c)])
    tiers = [t for t in tiers if t]
    missing = [f"{c} on {ftype}" for c in named if not measured(c)]
    if len(tiers) < 2:
        return _needs(claim, f"{' and '.join(', '.join(t) for t in p['tiers'])} on {ftype}")
    parts, wrong, undecided = [], [], []
    for i, tier in enumerate(tiers):
        for a in tier:
            for b in (c for later in tiers[i + 1:] for c in later):
                s = _sign(ev.sum_difference([(ftype, a, op) for op in ops],
                                            [(ftype, b, op) for op in ops], "et"))
                parts.append(None if s is None else s == -1)
                if s == 1:
                    wrong.append(f"{a} above {b}")
                elif s is None:
                    undecided.append(f"{a} vs {b}")

    def et(codec):
        return sum(mean(ev.values(ftype, codec, op, "et")) for op in ops)

    shown = " < ".join(", ".join(f"{c} {et(c) / 1e6:.3g}" for c in t) for t in tiers)
    return Outcome(_all_of(parts, missing),
                   f"{ftype} ET of a write and a read (MJ s), the paper's tiers: {shown}"
                   + (f"; out of order: {'; '.join(wrong)}" if wrong else ""),
                   why="; ".join([*(["the intervals cannot order some pairs"]
                                    if None in parts else []),
                                  *([_unmeasured(missing)] if missing else [])]),
                   undecided=undecided, rests_on=[f"{ftype} {c}" for t in tiers for c in t])
