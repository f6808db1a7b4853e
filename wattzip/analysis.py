"""From run records to every number the papers report, with its uncertainty.

SYSTOR '09 sections 3 and 5: means and 95% Student-t half-widths of T, E,
E_active, E_passive and ET; the read-write model's break-even ratio n_be per
metric (5.2), bootstrapped over runs; the energy-saving curve E_sav(n)
(Figure 3); the energy-time correlation R; and a verdict on each claim.
"""

from __future__ import annotations

import csv
import math
import os
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wattzip import records
from wattzip.statistics import half_width, mean, pearson_r

METRICS = {  # summary column stem -> per-run value
    "elapsed_s": lambda r: r["elapsed_s"],
    "user_s": lambda r: r["user_s"],
    "sys_s": lambda r: r["sys_s"],
    "wait_s": lambda r: r["wait_s"],
    "cpu_utilization": lambda r: r["cpu_utilization"],
    "energy_j": lambda r: r["energy_j"],
    "energy_active_j": lambda r: r["energy_active_j"],
    "energy_passive_j": lambda r: r["energy_passive_j"],
    "et_js": lambda r: r["energy_j"] * r["elapsed_s"],
}
BREAKEVEN_METRICS = {"T": "elapsed_s", "E": "energy_j", "ET": "et_js"}
GROUP = ("testbed", "setting", "file_type", "codec", "op")
CELL = ("testbed", "setting", "file_type", "codec")
ESAV_MAX_N = 30


def _key(row: dict, fields: tuple[str, ...]) -> tuple:
    return tuple(row.get(f) for f in fields)


def _is_estimated(rows: Iterable[dict]) -> bool:
    return any(r.get("meter_method") == "estimated" for r in rows)


# --- summary ---------------------------------------------------------------------


def summarize(rows: list[dict], ci_target: float = 0.05) -> list[dict]:
    """One row per testbed x setting x file type x codec x operation.

    Failed or unverified runs are counted in n_failed and left out of every
    statistic, never dropped silently.
    """
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[_key(row, GROUP)].append(row)
    out = []
    for key, group in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        good = [r for r in group if r.get("verified")]
        row = dict(zip(GROUP, key, strict=True))
        first = group[0]
        row.update({
            "tool": first.get("tool"), "level": first.get("level"),
            "input_bytes": first.get("input_bytes"), "n": len(good),
            "n_failed": len(group) - len(good),
            "meter_method": "estimated" if _is_estimated(good) else (
                good[0].get("meter_method") if good else None),
            "meter_source": good[0].get("meter_source") if good else None,
            "meter_scope": good[0].get("meter_scope") if good else None,
        })
        for stem, get in METRICS.items():
            values = [get(r) for r in good if _has(r, stem)]
            row[f"mean_{stem}"] = mean(values) if values else math.nan
            row[f"hw_{stem}"] = half_width(values) if len(values) > 1 else math.nan
        out_bytes = [r["output_bytes"] for r in good if r.get("output_bytes")]
        row["copies"] = int(first.get("copies") or 1)
        if row["op"] == "compress-write" and out_bytes:
            # output_bytes is every copy's file together: the ratio of totals.
            row["output_bytes"] = mean(out_bytes)
            row["compression_ratio"] = row["input_bytes"] * row["copies"] / row["output_bytes"]
        else:
            row["output_bytes"] = mean(out_bytes) if out_bytes else math.nan
            row["compression_ratio"] = 1.0 if row["op"].startswith("plain") else math.nan
        row["ci_met"] = all(
            row[f"hw_{s}"] <= ci_target * abs(row[f"mean_{s}"])
            for s in ("elapsed_s", "energy_j")
        ) if len(good) > 1 else False
        out.append(row)
    return out


def _has(run: dict, stem: str) -> bool:
    needed = ("energy_j", "elapsed_s") if stem == "et_js" else (stem,)
    return all(run.get(k) is not None for k in needed)


# --- the read-write model (paper 5.2) ---------------------------------------------


@dataclass
class BreakEven:
    kind: str  # always | never | at_least | at_most
    value: float  # n_be for at_least / at_most, NaN otherwise


