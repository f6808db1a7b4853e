"""The original papers' claims as a registry: a verdict on each, as strong as the runs allow.

Each claim is declared in paper/reference/claims.yaml (its paper and section,
the reference tables it compares against, the configuration that decides it,
the parameters its check reads); this module holds one small check per claim
and no number of the papers. A check returns holds (True), refuted (False) or
not testable (None, with the reason): a claim whose deciding differences the
confidence intervals cannot tell from zero is not testable, not refuted.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from wattzip.breakeven import parse_display
from wattzip.errors import ConfigError
from wattzip.reference import read_reference
from wattzip.stats import Interval, fit_percent, least_squares_predict, mean, welch_interval

CONFIDENCE = 0.95
# The factor columns the analysis tables carry (wattzip.design.FACTORS, bandwidth in bytes/s).
FACTOR_FIELDS = ("medium", "io_scheduler", "governor", "copies", "bandwidth_bytes_per_s")


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    section: str
    claim: str
    reference: tuple[str, ...]
    overlay: str
    scope: str  # "setting" or "testbed"
    energy: bool
    parameters: dict = field(hash=False, compare=False, default_factory=dict)
    factor: str = ""  # the factor a testbed-wide claim compares across

    @property
    def source(self) -> str:
        return f"{self.paper} {self.section}"


@dataclass
class Outcome:
    ok: bool | None
    evidence: str = ""
    why: str = ""  # when not testable
    rests_on: list[str] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)


def load_claims(reference_dir: str | Path = "paper/reference") -> list[Claim]:
    """Every declared claim; each must have a check here, and each check a declaration."""
    entries = yaml.safe_load((Path(reference_dir) / "claims.yaml").read_text())
    claims = [Claim(id=e["id"], paper=e["paper"], section=str(e["section"]),
                    claim=e["claim"], reference=tuple(e.get("reference") or ()),
                    overlay=e["overlay"], scope=e["scope"], energy=bool(e["energy"]),
                    parameters=e.get("parameters") or {}, factor=e.get("factor", ""))
              for e in entries]
    declared = {c.id for c in claims}
    if declared != set(CHECKS):
        raise ConfigError(f"claims.yaml and wattzip/claims.py disagree: declared without a "
                          f"check {sorted(declared - set(CHECKS))}, checks without a "
                          f"declaration {sorted(set(CHECKS) - declared)}")
    return claims


CHECKS: dict[str, Callable[[Claim, Evidence], Outcome]] = {}


def check(claim_id: str):
    def register(fn):
        CHECKS[claim_id] = fn
        return fn
    return register


@dataclass
class Evidence:
    """The analysis tables and runs of one testbed, seen from one setting (or all)."""

    testbed: str
    setting: str | None
    summary: list[dict]
    breakeven: list[dict]
    correlation: list[dict]
    runs: list[dict]
    reference_dir: str

    def __post_init__(self) -> None:
        self._values: dict[tuple, list[dict]] = defaultdict(list)
        for r in self.runs:
            if r.get("verified") and r.get("testbed") == self.testbed:
                self._values[(r["setting"], r["file_type"], r["codec"], r["op"])].append(r)

    def in_setting(self, rows: list[dict], setting: str | None = None) -> list[dict]:
        setting = setting or self.setting
        return [r for r in rows if r["testbed"] == self.testbed and r["setting"] == setting]

    def summary_row(self, file_type, codec, op, setting=None) -> dict | None:
        for r in self.in_setting(self.summary, setting):
            if (r["file_type"], r["codec"], r["op"]) == (file_type, codec, op) and r["n"]:
                return r
        return None

    def cell(self, file_type, codec, metric) -> dict | None:
        for r in self.in_setting(self.breakeven):
            if (r["file_type"], r["codec"], r["metric"]) == (file_type, codec, metric):
                return r
        return None

    def values(self, file_type, codec, op, metric="energy_j", setting=None) -> list[float]:
        runs = self._values.get((setting or self.setting, file_type, codec, op), [])
        return [r[metric] for r in runs if r.get(metric) is not None]

    def difference(self, a: tuple, b: tuple, metric="energy_j", setting_a=None,
                   setting_b=None) -> Interval:
        """Interval of mean(a) - mean(b), a and b (file type, codec, op)."""
        return welch_interval([(1, self.values(*a, metric, setting=setting_a)),
                               (-1, self.values(*b, metric, setting=setting_b))], CONFIDENCE)

    def codecs(self) -> list[str]:
        return sorted({r["codec"] for r in self.in_setting(self.summary) if r["codec"] != "plain"})

    def file_types(self) -> list[str]:
        return sorted({r["file_type"] for r in self.in_setting(self.summary)})

    @functools.cached_property
    def settings(self) -> list[str]:
        return list(self.setting_factors)

    @functools.cached_property
    def setting_factors(self) -> dict[str, dict]:
        """Each setting's factor columns (and primary flag), as the summary carries them."""
        out = {}
        for r in self.summary:
            if r["testbed"] == self.testbed:
                out.setdefault(r["setting"], {k: r.get(k) for k in (*FACTOR_FIELDS,
                                                                     "primary")})
        return out

    def reference(self, name: str) -> list[dict]:
        return read_reference(Path(self.reference_dir) / f"{name}.csv")[1]

    def estimated(self) -> bool:
        rows = self.summary if self.setting is None else self.in_setting(self.summary)
        return any(r.get("meter_method") == "estimated"
                   for r in rows if r["testbed"] == self.testbed)


