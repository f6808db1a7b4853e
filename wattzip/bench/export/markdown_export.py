"""--export-markdown: hyperfine's table (Command, Mean, Min, Max, Relative) with the
energy and its ratio beside it; the header says ESTIMATED where energy is estimated."""

from __future__ import annotations


def _unit(results: list[dict]) -> tuple[str, float]:
    """hyperfine's choice: the first result's mean picks seconds or milliseconds."""
    first = results[0]["mean"] if results else 1.0
    return ("s", 1.0) if first is not None and first >= 1 else ("ms", 1e3)


def _relative(row: dict | None) -> str:
    if row is None:
        return "1.00"
    if row["ratio_lo"] is None:
        return f"{row['ratio']:.2f} (unbounded)"
    return f"{row['ratio']:.2f} [{row['ratio_lo']:.2f}, {row['ratio_hi']:.2f}]"


def render(document: dict) -> str:
    results = document["results"]
    unit, scale = _unit(results)
    method = document["meter"]["method"]
    energy = method != "none"
    label = " ESTIMATED" if method == "estimated" else ""
    head = f"| Command | Mean [{unit}] | Min [{unit}] | Max [{unit}] | Relative |"
    rule = "|:---|---:|---:|---:|---:|"
    if energy:
        head += f" Energy [J]{label} | Energy relative | Verdict |"
        rule += "---:|---:|:---|"
    by_index = {row["index"]: row for row in document.get("comparisons", [])}
    lines = [head, rule]
    for i, r in enumerate(results):
        row = by_index.get(i)
        sd = r["stddev"] if r["stddev"] is not None else 0.0
        line = (f"| `{r['command']}` | {r['mean'] * scale:.1f} ± {sd * scale:.1f} | "
                f"{r['min'] * scale:.1f} | {r['max'] * scale:.1f} | "
                f"{_relative(row['time'] if row else None)} |")
        if energy:
            hw = r["energy_half_width_j"]
            verdict = (row["energy"]["verdict_text"] if row and row["energy"] else
                       "reference" if not row else "-")
            line += (f" {r['energy_mean_j']:.3g} ± {hw if hw is not None else 0:.2g} | "
                     f"{_relative(row['energy'] if row else None)} | {verdict} |")
        lines.append(line)
    lines.append("")
    if energy and results:
        level = f"{100 * results[0]['energy_confidence']:.4g}%"
        lines.append(f"Energy: mean ± the {level} half-width; ratios of means with "
                     f"Fieller's {level} interval; verdicts within "
                     f"±{document['margin']:.0%} of the reference.")
    return "\n".join(lines).rstrip("\n") + "\n"