def break_even(m_w: float, m_c: float, m_r: float, m_d: float) -> BreakEven:
    """n_be from the four operations' means of one metric.

    dw = M_c - M_w is the extra cost of one compressed write, dr = M_r - M_d
    the saving of one compressed read.  Compression pays off at n reads per
    write when dw <= n * dr.
    """
    dw, dr = m_c - m_w, m_r - m_d
    if dw <= 0 and dr >= 0:
        return BreakEven("always", math.nan)
    if dw > 0 and dr <= 0:
        return BreakEven("never", math.nan)
    if dw > 0 and dr > 0:
        return BreakEven("at_least", dw / dr)
    return BreakEven("at_most", dw / dr)  # both negative: write-heavy workloads only


def display(kind: str, value: float) -> str:
    """The paper's notation: ∀, ×, one decimal, ~10^k above 100, ≤ x for at_most."""
    if kind == "always":
        return "∀"
    if kind == "never":
        return "×"
    text = _number(value)
    return f"≤ {text}" if kind == "at_most" else text


def _number(value: float) -> str:
    if value > 100:
        return f"~10^{round(math.log10(value))}"
    if value < 1:
        return f"{value:.2f}"
    return f"{value:.1f}"


def parse_display(text: str) -> BreakEven:
    """The inverse of display() for the papers' tables (∀ ✓, × ✗ X, ~10^k, numbers)."""
    t = text.strip()
    if t in ("∀", "✓", "A"):
        return BreakEven("always", math.nan)
    if t in ("×", "✗", "X", "x"):
        return BreakEven("never", math.nan)
    if t.startswith("≤"):
        return BreakEven("at_most", float(t.lstrip("≤ ")))
    if t.startswith("~10^"):
        return BreakEven("at_least", 10 ** float(t[4:]))
    return BreakEven("at_least", float(t))


def _bootstrap_means(values: list[float], rng: random.Random, b: int) -> list[float]:
    n = len(values)
    return [math.fsum(rng.choices(values, k=n)) / n for _ in range(b)]


def _four_operations(rows: list[dict]) -> list[tuple[tuple, dict[str, list[dict]]]]:
    """Per cell (testbed, setting, file type, codec): its verified runs of the four
    operations, w = plain-write, r = plain-read (the baseline), c = compress-write,
    d = decompress-read; cells missing any of them are left out."""
    by_group: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r.get("verified") and r.get("energy_j") is not None:
            by_group[_key(r, GROUP)].append(r)
    out = []
    for cell in sorted({k[:4] for k in by_group if k[3] != "plain"},
                       key=lambda k: tuple(map(str, k))):
        baseline = (*cell[:3], "plain")
        ops = {"w": by_group.get((*baseline, "plain-write"), []),
               "r": by_group.get((*baseline, "plain-read"), []),
               "c": by_group.get((*cell, "compress-write"), []),
               "d": by_group.get((*cell, "decompress-read"), [])}
        if all(ops.values()):
            out.append((cell, ops))
    return out