def decide(summary: list[dict], breakeven: list[dict], correlation: list[dict],
           runs: list[dict], reference_dir: str = "paper/reference") -> list[dict]:
    """One row per testbed x setting x claim (testbed-scoped claims: setting 'all')."""
    claims = load_claims(reference_dir)
    rows = []
    for testbed in sorted({s["testbed"] for s in summary}):
        settings = sorted({s["setting"] for s in summary if s["testbed"] == testbed})
        for claim in claims:
            for setting in (settings if claim.scope == "setting" else [None]):
                ev = Evidence(testbed, setting, summary, breakeven, correlation, runs,
                              reference_dir)
                rows.append(_row(claim, CHECKS[claim.id](claim, ev), ev))
    return rows


def _row(claim: Claim, out: Outcome, ev: Evidence) -> dict:
    estimated = claim.energy and ev.estimated() and out.ok is not None
    notes = []
    if estimated:
        notes.append("rests on ESTIMATED energy (utilization model, no power meter)")
    if out.undecided:
        notes.append("undecided at 95%: " + "; ".join(out.undecided))
    verdict = ("holds" if out.ok else "refuted") if out.ok is not None else (
        f"not testable here: {out.why}")
    return {"testbed": ev.testbed, "setting": ev.setting or "all", "claim_id": claim.id,
            "claim": claim.claim, "source": claim.source, "verdict": verdict,
            "evidence": out.evidence, "estimated": estimated, "note": "; ".join(notes),
            "rests_on": "; ".join(out.rests_on), "overlay": claim.overlay,
            "factor": claim.factor}


def _cell_name(b: dict) -> str:
    return f"{b['file_type']} {b['codec']} {b['metric']}"


def _fmt(cells: list[dict]) -> str:
    return "; ".join(f"{b['codec']} {b['display']}" for b in cells)


def _needs(claim: Claim, what: str) -> Outcome:
    return Outcome(None, why=f"needs {what} ({claim.overlay})")


def _sign(iv: Interval) -> int | None:
    """+1 or -1 when the interval excludes zero, else None (undecided)."""
    return 1 if iv.lo > 0 else -1 if iv.hi < 0 else None


# --- break-even claims (SYSTOR '09 Table 4) -------------------------------------------


def _cells_in_scope(claim: Claim, ev: Evidence) -> list[tuple[dict, str]]:
    """(our cell, the kind it should have): from the reference table, or `expected`."""
    p = claim.parameters["cells"]
    codecs = p.get("codecs") or ev.codecs()
    out = []
    if "expected" in claim.parameters:
        for f in p["file_types"]:
            for c in codecs:
                b = ev.cell(f, c, p["metric"])
                if b:
                    out.append((b, claim.parameters["expected"]))
        return out
    for row in ev.reference(claim.reference[0]):
        if (row["codec"] in codecs and row["file_type"] in p["file_types"]
                and row["metric"] == p["metric"]):
            b = ev.cell(row["file_type"], row["codec"], p["metric"])
            if b:
                out.append((b, parse_display(row["display"]).kind))
    return out


