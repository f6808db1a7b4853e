"""--export-orgmode: hyperfine's Org table (=command=, a divider under the header), with
the markdown export's columns and footnote."""

from __future__ import annotations

from wattzip.bench.export.markdown_export import table


def render(document: dict) -> str:
    aligns, (header, *rows), footnote = table(document, code=lambda c: f"={c}=")
    lines = [f"| {header[0]}  |  " + " |  ".join(header[1:]) + " |",
             "|" + "--+" * (len(aligns) - 1) + "--|"]
    lines += [f"| {cells[0]}  |  " + " |  ".join(cells[1:]) + " |" for cells in rows]
    return "\n".join(lines) + "\n" + (f"\n{footnote}\n" if footnote else "")