def _means_and_bootstraps(ops: dict[str, list[dict]], value, rng_key: str,
                          bootstrap: int) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Per operation: the mean of value(run) and its bootstrap means (seeded by rng_key)."""
    values = {k: [value(r) for r in v] for k, v in ops.items()}
    rng = random.Random(rng_key)
    return ({k: mean(v) for k, v in values.items()},
            {k: _bootstrap_means(v, rng, bootstrap) for k, v in values.items()})


def breakeven_table(rows: list[dict], seed: int = 2009, bootstrap: int = 1000) -> list[dict]:
    """n_be per testbed x setting x file type x codec and metric, with a bootstrap interval."""
    out = []
    for cell, ops in _four_operations(rows):
        testbed, setting, file_type, codec = cell
        estimated = _is_estimated(sum(ops.values(), []))
        for metric, stem in BREAKEVEN_METRICS.items():
            means, boots = _means_and_bootstraps(ops, METRICS[stem], f"{seed}:{cell}:{metric}",
                                                 bootstrap)
            point = break_even(means["w"], means["c"], means["r"], means["d"])
            kinds, ns = [], []
            for i in range(bootstrap):
                be = break_even(boots["w"][i], boots["c"][i], boots["r"][i], boots["d"][i])
                kinds.append(be.kind)
                if be.kind == point.kind and not math.isnan(be.value):
                    ns.append(be.value)
            share = kinds.count(point.kind) / bootstrap
            ns.sort()
            lo = ns[int(0.025 * (len(ns) - 1))] if ns else math.nan
            hi = ns[int(math.ceil(0.975 * (len(ns) - 1)))] if ns else math.nan
            decided = share >= 0.95
            out.append({
                "testbed": testbed, "setting": setting, "file_type": file_type, "codec": codec,
                "metric": metric, "dw": means["c"] - means["w"], "dr": means["r"] - means["d"],
                "kind": point.kind, "value": point.value, "lo": lo, "hi": hi,
                "kind_share": share, "decided": decided,
                "display": display(point.kind, point.value) + ("" if decided else "?"),
                "estimated": estimated and metric != "T",
            })
    return out


def esav_table(rows: list[dict], seed: int = 2009, bootstrap: int = 1000) -> list[dict]:
    """E_sav(n) = n (E_r - E_d) + (E_w - E_c) for n = 0..30 (Figure 3), 95% bootstrap band."""
    out = []
    for cell, ops in _four_operations(rows):
        testbed, setting, file_type, codec = cell
        estimated = _is_estimated(sum(ops.values(), []))
        m, boots = _means_and_bootstraps(ops, METRICS["energy_j"], f"{seed}:{cell}:esav",
                                         bootstrap)
        for n in range(ESAV_MAX_N + 1):
            curve = sorted(n * (boots["r"][i] - boots["d"][i]) + (boots["w"][i] - boots["c"][i])
                           for i in range(bootstrap))
            out.append({
                "testbed": testbed, "setting": setting, "file_type": file_type, "codec": codec,
                "n": n, "esav_j": n * (m["r"] - m["d"]) + (m["w"] - m["c"]),
                "lo_j": curve[int(0.025 * (bootstrap - 1))],
                "hi_j": curve[int(math.ceil(0.975 * (bootstrap - 1)))],
                "estimated": estimated,
            })
    return out


def correlation_table(rows: list[dict]) -> list[dict]:
    """Pearson R of energy against time over all runs, per file type and overall."""
    good = [r for r in rows if r.get("verified") and r.get("energy_j") is not None]
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in good:
        groups[(r["testbed"], r["setting"], r["file_type"])].append(r)
        groups[(r["testbed"], r["setting"], "all")].append(r)
    return [
        {"testbed": t, "setting": s, "file_type": f, "n": len(g),
         "r": pearson_r([x["elapsed_s"] for x in g], [x["energy_j"] for x in g]),
         "estimated": _is_estimated(g)}
        for (t, s, f), g in sorted(groups.items())
    ]


# --- reference data and comparison ----------------------------------------------------


def read_reference(path: str | os.PathLike) -> tuple[str, list[dict]]:
    """A reference CSV: its '# source:' line and its rows."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    source = ""
    body = []
    for line in lines:
        if line.startswith("#"):
            source = line.lstrip("# ").removeprefix("source:").strip()
        elif line.strip():
            body.append(line)
    return source, list(csv.DictReader(body))


def _ratio_value(text: str) -> float:
    return 10 ** float(text[4:]) if text.startswith("~10^") else float(text)