def same_kind(claim: Claim, ev: Evidence) -> Outcome:
    pairs = _cells_in_scope(claim, ev)
    if not pairs:
        p = claim.parameters["cells"]
        return _needs(claim, f"{', '.join(p.get('codecs') or ['codecs'])} on "
                      f"{', '.join(p['file_types'])}")
    wrong = [b for b, kind in pairs if b["decided"] and b["kind"] != kind]
    open_ = [b for b, kind in pairs if not b["decided"]]
    cells = [b for b, _ in pairs]
    out = Outcome(None, f"{cells[0]['metric']} break-even: {_fmt(cells)}",
                  rests_on=[_cell_name(b) for b in cells],
                  undecided=[f"{_cell_name(b)} could be {b['possible_kinds']}" for b in open_])
    if wrong:
        out.ok = False
    elif open_:
        out.why = "the confidence intervals cannot decide " + ", ".join(
            _cell_name(b) for b in open_)
    else:
        out.ok = True
    return out


for _id in ("lzo_text_always", "random_never", "bzip2_compress_never"):
    check(_id)(same_kind)


@check("zero_saves")
def zero_saves(claim, ev):
    cells = [b for c in ev.codecs() if (b := ev.cell("zero", c, "E"))]
    if not cells:
        return _needs(claim, "zero files")
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
                   undecided=[_cell_name(b) for b in cells if b not in yes and b not in no])


@check("text_breakeven_high")
def text_breakeven_high(claim, ev):
    cells = [b for c in claim.parameters["codecs"] if (b := ev.cell("text", c, "E"))]
    if not cells:
        return _needs(claim, "text with gzip or lzo-9")
    limit = claim.parameters["common_ratio_max"]
    above = [b for b in cells if b["decided"] and (b["kind"] == "never" or (
        b["kind"] == "at_least" and b["lo"] > limit))]
    below = [b for b in cells if b["decided"] and (b["kind"] == "always" or (
        b["kind"] == "at_least" and b["hi"] <= limit))]
    ok = False if below else True if len(above) == len(cells) else None
    return Outcome(ok, f"E break-even: {_fmt(cells)}", why="the intervals straddle the "
                   f"common ratios (up to {limit:g})", rests_on=[_cell_name(b) for b in cells],
                   undecided=[_cell_name(b) for b in cells if b not in above + below])


# --- single-testbed measurements ---------------------------------------------------------


@check("energy_time_linear")
def energy_time_linear(claim, ev):
    rs = [c for c in ev.in_setting(ev.correlation) if c["file_type"] != "all"]
    usable = [c for c in rs if c["r"] is not None and not math.isnan(c["r"])]
    if not usable or len(usable) < len(rs):
        return Outcome(None, why="R is undefined (fewer than 3 runs, or no spread in time or "
                                 "energy) for " + ", ".join(c["file_type"] for c in rs
                                                            if c not in usable) or "no runs")
    r_min = claim.parameters["r_min"]
    note = (" (the model derives energy from CPU time, so a high R is partly by construction)"
            if ev.estimated() else "")
    return Outcome(all(c["r"] > r_min for c in usable),
                   "; ".join(f"{c['file_type']} R={c['r']:.4f}" for c in usable) + note,
                   rests_on=[f"{c['file_type']}: {c['n']} runs" for c in usable])


def _text_rows(ev, op) -> dict[str, dict]:
    return {c: r for c in ev.codecs() if (r := ev.summary_row("text", c, op))}


@check("ppmd_best_ratio")
def ppmd_best_ratio(claim, ev):
    cw = _text_rows(ev, "compress-write")
    if "ppmd" not in cw:
        return _needs(claim, "ppmd on text")
    paper = next((r["display"] for r in ev.reference(claim.reference[0])
                  if (r["codec"], r["file_type"]) == ("ppmd", "text")), "?")
    best = max(cw, key=lambda c: cw[c]["compression_ratio"])
    return Outcome(best == "ppmd", f"ppmd CR {cw['ppmd']['compression_ratio']:.2f} (paper "
                                   f"{paper}); best is {best} {cw[best]['compression_ratio']:.2f}",
                   rests_on=[f"text compress-write of {len(cw)} codecs"])


def _decided_top(ev, rows: dict[str, dict], op: str, metric: str, lowest=False):
    """(the codec with the highest mean, whether it beats the runner-up at 95%)."""
    order = sorted(rows, key=lambda c: rows[c][f"mean_{metric}"], reverse=not lowest)
    if len(order) < 2:
        return order[0] if order else None, True
    gap = ev.difference(("text", order[0], op), ("text", order[1], op), metric)
    return order[0], (gap.lo > 0) if not lowest else (gap.hi < 0)


