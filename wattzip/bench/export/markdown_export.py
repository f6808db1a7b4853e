"""--export-markdown: hyperfine's table (Command, Mean, Min, Max, Relative) with the
energy and its ratio beside it. Where energy is estimated, every part that rests on it says
ESTIMATED: both energy columns' headers, the energy verdicts and the footnote."""

from __future__ import annotations

import math

from wattzip.bench.summary import ratio_text

UNITS = {"second": ("s", 1.0), "millisecond": ("ms", 1e3), "microsecond": ("µs", 1e6)}


def _unit(results: list[dict], time_unit: str | None = None) -> tuple[str, float]:
    """--time-unit, else hyperfine's choice: the first result's mean picks s or ms."""
    if time_unit:
        return UNITS[time_unit]
    first = results[0]["mean"] if results else 1.0
    return ("s", 1.0) if first is not None and first >= 1 else ("ms", 1e3)


def _plus_minus(mean: float, half_width: float | None) -> str:
    """The half-width to two significant figures, the mean to the same decimal places."""
    if half_width is None:  # one run: no interval
        return f"{mean:.3g}"
    if not half_width:
        return f"{mean:.3g} ± 0"
    # The places of the rounded half-width: 0.0996 rounds to 0.10, not 0.100.
    rounded = float(f"{half_width:.2g}")
    places = max(0, 1 - math.floor(math.log10(abs(rounded))))
    return f"{mean:.{places}f} ± {half_width:.{places}f}"


def _code(command: str) -> str:
    """A command as a code span in a table cell: a `|` would end the cell."""
    return "`" + command.replace("|", "\\|") + "`"


def table(document: dict, code=lambda c: f"`{c}`") -> tuple[list[str], list[list[str]], str]:
    """The table every markup shows: its column alignments ("<" or ">"), header and rows
    (in the command order, or by mean time under --sort mean-time), and the footnote.
    `code` marks a command up as code."""
    results = document["results"]
    unit, scale = _unit(results, document.get("time_unit"))
    method = document["meter"]["method"]
    energy = method != "none"
    label = " ESTIMATED" if method == "estimated" else ""
    header = ["Command", f"Mean [{unit}]", f"Min [{unit}]", f"Max [{unit}]", "Relative"]
    aligns = ["<", ">", ">", ">", ">"]
    if energy:
        header += [f"Energy [J]{label}", f"Energy relative{label}"]
        aligns += [">", ">"]
    header.append("Verdict")
    aligns.append("<")
    by_index = {row["index"]: row for row in document.get("comparisons", [])}
    order = list(range(len(results)))
    if document.get("sort") == "mean-time":
        order.sort(key=lambda i: results[i]["mean"])
    rows = []
    for i in order:
        r, row = results[i], by_index.get(i)
        sd = r["stddev"] if r["stddev"] is not None else 0.0
        cells = [code(r["command"]), f"{r['mean'] * scale:.1f} ± {sd * scale:.1f}",
                 f"{r['min'] * scale:.1f}", f"{r['max'] * scale:.1f}",
                 ratio_text(row["time"], 2) if row else "1.00"]
        if energy:
            cells += [_plus_minus(r["energy_mean_j"], r["energy_half_width_j"]),
                      ratio_text(row["energy"], 2) if row else "1.00"]
        metric = row and row["energy" if energy else "time"]
        cells.append(f"{metric['verdict_text']}{label}" if metric else "reference" if not row
                     else "-")
        rows.append(cells)
    footnote = _footnote(document, results[0], energy, label) if results else ""
    return aligns, [header, *rows], footnote


def render(document: dict) -> str:
    aligns, (header, *rows), footnote = table(document, _code)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(":---" if a == "<" else "---:" for a in aligns) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    lines.append("")
    if footnote:
        lines.append(footnote)
    return "\n".join(lines).rstrip("\n") + "\n"


def _footnote(document: dict, first: dict, energy: bool, label: str) -> str:
    """What the ± and the intervals are, and what 'the same' means."""
    level = f"{100 * first['energy_confidence']:.4g}%"
    within = f"verdicts within ±{document['margin']:.0%} of the reference."
    if energy:
        return (f"Energy{label}: mean ± the {level} half-width; ratios of means with Fieller's "
                f"{level} interval; {within}")
    return f"Time: mean ± standard deviation; ratios of means with Fieller's {level} " \
           f"interval; {within}"