def comparison_table(summary: list[dict], breakeven: list[dict],
                     reference_dir: str | os.PathLike) -> list[dict]:
    """Original numbers beside the reproduced ones, one row per cell of each source table."""
    ref = Path(reference_dir)
    out: list[dict] = []
    cr = {(s["testbed"], s["setting"], s["file_type"], s["codec"]): s
          for s in summary if s["op"] == "compress-write"}
    be = {(b["testbed"], b["setting"], b["file_type"], b["codec"], b["metric"]): b
          for b in breakeven}
    places = sorted({(s["testbed"], s["setting"]) for s in summary})
    for name in ("systor09_table3_ratios", "systor11_table1_ratios"):
        path = ref / f"{name}.csv"
        if not path.exists():
            continue
        source, rows = read_reference(path)
        for testbed, setting in places:
            for row in rows:
                mine = cr.get((testbed, setting, row["file_type"], row["codec"]))
                if mine is None:
                    continue
                value = mine["compression_ratio"]
                out.append({
                    "source_table": name, "source": source, "testbed": testbed,
                    "setting": setting, "machine": "", "file_type": row["file_type"],
                    "codec": row["codec"], "metric": "CR", "original_display": row["display"],
                    "original_value": _ratio_value(row["display"]),
                    "reproduced_display": _number(value) if value >= 1 else f"{value:.2f}",
                    "reproduced_value": value, "lo": math.nan, "hi": math.nan,
                    "same_kind": "", "estimated": False,
                })
    tables = {"systor09_table4_breakeven_server": "server",
              "systor09_table5_breakeven_desktop": "desktop",
              "systor09_slides_breakeven_server": "server",
              "systor09_slides_breakeven_desktop": "desktop",
              "systor09_slides_breakeven_laptop": "laptop"}
    for name, machine in tables.items():
        path = ref / f"{name}.csv"
        if not path.exists():
            continue
        source, rows = read_reference(path)
        for testbed, setting in places:
            for row in rows:
                mine = be.get((testbed, setting, row["file_type"], row["codec"], row["metric"]))
                if mine is None:
                    continue
                original = parse_display(row["display"])
                out.append({
                    "source_table": name, "source": source, "testbed": testbed,
                    "setting": setting, "machine": machine, "file_type": row["file_type"],
                    "codec": row["codec"], "metric": row["metric"],
                    "original_display": row["display"], "original_value": original.value,
                    "reproduced_display": mine["display"], "reproduced_value": mine["value"],
                    "lo": mine["lo"], "hi": mine["hi"],
                    "same_kind": original.kind == mine["kind"], "estimated": mine["estimated"],
                })
    return out


# --- claims -----------------------------------------------------------------------------


def _verdict(ok: bool | None, why_not_testable: str = "") -> str:
    if ok is None:
        return f"not testable here: {why_not_testable}"
    return "holds" if ok else "refuted"