@check("ppmd_most_energy")
def ppmd_most_energy(claim, ev):
    cw, dr = _text_rows(ev, "compress-write"), _text_rows(ev, "decompress-read")
    if "ppmd" not in cw or "ppmd" not in dr:
        return _needs(claim, "ppmd on text")
    top_c, sure_c = _decided_top(ev, cw, "compress-write", "energy_j")
    top_d, sure_d = _decided_top(ev, dr, "decompress-read", "energy_j")
    ratio = dr["ppmd"]["mean_energy_j"] / cw["ppmd"]["mean_energy_j"]
    alike = 1 / claim.parameters["alike_factor"] <= ratio <= claim.parameters["alike_factor"]
    evidence = (f"most energy: compress-write {top_c}, decompress-read {top_d}; ppmd "
                f"E_d/E_c = {ratio:.2f}")
    if top_c == top_d == "ppmd" and alike:
        return Outcome(True if sure_c and sure_d else None, evidence,
                       why="ppmd's lead over the runner-up is within the intervals",
                       rests_on=["text compress-write and decompress-read"])
    if (top_c != "ppmd" and sure_c) or (top_d != "ppmd" and sure_d) or not alike:
        return Outcome(False, evidence, rests_on=["text compress-write and decompress-read"])
    return Outcome(None, evidence, why="the leader is within the intervals of the runner-up")


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
    gap = claim.parameters["min_relative_gap"]
    pairs = [(a, b) for a, b in zip(order, order[1:], strict=False)
             if ref[a] > ref[b] * (1 + gap)]
    if not pairs:
        return _needs(claim, "two or more of Table 3's codecs on text")
    wrong = [(a, b) for a, b in pairs
             if cw[a]["compression_ratio"] < cw[b]["compression_ratio"]]
    return Outcome(not wrong, "; ".join(
        f"{a} {cw[a]['compression_ratio']:.2f} > {b} {cw[b]['compression_ratio']:.2f}"
        for a, b in pairs) + (f"; violated: {wrong}" if wrong else ""),
        rests_on=[f"text compress-write of {len(order)} codecs"])


@check("fastest_most_efficient")
def fastest_most_efficient(claim, ev):
    cw = _text_rows(ev, "compress-write")
    if len(cw) < 2:
        return _needs(claim, "two or more codecs on text")
    fastest = min(cw, key=lambda c: cw[c]["mean_elapsed_s"])
    thriftiest = min(cw, key=lambda c: cw[c]["mean_energy_j"])
    evidence = f"text compress-write: fastest {fastest}, least energy {thriftiest}"
    if fastest == thriftiest:
        return Outcome(True, evidence, rests_on=[f"text compress-write of {len(cw)} codecs"])
    gap = ev.difference(("text", fastest, "compress-write"),
                        ("text", thriftiest, "compress-write"))
    if gap.lo > 0:
        return Outcome(False, evidence, rests_on=[f"text compress-write of {len(cw)} codecs"])
    return Outcome(None, evidence, why=f"{fastest} and {thriftiest} use energies the "
                                       "intervals cannot tell apart",
                   undecided=[f"{fastest} vs {thriftiest}"])


@check("hpc_lz4_write")
def hpc_lz4_write(claim, ev):
    names = claim.parameters["codecs"]
    ftype = claim.parameters["file_type"]
    ops = {alg: (ftype, c, "plain-write" if c == "plain" else "compress-write")
           for alg, c in names.items()}
    if not all(ev.summary_row(*key) for key in ops.values()):
        return _needs(claim, f"{', '.join(names.values())} on {ftype}")
    ref = {r["algorithm"]: float(r["energy_wh"]) for r in ev.reference(claim.reference[0])}
    order = sorted(names, key=lambda a: ref[a])
    results, undecided = [], []
    for a, b in zip(order, order[1:], strict=False):
        s = _sign(ev.difference(ops[a], ops[b]))
        results.append(s == -1 if s is not None else None)
        if s is None:
            undecided.append(f"{names[a]} vs {names[b]}")
    ours = ", ".join(f"{names[a]} {ev.summary_row(*ops[a])['mean_energy_j']:.1f} J"
                     for a in order)
    paper = ", ".join(f"{a} {ref[a]:g} Wh" for a in order)
    ok = False if False in results else None if None in results else True
    return Outcome(ok, f"{ftype} write energy, the paper's order: {ours} (paper: {paper})",
                   why="the intervals cannot order them", undecided=undecided,
                   rests_on=[f"{ftype} {c}" for c in names.values()])