def claims_table(summary: list[dict], breakeven: list[dict], correlation: list[dict],
                 testbed: str, setting: str) -> list[dict]:
    """A verdict on each claim of the original papers for one testbed and setting."""
    S = {(s["file_type"], s["codec"], s["op"]): s for s in summary
         if s["testbed"] == testbed and s["setting"] == setting}
    B = {(b["file_type"], b["codec"], b["metric"]): b for b in breakeven
         if b["testbed"] == testbed and b["setting"] == setting}
    R = {c["file_type"]: c for c in correlation
         if c["testbed"] == testbed and c["setting"] == setting}
    codecs_in = sorted({c for (_, c, _) in S if c != "plain"})
    types_in = sorted({f for (f, _, _) in S})
    estimated = any(s["meter_method"] == "estimated" for s in S.values())
    claims: list[dict] = []

    def add(cid, claim, where, ok, evidence, energy=True, why=""):
        verdict = _verdict(ok, why)
        notes = []
        if energy and estimated and ok is not None:
            notes.append("rests on ESTIMATED energy (utilization model, no power meter)")
        if ok is not None and "?" in evidence:
            notes.append("break-even cells marked ? are undecided at 95% (bootstrap)")
        note = "; ".join(notes)
        claims.append({"testbed": testbed, "setting": setting, "claim_id": cid, "claim": claim,
                       "source": where, "verdict": verdict, "evidence": evidence,
                       "estimated": bool(energy and estimated and ok is not None),
                       "note": note})

    def cells(file_type, names, metric="E"):
        return [B[(file_type, c, metric)] for c in names if (file_type, c, metric) in B]

    def fmt(bs):
        return "; ".join(f"{b['codec']} {b['display']}" for b in bs)

    def undecided(bs):
        return [b for b in bs if not b["decided"]]

    # C1: lzo-1, lzo-3 on text: always
    bs = cells("text", ["lzo-1", "lzo-3"])
    if len(bs) < 2:
        add("lzo_text_always", "lzo-1 and lzo-3 save energy on text at every read-write ratio",
            "SYSTOR '09 5.3, Table 4", None, "", why="needs text with lzo-1 and lzo-3")
    elif undecided(bs) and any(b["kind"] == "always" for b in bs):
        add("lzo_text_always", "lzo-1 and lzo-3 save energy on text at every read-write ratio",
            "SYSTOR '09 5.3, Table 4", None, fmt(bs),
            why=f"the confidence intervals cannot decide ({fmt(undecided(bs))})")
    else:
        add("lzo_text_always", "lzo-1 and lzo-3 save energy on text at every read-write ratio",
            "SYSTOR '09 5.3, Table 4", all(b["kind"] == "always" for b in bs),
            f"E break-even: {fmt(bs)}")

    # C2: zero files save energy with almost every tool
    bs = cells("zero", codecs_in)
    if not bs:
        add("zero_saves", "zero files save energy with almost every tool", "SYSTOR '09 5.6, 6",
            None, "", why="needs zero files")
    else:
        saving = [b for b in bs if b["kind"] in ("always", "at_least") and
                  (b["kind"] == "always" or b["value"] <= 10)]
        add("zero_saves", "zero files save energy with almost every tool", "SYSTOR '09 5.6, 6",
            len(saving) >= 0.7 * len(bs),
            f"{len(saving)} of {len(bs)} codecs save energy by n=10 (E break-even: {fmt(bs)})")

    # C3: no tool saves energy on random files
    bs = cells("random", codecs_in)
    if not bs:
        add("random_never", "no tool saves energy on random files", "SYSTOR '09 5.5", None, "",
            why="needs random files")
    else:
        savers = [b for b in bs if b["kind"] != "never"]
        add("random_never", "no tool saves energy on random files", "SYSTOR '09 5.5",
            not savers, f"E break-even: {fmt(bs)}")

    # C4: bzip2 and compress never save energy except on zero files
    names = [c for c in codecs_in if c.startswith(("bz-", "c-"))]
    bs = [b for f in types_in if f != "zero" for b in cells(f, names)]
    if not bs:
        add("bzip2_compress_never", "bzip2 and compress never save energy except on zero files",
            "SYSTOR '09 6", None, "", why="needs bz-* or c-* on non-zero files")
    else:
        savers = [b for b in bs if b["kind"] != "never"]
        exceptions = "; ".join(f"{b['file_type']} {b['codec']} {b['display']}" for b in savers)
        add("bzip2_compress_never", "bzip2 and compress never save energy except on zero files",
            "SYSTOR '09 6", not savers, f"{len(bs) - len(savers)} of {len(bs)} cells never save"
            + (f"; exceptions: {exceptions}" if savers else ""))

    # C5: gzip / lzop-9 break-even on text far above common ratios of 2-4
    bs = cells("text", [c for c in ("gz-1", "gz-6", "gz-9", "lzo-9") if c in codecs_in])
    if not bs:
        add("text_breakeven_high", "gzip and lzo-9 break-even on text lies above the common "
            "read-write ratios of 2-4", "SYSTOR '09 5.3, 5.7", None, "",
            why="needs text with gzip or lzo-9")
    else:
        ok = all(b["kind"] == "never" or (b["kind"] == "at_least" and b["value"] > 4)
                 for b in bs)
        add("text_breakeven_high", "gzip and lzo-9 break-even on text lies above the common "
            "read-write ratios of 2-4", "SYSTOR '09 5.3, 5.7", ok, f"E break-even: {fmt(bs)}")

    # C6: energy and time linear, R > 0.99
    rs = [R[f] for f in types_in if f in R]
    if not rs:
        add("energy_time_linear", "energy and time are linearly related (R > 0.991)",
            "SYSTOR '09 5.3", None, "", why="no runs")
    else:
        add("energy_time_linear", "energy and time are linearly related (R > 0.991)",
            "SYSTOR '09 5.3", all(c["r"] > 0.991 for c in rs),
            "; ".join(f"{c['file_type']} R={c['r']:.4f}" for c in rs) +
            (" (the model derives energy from CPU time, so a high R is partly by construction)"
             if estimated else ""))

    # C7 / C8: PPMd best ratio on text, most energy both ways
    text_cw = {c: S[("text", c, "compress-write")] for c in codecs_in
               if ("text", c, "compress-write") in S}
    text_dr = {c: S[("text", c, "decompress-read")] for c in codecs_in
               if ("text", c, "decompress-read") in S}
    if "ppmd" not in text_cw:
        add("ppmd_best_ratio", "PPMd gives the best compression ratio on text",
            "SYSTOR '09 5.3", None, "", energy=False, why="needs ppmd on text")
        add("ppmd_most_energy", "PPMd costs the most energy on text, in compression and "
            "decompression alike", "SYSTOR '09 5.3", None, "", why="needs ppmd on text")
    else:
        best = max(text_cw, key=lambda c: text_cw[c]["compression_ratio"])
        add("ppmd_best_ratio", "PPMd gives the best compression ratio on text",
            "SYSTOR '09 5.3", best == "ppmd",
            f"ppmd CR {text_cw['ppmd']['compression_ratio']:.2f} (paper 7.6); best is {best} "
            f"{text_cw[best]['compression_ratio']:.2f}", energy=False)
        top_c = max(text_cw, key=lambda c: text_cw[c]["mean_energy_j"])
        top_d = max(text_dr, key=lambda c: text_dr[c]["mean_energy_j"])
        ec, ed = text_cw["ppmd"]["mean_energy_j"], text_dr["ppmd"]["mean_energy_j"]
        add("ppmd_most_energy", "PPMd costs the most energy on text, in compression and "
            "decompression alike", "SYSTOR '09 5.3",
            top_c == "ppmd" and top_d == "ppmd" and 0.5 <= ed / ec <= 2,
            f"most energy: compress-write {top_c}, decompress-read {top_d}; ppmd E_d/E_c = "
            f"{ed / ec:.2f}")

    # C9: the CR ordering of Table 3 on text
    pairs = [("bz-9", "bz-1"), ("bz-1", "gz-9"), ("gz-9", "gz-6"), ("gz-6", "gz-1"),
             ("gz-1", "lzo-1"), ("lzo-9", "lzo-1"), ("c-16", "c-10"), ("bz-9", "gz-6")]
    testable = [(a, b) for a, b in pairs if a in text_cw and b in text_cw]
    if not testable:
        add("cr_order_table3", "compression-ratio ordering of Table 3 on text", "SYSTOR '09 "
            "Table 3", None, "", energy=False, why="needs the paper's codecs on text")
    else:
        wrong = [(a, b) for a, b in testable
                 if text_cw[a]["compression_ratio"] < text_cw[b]["compression_ratio"]]
        add("cr_order_table3", "compression-ratio ordering of Table 3 on text",
            "SYSTOR '09 Table 3", not wrong,
            "; ".join(f"{a} {text_cw[a]['compression_ratio']:.2f} > {b} "
                      f"{text_cw[b]['compression_ratio']:.2f}" for a, b in testable)
            + (f"; violated: {wrong}" if wrong else ""), energy=False)

    # C10: lzop levels 1-6 identical
    lzo = [f"lzo-{i}" for i in range(1, 7)]
    found = [(f, [S[(f, c, "compress-write")]["compression_ratio"] for c in lzo])
             for f in types_in if all((f, c, "compress-write") in S for c in lzo)]
    if not found:
        add("lzop_levels_identical", "lzop levels 1-6 give identical output", "SYSTOR '11 "
            "Table 1", None, "", energy=False, why="needs lzo-1 .. lzo-6 (config/levels.yaml)")
    else:
        ok = all(max(v) - min(v) <= 1e-3 * max(v) for _, v in found)
        add("lzop_levels_identical", "lzop levels 1-6 give identical output",
            "SYSTOR '11 Table 1", ok,
            "; ".join(f"{f}: CR {min(v):.3f}..{max(v):.3f}" for f, v in found), energy=False)

    # C11: HPC '14 write phase: lz4 saves energy over no compression, gzip-1 does not
    ftype = "binary" if "binary" in types_in else None
    keys = [(ftype, c, "compress-write") for c in ("lz4-1", "gz-1")] + \
           [(ftype, "plain", "plain-write")]
    if ftype is None or not all(k in S for k in keys):
        add("hpc_lz4_write", "in the write phase lz4 saves energy over no compression, gzip-1 "
            "does not", "HPC '14 Table III", None, "",
            why="needs lz4-1, gz-1 and plain on binary (config/modern.yaml)")
    else:
        e = {k[1]: S[k]["mean_energy_j"] for k in keys}
        add("hpc_lz4_write", "in the write phase lz4 saves energy over no compression, gzip-1 "
            "does not", "HPC '14 Table III", e["lz4-1"] < e["plain"] <= e["gz-1"],
            f"binary write energy: plain {e['plain']:.1f} J, lz4-1 {e['lz4-1']:.1f} J, "
            f"gz-1 {e['gz-1']:.1f} J (paper: 125 / 91 / 130 Wh)")

    # C12: the fastest algorithm is the most energy-efficient
    if len(text_cw) < 2:
        add("fastest_most_efficient", "the fastest algorithm is the most energy-efficient",
            "SYSTOR '09 5.7", None, "", why="needs two or more codecs on text")
    else:
        fastest = min(text_cw, key=lambda c: text_cw[c]["mean_elapsed_s"])
        thriftiest = min(text_cw, key=lambda c: text_cw[c]["mean_energy_j"])
        add("fastest_most_efficient", "the fastest algorithm is the most energy-efficient",
            "SYSTOR '09 5.7", fastest == thriftiest,
            f"text compress-write: fastest {fastest}, least energy {thriftiest}")
    return claims


def dvfs_claim(summary: list[dict], testbed: str) -> dict:
    """SYSTOR '11: a lower CPU frequency does not save energy (needs a governor factor)."""
    by_gov: dict[str, list[float]] = defaultdict(list)
    for s in summary:
        if s["testbed"] == testbed and s["op"] == "compress-write":
            gov = _governor(s["setting"])
            if gov and gov != "keep":
                by_gov[gov].append(s["mean_energy_j"])
    row = {"testbed": testbed, "setting": "all", "claim_id": "dvfs_no_saving",
           "claim": "a lower CPU frequency does not save energy", "source": "SYSTOR '11 6.3",
           "estimated": False, "note": ""}
    if "performance" not in by_gov or len(by_gov) < 2:
        row.update(verdict=_verdict(None, "needs a governor factor with 'performance' and a "
                                    "slower governor (cpufreq; not in a VM)"), evidence="")
        return row
    perf = math.fsum(by_gov["performance"])
    others = {g: math.fsum(v) for g, v in by_gov.items() if g != "performance"}
    row.update(verdict=_verdict(all(v >= perf for v in others.values())),
               evidence=f"total compress-write energy: performance {perf:.0f} J, " +
               ", ".join(f"{g} {v:.0f} J" for g, v in others.items()))
    return row