# --- SYSTOR '11: levels --------------------------------------------------------------------


def _levels(ev, tool_prefix, file_type) -> dict[int, dict]:
    out = {}
    for c in ev.codecs():
        name, _, level = c.partition("-")
        if name == tool_prefix and level.isdigit():
            row = ev.summary_row(file_type, c, "compress-write")
            if row:
                out[int(level)] = row
    return out


@check("lzop_levels_identical")
def lzop_levels_identical(claim, ev):
    tool = claim.parameters["tool"]
    ref = defaultdict(dict)
    for r in ev.reference(claim.reference[0]):
        name, _, level = r["codec"].partition("-")
        if name == tool and level.isdigit():
            ref[r["file_type"]][int(level)] = r["display"]
    found, wrong = [], []
    for ftype in ev.file_types():
        ours = _levels(ev, tool, ftype)
        same = [lv for lv, d in ref.get(ftype, {}).items() if d == ref[ftype].get(1)]
        if len(same) < 2 or not all(lv in ours for lv in same):
            continue
        crs = [ours[lv]["compression_ratio"] for lv in same]
        found.append(f"{ftype} {tool}-{min(same)}..{max(same)}: CR {min(crs):.3f}..{max(crs):.3f}")
        if max(crs) - min(crs) > 1e-3 * max(crs):
            wrong.append(ftype)
    if not found:
        return _needs(claim, f"{tool}-1 .. {tool}-6")
    return Outcome(not wrong, "; ".join(found), rests_on=found)


def _energy_peak(ev, levels: dict[int, dict], file_type, tool):
    """(level of the highest mean energy, whether it beats every other level at 95%)."""
    top = max(levels, key=lambda lv: levels[lv]["mean_energy_j"])
    sure = all(_sign(ev.difference((file_type, f"{tool}-{top}", "compress-write"),
                                   (file_type, f"{tool}-{lv}", "compress-write"))) == 1
               for lv in levels if lv != top)
    return top, sure


@check("gzip_level_energy_peak")
def gzip_level_energy_peak(claim, ev):
    tool, ftype = claim.parameters["tool"], claim.parameters["file_type"]
    levels = _levels(ev, tool, ftype)
    if len(levels) < 3:
        return _needs(claim, f"three or more levels of {tool} on {ftype}")
    top = max(levels, key=lambda lv: levels[lv]["mean_energy_j"])
    first, last = min(levels), max(levels)
    evidence = "; ".join(f"{tool}-{lv} {levels[lv]['mean_energy_j']:.1f} J"
                         for lv in sorted(levels))
    rises = _sign(ev.difference((ftype, f"{tool}-{top}", "compress-write"),
                                (ftype, f"{tool}-{first}", "compress-write")))
    falls = _sign(ev.difference((ftype, f"{tool}-{top}", "compress-write"),
                                (ftype, f"{tool}-{last}", "compress-write")))
    if top == last:
        _, sure = _energy_peak(ev, levels, ftype, tool)
        return Outcome(False if sure else None, evidence + f"; peak at the last level {last}",
                       why="the last level's lead is within the intervals")
    ok = True if rises == 1 and falls == 1 else None
    return Outcome(ok, evidence + f"; peak at level {top}", why="the rise or the fall is "
                   "within the intervals", rests_on=[f"{ftype} {tool}-{lv}" for lv in levels])


@check("level_max_energy_by_type")
def level_max_energy_by_type(claim, ev):
    tool = claim.parameters["tool"]
    expected = claim.parameters["most_expensive_level"]
    results, parts, undecided = [], [], []
    for ftype, want in expected.items():
        levels = _levels(ev, tool, ftype)
        if want not in levels or len(levels) < 3:
            continue
        top, sure = _energy_peak(ev, levels, ftype, tool)
        parts.append(f"{ftype}: most at {tool}-{top} (paper {tool}-{want})")
        if not sure:
            undecided.append(f"{ftype}: {tool}-{top} leads within the intervals")
        results.append((top == want) if sure else None)
    if not results:
        return _needs(claim, f"levels 1-9 of {tool}")
    ok = False if False in results else None if None in results else True
    return Outcome(ok, "; ".join(parts), why="the top level's lead is within the intervals",
                   undecided=undecided, rests_on=parts)