def _governor(setting: str) -> str | None:
    for part in str(setting).split("."):
        if part.startswith("gov-"):
            return part[4:]
    return None


# --- the command -------------------------------------------------------------------------


def write_csv(rows: list[dict], path: str | os.PathLike) -> str:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(v) for k, v in row.items()})
    return str(path)


def _cell(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.6g}"
    return "" if v is None else v


def analyze(run_files: list[str], out_dir: str | os.PathLike,
            reference_dir: str = "paper/reference", seed: int = 2009, ci_target: float = 0.05,
            bootstrap: int = 1000) -> list[str]:
    """Write summary, breakeven, esav, correlation, claims and comparison CSVs to out_dir."""
    rows = records.load_runs(run_files)
    summary = summarize(rows, ci_target)
    breakeven = breakeven_table(rows, seed, bootstrap)
    esav = esav_table(rows, seed, bootstrap)
    correlation = correlation_table(rows)
    claims = []
    for testbed in sorted({s["testbed"] for s in summary}):
        for setting in sorted({s["setting"] for s in summary if s["testbed"] == testbed}):
            claims += claims_table(summary, breakeven, correlation, testbed, setting)
        claims.append(dvfs_claim(summary, testbed))
    comparison = comparison_table(summary, breakeven, reference_dir)
    out = Path(out_dir)
    return [
        write_csv(summary, out / "summary.csv"),
        write_csv(breakeven, out / "breakeven.csv"),
        write_csv(esav, out / "esav.csv"),
        write_csv(correlation, out / "correlation.csv"),
        write_csv(claims, out / "claims.csv"),
        write_csv(comparison, out / "comparison.csv"),
    ]