@check("text_more_than_binary")
def text_more_than_binary(claim, ev):
    signs, parts = [], []
    for c in ev.codecs():
        if ev.summary_row("text", c, "compress-write") and ev.summary_row("binary", c,
                                                                          "compress-write"):
            s = _sign(ev.difference(("text", c, "compress-write"),
                                    ("binary", c, "compress-write")))
            signs.append(s)
            parts.append(f"{c} {'>' if s == 1 else '<' if s == -1 else '~'}")
    if not signs:
        return _needs(claim, "text and binary files")
    ok = False if -1 in signs else None if None in signs else True
    return Outcome(ok, "text vs binary compress-write energy: " + ", ".join(parts),
                   why="some codecs' differences are within the intervals",
                   undecided=[p for p in parts if p.endswith("~")], rests_on=parts)


# --- SYSTOR '11: factors across settings ---------------------------------------------------


def _factor_settings(ev, factor: str) -> dict[str, str]:
    """Each value of one factor -> the setting that has it and the primary setting's values
    of every other factor, so that a comparison changes that factor alone."""
    info = ev.setting_factors
    primary = next((f for f in info.values() if f.get("primary")), None)
    if primary is None:
        return {}
    others = [f for f in FACTOR_FIELDS if f != factor]
    out = {}
    for name, f in info.items():
        if all(str(f.get(o)) == str(primary.get(o)) for o in others):
            value = f.get(factor)
            if value not in (None, "", "keep"):
                out[str(value)] = name
    return out


def _paired_cells(ev, a: str, b: str) -> list[tuple[str, str]]:
    """(file type, codec) compress-write cells measured in both settings."""
    have = {s: {(r["file_type"], r["codec"]) for r in ev.in_setting(ev.summary, s)
                if r["op"] == "compress-write" and r["n"]} for s in (a, b)}
    return sorted(have[a] & have[b])


def _compare(ev, a: str, b: str) -> list[int | None]:
    return [_sign(ev.difference((f, c, "compress-write"), (f, c, "compress-write"),
                                setting_a=a, setting_b=b)) for f, c in _paired_cells(ev, a, b)]


@check("dvfs_no_saving")
def dvfs_no_saving(claim, ev):
    by = _factor_settings(ev, "governor")
    fastest = claim.parameters["fastest"]
    if fastest not in by or len(by) < 2:
        return Outcome(None, why=f"needs a governor factor with '{fastest}' and a slower "
                                 "governor (cpufreq; not in a VM)")
    if ev.estimated():
        return Outcome(None, why="energy here is ESTIMATED by a utilisation model that ignores "
                                 "CPU frequency, so any verdict would be an artefact of it")
    signs = [s for g in by if g != fastest for s in _compare(ev, by[g], by[fastest])]
    ok = False if -1 in signs else None if None in signs else True
    return Outcome(ok, f"slower governors vs {fastest}: " + ", ".join(
        {1: "more", -1: "less", None: "~"}[s] for s in signs), why="within the intervals")


@check("io_scheduler_effect")
def io_scheduler_effect(claim, ev):
    by = _factor_settings(ev, "io_scheduler")
    similar = [s for s in claim.parameters["similar"] if s in by]
    different = [s for s in claim.parameters["different"] if s in by]
    if len(similar) < 2 or not different:
        return _needs(claim, "I/O schedulers " + ", ".join(claim.parameters["similar"]
                                                          + claim.parameters["different"]))
    same = _compare(ev, by[similar[0]], by[similar[1]])
    apart = [s for d in different for s in _compare(ev, by[d], by[similar[0]])]
    evidence = (f"{similar[0]} vs {similar[1]}: {sum(s is not None for s in same)} of "
                f"{len(same)} cells differ; {', '.join(different)} vs {similar[0]}: "
                f"{sum(s is not None for s in apart)} of {len(apart)} differ")
    if not same or not apart:
        return Outcome(None, evidence, why="no cell measured under both schedulers")
    alike = all(s is None for s in same)
    distinct = sum(s is not None for s in apart) >= len(apart) / 2
    return Outcome(alike and distinct, evidence)


@check("media_faster_less_energy")
def media_faster_less_energy(claim, ev):
    by = _factor_settings(ev, "medium")
    speed = {}
    for medium, setting in by.items():
        rows = [r for r in ev.in_setting(ev.summary, setting) if r["op"] == "plain-write"
                and r["n"]]
        if rows:
            speed[medium] = mean([r["input_bytes"] / r["mean_elapsed_s"] for r in rows])
    if len(speed) < 2:
        return _needs(claim, "two or more storage media")
    order = sorted(speed, key=lambda m: -speed[m])
    signs = [s for a, b in zip(order, order[1:], strict=False)
             for s in _compare(ev, by[a], by[b])]
    ok = False if 1 in signs else None if None in signs else True
    return Outcome(ok, "media by plain-write speed: " + ", ".join(
        f"{m} {speed[m] / 2**20:.0f} MiB/s" for m in order) + "; faster one uses less energy "
        f"in {signs.count(-1)} of {len(signs)} cells", why="some cells are within the intervals")


# --- SYSTOR '11 4.2: system identification ----------------------------------------------


def _design(runs: list[dict]) -> tuple[list[list[float]], dict]:
    """The labels coded as numbers, as the paper tried: algorithm, level, file type, frequency."""
    tools = {t: i for i, t in enumerate(sorted({r["tool"] for r in runs}))}
    types = {t: i for i, t in enumerate(sorted({r["file_type"] for r in runs}))}
    govs = {g: i for i, g in enumerate(sorted({_governor(r) for r in runs}))}
    rows = [[1.0, tools[r["tool"]], _level(r), types[r["file_type"]], govs[_governor(r)]]
            for r in runs]
    return rows, {"tools": tools, "types": types}


def _governor(run: dict) -> str:
    return str(run.get("factor_governor") or "")


def _level(run: dict) -> float:
    try:
        return float(run.get("level") or 0)
    except ValueError:
        return 0.0


def sysid_fits(runs: list[dict]) -> dict[str, float] | None:
    """Held-out fit % of one linear model on the labels, and of a model per mode.

    Compress-write runs (and plain-write as algorithm NONE) are split by repeat
    into two halves of the same size: odd repeats fit, even repeats test. A
    mode is one algorithm on one file type (SYSTOR '11: labels are the modes
    of a hybrid automaton); its model is linear in the level.
    """
    usable = [r for r in runs if r.get("verified") and r["op"] in ("compress-write",
                                                                     "plain-write")
              and r.get("energy_j") is not None]
    train = [r for r in usable if r["repeat"] % 2 == 1]
    test = [r for r in usable if r["repeat"] % 2 == 0]
    if len({r["tool"] for r in usable}) < 2 or len(test) < 8 or len(train) < 8:
        return None
    x_all, _ = _design(train + test)
    x_train, x_test = x_all[:len(train)], x_all[len(train):]
    fits = {}
    for output, get in (("energy", lambda r: r["energy_j"]),
                        ("performance", lambda r: 1 / r["elapsed_s"])):
        y_train, y_test = [get(r) for r in train], [get(r) for r in test]
        fits[f"linear_{output}"] = fit_percent(y_test, least_squares_predict(
            x_train, y_train, x_test))
        predicted = []
        for r in test:
            mode = [(i, t) for i, t in enumerate(train)
                    if (t["tool"], t["file_type"]) == (r["tool"], r["file_type"])]
            if not mode:
                predicted.append(mean(y_train))
                continue
            xs = [[1.0, _level(t)] for _, t in mode]
            ys = [y_train[i] for i, _ in mode]
            predicted.append(least_squares_predict(xs, ys, [[1.0, _level(r)]])[0])
        fits[f"per_mode_{output}"] = fit_percent(y_test, predicted)
    return fits


@check("sysid_linear_poor")
def sysid_linear_poor(claim, ev):
    runs = [r for r in ev.runs if r.get("testbed") == ev.testbed]
    fits = sysid_fits(runs)
    if fits is None:
        return _needs(claim, "two or more algorithms with repeated runs")
    limit = claim.parameters["fit_max_pct"]
    poor = all(fits[f"linear_{o}"] < limit for o in ("energy", "performance"))
    better = all(fits[f"per_mode_{o}"] > fits[f"linear_{o}"] for o in ("energy", "performance"))
    return Outcome(poor and better, "held-out fit: linear " + ", ".join(
        f"{o} {fits[f'linear_{o}']:.0f}%" for o in ("energy", "performance")) + "; per mode "
        + ", ".join(f"{o} {fits[f'per_mode_{o}']:.0f}%" for o in ("energy", "performance")),
        rests_on=[f"{len(runs)} runs, odd repeats fit, even repeats test"])
